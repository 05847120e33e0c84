"""Workarounds of third-party behaviour, each with where it was seen and when it stops.

Every workaround of a third-party bug or private API in pvr_keras lives here, with the
versions it was checked on and a guard that turns it off (or fails loudly) where it no
longer applies.
"""

import contextlib
import importlib.metadata
import os
import re
import sys
import tempfile


def _version(package):
    """(major, minor) of an installed package, or None."""
    try:
        parts = importlib.metadata.version(package).split(".")
    except importlib.metadata.PackageNotFoundError:
        return None
    return tuple(int(p) for p in parts[:2] if p.isdigit())


# TensorFlow logs from C++ before absl's logging is initialised, and absl writes every such
# line to stderr whatever its level, so TF_CPP_MIN_LOG_LEVEL does not hide them
# (abseil/abseil-cpp#1718 and #1957, tensorflow/tensorflow#102212): "WARNING: All log
# messages before absl::InitializeLog() ...", oneDNN and CUDA-stub notices, twice per
# process. On a machine without a GPU it also logs "failed call to cuInit" as an error.
# Checked with tensorflow 2.21.0. The filter only drops lines of these shapes, so on a
# TensorFlow that no longer writes them it changes nothing.
_TF_NOISE = (
    re.compile(r"^[IW]\d{4} [\d:. ]+\d+ [\w.]+:\d+\] "),  # absl INFO / WARNING lines
    re.compile(r"^WARNING: All log messages before absl::InitializeLog\(\) is called"),
    re.compile(r"^To enable the following instructions: .* rebuild TensorFlow"),
)
_NO_GPU_NOISE = re.compile(r"^E\d{4} [\d:. ]+\d+ cuda_\w+\.cc:\d+\] failed call to cuInit")


@contextlib.contextmanager
def _stderr_lines():
    """Captures what the process (C++ included) writes to file descriptor 2; yields a list
    that holds the captured lines once the block ends."""
    lines = []
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile(mode="w+b") as capture:
        os.dup2(capture.fileno(), 2)
        try:
            yield lines
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            capture.seek(0)
            lines.extend(capture.read().decode(errors="replace").splitlines())


def import_tensorflow_quietly():
    """Imports TensorFlow without its C++ INFO / WARNING start-up lines; returns the module.

    ``TF_CPP_MIN_LOG_LEVEL`` defaults to 2 (the user's value is kept); with a value below 2
    nothing is filtered. Error lines pass through, except "failed call to cuInit" on a machine
    that has no GPU. Only for programs (recipes, tools), never at library import: it swaps the
    process's standard error while TensorFlow loads.
    """
    if "tensorflow" in sys.modules:
        return sys.modules["tensorflow"]
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    if os.environ["TF_CPP_MIN_LOG_LEVEL"] < "2":
        import tensorflow as tf

        return tf
    with _stderr_lines() as lines:
        import tensorflow as tf

        has_gpu = bool(tf.config.list_physical_devices("GPU"))  # where cuInit is logged
    for line in lines:
        if any(p.match(line) for p in _TF_NOISE):
            continue
        if not has_gpu and _NO_GPU_NOISE.match(line):
            continue
        print(line, file=sys.stderr)
    return tf


# keras-tuner's chief/worker client waits ``oracle_client.TIMEOUT`` (an hour) on every call
# to the chief, a module constant with no public setting (keras_tuner/src/distribute/
# oracle_client.py; checked with keras-tuner 1.4.8). A worker whose chief died should give up
# in seconds, not an hour.
def set_chief_timeout(seconds):
    """Sets how long a keras-tuner worker waits on each call to its chief."""
    from keras_tuner.src.distribute import oracle_client

    if not hasattr(oracle_client, "TIMEOUT"):
        raise RuntimeError(
            f"keras-tuner {importlib.metadata.version('keras-tuner')} has no "
            "oracle_client.TIMEOUT (checked with 1.4.8): pvr_keras.compat.set_chief_timeout "
            "needs updating"
        )
    oracle_client.TIMEOUT = float(seconds)


def chief_timeout():
    """The seconds a keras-tuner worker waits on each call to its chief."""
    from keras_tuner.src.distribute import oracle_client

    return oracle_client.TIMEOUT


def tensorboard_only_if_used(tuner_class):
    """A keras-tuner Tuner class that imports tensorboard only for a TensorBoard callback.

    keras-tuner 1.4 (checked with 1.4.8) imports tensorboard in every trial on TensorFlow,
    with or without a TensorBoard callback, through ``Tuner._configure_tensorboard_dir``, and
    TensorFlow 2.21 no longer installs tensorboard. Where that private method is gone the
    class is returned unchanged.
    """
    if not hasattr(tuner_class, "_configure_tensorboard_dir"):
        return tuner_class

    class Tuner(tuner_class):
        def _configure_tensorboard_dir(self, callbacks, trial, execution=0):
            if any(type(c).__name__ == "TensorBoard" for c in callbacks):
                super()._configure_tensorboard_dir(callbacks, trial, execution)

    Tuner.__name__ = Tuner.__qualname__ = tuner_class.__name__
    Tuner.__doc__ = tuner_class.__doc__
    return Tuner


# Keras 3 with tf.distribute (checked with keras 3.15.1, tensorflow 2.21.0): ``fit`` first
# reduces one input batch over the replicas to build the model, which turns int tokens into
# float64 means under MirroredStrategy and fails outright under MultiWorkerMirroredStrategy
# (keras-team/keras#20585, tensorflow/tensorflow#72388). The model is built from the dataset's
# element spec instead (private ``Model._symbolic_build``), and ``fit`` (run in the strategy's
# scope) takes the strategy from the scope (private ``_distribute_strategy``).
def build_for_strategy(model, element_spec):
    """Builds a compiled model's state from a dataset's element spec, for ``fit`` under a
    tf.distribute strategy; call inside the strategy's scope."""
    import keras

    if not hasattr(model, "_symbolic_build") or not hasattr(model, "_distribute_strategy"):
        raise RuntimeError(
            f"keras {keras.__version__} has no Model._symbolic_build / _distribute_strategy "
            "(checked with 3.15): pvr_keras.compat.build_for_strategy needs updating"
        )
    specs = tuple(keras.KerasTensor(s.shape, s.dtype.name) for s in element_spec)
    model._symbolic_build(data_batch=specs)
    model._distribute_strategy = None  # fit reads tf.distribute.get_strategy() instead


def patch_multi_worker_metric_reduce():
    """Keras 3 ``fit`` under MultiWorkerMirroredStrategy reduces each scalar metric with
    ``strategy.reduce("MEAN", v, axis=0)``, which fails on scalars ("Invalid reduction
    dimension 0 for input with 0 dimensions"; tensorflow/tensorflow#72388,
    keras-team/keras#20585; checked with keras 3.15.1). The metric values are already
    synchronised across workers: reduce them without an axis (private
    ``keras.src.backend.tensorflow.trainer.reduce_per_replica``). Idempotent."""
    import keras
    from keras.src.backend.tensorflow import trainer

    if not hasattr(trainer, "reduce_per_replica") or not hasattr(
        trainer, "_collective_all_reduce_multi_worker"
    ):
        raise RuntimeError(
            f"keras {keras.__version__} moved its TensorFlow trainer's reduce_per_replica "
            "(checked with 3.15): pvr_keras.compat.patch_multi_worker_metric_reduce needs "
            "updating"
        )
    if getattr(trainer.reduce_per_replica, "_pvr_patched", False):
        return
    original = trainer.reduce_per_replica

    def reduce_per_replica(values, strategy, reduction):
        if reduction == "auto" and trainer._collective_all_reduce_multi_worker(strategy):
            return keras.tree.map_structure(lambda v: strategy.reduce("MEAN", v, None), values)
        return original(values, strategy, reduction)

    reduce_per_replica._pvr_patched = True
    trainer.reduce_per_replica = reduce_per_replica


def xla_slice_ops():
    """TensorFlow's XLA ``dynamic_slice`` and ``dynamic_update_slice`` ops, which the block
    composer uses for in-place copies inside one XLA program: not public TensorFlow API
    (``tensorflow.compiler.tf2xla.python.xla``; Keras's TensorFlow backend imports the same
    module for ``slice_update``; checked with tensorflow 2.21.0). Returns the module."""
    try:
        from tensorflow.compiler.tf2xla.python import xla
    except ImportError as err:
        raise RuntimeError(
            "this TensorFlow has no tensorflow.compiler.tf2xla.python.xla (checked with "
            f"2.21): pvr_keras.compat.xla_slice_ops needs updating ({err})"
        ) from None
    return xla


# Keras names models and layers from global counters ("functional", then "functional_1"), in
# keras.src.backend.common.global_state's "object_name_uids" (no public API reads or restores
# them; keras.backend.clear_session() would also drop the global distribution). A model built
# once to check it (training.runs.check_model) must not rename the model the run then trains:
# this puts the counters back. Checked with keras 3.15; fails loudly if the attribute moves.
@contextlib.contextmanager
def names_unchanged():
    """Keras's automatic layer and model names after the block are those before it."""
    import collections
    import copy

    from keras.src.backend.common import global_state

    saved = global_state.get_global_attribute("object_name_uids")
    if saved is not None and not isinstance(saved, dict):
        raise RuntimeError(f"Keras's object_name_uids is a {type(saved).__name__}; see compat.py")
    saved = copy.copy(saved)
    try:
        yield
    finally:
        counts = collections.defaultdict(int, saved or {})
        global_state.set_global_attribute("object_name_uids", counts)


# Coupled weight decay, as PyTorch's optimizers' ``weight_decay`` does it: decay * w added to
# each gradient before the update (for Adam: before its moments), where Keras's own
# ``weight_decay`` shrinks the weights apart from the gradient. Keras 3 has no public hook
# between the gradients and the update; ``_backend_apply_gradients`` is where both ``apply``
# and ``stateless_apply`` (the JAX trainer's and our populations' path) pass the gradients
# with their variables. Checked on Keras 3.15; the guard fails loudly once the method is gone.
_COUPLED = {}


def coupled_decay_optimizer(cls):
    """``cls`` (a Keras optimizer class) with a ``coupled_weight_decay`` argument, registered
    for saving (``pvr_keras>Coupled<Name>``)."""
    import keras

    if cls in _COUPLED:
        return _COUPLED[cls]
    if not hasattr(cls, "_backend_apply_gradients"):
        raise RuntimeError(f"keras {keras.__version__}: {cls.__name__} has no "
                           "_backend_apply_gradients; coupled weight decay needs another "
                           "hook (pvr_keras/compat.py)")  # fmt: skip

    class Coupled(cls):
        def __init__(self, *args, coupled_weight_decay=0.0, **kwargs):
            super().__init__(*args, **kwargs)
            self.coupled_weight_decay = float(coupled_weight_decay)

        def _backend_apply_gradients(self, grads, trainable_variables):
            decay = self.coupled_weight_decay
            if decay:
                grads = [g if g is None else g + keras.ops.cast(decay, g.dtype) * v.value
                         for g, v in zip(grads, trainable_variables, strict=True)]  # fmt: skip
            return super()._backend_apply_gradients(grads, trainable_variables)

        def get_config(self):
            return {**super().get_config(), "coupled_weight_decay": self.coupled_weight_decay}

    Coupled.__name__ = Coupled.__qualname__ = f"Coupled{cls.__name__}"
    _COUPLED[cls] = keras.saving.register_keras_serializable("pvr_keras")(Coupled)
    return _COUPLED[cls]
