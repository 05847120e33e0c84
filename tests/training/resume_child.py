"""One small token run, for ``test_resume.py`` to kill and resume in processes of its own.

    PYTHONPATH=. python tests/training/resume_child.py OUT BATCH_LOG [--stall EPOCH BATCH FILE]

Trains an MLP on a window-2 token task with ``training.train`` into OUT (checkpoint kept),
logging every batch the train step consumes to BATCH_LOG. With ``--stall`` it writes FILE
after that batch (0-based epoch and batch) and waits there to be killed. ``train`` is the
same run in the calling process (the tests' uninterrupted run, ``conftest.py``).
"""

import argparse
import pathlib

from pvr_keras import models, training
from pvr_keras.runconfig import Run
from pvr_keras.tasks import TokenTask
from pvr_keras.training.inputs import train_data
from tests.training.fingerprints import BatchLog, Progress, tapped

TASK = TokenTask(window=2)
N, BATCH, EPOCHS, SEED = 1280, 128, 4, 1
STEPS = N // BATCH
# steps_per_execution 1: the tests stop it at one batch (callbacks see each step)
RUN = Run.make("token", window=2, num_examples=N, test_examples=512, batch_size=BATCH, seed=SEED,
               epochs=EPOCHS, warmup_epochs=1, min_steps=0, steps_per_execution=1)  # fmt: skip


def train(out, log, progress):
    """Trains the run into ``out``; ``log`` gets its batches, ``progress`` joins its fit."""
    return training.train(
        RUN,
        out,
        build_model=lambda: tapped(models.mlp(embed_dim=8, widths=(32, 16)), log, progress),
        data=train_data("token", TASK, N, test_examples=512, batch_size=BATCH, seed=SEED),
        verbose=0,
        keep_checkpoint=True,
        save_model=False,  # the tapped model is for these tests only
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("batch_log")
    parser.add_argument("--stall", nargs=3, metavar=("EPOCH", "BATCH", "FILE"))
    args = parser.parse_args(argv)
    if args.stall:
        epoch, batch, path = args.stall
        progress = Progress((int(epoch), int(batch)), path=path, stall=True)
    else:
        progress = Progress()
    train(args.out, BatchLog(pathlib.Path(args.batch_log)), progress)


if __name__ == "__main__":
    main()
