"""The image-sequence kind: the token task with every token drawn as a random MNIST image of
that digit (Figure 2), in one folder. Its task is the token kind's ``TokenTask`` (at most 10
token values), so the folder holds no rule of its own:

- ``keys``: the two stream keys (the token stream's, and the images');
- ``tf_data``: ``sequence_dataset`` and ``sequence_arrays`` (``data.sequence_dataset``,
  ``data.sequence_arrays``), the tf.data stream, and ``prepare`` (the MNIST it reads);
- ``jax_data``: ``sequence_stream``, its twin made on the JAX device;
- ``kind``: the ``TaskKind`` (registered as ``sequence`` by ``pvr_keras.kinds``);
- ``benchmark``: its benchmark hooks (rows, TFDS features), at the benchmarks' layer.

Example i of a split has the tokens and label of the token stream's example i; importing
this package loads nothing (no framework); the kind registers when ``pvr_keras.kinds`` loads
``kind``.
"""
