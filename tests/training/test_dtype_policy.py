"""Mixed precision (``--dtype-policy mixed_bfloat16``): bfloat16 compute, float32 weights,
finite losses and the float32 run's accuracy within 2 points on a task both learn."""

import keras
import numpy as np
import pytest

from pvr_keras.runconfig import Run
from pvr_keras.training import runs
from pvr_keras.training.loop import _build

# A narrower MLP than the paper's (two hidden layers of 256 and 128, about a seventh of its
# multiply-adds, the same layers): both policies reach 0.99 test accuracy here in 8 epochs, on
# both backends (measured: TensorFlow 0.993 / 0.993, JAX 0.987 / 0.989).
SETTING = dict(window=1, num_examples=15_000, test_examples=2_000, train_eval_examples=2_000,
               epochs=8, warmup_epochs=1, min_steps=0, batch_size=128,
               model_kwargs={"widths": (256, 128)})  # fmt: skip


def test_layers_compute_in_bfloat16_with_float32_weights_and_the_policy_is_restored():
    from pvr_keras import models

    model = _build(lambda: models.mlp(embed_dim=4, widths=(8,)), "mixed_bfloat16")
    dense = model.get_layer("pre_logits")
    assert dense.compute_dtype == "bfloat16" and dense.variable_dtype == "float32"
    assert keras.config.dtype_policy().name == "float32"


@pytest.mark.slow
def test_mixed_bfloat16_trains_as_float32_does(tmp_path):
    found = {}
    for policy in ("float32", "mixed_bfloat16"):
        run = Run.make("token", dtype_policy=policy, **SETTING)
        record = runs.run(run, tmp_path / policy, save_model=False)
        assert record["recipe"]["dtype_policy"] == policy
        assert np.isfinite(record["history"]["train_loss"]).all()
        found[policy] = record["final"]["test_accuracy"]
    assert found["float32"] >= 0.95, found
    assert abs(found["mixed_bfloat16"] - found["float32"]) <= 0.02, found
    # The default policy keeps every recorded run's identity; bfloat16 is another run.
    assert "dtype_policy" not in Run.make("token", **SETTING).to_dict()
    assert Run.make("token", dtype_policy="mixed_bfloat16").run_id != Run.make("token").run_id


def test_an_unknown_policy_is_refused():
    with pytest.raises(ValueError, match="dtype_policy must be one of float32, mixed_bfloat16"):
        Run.make("token", dtype_policy="float16")
