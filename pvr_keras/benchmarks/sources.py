"""Map-style sources of the benchmark configs' splits: ``len``, and item i (or a slice, or an
index array) as a pure function of (config, split, i), for any framework's loader.

A config's kind makes its rows (``BenchmarkHooks.rows``). Token and Boolean sources compute
them in NumPy (``pvr_keras.data.numpy_examples``) and import neither TensorFlow nor JAX, so a
PyTorch ``DataLoader`` with several workers can hold one: each worker computes the rows of the
indices its sampler hands it, and nothing is duplicated or shared. Hand it a batch of indices
at a time (``source[index_array]``, a ``BatchSampler`` as the loader's sampler: see
docs/benchmarks/README.md); one index per call is a few hundred times slower. Block and
sequence sources compose MNIST / CIFAR-10 images through the tf.data composer (TensorFlow,
and the TFDS data dir of ``pvr_keras.data.load_images``).

    >>> from pvr_keras import benchmarks
    >>> test = benchmarks.source("token/w3", "test", size="small")
    >>> len(test), sorted(test[0])
    (2000, ['held_out', 'label', 'pointer', 'tokens', 'window_positions'])
"""

import numpy as np

from pvr_keras.benchmarks import catalog
from pvr_keras.checks import check_int, check_seed
from pvr_keras.references import resolve


def task_of(name):
    """The task object of a config (``TokenTask``, ``BooleanTask``, ``BlockTask``, or its
    kind's task)."""
    return catalog.get(name).build_task()


def cube(num_bits, index):
    """Rows ``index`` of the Boolean cube in row order: x_j = 1 - 2 * ((r >> j) & 1)."""
    index = np.asarray(index, np.int64)
    return (1 - 2 * ((index[:, None] >> np.arange(num_bits)) & 1)).astype(np.int8)


class Source:
    """One split of one config at one size preset, as a random-access source.

    Args:
        name: a config name (``token/w3``, optionally ``:1.0.0``), or a ``Config`` (a
            catalog config at another difficulty or seed: ``pvr_keras.reasoning_gym``).
        split: ``train``, ``validation`` or ``test``.
        size: ``standard`` or ``small`` (``catalog.SIZES``).
        data_dir: the TFDS data dir of the image configs (default as ``load_images``).

    Item i is a dict of NumPy values; a slice or an index array gives the same keys with a
    leading batch axis. The config's kind makes them (``BenchmarkHooks.rows``, which may keep
    what it builds once in ``cache``). A split is the first examples of an unbounded stream,
    or, where the kind's size is None, a fixed set (``whole``: the Boolean test split, the
    cube). Features: token ``tokens`` int32 (seq_len,), ``label`` int32,
    ``pointer`` int32 (the value position the pointer names), ``window_positions`` int32
    (window,), ``held_out`` bool (the window is one of the config's held-out tuples);
    Boolean ``bits`` int8 (d,) of +1/-1, ``label`` float32, ``pointer`` int32 (the value bit
    named), ``frozen`` int64 (the split's frozen-bit mask); block ``image`` uint8 (H, W, C),
    ``label`` int32, ``cell_labels`` int64 (cells,), ``held_out`` bool; sequence ``images``
    uint8 (seq_len, 28, 28, 1), ``tokens`` int32 (seq_len,), ``label`` int32.
    """

    def __init__(self, name, split, *, size="standard", data_dir=None):
        self.config = name if isinstance(name, catalog.Config) else catalog.get(name)
        self.split = catalog.check_split(split)
        self.size = size
        self.num_examples = self.config.sizes(size)[split]
        self.whole = self.config.hooks.sizes[size][split] is None
        self.task = self.config.build_task()
        self.seed, self.stream = self.config.stream(split)
        self.data_dir = data_dir
        self.cache = {}
        self._rows = resolve(self.config.hooks.rows)

    def __len__(self):
        return self.num_examples

    def __repr__(self):
        return (f"Source({self.config.name!r}, {self.split!r}, size={self.size!r}: "
                f"{self.num_examples:,} examples)")  # fmt: skip

    def _indices(self, item):
        if isinstance(item, slice):
            return np.arange(*item.indices(self.num_examples), dtype=np.int64), True
        if isinstance(item, int | np.integer) and not isinstance(item, bool):
            index = int(item)
            if index < 0:
                index += self.num_examples
            if not 0 <= index < self.num_examples:
                raise IndexError(f"index {item} out of range for {self!r}")
            return np.array([index], np.int64), False
        index = np.asarray(item)
        if index.ndim != 1 or not (index.size == 0 or np.issubdtype(index.dtype, np.integer)):
            raise IndexError(f"index must be an int, a slice or a 1-D integer array; received "
                             f"{item!r:.80}")  # fmt: skip
        # In int64 before adding the length (uint8 + 2000 overflows), and an unsigned index
        # checked before the cast (uint64 2**64 - 1 would wrap to -1, the last example).
        if index.dtype.kind == "u" and index.size and index.max() >= self.num_examples:
            raise IndexError(f"indices out of range for {self!r}")
        index = index.astype(np.int64)
        index = np.where(index < 0, index + self.num_examples, index)
        if index.size and (index.min() < 0 or index.max() >= self.num_examples):
            raise IndexError(f"indices out of range for {self!r}")
        return index, True

    def __getitem__(self, item):
        index, batched = self._indices(item)
        rows = self.rows(index)
        return rows if batched else {k: v[0] for k, v in rows.items()}

    def __iter__(self):
        for start in range(0, self.num_examples, 4096):
            rows = self.rows(np.arange(start, min(start + 4096, self.num_examples)))
            for i in range(len(next(iter(rows.values())))):
                yield {k: v[i] for k, v in rows.items()}

    def batches(self, batch_size, *, shuffle_seed=None, epoch=0, worker=0, num_workers=1):
        """The index batches of one epoch that worker ``worker`` of ``num_workers`` loads:
        the epoch's order (index order, or a permutation keyed by (shuffle_seed, epoch)) cut
        into batches, batch b going to worker b mod num_workers, so the workers together
        load every index exactly once. For loaders that shard by hand (a PyTorch
        ``IterableDataset``, a JAX loop on several hosts); a map-style loader's sampler does
        this itself.

        Yields:
            1-D int64 index arrays; ``self[batch]`` gives the rows.
        """
        for name, value, low in (("batch_size", batch_size, 1), ("num_workers", num_workers, 1),
                                 ("worker", worker, 0), ("epoch", epoch, 0)):  # fmt: skip
            check_int(name, value, low)
        if shuffle_seed is not None:
            check_seed(shuffle_seed, "shuffle_seed")  # 1.7 would shuffle as 1, True as 1
        if worker >= num_workers:
            raise ValueError(f"worker must be below num_workers={num_workers}; received {worker}")
        order = np.arange(self.num_examples, dtype=np.int64)
        if shuffle_seed is not None:
            order = np.random.default_rng([int(shuffle_seed), int(epoch)]).permutation(order)
        starts = range(worker * batch_size, self.num_examples, num_workers * batch_size)
        for start in starts:
            yield order[start : start + batch_size]

    def rows(self, index):
        """The examples at ``index`` (1-D int64, in range) as a dict of batched arrays."""
        return self._rows(self, index)


def source(name, split, *, size="standard", data_dir=None):
    """``Source(name, split, size=..., data_dir=...)``: one split of a benchmark config."""
    return Source(name, split, size=size, data_dir=data_dir)
