"""Counterfactual pairs: bases and sources from a task's own generators, with their labels.

Pair i is a pure function of (task, seed, split, holdout, i): its base is example i of the
split (what ``data.token_arrays`` / ``data.block_arrays`` give for that seed), its source an
example of the same split from an independent stream. The pairs of one seed are the same
whatever ``variables`` are asked (only the counterfactual labels differ), so IIA of several
variables compares them on the same inputs; ``changing=True`` keeps, in index order, the pairs
whose counterfactual label differs from the base's.
"""

import dataclasses

import numpy as np

from pvr_keras.checks import MAX_SEED, check_count, check_seed
from pvr_keras.counterfactuals import causal
from pvr_keras.data.keys import check_split, mix_int
from pvr_keras.kinds.block.task import BlockTask

SOURCE_OFFSET = 2**40  # token sources: examples 2**40 + i of the split (an unrelated hash)
SOURCE_SALT = 0x5EC0_9D50_C0FF  # block sources: the generator under a seed derived from this
MAX_DRAWS = 2_000_000  # candidate pairs drawn at most to find the changing ones
PROBE_DRAWS = 100_000  # none of these changing: refused at once
MAX_PAIRS = 10_000_000
BLOCK_BATCH = 1024  # block examples made per call of the generator


@dataclasses.dataclass(frozen=True)
class Pairs:
    """Counterfactual pairs of a task: ``base, source, label, counterfactual_label``.

    Unpacks as those four arrays (``base, source, y, y_cf = cf.pairs(...)``), and indexes by
    position or by name. For a token task ``base`` and ``source`` are (n, seq_len) int32
    tokens; for a block task (n, 80, 80, C) float32 images, with their cell classes in
    ``base_values`` and ``source_values`` (n, 4) (for tokens these are the tokens).
    """

    base: np.ndarray
    source: np.ndarray
    label: np.ndarray
    counterfactual_label: np.ndarray
    base_values: np.ndarray
    source_values: np.ndarray
    variables: tuple
    changing: bool

    _FIELDS = ("base", "source", "label", "counterfactual_label")

    def __iter__(self):
        return iter(getattr(self, name) for name in self._FIELDS)

    def __getitem__(self, key):
        if isinstance(key, str):
            if key not in self._FIELDS and key not in ("base_values", "source_values"):
                raise KeyError(key)
            return getattr(self, key)
        return getattr(self, self._FIELDS[key])

    @property
    def n(self):
        return len(self.label)

    @property
    def changed(self):
        """Share of the pairs whose counterfactual label differs from the base label."""
        return float(np.mean(self.label != self.counterfactual_label)) if self.n else 0.0


def _check_holdout(task, holdout):
    """The split's holdout, as the task's generator takes it (every token holdout-k and
    window mode; Figure 6's block holdout)."""
    if isinstance(task, BlockTask) and holdout is not True and holdout is not False:
        if holdout == 0 and not isinstance(holdout, float):  # the default: no holdout
            return False
    return task.check_holdout(holdout)


def _token_draw(task, start, stop, seed, split, holdout):
    from pvr_keras.kinds.token.numpy_data import token_examples

    index = np.arange(start, stop, dtype=np.int64)
    base, _ = token_examples(task, index, seed=seed, split=split, holdout=holdout)
    source, _ = token_examples(task, index + SOURCE_OFFSET, seed=seed, split=split, holdout=holdout)
    return base, source, base, source


def _block_examples(task, seed, split, holdout, data_dir):
    """The block generator's example function of one stream (images loaded and the composer
    compiled once): ``fn(index)`` gives exactly ``data.block_arrays``' rows for ``index``."""
    from pvr_keras.kinds.block import keys, tf_data

    return tf_data.make_examples(task, keys.stream_key(seed, split), split, holdout, data_dir)


def pairs(task, n, variables, seed=0, split="test", changing=False, *, holdout=0, data_dir=None):
    """``n`` counterfactual pairs of ``task`` for an interchange of ``variables``.

    Args:
        task: a ``TokenTask`` or a 2x2 ``BlockTask``.
        n: number of pairs.
        variables: a variable name or a list (``cf.variables(task)``).
        seed: the data seed.
        split: ``"train"`` or ``"test"``: the split both examples are drawn from.
        changing: keep only pairs whose counterfactual label differs from the base's (with
            random pairs, swapping one value changes a window-1 label 9% of the time).
        holdout: the split's holdout (token: holdout-k; block: True for Figure 6's).
        data_dir: the TFDS data dir of the images (block tasks).

    Returns:
        ``Pairs``: unpacks as base, source, label (the base's), counterfactual_label.

    Raises:
        ValueError: an unknown variable or task, a bad size, seed or split; with
            ``changing=True``, no pair whose label the interchange changes.

    Example:
        >>> from pvr_keras.kinds.token.task import TokenTask
        >>> base, source, y, y_cf = pairs(TokenTask(window=3), 4, "S1", seed=0)
        >>> base.shape, y_cf.shape
        ((4, 11), (4,))
    """
    task = causal.check_task(task)
    names = causal.check_variables(task, variables)
    n = check_count("n", n)
    if n > MAX_PAIRS:
        raise ValueError(f"n must be at most {MAX_PAIRS:,}; received {n:,}")
    seed = check_seed(seed)
    split = check_split(split)
    if not isinstance(changing, bool | np.bool_):
        raise ValueError(f"changing must be True or False; received {changing!r}")
    holdout = _check_holdout(task, holdout)
    if isinstance(task, BlockTask):
        draw = _block_prefix(task, seed, split, holdout, data_dir)
    else:
        draw = _token_chunks(task, seed, split, holdout)
    kept, have, drawn = [], 0, 0
    while have < n:
        want = n - have if not changing else max(1024, 2 * (n - have))
        parts = draw(drawn, drawn + want)
        drawn += want
        base_values, source_values = parts[2], parts[3]
        y = task.label(base_values)
        y_cf = causal.label(task, base_values, source_values, names)
        keep = y_cf != y if changing else np.ones(len(y), bool)
        kept.append((*(p[keep] for p in parts), y[keep], y_cf[keep]))
        have += int(keep.sum())
        if changing and have < n:
            _check_progress(task, names, have, drawn, n)
    columns = [np.concatenate(c)[:n] for c in zip(*kept, strict=True)]
    base, source, base_values, source_values, y, y_cf = columns
    return Pairs(base, source, y.astype(np.int32), y_cf.astype(np.int32),
                 base_values, source_values, names, bool(changing))  # fmt: skip


def _token_chunks(task, seed, split, holdout):
    return lambda start, stop: _token_draw(task, start, stop, seed, split, holdout)


def _block_prefix(task, seed, split, holdout, data_dir):
    """Block pairs ``start..stop-1``: bases from the split's stream, sources from the stream
    of a derived seed, drawn by index (each example made once, the images loaded once)."""
    import tensorflow as tf

    from pvr_keras.data.checks import check_memory

    source_seed = mix_int(seed ^ SOURCE_SALT) % MAX_SEED
    base = _block_examples(task, seed, split, holdout, data_dir)
    source = _block_examples(task, source_seed, split, holdout, data_dir)
    pixels = int(np.prod(task.image_shape))

    def draw(start, stop):
        check_memory(stop - start, 2 * (4 * pixels + 8 * task.num_cells), "block pairs")
        parts = []
        for first in range(start, stop, BLOCK_BATCH):
            index = tf.range(first, min(first + BLOCK_BATCH, stop), dtype=tf.int64)
            b, s = base(index), source(index)
            parts.append([b["x"].numpy(), s["x"].numpy(), b["cell_labels"].numpy(),
                          s["cell_labels"].numpy()])  # fmt: skip
        return tuple(np.concatenate(column) for column in zip(*parts, strict=True))

    return draw


def _check_progress(task, names, have, drawn, n):
    what = f"interchanging {', '.join(names)} of {type(task).__name__}"
    if have == 0 and drawn >= PROBE_DRAWS:
        raise ValueError(
            f"no pair of the first {drawn:,} changes the label when {what} (a variable the "
            f"output does not depend on?); use changing=False"
        )
    if drawn >= MAX_DRAWS:
        raise ValueError(
            f"{have:,} of {drawn:,} pairs change the label when {what}: too few for n={n:,} "
            f"changing pairs; ask for fewer or use changing=False"
        )


__all__ = ["Pairs", "pairs"]
