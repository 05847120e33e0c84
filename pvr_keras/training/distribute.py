"""Data-parallel training on several devices or hosts, through each backend's own engine.

- one device: plain Keras, on either backend.
- several devices, one host: ``tf.distribute.MirroredStrategy`` on TensorFlow,
  ``keras.distribution.DataParallel`` on JAX.
- several hosts: ``tf.distribute.MultiWorkerMirroredStrategy`` configured by ``TF_CONFIG``
  on TensorFlow; ``jax.distributed`` (through ``keras.distribution.initialize`` and its
  ``KERAS_DISTRIBUTION_*`` variables) with a ``DataParallel`` mesh over every process's
  devices on JAX.

The global batch stays the recipe's batch: every step sees the same examples as a one-device
run, split over the replicas, and the gradients are averaged over the whole batch. Call
``setup`` at the start of the program (a multi-host engine must start before the backend runs
anything), then build, compile and fit inside ``placement.scope()``; ``training.train`` does
this when given ``distribution=setup(...)`` or ``devices=N``. The cluster a multi-host run
reads from its environment is checked in ``training.cluster``.

A multi-host launch, one command per host (here two processes on one machine)::

    # TensorFlow: TF_CONFIG names every worker; task.index is this process
    TF_CONFIG='{"cluster": {"worker": ["127.0.0.1:12345", "127.0.0.1:12346"]},
                "task": {"type": "worker", "index": 0}}' python recipes/token_pvr.py ...
    # JAX: Keras's own variables, read by keras.distribution.initialize
    KERAS_DISTRIBUTION_JOB_ADDRESSES=127.0.0.1:12345 KERAS_DISTRIBUTION_NUM_PROCESSES=2 \\
        KERAS_DISTRIBUTION_PROCESS_ID=0 python recipes/token_pvr.py --backend jax ...
"""

import contextlib
import dataclasses
import os
import pathlib
from typing import Any

import keras

from pvr_keras import compat
from pvr_keras.training.cluster import (  # noqa: F401  (importable from here, as before)
    JAX_CLUSTER_VARS,
    TF_CONFIG_JOBS,
    parse_jax_cluster,
    parse_tf_config,
)

SINGLE = "single-device"
MIRRORED = "tf.distribute.MirroredStrategy"
MULTI_WORKER = "tf.distribute.MultiWorkerMirroredStrategy"
DATA_PARALLEL = "keras.distribution.DataParallel"


class SynchronousDispatch(keras.callbacks.Callback):
    """Keeps Keras's batch-end callbacks on the thread that dispatches the steps.

    Keras on JAX hands each batch's logs to a thread pool that reads them from the device
    while the main thread dispatches the next programs. With a model over several devices
    (``DataParallel``) two threads then launch multi-device programs at once, and XLA's CPU
    runtime can queue them in different orders on different devices: each device waits in
    the other's all-reduce, and after 40 s the process aborts (``rendezvous.cc: Termination
    timeout for all reduce``; seen on a 2-core CPU split in two under load, Keras 3.15, jax
    0.10.2; the threads seen with py-spy). A callback that defines the batch-end hooks turns
    that thread pool off (Keras's ``CallbackList._configure_async_dispatch``).
    """

    def on_train_batch_end(self, batch, logs=None):
        pass

    def on_test_batch_end(self, batch, logs=None):
        pass

    def on_predict_batch_end(self, batch, logs=None):
        pass


@dataclasses.dataclass(frozen=True)
class Placement:
    """Where the replicas of a run live, and the engine that keeps them in step.

    Attributes:
        engine: ``SINGLE``, ``MIRRORED``, ``MULTI_WORKER`` or ``DATA_PARALLEL``.
        devices: this process's devices that hold a replica.
        num_replicas: replicas over all processes (the global batch is split this many ways).
        num_processes: processes (hosts) training together.
        process_index: this process's index; 0 is the chief, which writes the run folder.
        strategy: the ``tf.distribute.Strategy`` or ``keras.distribution.Distribution``.
    """

    engine: str
    devices: tuple
    num_replicas: int = 1
    num_processes: int = 1
    process_index: int = 0
    strategy: Any = dataclasses.field(default=None, repr=False, compare=False)

    @property
    def is_chief(self):
        return self.process_index == 0

    @property
    def max_steps_per_execution(self):
        """The most training steps one compiled call may take on this engine (None: no
        limit): 1 under tf.distribute, where Keras's multi-step loop on a distributed
        dataset fails to build (TF 2.21, Keras 3.15: "has_next" in the while loop's
        condition)."""
        return 1 if self.engine in (MIRRORED, MULTI_WORKER) else None

    def callbacks(self):
        """Callbacks every ``fit`` / ``evaluate`` of this placement needs: on several JAX
        devices, ``SynchronousDispatch``."""
        if self.engine == DATA_PARALLEL and self.num_replicas > 1:
            return [SynchronousDispatch()]
        return []

    def scope(self):
        """Context to build, compile, restore and fit the model in."""
        if self.strategy is None:
            return contextlib.nullcontext()
        return self.strategy.scope()

    def describe(self):
        """JSON-ready summary for the run record."""
        return {
            "engine": self.engine,
            "num_replicas": self.num_replicas,
            "num_processes": self.num_processes,
            "process_index": self.process_index,
            "devices": list(self.devices),
        }

    def run_dir(self, out_dir):
        """The chief writes ``out_dir``; every other process its own ``out_dir/process<i>``."""
        out_dir = pathlib.Path(out_dir)
        return out_dir if self.is_chief else out_dir / f"process{self.process_index}"

    def distribute(self, dataset):
        """A batched ``(x, y)`` dataset as this process must feed it to ``fit``/``evaluate``.

        Each batch is padded to a multiple of the replica count with zero-weight rows, the
        real rows weighing padded/real: the weighted mean loss and the (weighted) accuracy
        of the padded batch equal those of the real batch, and every replica gets the same
        number of rows. Without it a ragged last batch fails on JAX (a sharded array must
        divide evenly) and on TensorFlow gives uneven replicas whose means are averaged as
        if they were even. The engines then split each batch themselves: tf.distribute over
        replicas and workers; on JAX each process keeps its contiguous share, which
        keras.distribution assembles into the global batch. A stream made on the device
        (``data.jax_stream.DeviceStream``) is padded the same way, each device making its
        own rows (``with_distribution``).
        """
        if dataset is None or self.engine == SINGLE:
            return dataset
        if hasattr(dataset, "with_distribution"):  # made on the device (data.jax_stream)
            if self.engine != DATA_PARALLEL:
                raise ValueError(
                    f"device input shards over keras.distribution.DataParallel on JAX; "
                    f"received the {self.engine} engine (use the tf.data input)"
                )
            return dataset.with_distribution(self.strategy)
        if self.engine == DATA_PARALLEL:
            pad = _padder(self.num_replicas, self.num_processes, self.process_index)
        else:
            pad = _padder(self.num_replicas, 1, 0)
        return dataset.map(pad)

    def distribute_data(self, data):
        """``TrainData`` with every stream passed through ``distribute``."""
        make_train = data.make_train
        return dataclasses.replace(
            data,
            make_train=lambda first_epoch: self.distribute(make_train(first_epoch)),
            test=self.distribute(data.test),
            train_eval=self.distribute(data.train_eval),
            validation=self.distribute(data.validation),
            final_evals={k: self.distribute(v) for k, v in data.final_evals.items()},
        )

    def prepare(self, model, element_spec):
        """Builds a compiled model's state for ``fit``; call inside ``scope()``.

        Under tf.distribute, works around two Keras 3 bugs (``compat.build_for_strategy``);
        the engine is unchanged.
        """
        if self.engine not in (MIRRORED, MULTI_WORKER):
            return
        compat.build_for_strategy(model, element_spec)


def _padder(multiple, num_processes, process_index):
    import tensorflow as tf

    def pad(x, y, w=None):
        real = tf.shape(y)[0]
        size = (real + multiple - 1) // multiple * multiple
        extra = size - real
        weight = tf.cast(size, tf.float32) / tf.cast(real, tf.float32)
        real_w = tf.fill([real], weight) if w is None else tf.cast(w, tf.float32) * weight
        w = tf.concat([real_w, tf.zeros([extra])], 0)
        x = tf.pad(x, [[0, extra]] + [[0, 0]] * (len(x.shape) - 1))
        y = tf.pad(y, [[0, extra]] + [[0, 0]] * (len(y.shape) - 1))
        share = size // num_processes
        keep = slice(process_index * share, (process_index + 1) * share)
        return x[keep], y[keep], w[keep]

    return pad


def _check_devices(devices):
    if devices is not None and (
        isinstance(devices, bool) or not isinstance(devices, int) or devices < 1
    ):
        raise ValueError(f"devices must be None (all) or a positive integer; received {devices!r}")


def _pick(devices, available, kind):
    """The first ``devices`` of ``available`` (default: all accelerators, else one CPU)."""
    if devices is None:
        return available if kind != "CPU" else available[:1]
    if devices > len(available):
        raise ValueError(
            f"devices={devices} asks for more devices than this host has: {len(available)} "
            f"visible {kind} device(s) ({', '.join(map(str, available))})"
        )
    return available[:devices]


def split_cpu(count):
    """Makes the host CPU appear as ``count`` devices, to try multi-device code without GPUs.

    Must run before the backend initialises its devices (first thing in a program).

    Example:
        >>> split_cpu(2)  # then setup(2) runs two replicas on the CPU
    """
    _check_devices(count)
    if keras.backend.backend() == "jax":
        import jax

        try:
            jax.config.update("jax_num_cpu_devices", count)
        except RuntimeError as e:
            raise RuntimeError(
                f"split_cpu must run before JAX initialises its devices: {e}"
            ) from None
        return
    import tensorflow as tf

    cpu = tf.config.list_physical_devices("CPU")[0]
    try:
        config = [tf.config.LogicalDeviceConfiguration() for _ in range(count)]
        tf.config.set_logical_device_configuration(cpu, config)
    except RuntimeError as e:
        raise RuntimeError(
            f"split_cpu must run before TensorFlow initialises its devices: {e}"
        ) from None


def setup(devices=None):
    """Chooses the engine for this process from the backend, the environment and ``devices``.

    Args:
        devices: ``None`` uses every visible accelerator, or the CPU when there is none; an
            integer N uses the first N devices. In a multi-host run (``TF_CONFIG`` on
            TensorFlow, ``KERAS_DISTRIBUTION_*`` on JAX) each process uses all its devices.

    Returns:
        A ``Placement``.

    Raises:
        ValueError: ``devices`` not a positive integer, more devices asked than exist, or a
            malformed ``TF_CONFIG`` / ``KERAS_DISTRIBUTION_*`` environment.

    Example:
        >>> placement = setup()          # one CPU here: plain Keras
        >>> placement.engine, placement.num_replicas
        ('single-device', 1)
    """
    _check_devices(devices)
    if keras.backend.backend() == "jax":
        return _setup_jax(devices)
    if keras.backend.backend() == "tensorflow":
        return _setup_tensorflow(devices)
    raise ValueError(f"backend must be tensorflow or jax; received {keras.backend.backend()!r}")


def _setup_tensorflow(devices):
    import tensorflow as tf

    from pvr_keras.data.tf_setup import configure_devices

    configure_devices()  # memory growth, before the strategy initialises the GPUs

    if os.environ.get("TF_CONFIG"):
        cluster, task_type, index = parse_tf_config(os.environ["TF_CONFIG"])
        strategy = tf.distribute.MultiWorkerMirroredStrategy()
        local = tuple(strategy.extended.worker_devices)
        if devices is not None and devices != len(local):
            raise ValueError(
                f"in a multi-worker run each worker uses all its {len(local)} visible "
                f"device(s); received devices={devices} (hide devices with "
                "CUDA_VISIBLE_DEVICES instead)"
            )
        order = [(job, i) for job in TF_CONFIG_JOBS for i in range(len(cluster.get(job, ())))]
        compat.patch_multi_worker_metric_reduce()
        return Placement(
            MULTI_WORKER,
            local,
            strategy.num_replicas_in_sync,
            len(order),
            order.index((task_type, index)),
            strategy,
        )
    accelerators = tf.config.list_logical_devices("GPU")
    kind = "GPU" if accelerators else "CPU"
    names = tuple(d.name for d in (accelerators or tf.config.list_logical_devices("CPU")))
    chosen = _pick(devices, names, kind)
    if len(chosen) == 1:
        return Placement(SINGLE, chosen)
    return Placement(MIRRORED, chosen, len(chosen), strategy=tf.distribute.MirroredStrategy(chosen))


def _setup_jax(devices):
    cluster = parse_jax_cluster()
    if cluster is not None:
        addresses, count, index = cluster
        keras.distribution.initialize(addresses, count, index)
    import jax

    if cluster is not None:
        local = tuple(jax.local_devices())
        if devices is not None and devices != len(local):
            raise ValueError(
                f"in a multi-process run each process uses all its {len(local)} visible "
                f"device(s); received devices={devices}"
            )
        chosen = jax.devices()
    else:
        available = jax.devices()
        kind = "CPU" if available[0].platform == "cpu" else available[0].platform.upper()
        chosen = _pick(devices, available, kind)
        local = tuple(chosen)
        if len(chosen) == 1:
            return Placement(SINGLE, tuple(map(str, chosen)))
    # Our pipelines pad and split batches themselves (``Placement.distribute``): Keras's
    # auto-sharding needs a static batch size and drops ragged last batches.
    strategy = keras.distribution.DataParallel(devices=chosen, auto_shard_dataset=False)
    return Placement(
        DATA_PARALLEL,
        tuple(map(str, local)),
        len(chosen),
        jax.process_count(),
        jax.process_index(),
        strategy,
    )
