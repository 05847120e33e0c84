"""``training.runs.run``: the record says how the run's engine was chosen (measured figures
included), and that choice is no part of the run's identity."""

import json

import keras

from pvr_keras import engines
from pvr_keras.runconfig import Run
from pvr_keras.training import runs

TINY = dict(num_examples=256, test_examples=64, train_eval_examples=64, epochs=1,
            batch_size=64, min_steps=0, warmup_epochs=0,
            model_kwargs={"embed_dim": 4, "widths": (8,)})  # fmt: skip


def test_the_record_says_how_the_engine_was_chosen_and_the_run_id_does_not(tmp_path, monkeypatch):
    monkeypatch.setattr(engines, "_choice", None)  # this process's choice, restored after
    here = keras.backend.backend()
    other = "jax" if here == "tensorflow" else "tensorflow"
    ms = {here: 10.0, other: 30.0}
    run = Run.make("token", **TINY)
    before = (run.run_id, run.to_dict())

    def measure(model, arguments, batch_size, metric="accuracy"):
        return dict(ms), {}

    backend, why = engines.choose(None, environ={}, gpu=False, run=run,
                                  cache=tmp_path / "engines.json", measure_fn=measure,
                                  say=print)  # fmt: skip
    assert backend == here
    record = runs.run(run, tmp_path / "run", save_model=False)
    choice = record["engine_choice"]
    assert choice["backend"] == here and choice["why"] == why and choice["ms_per_step"] == ms
    assert choice["cpu"] and choice["key"] and choice["family"].startswith("mlp width 1")
    assert (run.run_id, run.to_dict()) == before and record["config"] == before[1]
    assert "engine_choice" not in json.dumps(record["config"])
    # A choice of another backend than Keras runs on is not this run's: not recorded.
    engines.choose(other)
    assert "engine_choice" not in runs.run(run, tmp_path / "other", save_model=False)


def test_a_run_checks_its_holdout_once_in_training(tmp_path, monkeypatch):
    """``training.train`` of a holdout token run checks the holdout once: the one
    ``StreamRequest`` of the run checks it when it is made, and every stream (training,
    training accuracy, validation, test, IID test) is that request with other fields. (It was
    checked 16 times: by the streams, each generator, and each held-out window draw.)"""
    from pvr_keras import training
    from pvr_keras.kinds.token.task import TokenTask

    run = Run.make("token", window=2, holdout=1, **TINY)
    checked, check = [], TokenTask.check_holdout

    def counted(task, holdout):
        checked.append(holdout)
        return check(task, holdout)

    monkeypatch.setattr(TokenTask, "check_holdout", counted)
    record = training.train(run, tmp_path / "run", verbose=0)
    assert record["status"] == "complete" and "iid_test_accuracy" in record["final"]
    assert checked == [1]
