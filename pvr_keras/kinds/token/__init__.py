"""The token kind: token sequences, the paper's main task (Sections 3.1, 5 and 6; Appendices
C-E), in one folder.

- ``task``: ``TokenTask`` (its window, aggregation, window mode, pointer and holdout tuple)
  and its NumPy rule, ``label``;
- ``keys``: the stream key and hash slots the three generators share (the image-sequence
  kind draws its tokens from them too);
- ``numpy_data``: examples by index in plain NumPy, ``token_examples`` (the benchmark rows);
- ``tf_data``: ``token_dataset`` and ``token_arrays`` (``data.token_dataset``,
  ``data.token_arrays``), the tf.data stream, and the TF twins of the token aggregations;
- ``jax_data``: ``token_stream``, its twin made on the JAX device, and the JAX twins of the
  aggregations;
- ``kind``: the ``TaskKind`` (registered as ``token`` by ``pvr_keras.kinds``; its training
  settings are the paper's token recipe, ``hyperparams.TOKEN``);
- ``benchmark``: its benchmark hooks (rows, TFDS features, the text form), at the benchmarks'
  layer.

The three generators make the same examples, bit for bit: example i of a split is a pure
function of (seed, split, holdout, i). Importing this package loads only the task (no
framework); the kind registers when ``pvr_keras.kinds`` loads ``kind``.
"""

from pvr_keras.kinds.token.task import WINDOW_MODES, TokenTask

__all__ = ["WINDOW_MODES", "TokenTask"]
