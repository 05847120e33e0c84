"""The token kind's benchmark hooks (``TOKEN_KIND.benchmark``): its configs' rows in NumPy,
their TFDS features and their text form. Named by reference from ``kind``."""

import numpy as np

from pvr_keras.kinds.token.numpy_data import token_examples

_AGGREGATION = {
    "mod_sum": "the sum of those digits modulo {num_values}",
    "median": "the median of those digits (with an even count, the lower of the two middle "
              "digits)",
    "maj_vote": "the digit that occurs most often among them (ties go to the smallest digit)",
    "min": "the smallest of those digits",
    "max": "the largest of those digits",
}  # fmt: skip


def rows(source, index):
    """``tokens`` int32 (B, seq_len), ``label`` int32, ``pointer`` int32 (the value position
    the pointer names), ``window_positions`` int32 (B, window), ``held_out`` bool (the window
    is one of the config's held-out tuples)."""
    task, holdout = source.task, source.config.holdout
    x, y = token_examples(task, index, seed=source.seed, split=source.stream, holdout=holdout)
    pointer = x[:, 0] if task.pointer else np.zeros(len(x), np.int32)
    positions = task.window_positions(pointer)
    held = np.zeros(len(x), bool)
    if holdout:
        window = np.take_along_axis(x[:, 1:], positions, axis=1)
        tuples = task.holdout_tuples(holdout)
        held = (window[:, None, :] == tuples[None]).all(axis=2).any(axis=1)
    return {"tokens": x, "label": y, "pointer": pointer.astype(np.int32),
            "window_positions": positions.astype(np.int32), "held_out": held}  # fmt: skip


def features(task):
    import tensorflow_datasets as tfds

    return tfds.features.FeaturesDict({
        "tokens": tfds.features.Tensor(shape=(task.seq_len,), dtype=np.int32),
        # int32 as in the source (a ClassLabel is int64); its range kept as min / max
        "label": tfds.features.Tensor(shape=(), dtype=np.int32, minimum=0,
                                      maximum=task.num_values - 1),
        "pointer": np.int32,
        "window_positions": tfds.features.Tensor(shape=(task.window,), dtype=np.int32),
        "held_out": np.bool_,
    })  # fmt: skip


def text_rule(task):
    n, w = task.num_positions, task.window
    what = _AGGREGATION[task.aggregation].format(num_values=task.num_values)
    # One digit is "at" a position; a window of several starts there.
    span = "the digit at" if w == 1 else f"{w} consecutive digits starting at"
    where = (
        f"The first digit is a pointer p (0-{n - 1}); the other {n} digits are the "
        f"values, at positions 0-{n - 1}. Look at {span} value position p"
        + (f" (wrapping around after position {n - 1})" if w > 1 else "")
        + ". "
    )
    if not task.pointer:
        where = (f"Ignore the first digit. Look at {span} value position 0 of the {n} values "
                 "that follow it. ")  # fmt: skip
    answer = "that digit" if w == 1 else what
    return (f"Pointer value retrieval. Each sequence has {task.seq_len} digits. {where}"
            f"The answer is {answer}. Reply with the answer digit only.")  # fmt: skip


def text_sequence(row):
    return " ".join(str(int(t)) for t in row["tokens"])


def text_answers(task):
    return tuple(range(task.num_values))
