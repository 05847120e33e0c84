"""One function that turns a run config into a finished, recorded run, for every task kind.

    from pvr_keras.runconfig import Run
    from pvr_keras.training import runs
    record = runs.run(Run.make("token", window=2, num_examples=30_000), "runs/w2")

``run`` trains it with ``training.train`` (which builds the kind's task, streams and model, a
registered name or a builder reference, from the run; records, checkpoints, resume) and saves
the model.
The recipes, the sweep engine, fast_slow and the benchmark all train through it, so a run of
a given config is the same run whichever of them starts it.
"""

import contextlib
import dataclasses
import pathlib
import threading

from pvr_keras import files, registry
from pvr_keras.errors import ConfigError


def run(run, out, *, input=None, title=None, save_model=True, verbose=0, distribution=None,
        callbacks=None):  # fmt: skip
    """Trains one ``runconfig.Run`` into ``out`` (``training.train``, saving the model and
    quiet by default); returns its run record.

    Args:
        run: the ``Run`` (any kind).
        out: run folder.
        input, title, save_model, verbose, distribution, callbacks: as ``training.train``;
            without a ``distribution``, the run's ``system.devices``.

    The record's ``config`` is the run's identity (``runconfig.identity``), its ``kind`` the
    task kind, ``system`` how it ran (data dir, input asked for), ``engine_choice`` how its
    backend was chosen (``engines.choice``), and ``model_source`` /
    ``kind_source`` / ``aggregation_source`` the absolute path of a builder, kind or
    aggregation given by file (``record_entries``).
    """
    from pvr_keras import training

    arguments = dict(run=run, out_dir=out, input=input, title=title, save_model=save_model,
                     verbose=verbose, distribution=distribution, callbacks=callbacks)  # fmt: skip
    if getattr(_deferring, "on", False):  # collected for a population (``deferring``)
        return Deferred(arguments)
    return training.train(**arguments)


@dataclasses.dataclass
class Deferred:
    """A run that ``run`` did not train, inside ``deferring()``: its ``training.train``
    arguments, for a population to train with others."""

    arguments: dict


_deferring = threading.local()


@contextlib.contextmanager
def deferring():
    """Inside, ``run`` returns a ``Deferred`` instead of training: how a sweep collects what
    its trainer (``(run, run_dir) -> runs.run(...)``, with the callbacks it adds) would train,
    to train it in a population (``sweeps.run_sweep(population=K)``)."""
    before = getattr(_deferring, "on", False)
    _deferring.on = True
    try:
        yield
    finally:
        _deferring.on = before


def model_builder(run):
    """``() -> keras.Model``: the run's model built for its task (``run.model_arguments``)."""
    from pvr_keras import models

    arguments = run.model_arguments()
    return lambda: models.get(run.model, **arguments)


def record_entries(run):
    """The entries of a run's record beside its config: the task ``kind`` (its name),
    ``metric`` (a regression kind), the ``system`` section, ``engine_choice`` and the
    ``*_source`` paths (``sources``)."""
    spec = run.spec
    return {
        "kind": spec.name,
        **({"metric": spec.metric} if spec.metric != "accuracy" else {}),
        "system": dataclasses.asdict(run.system),
        **engine_choice(),
        **sources(run),
    }


def engine_choice():
    """``{"engine_choice": ...}``: how this process's backend was chosen (``engines.choice``:
    named, or measured fastest here with each candidate's ms per step), if it chose the
    backend Keras runs on; else nothing. Not part of the run's identity."""
    import keras

    from pvr_keras import engines

    found = engines.choice()
    if found is None or found["backend"] != keras.backend.backend():
        return {}
    return {"engine_choice": found}


def sources(run):
    """``model_source`` / ``kind_source`` / ``aggregation_source``: the absolute path of a
    builder, task kind or aggregation given by file, so that the run folder reloads it from
    any working directory."""
    found = {}
    aggregation = run.flat().get("aggregation")
    for key, ref in (("model_source", run.model), ("kind_source", run.kind),
                     ("aggregation_source", aggregation)):  # fmt: skip
        if isinstance(ref, str) and registry.is_reference(ref):
            module = ref.rpartition(":")[0]
            if module.endswith(".py") or "/" in module:
                path = pathlib.Path(module).resolve()
                found[key] = str(path)
                # What trust_code checks before importing it again (training.load_run).
                # (the bytes that ran, when this process imported it)
                found[f"{key}_sha256"] = registry.loaded_sha256(path) or (
                    files.sha256(path) if path.is_file() else None
                )
    return found


def summary_line(record, what):
    """One line saying how a finished run did (recipes print it at the end)."""
    final = record["final"]
    if record.get("metric") == "mse":
        return (
            f"{what} [{record['backend']}, {record.get('input', 'tfdata')} input]: train MSE "
            f"{final['train_loss']:.4f}, test MSE {final['test_loss']:.4f} (half: "
            f"{final['test_loss'] / 2:.4f}), {record['wall_time_s'] / 60:.1f} min"
        )
    iid = final.get("iid_test_accuracy")
    return (
        f"{what} [{record['backend']}, {record.get('input', 'tfdata')} input]: train accuracy "
        f"{final['train_eval_accuracy']:.4f}, test accuracy {final['test_accuracy']:.4f}"
        f"{f' (held-out windows; IID test {iid:.4f})' if iid is not None else ''}, "
        f"{record['wall_time_s'] / 60:.1f} min{' (FAILED run)' if record['failed'] else ''}"
    )


def check_model(run):
    """Builds the run's model once, before any file is written, and checks it fits the task:
    a Keras model whose input takes the task's examples and whose output is one logit per
    class (a classification kind) or one value (a regression kind).

    Raises:
        ConfigError: the builder fails (with what it raised), returns no Keras model, or a
            model of other input or output shapes; the message names the builder.
    """
    from pvr_keras import compat

    with compat.names_unchanged():  # the run's own build gets the names it would have had
        _check_model(run)


def _check_model(run):
    import keras

    from pvr_keras import models

    arguments = run.model_arguments()
    try:
        model = models.get(run.model, **arguments)
    except Exception as error:  # noqa: BLE001 - the builder is the user's code
        first = str(error).splitlines()[0] if str(error) else ""
        raise ConfigError(
            f"building the model {run.model} failed: {type(error).__name__}: {first}"
        ) from None
    if not isinstance(model, keras.Model):
        raise ConfigError(
            f"the model builder {run.model} returned a {type(model).__name__}, not a keras.Model"
        )
    if len(model.inputs) == 1 and len(model.outputs) == 1:
        shape_in, shape_out = tuple(model.inputs[0].shape[1:]), tuple(model.outputs[0].shape[1:])
        want = _input_shape(arguments)
        if want is not None and shape_in[: len(want)] != want:
            raise ConfigError(
                f"{run.model} takes inputs of shape {shape_in}; the task's examples have "
                f"shape {want}"
            )
        if run.spec.metric == "accuracy":
            classes = arguments.get("num_classes", 10)
            if shape_out != (classes,):
                raise ConfigError(
                    f"{run.model} outputs shape {shape_out}; the task needs one logit per "
                    f"class: ({classes},)"
                )
        elif shape_out not in ((), (1,)):
            raise ConfigError(
                f"{run.model} outputs shape {shape_out}; the task needs one value per example"
            )
    if registry.is_reference(run.model):
        _check_reloads(model, run.model)
    del model


def _check_reloads(model, name):
    """A model of your own must reload from its saved file as ``load_run`` loads it
    (``safe_mode=True``): a ``Lambda`` layer or an unregistered custom layer would train, save,
    and then never load again."""
    import tempfile

    import keras

    with tempfile.TemporaryDirectory() as folder:
        path = pathlib.Path(folder) / "model.keras"
        try:
            model.save(path)
            with files.private_copy(path) as copy:
                keras.saving.load_model(copy, safe_mode=True)
        except Exception as error:  # noqa: BLE001 - Keras says which layer, in its words
            first = str(error).splitlines()[0] if str(error) else type(error).__name__
            raise ConfigError(
                f"{name} builds a model that cannot be reloaded after training ({first[:300]}): "
                f"register each custom layer with @keras.saving.register_keras_serializable() "
                f"and give it get_config(); use no Lambda layer"
            ) from None


def _input_shape(arguments):
    """The leading input dimensions the task's builder arguments imply (None: unknown)."""
    if "input_shape" in arguments:
        return tuple(arguments["input_shape"])
    for name in ("seq_len", "num_bits"):
        if name in arguments:
            return (arguments[name],)
    return None
