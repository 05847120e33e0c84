"""Block-style visual PVR as tf.data: images composed in batched TF ops, stateless, O(batch).

Example ``i`` of a split is a pure function of (seed, split, holdout, i): for every cell a
counter-based hash (``pvr_keras.data.random``, the slots of ``keys``) picks a source image,
uniformly among the images that cell may hold, and a uniform jitter offset inside the cell.
Batches are composed ~1000 examples at a time by one XLA-compiled function (the hash, the
labels and ``make_composer``'s in-place copies of each image into a zero canvas; no
per-example Python) and then split into batches. Images of the train split always come from
the TFDS train split, test from test. Labels follow ``BlockTask.label`` (tested against it).

``dtype="uint8"`` yields the raw pixels (0-255), a quarter of the bytes of float32 images;
scale them to [0, 1] on the accelerator (a cast after batching, or ``keras.layers.Rescaling``
in the model). Throughput (``python tools/probes/bench_data.py --part block``, batch 50, 2x2 MNIST,
2-core CPU): read inside TF as Keras fit on TensorFlow reads it, ~300k examples/s float32
(~6 us of CPU per example) and ~430k/s uint8 (~4 us); per-example NumPy composition makes
~32k/s float32 (~31 us) in a bare loop, ~19k/s fed through ``from_generator``.
"""

import numpy as np
import tensorflow as tf

from pvr_keras import compat
from pvr_keras.data import random
from pvr_keras.data.checks import check_memory, check_size
from pvr_keras.data.images import load_images
from pvr_keras.data.pipeline import (
    batched_dataset,
    check_instance,
    collect_arrays,
)
from pvr_keras.data.request import StreamRequest, stream_request
from pvr_keras.kinds.block import keys
from pvr_keras.kinds.block.keys import stream_key
from pvr_keras.kinds.block.task import BlockTask
from pvr_keras.kinds.token import tf_data as token_data

CHUNK_EXAMPLES = 1024  # images composed per map call; sliced into batches afterwards
DTYPES = ("float32", "uint8")


def _check_task(task):
    return check_instance("task", task, BlockTask)


def check_dtype(dtype):
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {', '.join(DTYPES)}; received {dtype!r}")
    return dtype


def make_composer(task, images):
    """Returns ``compose(image_index, offsets)``, composing block images by in-place copies.

    ``images`` are the source splits as uint8 (N, h, w, C) arrays: the pointer's and, when it
    differs, the values'. ``compose`` is XLA-compiled: for each example it starts from a zero
    canvas and copies each cell's image into it at the cell's offset (a dynamic slice and a
    dynamic update slice, done in place by XLA; the same ops Keras's TensorFlow backend uses
    for ``slice_update``). Measured on a 2-core CPU, 2x2 MNIST: 1.5-3.5 us per example (the
    machine is noisy), against 4-6.6 us for the earlier two gathers of pixel rows.

    Args of ``compose``: image_index (B, grid*grid) int32 (cell 0 indexes the pointer's source,
    the others the values'); offsets (B, grid*grid, 2) int32 (row, col) inside each cell.

    Returns of ``compose``: (B, *task.image_shape) uint8: cell k (row-major) holds its image at
    its offset, zeros elsewhere (an MNIST pointer beside CIFAR-10 values is repeated over the
    three channels).
    """
    g, cell, channels = task.grid, task.cell, task.channels
    xla = compat.xla_slice_ops()
    sources = [tf.constant(im) for im in images]
    value_source = sources[-1]

    def place(canvas, image_index, offsets, b):
        for k in range(task.num_cells):
            source = sources[0] if k == 0 else value_source
            _, h, w, c = source.shape
            image = xla.dynamic_slice(source, tf.stack([image_index[b, k], 0, 0, 0]), [1, h, w, c])
            if c != channels:
                image = tf.tile(image, [1, 1, 1, channels // c])
            top = (k // g) * cell + offsets[b, k, 0]
            left = (k % g) * cell + offsets[b, k, 1]
            canvas = xla.dynamic_update_slice(canvas, image, tf.stack([b, top, left, 0]))
        return canvas

    @tf.function(jit_compile=True, autograph=False)
    def compose(image_index, offsets):
        batch = tf.shape(image_index)[0]
        canvas = tf.zeros([batch, g * cell, g * cell, channels], tf.uint8)
        _, canvas = tf.while_loop(
            lambda b, _: b < batch,
            lambda b, canvas: (b + 1, place(canvas, image_index, offsets, b)),
            (tf.constant(0), canvas),
        )
        return canvas

    return compose


def to_float(x):
    """uint8 pixels -> float32 in [0, 1]."""
    return tf.cast(x, tf.float32) * (1.0 / 255.0)


def _pools(task, split, holdout, labels):
    """Per value cell, the sorted indices of the images it may hold, or None for all of them."""
    if not holdout:
        return [None] * task.num_value_cells
    pools = []
    for held in task.holdout_classes():
        allowed = np.isin(labels, held) if split == "test" else ~np.isin(labels, held)
        pool = np.flatnonzero(allowed).astype(np.int64)
        if not len(pool):
            raise ValueError(
                f"no {task.values} {split} images may fill a holdout cell (classes "
                f"{'' if split == 'test' else 'other than '}{held}); is the data complete?"
            )
        pools.append(pool)
    return pools


def make_examples(task, key, split, holdout=False, data_dir=None, dtype="float32"):
    """Returns ``fn(index) -> dict`` mapping (B,) example indices to composed examples.

    The dict holds ``x`` (B, *task.image_shape) float32 in [0, 1] (or uint8 0-255 with
    ``dtype="uint8"``), ``y`` int32 (B,),
    ``cell_labels`` int64 (B, grid*grid), ``offsets`` int64 (B, grid*grid, 2) and
    ``image_index`` int64 (B, grid*grid): index of each cell's image in its source split
    (``load_images(source, split)``; cell 0 indexes MNIST, the others ``task.values``).
    """
    pointer_images, pointer_labels = load_images(task.pointer_source, split, data_dir)
    value_images, value_labels = load_images(task.values, split, data_dir)
    pools = _pools(task, split, holdout, value_labels)
    same = task.values == task.pointer_source
    images = [pointer_images] if same else [pointer_images, value_images]
    compose = make_composer(task, images)
    pointer_labels_t = tf.constant(pointer_labels)
    value_labels_t = pointer_labels_t if same else tf.constant(value_labels)
    pools_t = [None if pool is None else tf.constant(pool) for pool in pools]
    sizes = [len(pointer_labels)] + [
        len(value_labels) if pool is None else len(pool) for pool in pools
    ]
    pointer_side = pointer_images.shape[1]
    value_side = value_images.shape[1]
    digit_to_cell = tf.constant(task.digit_to_value_cell)
    steps = tf.range(task.window, dtype=tf.int64)
    token_data.check_rule(task.aggregation, task.window, task.num_classes)

    def examples(index):
        bits = tf.reshape(
            random.random_bits(key, index, keys.num_slots(task)),
            [-1, task.num_cells, keys.SLOTS_PER_CELL],
        )
        picks = []
        for k in range(task.num_cells):
            pick = random.uniform_int(bits[:, k, 0], sizes[k])
            if k and pools_t[k - 1] is not None:
                pick = tf.gather(pools_t[k - 1], pick)
            picks.append(pick)
        image_index = tf.stack(picks, axis=1)  # (B, cells)
        offsets = tf.concat(
            [
                random.uniform_int(bits[:, :1, 1:], task.cell - pointer_side + 1),
                random.uniform_int(bits[:, 1:, 1:], task.cell - value_side + 1),
            ],
            axis=1,
        )  # (B, cells, 2)
        x = compose(tf.cast(image_index, tf.int32), tf.cast(offsets, tf.int32))
        if dtype == "float32":
            x = to_float(x)
        cell_labels = tf.concat(
            [
                tf.gather(pointer_labels_t, image_index[:, :1]),
                tf.gather(value_labels_t, image_index[:, 1:]),
            ],
            axis=1,
        )
        # The named value cell and the window-1 after it, cyclic over the value cells.
        first = tf.gather(digit_to_cell, cell_labels[:, 0])
        window = tf.math.floormod(first[:, None] + steps, task.num_value_cells) + 1
        classes = tf.gather(cell_labels, window, batch_dims=1)
        y = token_data.tf_aggregate(task.aggregation, classes, task.num_classes)
        return {
            "x": x,
            "y": tf.cast(y, tf.int32),
            "cell_labels": cell_labels,
            "offsets": offsets,
            "image_index": image_index,
        }

    # One XLA computation for the hash, the labels and the copies (the composer's function is
    # inlined into it), as the token kind's tf_data does for its integer ops.
    return tf.function(examples, jit_compile=True, autograph=False)


def block_dataset(request=None, num_examples=None, /, *, dtype="float32", **fields):
    """A tf.data pipeline of batched block-style visual PVR examples ``(x, y)``.

    Args:
        request: a ``StreamRequest`` (``data.request``) of a ``BlockTask``, or the task, with
            ``num_examples`` and the request's other fields as keywords, as
            ``token_dataset``. Images come from the ``split``'s TFDS split in ``data_dir``
            (prepared; default ``TFDS_DATA_DIR`` or ~/tensorflow_datasets). ``holdout``: the
            Figure 6 holdout (2x2 only; default False): train never has classes 1-3 top
            right, 4-6 bottom left, 7-9 or 0 bottom right, test only those; the pointer is
            any digit. ``batch_size``: default 50, the paper's visual recipe's.
        dtype: ``"float32"`` (pixels in [0, 1]) or ``"uint8"`` (the raw pixels 0-255, the
            same images: a quarter of the bytes to write and to copy to an accelerator).

    Returns:
        ``tf.data.Dataset`` of (x (batch, *task.image_shape) of ``dtype``, y int32 (batch,)).

    Example:
        >>> ds = block_dataset(BlockTask(), 1000, split="train", seed=0,
        ...                    data_dir="DIR")
        >>> x, y = next(iter(ds))
        >>> x.shape, y.shape
        (TensorShape([50, 80, 80, 1]), TensorShape([50]))
    """
    r = stream_request(request, num_examples, fields, batch_size=50, holdout=False)  # checked
    task, num_examples, split, seed, holdout = r.task, r.num_examples, r.split, r.seed, r.holdout
    _check_task(task)
    check_dtype(dtype)
    key = stream_key(seed, split)
    examples = make_examples(task, key, split, holdout, r.data_dir, dtype)
    return batched_dataset(
        examples,
        num_examples,
        r.batch_size,
        key,
        shuffle=r.shuffle,
        epochs=r.epochs,
        first_epoch=r.first_epoch,
        outputs=("x", "y"),
        chunk_examples=CHUNK_EXAMPLES,
    )


def block_arrays(task, num_examples, *, split, seed, holdout=False, data_dir=None):
    """The first ``num_examples`` examples of a split as NumPy arrays, in index order.

    Row i is example i of the split, identical to what ``block_dataset`` yields for it.

    Returns:
        x float32 (N, *task.image_shape), y int32 (N,) and ``info``, a dict of
        ``cell_labels`` int64 (N, grid*grid) (the class of every cell, row-major, cell 0 the
        pointer digit), ``offsets`` int64 (N, grid*grid, 2) (row, col) of each image inside
        its cell, and ``image_index`` int64 (N, grid*grid) (each cell's image in its source
        split; cell 0 indexes MNIST, the others ``task.values``).

    Example:
        >>> task = BlockTask()
        >>> x, y, info = block_arrays(task, 8, split="test", seed=0,
        ...                           data_dir="DIR")
        >>> bool((task.label(info["cell_labels"]) == y).all())
        True
    """
    _check_task(task)
    r = StreamRequest(task, num_examples, split, seed, holdout)  # checks them
    num_examples, holdout = r.num_examples, r.holdout
    pixels = int(np.prod(task.image_shape))
    check_memory(check_size(num_examples), 8 * pixels + 48 * task.num_cells, "block_arrays")
    key = stream_key(seed, split)
    examples = make_examples(task, key, split, holdout, data_dir)
    return collect_arrays(
        examples, num_examples, key, ("x", "y", "cell_labels", "offsets", "image_index")
    )


def prepare(task, data_dir=None, *, download=True):
    """Prepares the TFDS images the task draws from in ``data_dir`` (the block kind's
    ``prepare``): a no-op when they are there; downloads them if allowed."""
    from pvr_keras.data import images

    images.prepare_sources(task.sources, data_dir, download=download)
