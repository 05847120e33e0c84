"""The gotu kind: a Boolean function learned on a seen domain, tested on the whole cube (Abbe,
Bengio, Lotfi, Rizk, ICML 2023, "Generalization on the Unseen"), in one folder.

- ``task``: ``FunctionTask`` (a target on a seen domain, drawn uniformly or every point once);
- ``targets``: targets written as text (``x0x1 - 1.25x1x2``, ``parity:0,1``, ``cyclic:3``,
  ``staircase:4``), read into a ``BooleanFunction`` (``parse_target``) in one canonical
  spelling (``canonical_target``);
- ``kind``: the ``TaskKind`` (registered as ``gotu`` by ``pvr_keras.kinds``).

What it shares with the boolean kind stays in ``kinds.boolean``: the seen domains
(``kinds.boolean.domains``), ``BooleanFunction`` and the bits' checks (``kinds.boolean.task``),
its generators (NumPy, tf.data and JAX draw any Boolean target on its seen domain) and the
models of bits. The old path ``tasks.functions`` is an alias of ``task`` and ``targets``.

Importing this package loads only the task (no framework); the kind registers when
``pvr_keras.kinds`` loads ``kind``.
"""

from pvr_keras.kinds.gotu.task import FunctionTask

__all__ = ["FunctionTask"]
