"""Block PVR made on the JAX device: the twin of ``tf_data``, bit for bit.

The source images are read once from TFDS on the host (``images.load_images``; TensorFlow is
kept off the accelerators for it) and then live in device memory, passed to the jitted batch
program as arguments. A block image starts as zeros and each cell's image is placed in its
cell by ``lax.dynamic_update_slice`` at the cell's jitter offset, as ``tf_data``'s XLA
composer does: batched over the examples (one zero tile per cell, then the tiles side by
side) on an accelerator, one example after another into one canvas in place on a CPU. The
hash, draws and labels are the twins of the TF ones (``jax_random``; the aggregations of the
token kind's ``jax_data``), so for the same (task, seed, split, holdout, index) the pixels,
labels, offsets and image indices equal ``data.block_arrays``.
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from pvr_keras.data import jax_random
from pvr_keras.data.checks import check_memory, check_size
from pvr_keras.data.jax_stream import DeviceStream
from pvr_keras.data.jax_stream import collect as _collect
from pvr_keras.data.request import StreamRequest, stream_request
from pvr_keras.kinds.block import keys
from pvr_keras.kinds.block.task import BlockTask
from pvr_keras.kinds.token import jax_data as token_device

DTYPES = ("float32", "uint8")
CHUNK_EXAMPLES = 1024  # examples per dispatch, as tf_data's chunks
# How block images are composed: None picks by platform ("in_place" on a CPU, "batched"
# elsewhere); both give the same pixels (tests run both).
COMPOSE = None


def _load_images(name, split, data_dir):
    """``load_images``: TFDS decodes on the host with TensorFlow, whose GPUs it hides first
    under JAX (``tf_setup``), so a JAX process keeps its accelerators' memory."""
    from pvr_keras.data.images import load_images

    return load_images(name, split, data_dir)


def to_float(x):
    """uint8 pixels -> float32 in [0, 1], as ``tf_data.to_float``."""
    return x.astype(jnp.float32) * np.float32(1.0 / 255.0)


def _check_block(request, dtype):
    """What a request (checked when made, its holdout by ``BlockTask.check_holdout``) may
    still ask that the device cannot make."""
    if not isinstance(request.task, BlockTask):
        raise ValueError(f"task must be a BlockTask; received {type(request.task).__name__}")
    check_size(request.num_examples)
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {', '.join(DTYPES)}; received {dtype!r}")


def _pools(task, split, holdout, labels):
    """Per value cell, the sorted indices of the images it may hold, or None for all of
    them (as ``tf_data._pools``)."""
    if not holdout:
        return [None] * task.num_value_cells
    pools = []
    for held in task.holdout_classes():
        allowed = np.isin(labels, held) if split == "test" else ~np.isin(labels, held)
        pool = np.flatnonzero(allowed).astype(np.int32)
        if not len(pool):
            raise ValueError(
                f"no {task.values} {split} images may fill a holdout cell (classes "
                f"{'' if split == 'test' else 'other than '}{held}); is the data complete?"
            )
        pools.append(pool)
    return pools


def block_source(task, split, holdout=False, data_dir=None):
    """The arrays a block stream reads: (constants, static) where ``constants`` are the
    source images, labels and holdout pools to place on the device, ``static`` the sizes."""
    pointer_images, pointer_labels = _load_images(task.pointer_source, split, data_dir)
    value_images, value_labels = _load_images(task.values, split, data_dir)
    pools = _pools(task, split, holdout, value_labels)
    sizes = [len(pointer_labels)] + [
        len(value_labels) if pool is None else len(pool) for pool in pools
    ]
    constants = (
        pointer_images,
        value_images,
        pointer_labels.astype(np.int32),
        value_labels.astype(np.int32),
        tuple(np.zeros(0, np.int32) if p is None else p.astype(np.int32) for p in pools),
    )
    static = {
        "sizes": sizes,
        "pooled": [p is not None for p in pools],
        "pointer_side": pointer_images.shape[1],
        "value_side": value_images.shape[1],
    }
    return constants, static


def make_examples(task, key, static, dtype="float32"):
    """Returns ``fn(index, constants) -> dict``, the twin of ``tf_data.make_examples``: ``x``
    (B, *task.image_shape) float32 in [0, 1] (or uint8), ``y`` int32 (B,), and int32
    ``cell_labels`` (B, cells), ``offsets`` (B, cells, 2), ``image_index`` (B, cells)."""
    g, cell, channels, cells = task.grid, task.cell, task.channels, task.num_cells
    digit_to_cell = task.digit_to_value_cell.astype(np.int32)
    sizes, pooled = static["sizes"], static["pooled"]
    token_device.check_rule(task.aggregation, task.window, task.num_classes)

    def place(images, index, offsets):
        """Cell k's tile (B, cell, cell, C): zeros with each image at its offset."""
        image = images[index]  # (B, h, w, c)
        if image.shape[-1] != channels:
            image = jnp.tile(image, (1, 1, 1, channels // image.shape[-1]))
        zeros = jnp.zeros((cell, cell, channels), jnp.uint8)
        return jax.vmap(lambda im, r, c: lax.dynamic_update_slice(zeros, im, (r, c, 0)))(
            image, offsets[:, 0], offsets[:, 1]
        )

    def compose_in_place(pointer_images, value_images, image_index, offsets):
        """The same canvas by a loop over the examples copying each cell's image into one
        zero canvas in place (tf_data's way): faster than batched scatters on a CPU."""

        def one(b, canvas):
            for k in range(cells):
                source = pointer_images if k == 0 else value_images
                _, h, w, c = source.shape
                image = lax.dynamic_slice(source, (image_index[b, k], 0, 0, 0), (1, h, w, c))
                if c != channels:
                    image = jnp.tile(image, (1, 1, 1, channels // c))
                top = (k // g) * cell + offsets[b, k, 0]
                left = (k % g) * cell + offsets[b, k, 1]
                canvas = lax.dynamic_update_slice(canvas, image, (b, top, left, 0))
            return canvas

        canvas = jnp.zeros((image_index.shape[0], g * cell, g * cell, channels), jnp.uint8)
        return lax.fori_loop(0, image_index.shape[0], one, canvas)

    def examples(index, constants):
        pointer_images, value_images, pointer_labels, value_labels, pools = constants
        hi, _ = jax_random.random_bits(key, index, keys.num_slots(task))
        hi = hi.reshape(-1, cells, keys.SLOTS_PER_CELL)
        picks = []
        for k in range(cells):
            pick = jax_random.uniform_int(hi[:, k, 0], sizes[k])
            if k and pooled[k - 1]:
                pick = pools[k - 1][pick]
            picks.append(pick)
        image_index = jnp.stack(picks, axis=1)  # (B, cells)
        offsets = jnp.concatenate(
            [
                jax_random.uniform_int(hi[:, :1, 1:], cell - static["pointer_side"] + 1),
                jax_random.uniform_int(hi[:, 1:, 1:], cell - static["value_side"] + 1),
            ],
            axis=1,
        )  # (B, cells, 2)
        if (COMPOSE or ("in_place" if jax.default_backend() == "cpu" else "batched")) == "in_place":
            x = compose_in_place(pointer_images, value_images, image_index, offsets)
        else:
            tiles = [
                place(pointer_images if k == 0 else value_images, image_index[:, k], offsets[:, k])
                for k in range(cells)
            ]
            rows = [jnp.concatenate(tiles[r * g : (r + 1) * g], axis=2) for r in range(g)]
            x = jnp.concatenate(rows, axis=1)  # (B, g*cell, g*cell, C) uint8
        if dtype == "float32":
            x = to_float(x)
        cell_labels = jnp.concatenate(
            [pointer_labels[image_index[:, :1]], value_labels[image_index[:, 1:]]], axis=1
        )
        first = jnp.asarray(digit_to_cell)[cell_labels[:, 0]]
        window = [
            jnp.take_along_axis(
                cell_labels, ((first + j) % task.num_value_cells + 1)[:, None], axis=1
            )[:, 0]
            for j in range(task.window)
        ]
        y = token_device.jax_aggregate(task.aggregation, window, task.num_classes)
        return {
            "x": x,
            "y": y,
            "cell_labels": cell_labels,
            "offsets": offsets,
            "image_index": image_index,
        }

    return examples


def block_stream(request=None, num_examples=None, /, *, dtype="float32", **fields):
    """Batched block-style visual PVR examples made on the JAX device: ``block_dataset``'s
    twin (the same request, the same batches in the same order).

    Returns:
        A ``DeviceStream`` (a ``keras.utils.PyDataset``) of (x (batch, *task.image_shape) of
        ``dtype``, y int32 (batch,)) ``jax.Array`` batches.
    """
    r = stream_request(request, num_examples, fields, batch_size=50, holdout=False)  # checked
    task, num_examples, split, seed, holdout = r.task, r.num_examples, r.split, r.seed, r.holdout
    _check_block(r, dtype)
    constants, static = block_source(task, split, holdout, r.data_dir)
    key = keys.stream_key(seed, split)
    return DeviceStream(
        make_examples(task, key, static, dtype),
        num_examples,
        r.batch_size,
        key,
        shuffle=r.shuffle,
        epochs=r.epochs,
        first_epoch=r.first_epoch,
        chunk_examples=CHUNK_EXAMPLES,
        constants=constants,
    )


def block_arrays(task, num_examples, *, split, seed, holdout=False, data_dir=None):
    """The first ``num_examples`` block examples of a split, in index order, made on the
    device: ``x, y, info`` equal to ``data.block_arrays`` (info arrays as int32)."""
    if not isinstance(task, BlockTask):  # before the request checks its holdout
        raise ValueError(f"task must be a BlockTask; received {type(task).__name__}")
    request = StreamRequest(task, num_examples, split, seed, holdout, data_dir=data_dir)
    _check_block(request, "float32")
    num_examples, holdout = request.num_examples, request.holdout
    pixels = int(np.prod(task.image_shape))
    check_memory(num_examples, 8 * pixels + 48 * task.num_cells, "block_arrays")
    constants, static = block_source(task, split, holdout, data_dir)
    key = keys.stream_key(seed, split)
    names = ("x", "y", "cell_labels", "offsets", "image_index")
    stream = DeviceStream(
        make_examples(task, key, static),
        num_examples,
        min(num_examples, CHUNK_EXAMPLES),
        key,
        shuffle=False,
        outputs=names,
        constants=constants,
    )
    x, y, *rest = _collect(stream)
    return x, y, dict(zip(names[2:], rest, strict=True))
