"""TensorFlow's devices for the data pipelines, set once before TensorFlow runs any op.

The pipelines are tf.data on both Keras backends. Under JAX, TensorFlow only feeds batches from
the host, but left alone it would also claim (most of) every GPU's memory beside JAX's own
preallocation, a known failure of processes that mix the two: so its GPUs are hidden. Under
TensorFlow, GPU memory grows as needed instead of being claimed whole at start-up.
"""

import warnings

import tensorflow as tf

_DONE = []


def configure_devices(backend=None):
    """Hides TensorFlow's GPUs under the JAX backend; turns on memory growth under TensorFlow.

    Runs once per process (later calls do nothing). Called when a tf.data module of
    ``pvr_keras.data`` loads (they all import ``random.py``), when ``load_images`` first
    decodes a split, and by ``training.distribute`` on TensorFlow: before any TF op.

    Args:
        backend: the Keras backend; default ``keras.backend.backend()``.

    Returns:
        What was done: ``"hid N GPU(s)"``, ``"memory growth on N GPU(s)"`` or ``"no GPU"``.
    """
    if _DONE:
        return _DONE[0]
    if backend is None:
        import keras

        backend = keras.backend.backend()
    gpus = tf.config.list_physical_devices("GPU")
    done = "no GPU"
    try:
        if gpus and backend == "jax":
            tf.config.set_visible_devices([], "GPU")
            done = f"hid {len(gpus)} GPU(s) from TensorFlow (JAX owns them)"
        elif gpus:
            for gpu in gpus:
                tf.config.experimental.set_memory_growth(gpu, True)
            done = f"memory growth on {len(gpus)} GPU(s)"
    except RuntimeError as err:  # TensorFlow initialised its devices before us
        warnings.warn(
            f"TensorFlow's GPUs were initialised before pvr_keras could configure them "
            f"({err}); import pvr_keras.data before running TensorFlow ops",
            stacklevel=2,
        )
        done = "too late: TensorFlow's devices were already initialised"
    _DONE.append(done)
    return done
