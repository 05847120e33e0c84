"""Task kinds: one spec each (``TaskKind``), registered by name (``kind(name)``).

- ``token``: token sequences (Sections 3.1, 5, 6; Appendices C-E), ``TokenTask``;
- ``block``: 2x2 (or 3x3) blocks of MNIST / CIFAR-10 images (Section 3.2, Figures 3, 6-8),
  ``BlockTask``;
- ``sequence``: the token task drawn as MNIST digits (Figure 2), ``TokenTask``;
- ``boolean``: PVR over bits in {+1, -1} (Abbe et al. 2022), ``BooleanTask``, regressed with
  the mean squared error, a holdout freezing bits to +1;
- ``gotu``: a Boolean function learned on a seen domain (Abbe et al. 2023), ``FunctionTask``,
  tested on the whole cube;
- ``chain``: multi-hop PVR, pointer chasing (Abnar et al. 2023), ``ChainTask``.

(``tests/kinds/test_folders.py`` checks that this list is the built-in kinds registered.)
A built-in kind is one folder, ``kinds/<name>/``, one module a role: ``task`` (its task
dataclass and NumPy rule), ``keys``, ``numpy_data``, ``tf_data``, ``jax_data`` (its
generators), ``kind`` (its ``TaskKind`` and training settings) and ``benchmark`` (its
benchmark hooks), those a kind has; each module stands at its role's layer
(``tests/test_layout.py``). A kind of your own is one file or a folder of that shape:
its task dataclass (with ``label``), its generators and a ``TaskKind`` (see
``docs/extending.md``); ``kind("my_pkg.kinds:MY_KIND")`` finds it. Nothing here imports a
framework: the generators are named ``"module:function"`` and imported when a run needs
them. A kind's ``BenchmarkHooks`` make it a family of benchmark configs; their functions
(a folder's ``benchmark``, or ``<kind>_benchmark.py`` beside a kind in one file) stand at the
benchmark layer: they are named by reference, never imported from here.
"""

# The paper's order: the token task first.
from pvr_keras.kinds.token import kind as _token  # noqa: E402, F401, I001  (registers it)
from pvr_keras.kinds.block import kind as _block  # noqa: E402, F401, I001  (registers it)
from pvr_keras.kinds.sequence import kind as _sequence  # noqa: E402, F401, I001  (registers it)
from pvr_keras.kinds.boolean import kind as _boolean  # noqa: E402, F401, I001  (registers it)
from pvr_keras.kinds.gotu import kind as _gotu  # noqa: E402, F401, I001  (registers it)
from pvr_keras.kinds.chain import kind as _chain  # noqa: E402, F401, I001  (then chain)
from pvr_keras.kinds.spec import (
    BenchmarkHooks,
    DifficultyAxis,
    TaskKind,
    kind,
    kind_names,
    register_kind,
)

__all__ = ["BenchmarkHooks", "DifficultyAxis", "TaskKind", "kind", "kind_names", "register_kind"]
