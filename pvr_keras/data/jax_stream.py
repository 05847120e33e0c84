"""Batches made on the JAX device, read by ``model.fit`` as a ``keras.utils.PyDataset``.

Batch ``i`` of a stream is a pure function of (epoch, position in the epoch): its example
indices come from the epoch's keyed bijection (``jax_random.index_shuffle``, TensorFlow's
``index_shuffle`` replicated, the order the tf.data streams use) and its examples from the
task's JAX generator. One jitted program makes a chunk of consecutive batches (~32k token
examples, 1024 images) per dispatch, never across an epoch's end, and the batches then wait
on the device for their steps: only two scalars cross from the host, and a stream started at
``first_epoch`` (a resumed run) continues exactly where an uninterrupted one would be.

Under ``keras.distribution.DataParallel`` (``with_distribution``) the program is a
``shard_map`` over the data-parallel mesh: each device makes its own rows of every batch and
nothing is gathered through the host. As ``training.distribute`` does for tf.data, every
batch is then padded to a multiple of the device count with zero-weight rows, the real rows
weighing padded/real, so the weighted loss and accuracy equal those of the real batch. In a
multi-process run each process makes its own contiguous share of every batch on its own
devices, and Keras assembles the global batch from the shares.

Why a ``PyDataset`` of ready device arrays rather than making the batch inside Keras's train
step from (epoch, step): it needs no change to the model or the trainer (``fit``,
``evaluate`` and ``predict`` read it as they are), the arrays never leave the device either
way, and making a chunk costs far less than its training steps: on a 2-core CPU ~0.06 us of
CPU per token example against ~1 us per example for Keras's loop around a narrow MLP
(``tools/probes/bench_train.py --part input``).
"""

import math

import jax
import jax.numpy as jnp
import keras
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from pvr_keras.data import jax_random
from pvr_keras.data.checks import check_positive, check_schedule, check_size

# Examples made per dispatch: ~30 batches of 1024 share one program launch.
CHUNK_EXAMPLES = 32_768


class DeviceStream(keras.utils.PyDataset):
    """Batches ``(x, y)`` (or ``(x, y, sample_weight)`` when distributed) made on the device.

    Args:
        examples: ``fn(index, constants) -> dict`` of arrays with the batch as first axis,
            for (B,) uint32 example indices; traced inside ``jax.jit``.
        num_examples: size of the split.
        batch_size: examples per batch (the last batch of an epoch may be smaller).
        key: the stream key; it keys the epoch order.
        shuffle: visit the examples in a new keyed order each epoch.
        epochs: passes; ``None`` repeats forever (for ``fit(steps_per_epoch=...)``).
        first_epoch: the epoch number of the first pass (keys its order).
        outputs: keys of ``examples``' dict yielded, in order.
        distribution: a ``keras.distribution.DataParallel``, or ``None`` for one device.
        chunk_examples: examples made per dispatch (whole batches, at least one; a chunk
            never spans two epochs). The batches do not depend on it.
        constants: a tuple of arrays ``examples`` reads (source images, say): placed on the
            device once (replicated over a mesh) and passed to the program as arguments,
            not baked into it.
    """

    def __init__(
        self,
        examples,
        num_examples,
        batch_size,
        key,
        *,
        shuffle,
        epochs=1,
        first_epoch=0,
        outputs=("x", "y"),
        distribution=None,
        chunk_examples=CHUNK_EXAMPLES,
        constants=(),
    ):
        super().__init__()
        check_schedule(epochs, first_epoch)
        self.examples = examples
        self.num_examples = check_size(num_examples)
        self.batch_size = check_positive("batch_size", batch_size)
        self.key, self.shuffle = key, bool(shuffle)
        self.epochs, self.first_epoch = epochs, int(first_epoch)
        self.outputs = tuple(outputs)
        self.distribution = distribution
        self.batches_per_epoch = math.ceil(self.num_examples / self.batch_size)
        self.batches_per_chunk = max(1, chunk_examples // self.batch_size)
        self._functions = {}
        self._chunk_id, self._chunk, self._starts = None, None, None
        self.next_epoch, self._served = self.first_epoch, 0
        self.constants = tuple(constants)
        self._placed = None

    # ---------------------------------------------------------------- PyDataset ----

    @property
    def num_batches(self):
        if self.epochs is None:
            return None
        return self.batches_per_epoch * self.epochs

    def __len__(self):
        if self.epochs is None:
            raise TypeError("an endless DeviceStream (epochs=None) has no length")
        return self.num_batches

    def __getitem__(self, i):
        """Batch ``i`` of the stream: batch ``i % batches_per_epoch`` of epoch
        ``next_epoch + i // batches_per_epoch``.

        ``next_epoch`` starts at ``first_epoch``. With ``shuffle`` and a finite ``epochs`` it
        moves on by ``epochs`` at the end of a pass that served every batch (``on_epoch_end``,
        which ``fit`` calls after each epoch, or the end of a Python loop over the stream), so
        reading the stream again (``model.fit(stream, epochs=N)`` does once per epoch) goes
        on to the next epochs' orders, as ``token_dataset`` does (``pipeline.epochs_dataset``);
        the one batch ``fit`` reads to build a model does not count. ``fit`` also shuffles the
        order of a finite ``PyDataset``'s batches unless called with ``shuffle=False``: the
        examples of each epoch stay the same, in another order than tf.data's."""
        if self.epochs is not None and not 0 <= i < self.num_batches:
            raise IndexError(f"batch index must be in [0, {self.num_batches}); received {i}")
        epoch, b = divmod(int(i), self.batches_per_epoch)
        epoch += self.next_epoch
        chunk, k = divmod(b, self.batches_per_chunk)
        if self._chunk_id != (epoch, chunk):
            first = chunk * self.batches_per_chunk
            sizes = self.chunk_sizes(first)
            self._chunk = self.chunk_function(sizes)(
                np.uint32(epoch % 2**32),
                np.uint32(first * self.batch_size),
                self.placed_constants(),
            )
            self._chunk_id = (epoch, chunk)
            self._starts = np.cumsum([0, *sizes])
        self._served += 1
        if self.distribution is None:  # the chunk's rows: batch k is a run of them
            start, end = int(self._starts[k]), int(self._starts[k + 1])
            return tuple(a[start:end] for a in self._chunk)
        return self._chunk[k]

    def on_epoch_end(self):
        """Ends a pass: a counting stream whose every batch was served moves on to the next
        epochs (see ``__getitem__``)."""
        if self.shuffle and self.epochs is not None and self._served >= self.num_batches:
            self.next_epoch += self.epochs
        self._served = 0

    def __iter__(self):
        yield from super().__iter__()
        self.on_epoch_end()

    def chunk_sizes(self, first_batch):
        """Real sizes of the batches of the chunk that starts at batch ``first_batch``."""
        last = min(first_batch + self.batches_per_chunk, self.batches_per_epoch)
        return tuple(
            min(self.batch_size, self.num_examples - b * self.batch_size)
            for b in range(first_batch, last)
        )

    # ---------------------------------------------------------------- variants ----

    def _replace(self, **changes):
        kwargs = {
            "shuffle": self.shuffle,
            "epochs": self.epochs,
            "first_epoch": self.first_epoch,
            "outputs": self.outputs,
            "distribution": self.distribution,
            "chunk_examples": self.batches_per_chunk * self.batch_size,
            "constants": self.constants,
        }
        kwargs.update(changes)
        return DeviceStream(self.examples, self.num_examples, self.batch_size, self.key, **kwargs)

    def with_distribution(self, distribution):
        """The same stream made shard by shard on ``distribution``'s data-parallel mesh."""
        if not isinstance(distribution, keras.distribution.DataParallel):
            raise ValueError(
                f"device input shards over a keras.distribution.DataParallel; received "
                f"{type(distribution).__name__}"
            )
        return self._replace(distribution=distribution)

    @property
    def element_spec(self):
        """Shapes and dtypes of a full batch: a tuple of ``jax.ShapeDtypeStruct``."""
        function = self.chunk_function((self.chunk_sizes(0)[0],))
        return jax.eval_shape(function, np.uint32(0), np.uint32(0), self.constants)[0]

    def placed_constants(self):
        """``constants`` on the device, or replicated over the mesh (placed once)."""
        if self._placed is None:
            if self.distribution is None:
                self._placed = jax.device_put(self.constants)
            else:
                mesh, _ = self._process_mesh()
                self._placed = jax.device_put(self.constants, NamedSharding(mesh, P()))
        return self._placed

    def _process_mesh(self):
        """(this process's part of the data-parallel mesh, the global position of its first
        device). One process: the whole mesh. Several: the process's devices, which are
        consecutive on the batch axis (Keras orders them by process), so its batch share is
        one contiguous run of rows, as ``training.distribute``'s padder keeps for tf.data."""
        mesh = self.distribution.device_mesh.backend_mesh
        if jax.process_count() == 1:
            return mesh, 0
        devices = list(mesh.devices.flat)
        mine = [d for d in devices if d.process_index == jax.process_index()]
        first = devices.index(mine[0])
        if devices[first : first + len(mine)] != mine:
            raise ValueError(
                "device input needs each process's devices consecutive on the data-parallel "
                f"mesh; received {devices}"
            )
        return Mesh(np.array(mine), mesh.axis_names), first

    # ---------------------------------------------------------------- the program ----

    def chunk_function(self, sizes):
        """The jitted ``(epoch, start) -> batches`` making consecutive batches of ``sizes``
        real examples from example position ``start`` of the epoch: one dispatch for a
        chunk of batches, whose arrays then wait on the device for their step."""
        if sizes not in self._functions:
            self._functions[sizes] = self._compile(sizes)
        return self._functions[sizes]

    def _compile(self, sizes):
        if self.distribution is None:
            # One device: the chunk's arrays whole (one output each), its batches sliced from
            # them on reading. A program with an output per batch took seconds more to
            # compile (4.1 s against 0.39 for 256 batches of 128 tokens, 0.75 against 0.26 for
            # 32 of 1024; a 2-core AMD EPYC Zen 4 at load ~2), each stream again: a
            # population's members, a run's three sets.
            local = self._local_chunk(sizes, list(sizes), None, split=False)
            return jax.jit(lambda epoch, start, constants: local(epoch, start, 0, constants))
        axis = self.distribution.batch_dim_name
        count = self.distribution.device_mesh.backend_mesh.shape[axis]  # all processes
        padded = [-(-s // count) * count for s in sizes]
        local = self._local_chunk(sizes, [p // count for p in padded], padded)
        # Several processes: each makes its own share on its own devices, a process-local
        # array that Keras assembles into the global batch without a host copy.
        mesh, first = self._process_mesh()

        def sharded(epoch, start, constants):
            device = first + jax.lax.axis_index(axis).astype(jnp.uint32)
            return local(epoch, start, device, constants)

        function = jax.shard_map(
            sharded, mesh=mesh, in_specs=(P(), P(), P()), out_specs=P(axis), check_vma=False
        )
        replicated = NamedSharding(mesh, P())
        return jax.jit(function, in_shardings=(replicated, replicated, replicated))

    def _local_chunk(self, sizes, shares, padded, split=True):
        """``(epoch, start, device, constants) -> batches``: this device's ``shares[k]`` rows
        of each batch k (all rows with one device; without ``split``, the chunk's arrays
        whole instead of a tuple of batches). With ``padded`` (distributed), batch k is padded
        from ``sizes[k]`` to ``padded[k]`` rows, the padding zeroed and weighing 0, and a
        weight column is added (as ``training.distribute``'s padder: float32(padded) /
        float32(real) for the real rows)."""
        n, key, shuffle = self.num_examples, self.key, self.shuffle
        offsets = np.cumsum([0, *sizes[:-1]])

        def chunk(epoch, start, device, constants):
            rows, real = [], []
            for size, share, offset in zip(sizes, shares, offsets, strict=True):
                row = device * share + jnp.arange(share, dtype=jnp.uint32)  # in its batch
                real.append(row < size)
                # Padding rows repeat the batch's last example (any valid index); zeroed below.
                rows.append(start + offset + jnp.minimum(row, size - 1))
            if padded is None:  # one device: the chunk is one run of positions
                position = start + jnp.arange(sum(sizes), dtype=jnp.uint32)
            else:
                position = jnp.concatenate(rows)
            index = jax_random.index_shuffle(position, key, epoch, n - 1) if shuffle else position
            out = self.examples(index, constants)
            arrays = tuple(out[name] for name in self.outputs)
            if not split:  # the rows of every batch, in order (one device)
                return arrays
            batches, first = [], 0
            for k, share in enumerate(shares):
                batch = tuple(a[first : first + share] for a in arrays)
                first += share
                if padded is not None:
                    mask = real[k]
                    batch = tuple(
                        jnp.where(mask.reshape((-1,) + (1,) * (a.ndim - 1)), a, jnp.zeros_like(a))
                        for a in batch
                    )
                    weight = np.float32(padded[k]) / np.float32(sizes[k])
                    batch = (*batch, jnp.where(mask, weight, np.float32(0)))
                batches.append(batch)
            return tuple(batches)

        return chunk


def collect(stream):
    """All batches of a finite stream, concatenated into NumPy arrays (in stream order)."""
    parts = [tuple(np.asarray(a) for a in batch) for batch in stream]
    return tuple(np.concatenate(part) for part in zip(*parts, strict=True))
