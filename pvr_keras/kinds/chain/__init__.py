"""The chain kind: multi-hop PVR, pointer chasing (the C-VPR of Abnar et al. 2023, "Adaptivity
and Modularity for Efficient Generalization Over Task Complexity"), in one folder.

- ``task``: ``ChainTask`` (its two forms, ``conditional`` and ``cycle``) and its NumPy rule:
  ``label``, ``count_hops`` and ``chain`` (the pointers followed);
- ``keys``: the stream key and hash slots the three generators share;
- ``numpy_data``: examples by index in plain NumPy, ``chain_arrays`` (``data.chain_arrays``);
- ``tf_data``: ``chain_dataset``, the tf.data stream;
- ``jax_data``: ``chain_stream``, its twin made on the JAX device;
- ``kind``: the ``TaskKind`` (registered as ``chain`` by ``pvr_keras.kinds``), its
  default training settings and its benchmark configs (``chain/...``, declared in its
  ``BenchmarkHooks``);
- ``benchmark``: the hooks the benchmark layer calls (source rows, TFDS features, the text
  form, scoring per hop count beside the majority-class baseline), at the benchmarks' layer.

The three generators make the same examples, bit for bit: example i of a split is a pure
function of (seed, split, i). Each example draws its hop count uniformly from the split's
(``hops``; the test split ``test_hops`` when given), so training on hops 1-4 and testing on
5-8 is one task: ``ChainTask(hops=(1, 2, 3, 4), test_hops=(5, 6, 7, 8))``.

Importing this package loads only the task (no framework); the kind registers when
``pvr_keras.kinds`` loads ``kind``, after the built-in kinds before it.
"""

from pvr_keras.kinds.chain.task import FORMS, ChainTask

__all__ = ["FORMS", "ChainTask"]
