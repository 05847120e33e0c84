"""Many runs, one program: runs of one architecture trained together as a population (JAX).

    from pvr_keras.runconfig import Run
    from pvr_keras.training import run_population
    grid = [Run.make("token", seed=s, num_examples=30_000) for s in range(8)]
    records = run_population([(run, f"runs/{run.run_id}") for run in grid])

Runs whose programs have the same shapes (``key``: the kind, the model and its arguments, the
batch, the training-set size, the optimizer, its schedule kind and momentum, the dtype
policy) train as one compiled program: their parameters, optimizer states and batches are
stacked along a member axis, and one ``jax.vmap`` over Keras's ``stateless_call`` and the
optimizer's ``stateless_apply`` takes every member's step at once (``lax.scan`` over up to
``STEPS_PER_CALL`` steps per call). Members may differ in seed, learning rate and its
warm-up, epochs, weight decay, and in task fields that keep the shapes (window, aggregation,
holdout, domain, target): each member's learning rate and weight decay enter the step as its
own numbers.

Each member is the run it would be alone (``training.train``): the same folder, id, config
and record (plus ``population``: size, member index, engine), the same initial weights (built
after seeding with its own seed) and the same batches in the same order (its own stream,
resumed at its own epoch); the stacked kernels round differently from a lone run's, so its
losses agree with the run alone to float32 rounding, not bit for bit (``tests``: within 1e-4
relative over the first 100 steps on a CPU). At each epoch's end every member's values are
written back into its own Keras model, which evaluates, records and checkpoints the epoch
exactly as a lone run does (``epochs.EpochRecorder`` and the run's own callbacks), so tables,
figures, ``evaluate.py`` and resume cannot tell. A member that finishes (its epochs, an early
stop, a NaN loss) stops changing while the others go on; a NaN in one member reaches no other
(the members share no operation). A population killed anywhere resumes from each member's
last checkpoint, bit-identically to one that was not killed; a member already finished is
skipped; a member may also resume alone, or alone runs in a population.

The Degree-Curriculum (``curriculum_leap`` > 0) changes a run's training set per stage: such
a run trains alone (``run_population`` says so). A population trains on one device.
"""

import contextlib
import dataclasses
import json
import math
import time

import numpy as np

from pvr_keras import files
from pvr_keras.errors import ConfigError

ENGINE = "jax.vmap"
# Steps per compiled call (a lax.scan): the host looks at the members once per call.
STEPS_PER_CALL = 32
# The share of the free memory a population may plan to use.
MEMORY_SHARE = 0.8


def key(run):
    """What runs must share to train in one population: a program of the same shapes (the
    kind, the model and its arguments, the batch and training-set size, the optimizer, its
    schedule kind and momentum, Adam's epsilon and the coupled weight decay, the dtype policy)
    and the same input."""
    train = run.train
    arguments = json.dumps(run.model_arguments(), sort_keys=True, default=str)
    return (run.kind, run.model, arguments, train.batch_size, run.flat()["num_examples"],
            train.optimizer, train.schedule, train.momentum, train.adam_epsilon,
            train.coupled_weight_decay, train.dtype_policy, run.system.input,
            bool(train.curriculum_leap))  # fmt: skip


def groups(runs, size):
    """``runs`` split into populations of at most ``size`` runs of one ``key``, each in the
    order given (a grid's order: the first population holds the first runs)."""
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ConfigError(f"a population's size must be a positive integer; received {size!r}")
    buckets = {}
    for run in runs:
        buckets.setdefault(key(run), []).append(run)
    found = []
    for bucket in buckets.values():
        found += [bucket[i : i + size] for i in range(0, len(bucket), size)]
    first = {id(run): i for i, run in enumerate(runs)}
    return sorted(found, key=lambda group: first[id(group[0])])


def member_bytes(model, batch_size):
    """Rough bytes one member needs on the device: its parameters, gradients, updated
    parameters and optimizer state (float32), and a batch's activations kept for the
    backward pass (every layer's output, twice over: the saved value and its gradient)."""
    params = sum(math.prod(v.shape) for v in model.weights)
    optimizer = model.optimizer
    slots = 2 if optimizer is None or not optimizer.built else (
        sum(math.prod(v.shape) for v in optimizer.variables) / max(params, 1))  # fmt: skip
    activations = 0
    for layer in model.layers:
        try:
            outputs = layer.output
        except (AttributeError, ValueError):
            continue
        for out in outputs if isinstance(outputs, list | tuple) else [outputs]:
            shape = getattr(out, "shape", None)
            if shape is not None:
                activations += math.prod(d for d in shape[1:] if d is not None)
    return int(4 * params * (3 + slots) + 2 * 4 * batch_size * activations)


def free_bytes():
    """Free memory of the device a population trains on: the accelerator's (JAX's memory
    stats), else the host's available memory."""
    import jax

    device = jax.devices()[0]
    stats = device.memory_stats() if device.platform != "cpu" else None
    if stats and "bytes_limit" in stats:
        return int(stats["bytes_limit"] - stats.get("bytes_in_use", 0))
    try:
        meminfo = files.read_plain("/proc/meminfo", 1 << 20).decode()
    except OSError:
        return None
    for line in meminfo.splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) * 1024
    return None


def check_fits(run, size, free=None):
    """Refuses, in one line, a population of ``size`` runs like ``run`` that would not fit in
    the device's free memory (``member_bytes`` each; ``free`` default ``free_bytes()``)."""
    from pvr_keras import compat, models
    from pvr_keras.training.compiling import compile_model

    with compat.names_unchanged():  # the runs' own builds get the names they would have had
        model = models.get(run.model, **run.model_arguments())
        compile_model(model, run.train, run.flat()["num_examples"], run.spec.metric)
        model.optimizer.build(model.trainable_variables)
        need = member_bytes(model, run.train.batch_size)
        count = model.count_params()
        del model
    free = free_bytes() if free is None else free
    if free is not None and need * size > MEMORY_SHARE * free:
        fits = max(int(MEMORY_SHARE * free // max(need, 1)), 0)
        raise ConfigError(
            f"a population of {size} {run.model} runs needs about {need * size / 1e9:.1f} GB "
            f"({need / 1e9:.2f} GB a member: {count:,} parameters with their gradients and "
            f"optimizer state, and a batch of {run.train.batch_size}'s activations); "
            f"{free / 1e9:.1f} GB is free here: give --population {fits or 1} or less"
        )
    return need


def check_grid(runs, size):
    """``check_fits`` for the largest population of each ``key`` of a grid's ``runs``."""
    largest = {}
    for group in groups(list(runs), size):
        if len(group) > len(largest.get(key(group[0]), ())):
            largest[key(group[0])] = group
    for group in largest.values():
        if len(group) > 1:
            check_fits(group[0], len(group))


def run_population(runs, *, size=None, input=None, save_model=True, verbose=0,
                   callbacks=None, log=print):  # fmt: skip
    """Trains ``runs`` (``(Run, out)`` pairs) in populations of at most ``size`` (default:
    as many as share a ``key``); returns their records in order.

    Args:
        runs: ``(runconfig.Run, out folder)`` pairs.
        size: members per population (None: all the runs of one key together).
        input, save_model, verbose: as ``training.runs.run``.
        callbacks: ``run -> list of Keras callbacks`` for each member (or None).
        log: where the population's progress lines go.
    """
    runs = list(runs)
    by_id = {id(run): (run, out) for run, out in runs}
    size = size or max(len(runs), 1)
    records = {}
    for group in groups([run for run, _ in runs], size):
        arguments = [
            dict(
                run=run,
                out_dir=by_id[id(run)][1],
                input=input,
                save_model=save_model,
                verbose=verbose,
                callbacks=callbacks(run) if callbacks else None,
            )  # fmt: skip
            for run in group
        ]
        check_fits(group[0], len(group))
        for run, record in zip(group, train(arguments, log=log), strict=True):
            records[id(run)] = record
    return [records[id(run)] for run, _ in runs]


@dataclasses.dataclass
class _Member:
    index: int
    prepared: object
    model: object = None
    first_epoch: int = 0
    num_epochs: int = 0
    stopped: bool = False
    batches: object = None
    iteration: int = 0
    callbacks: list = dataclasses.field(default_factory=list)

    @property
    def run(self):
        return self.prepared.run

    def active(self, epoch):
        return not self.stopped and self.first_epoch <= epoch < self.num_epochs


def train(arguments, *, log=print):
    """Trains the runs of ``arguments`` (``training.train`` keyword arguments each: the
    ``run``, its ``out_dir`` and options) as one population; returns their records in order.
    A run already finished is returned as it is; a Degree-Curriculum run trains alone."""
    import keras

    from pvr_keras.training import loop

    if keras.backend.backend() != "jax":
        raise ConfigError(
            f"a population trains on the JAX backend (one jax.vmap over its members); this "
            f"process runs Keras on {keras.backend.backend()}: give --backend jax, or "
            f"--population 1 to train the runs one after another"
        )
    results = [None] * len(arguments)
    prepared = []
    for i, kwargs in enumerate(arguments):
        if kwargs["run"].train.curriculum_leap:
            log(f"{kwargs['out_dir']}: the Degree-Curriculum changes its training set per "
                f"stage, so this run trains alone, not in the population")  # fmt: skip
            results[i] = loop.train(**kwargs)
            continue
        found = loop.train(**kwargs, defer=True)
        if isinstance(found, loop.Prepared):
            prepared.append(_Member(i, found))
        else:
            results[i] = found
    for member in prepared:
        if member.prepared.distribution.num_replicas != 1:
            raise ConfigError("a population trains on one device; give --devices 1")
    with contextlib.ExitStack() as stack:
        members = []
        for member in prepared:
            found = stack.enter_context(member.prepared.locked())
            if found is not None:
                results[member.index] = found
            else:
                members.append(member)
        if members:
            _train_members(members, log)
        for member in members:
            p = member.prepared
            results[member.index] = loop.end(p.run, member.model, p.distribution)
    return results


def _train_members(members, log):
    from pvr_keras.training import epochs, loop

    size = len(members)
    for position, member in enumerate(members):
        p = member.prepared
        info = {"size": size, "member": position, "engine": ENGINE}
        member.model, member.first_epoch, member.num_epochs = loop.start(
            p.run, p.build_model, p.distribution, population=info
        )
        engine_callbacks = p.distribution.callbacks()
        member.callbacks = [epochs.EpochRecorder(p.run, engine_callbacks),
                            *p.run.options.callbacks]  # fmt: skip
        steps = p.run.options.recipe.steps_per_epoch(p.run.data.num_examples)
        for callback in member.callbacks:
            callback.set_model(member.model)
            callback.set_params({"epochs": member.num_epochs, "steps": steps, "verbose": 0})
    sizes = {m.run.data.num_examples for m in members}
    batch_sizes = {m.run.options.recipe.batch_size for m in members}
    if len(sizes) != 1 or len(batch_sizes) != 1:
        raise ConfigError(
            "the members of a population need one training-set size and one batch size; "
            f"received sizes {sorted(sizes)} and batches {sorted(batch_sizes)} "
            "(population.groups splits a grid into populations that share them)"
        )
    engine = _Engine(members)
    for member in members:
        for callback in member.callbacks:
            callback.on_train_begin()
    epoch = min(m.first_epoch for m in members)
    last = max(m.num_epochs for m in members)
    while any(m.active(e) for m in members for e in range(epoch, last)):
        active = [m.active(epoch) for m in members]
        if any(active):
            start = time.perf_counter()
            for member, on in zip(members, active, strict=True):
                if on:
                    for callback in member.callbacks:
                        callback.on_epoch_begin(epoch)
            logs = engine.epoch(active)
            trained = time.perf_counter()
            for member, on, member_logs in zip(members, active, logs, strict=True):
                if on:
                    _end_epoch(member, epoch, member_logs, engine, trained - start)
            seconds = f"{trained - start:.1f} s training, {time.perf_counter() - trained:.1f} s"
            losses = [f"{lg['loss']:.4f}" for lg, on in zip(logs, active, strict=True) if on]
            log(f"[population of {size}] epoch {epoch + 1}/{last} ({seconds} evaluating): "
                f"{sum(active)} training, loss {' '.join(losses)}")  # fmt: skip
        epoch += 1
    for member in members:
        for callback in member.callbacks:
            callback.on_train_end()


def _end_epoch(member, epoch, logs, engine, seconds):
    """A member's epoch end, as a lone run's: its values back in its model, the validation
    set, then its callbacks (record, checkpoint, the run's own). Its history's
    ``train_seconds`` are the population's ``seconds`` of steps; its ``eval_seconds`` its own
    evaluations."""
    member.callbacks[0].trained_for(seconds)  # its EpochRecorder
    engine.write_back(member)
    data = member.run.data
    engine_callbacks = member.prepared.distribution.callbacks()
    if data.validation is not None:
        result = member.model.evaluate(data.validation, verbose=0, return_dict=True,
                                       callbacks=engine_callbacks)  # fmt: skip
        logs["val_loss"], logs["val_accuracy"] = result["loss"], result["accuracy"]
    member.model.stop_training = False
    for callback in member.callbacks:
        callback.on_epoch_end(epoch, logs)
    if member.model.stop_training or member.run.saw_nan:
        member.stopped = True


class _Batches:
    """A member's training batches in its run's order, from its epoch on."""

    def __init__(self, stream):
        self.stream = stream
        self.index = 0
        self.iterator = None if hasattr(stream, "__getitem__") else iter(stream)

    def next(self):
        if self.iterator is None:
            batch = self.stream[self.index]
            self.index += 1
        else:
            batch = next(self.iterator)
        x, y = batch[0], batch[1]
        return _array(x), _array(y)


def _array(value):
    import jax.numpy as jnp

    if hasattr(value, "numpy") and not hasattr(value, "block_until_ready"):
        value = value.numpy()  # a TensorFlow tensor from a tf.data stream
    return jnp.asarray(value)


class _Engine:
    """The members' stacked state (``stacked.Stack``) and their epochs: batches, learning
    rates and the calls of an epoch."""

    def __init__(self, members):
        from pvr_keras.training.stacked import Stack

        self.members = members
        self.stack = Stack([m.model for m in members], members[0].run.data.metric)
        for member in members:
            member.iteration = int(np.asarray(member.model.optimizer.iterations.value))
            member.batches = _Batches(member.run.data.make_train(member.first_epoch))
        recipe = members[0].run.options.recipe
        self.steps = recipe.steps_per_epoch(members[0].run.data.num_examples)
        self.num_examples = members[0].run.data.num_examples
        self.batch_size = recipe.batch_size

    def _learning_rates(self, member, count):
        """The member's learning rate at each of its next ``count`` steps, as its optimizer
        computes it (the schedule of its iterations before each update)."""
        import keras

        schedule = member.model.optimizer._learning_rate
        if isinstance(schedule, keras.optimizers.schedules.LearningRateSchedule):
            import jax

            its = np.arange(member.iteration, member.iteration + count, dtype="int32")
            return np.asarray(jax.vmap(schedule)(its), "float32")  # its cond: one per step
        value = float(np.asarray(keras.ops.convert_to_numpy(member.model.optimizer.learning_rate)))
        return np.full(count, value, "float32")

    def _chunks(self):
        """``(first step, steps)`` of the epoch's calls: runs of equal batch size, at most
        ``STEPS_PER_CALL`` steps each, of one length where a divisor of the epoch's full
        batches allows (each length of call is a program to compile); the last batch of an
        epoch may be smaller."""
        full = self.num_examples // self.batch_size
        cap = min(STEPS_PER_CALL, full)
        divisor = max((k for k in range(1, cap + 1) if full % k == 0), default=1)
        length = divisor if divisor >= cap // 4 else cap
        chunks = [(step, min(length, full - step)) for step in range(0, full, length)]
        if self.steps > full:
            chunks.append((full, 1))
        return chunks

    def epoch(self, active):
        """Trains one epoch of every active member; returns each member's logs (``loss``,
        ``accuracy``: the epoch's means, as Keras reports them; None for the others)."""
        import jax.numpy as jnp

        rates = [self._learning_rates(m, self.steps) if on else np.zeros(self.steps, "float32")
                 for m, on in zip(self.members, active, strict=True)]  # fmt: skip
        rates = np.stack(rates, axis=1)  # (steps, members)
        losses, hits, weights = [], [], []
        for first, count in self._chunks():
            xs, ys = self._batches(active, count)
            loss, hit = self.stack.steps(xs, ys, rates[first : first + count], active)
            n = ys.shape[2]
            losses.append(jnp.sum(loss, axis=0) * n)
            hits.append(jnp.sum(hit, axis=0))
            weights.append(n * count)
        total = sum(weights)
        loss = np.asarray(sum(losses)) / total
        accuracy = np.asarray(sum(hits)) / total
        for member, on in zip(self.members, active, strict=True):
            if on:
                member.iteration += self.steps
        return [
            {"loss": float(loss[i]), "accuracy": float(accuracy[i])} if on else None
            for i, on in enumerate(active)
        ]

    def _batches(self, active, count):
        """``(xs, ys)`` of ``count`` steps: (steps, members, batch, ...) from each active
        member's stream; zeros for the others (their step is not kept)."""
        import jax.numpy as jnp

        per_member = []
        for member, on in zip(self.members, active, strict=True):
            per_member.append([member.batches.next() for _ in range(count)] if on else None)
        like = next(b for b in per_member if b is not None)
        xs, ys = [], []
        for batches in per_member:
            batches = batches or [(jnp.zeros_like(x), jnp.zeros_like(y)) for x, y in like]
            xs.append(jnp.stack([x for x, _ in batches]))
            ys.append(jnp.stack([y for _, y in batches]))
        return jnp.stack(xs, axis=1), jnp.stack(ys, axis=1)

    def write_back(self, member):
        """The member's slice of the stacked state into its own Keras model and optimizer."""
        self.stack.write_back(self.members.index(member))
