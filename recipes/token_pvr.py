"""Train and evaluate one token PVR configuration (Sections 5 and 6.2 of the paper).

    python recipes/token_pvr.py                       # quick: MLP, window 1, mod_sum, on CPU
    python recipes/token_pvr.py --window 2 --aggregation maj_vote --backend jax
    python recipes/token_pvr.py --preset paper --num-examples 1000000
    python recipes/token_pvr.py --devices 4           # data-parallel on 4 GPUs, same batch
    python recipes/token_pvr.py --backend jax --input tfdata   # tf.data instead of device input
    python recipes/token_pvr.py --model my_nets.py:tiny_net    # a builder of your own
    python recipes/token_pvr.py --model my_nets.py:tiny_net --model.hidden 64  # its argument
    python recipes/token_pvr.py --window 1 2 --seed 0 1       # a grid: 4 runs, one sweep

Writes into ``--out``: config.json, record.json (the run record), history.csv,
learning_curve.png and model.keras (the trained model; ``tools/evaluate.py OUT`` evaluates it
on other data). Any run flag given several values makes a grid, one run per combination, trained
as a sweep into ``--out`` (``OUT/runs/<id>/`` and ``OUT/results.jsonl``; the placeholders of a
grid's fields hold its values joined by '-'). Quick preset: >= 99% test accuracy on window 1
mod_sum in a few minutes on a 2-core CPU. Killed and started again with the same command, it
resumes. Exit status: 0; 3 if the run finished but failed by the paper's rule (NaN loss, or
final training accuracy below 20%); 2 for a bad flag; 1 for a crash.
"""

import dataclasses

from pvr_keras import cli

# The quick preset of each model, sized for a 2-core CPU: the Transformer and MLP-Mixer train
# 0.25-width copies (their full width needs ~20 GB of activations at batch 1024) and need
# fewer epochs to reach ~100% on window 1 (measured, TF, loaded 2-core CPU: the 0.25-width
# Mixer had 99.93% test accuracy after epoch 2 and 100% after epoch 3, ~2 min per epoch).
QUICK_BY_MODEL = {
    "transformer": dict(width=0.25, epochs=4, warmup_epochs=1, min_steps=0),
    "mixer": dict(width=0.25, epochs=4, warmup_epochs=1, min_steps=0),
}


def quick(given):
    """Minutes on a 2-core CPU: 50k examples, 20 epochs (2 of warm-up), the paper's recipe
    otherwise; per model (``--model``) narrower copies where the paper's width does not fit."""
    preset = dict(num_examples=50_000, epochs=20, warmup_epochs=2)
    return {**preset, **QUICK_BY_MODEL.get(given.get("model"), {})}


def paper(given):
    """The paper's token recipe (``training.TOKEN``: 200 epochs, ...) on 10^6 examples."""
    return dict(num_examples=1_000_000, test_examples=100_000)


@dataclasses.dataclass(frozen=True)
class Own:
    out: str = cli.out_field(
        "runs/token_pvr/{model}_x{width}_w{window}_{aggregation}_n{num_examples}_s{seed}"
    )


COMMAND = cli.Command(
    kind="token",
    presets={"quick": quick, "paper": paper},
    own=Own,
    description=__doc__,
    exclude=("data_dir", "download"),
    title=lambda run: (
        f"{run.model}, window {run.window} {run.aggregation}, {run.num_examples} examples"
    ),
)
main = COMMAND.main

if __name__ == "__main__":
    cli.main(main)
