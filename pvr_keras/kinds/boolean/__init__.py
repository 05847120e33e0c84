"""The boolean kind: PVR over bits in {+1, -1} (Abbe et al. 2022, "Learning to Reason with
Neural Networks"), regressed with the mean squared error, in one folder.

- ``task``: ``BooleanTask`` (``f3``, the paper's), ``BooleanFunction`` (the paper's other
  targets) and their NumPy rules, the frozen bits of a holdout (``frozen_mask``);
- ``domains``: seen domains (``Domain``: ``frozen:0,1``, ``any_of:0,1``, ``ball:6``, ...),
  the part of the cube training draws from; shared with the gotu kind;
- ``keys``: the stream key and the draw plans the three generators share;
- ``numpy_data``: examples by index in plain NumPy, ``boolean_examples``;
- ``tf_data``: ``boolean_dataset`` and ``boolean_arrays`` (``data.boolean_arrays``), tf.data;
- ``jax_data``: ``boolean_stream``, their twin made on the JAX device;
- ``kind``: the ``TaskKind`` (registered as ``boolean`` by ``pvr_keras.kinds``);
- ``benchmark``: its benchmark hooks (rows, TFDS features, text form, scoring).

The generators draw any Boolean target: a ``BooleanTask``, a ``BooleanFunction`` or the gotu
kind's ``FunctionTask`` (a function on a seen domain, ``kinds.gotu``), so the gotu kind names
them as its own. The three make the same examples, bit for bit: example i of a split is a
pure function of (seed, split, frozen bits, i). The old module paths (``tasks.boolean``,
``tasks.domains``, ``data.seen``) are aliases of these modules.

Importing this package loads only the task (no framework); the kind registers when
``pvr_keras.kinds`` loads ``kind``.
"""

from pvr_keras.kinds.boolean.task import BooleanFunction, BooleanTask, f3

__all__ = ["BooleanFunction", "BooleanTask", "f3"]
