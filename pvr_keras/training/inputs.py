"""Builds ``TrainData`` for each task family from the data pipelines."""

from pvr_keras import data
from pvr_keras.training.loop import TrainData

TRAIN_EVAL_EXAMPLES = 10_000


def token_train_data(
    task,
    num_examples,
    *,
    test_examples,
    batch_size,
    seed=0,
    holdout=0,
    train_eval_examples=TRAIN_EVAL_EXAMPLES,
    eval_batch_size=4096,
):
    """Train/test streams of a token task for ``training.train``.

    The training accuracy is evaluated on the first ``train_eval_examples`` training examples
    (the same examples the model trains on: example i is a pure function of its index). With
    ``holdout`` the test split holds only held-out windows (Section 6.2).
    """

    def make_train(first_epoch):
        return data.token_dataset(
            task,
            num_examples,
            split="train",
            seed=seed,
            holdout=holdout,
            batch_size=batch_size,
            shuffle=True,
            epochs=None,
            first_epoch=first_epoch,
        )

    test = data.token_dataset(
        task,
        test_examples,
        split="test",
        seed=seed,
        holdout=holdout,
        batch_size=eval_batch_size,
        shuffle=False,
    )
    train_eval = data.token_dataset(
        task,
        min(num_examples, train_eval_examples),
        split="train",
        seed=seed,
        holdout=holdout,
        batch_size=eval_batch_size,
        shuffle=False,
    )
    return TrainData(make_train, num_examples, test, train_eval)
