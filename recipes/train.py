"""Train one run of any task kind: the library's, or one of your own.

    python recipes/train.py --kind token --window 2 --num-examples 30000
    python recipes/train.py --kind block --model vgg11_bn --width 8 --data-dir DIR
    python recipes/train.py --kind my_kinds.py:REVERSED --model my_nets.py:tiny_net

The flags are the fields of the kind's runs (its task's fields, the model, the data, the
training settings, the system; ``--kind K --help`` lists them), at the kind's defaults (the
paper's recipe of that kind). ``token_pvr.py``, ``block_iid.py`` and ``image_sequence.py``
are this recipe with the presets of the paper's experiments.

Writes into ``--out``: config.json, record.json (the run record), history.csv,
learning_curve.png and model.keras (``tools/evaluate.py OUT`` evaluates it). Killed and
started again with the same command, it resumes. Exit status: 0; 3 if the run finished but
failed by the paper's rule; 2 for a bad flag; 1 for a crash.
"""

import dataclasses

from pvr_keras import cli


@dataclasses.dataclass(frozen=True)
class Own:
    kind: str = dataclasses.field(
        default="token",
        metadata={
            "help": "task kind: token, block, sequence, boolean, gotu, chain or "
            "'module:ATTRIBUTE' of yours"
        },
    )
    out: str = cli.out_field("runs/train/{kind_name}/{model_name}_n{num_examples}_s{seed}")


def command(kind):
    return cli.Command(
        kind=kind,
        presets={"default": lambda given: {}},
        own=Own,
        description=__doc__,
        placeholders=lambda run: {
            "kind_name": run.spec.name, "model_name": run.model.rpartition(":")[2]
        },
    )  # fmt: skip


def main(argv=None):
    return command(cli.kind_first(argv)).main(argv)  # the kind decides the other flags


if __name__ == "__main__":
    cli.main(main)
