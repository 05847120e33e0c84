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


def pair_rows(source, index):
    """Rows of a counterfactual-pair config (``Config.interchange``): row k is pair k of
    ``counterfactuals.pairs(task, n, interchange, seed, stream, changing=True)``, the k-th
    pair in index order whose counterfactual label differs from the base's (pair i: base
    token example i of the stream, source example ``pairs.SOURCE_OFFSET + i``).

    Which pairs change is known only by drawing them, so the source draws its whole split
    once (kept in ``source.cache``) and serves rows from it: row k is still a pure function
    of (config, split, k), the same at every size (a smaller split is a prefix), and a
    standard training split of 100,000 pairs takes about a second to draw.

    Keys: ``base`` and ``source`` int32 (B, seq_len); ``label`` int32 (the base's) and
    ``counterfactual_label`` int32 (the base's with the interchanged variables at the
    source's values); ``pointer`` and ``source_pointer`` int32 (the value position each
    pointer names); ``window_positions`` and ``source_window_positions`` int32 (B, window):
    the value positions of S0 .. S{w-1} in the base and in the source (token position =
    value position + 1).
    """
    from pvr_keras import counterfactuals

    pairs = source.cache.get("pairs")
    if pairs is None:
        pairs = counterfactuals.pairs(
            source.task, len(source), list(source.config.interchange), seed=source.seed,
            split=source.stream, changing=True, holdout=source.config.holdout,
        )  # fmt: skip
        source.cache["pairs"] = pairs
    base, other = pairs.base[index], pairs.source[index]
    task = source.task
    rows = {"base": base, "source": other, "label": pairs.label[index],
            "counterfactual_label": pairs.counterfactual_label[index]}  # fmt: skip
    for prefix, x in (("", base), ("source_", other)):
        pointer = x[:, 0] if task.pointer else np.zeros(len(x), np.int32)
        rows[f"{prefix}pointer"] = pointer.astype(np.int32)
    for prefix in ("", "source_"):
        positions = task.window_positions(rows[f"{prefix}pointer"])
        rows[f"{prefix}window_positions"] = positions.astype(np.int32)
    return rows


def pair_features(task):
    import tensorflow_datasets as tfds

    label = tfds.features.Tensor(shape=(), dtype=np.int32, minimum=0, maximum=task.num_values - 1)
    tokens = tfds.features.Tensor(shape=(task.seq_len,), dtype=np.int32)
    window = tfds.features.Tensor(shape=(task.window,), dtype=np.int32)
    return tfds.features.FeaturesDict({
        "base": tokens, "source": tokens, "label": label, "counterfactual_label": label,
        "pointer": np.int32, "source_pointer": np.int32,
        "window_positions": window, "source_window_positions": window,
    })  # fmt: skip


def pair_score(source, rows, predictions):
    """``iia``: the share of predictions (class ids, or scores: their argmax) made on the
    base under the interchange that are the counterfactual label (interchange intervention
    accuracy, on changing pairs: a model that ignores the intervention scores 0), and
    ``per_pointer`` (of the base's pointer)."""
    from pvr_keras.benchmarks.scoring import classification

    counterfactual = dict(rows, label=rows["counterfactual_label"])
    report = classification(source, counterfactual, predictions, ("pointer",))
    return {"iia": report.pop("accuracy"), **report}
