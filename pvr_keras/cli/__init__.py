"""Command lines of the recipes (the scripts in ``recipes/``): flags made from the run's
sections and from a builder's own arguments, presets as functions, checks before TensorFlow
loads, and one runner for the start-up every training recipe shares.

A recipe that trains runs describes its command line as a ``Command`` (not to be confused
with ``training.TrainRecipe``, the paper's optimizer, schedule and epochs of a run): the task
kind of its runs, its presets and the fields of its own (``out``, ...); its body trains one
run (``train_one`` by default)::

    @dataclasses.dataclass(frozen=True)
    class Own:
        out: str = cli.out_field("runs/mine/{model}_w{window}_s{seed}")

    COMMAND = cli.Command(kind="token", presets={"quick": quick, "paper": paper}, own=Own,
                          description=__doc__)

Every field of the kind's runs is a flag (``num_examples`` -> ``--num-examples``; booleans
get ``--x/--no-x``), and so is every field of ``own``. A one-value run field given several
values is a grid axis (``--window 1 2 --seed 0 1``: four runs, trained as one sweep into
``--out``); a preset may give an axis too (``seed=(0, 1)``). Every argument of the model's
builder that the task does not supply is a flag ``--model.ARG`` (typed from its annotation
or default, read from the source without importing it), stored in the run's
``model_kwargs``. A preset is a plain function from the flags given on the command line to a
dict of field values (so a preset may depend on ``--model``); flags given replace the
preset's values (``--preset``, default the first). ``aliases`` keep a recipe's older flag
names. ``--help`` shows each preset's value of every flag.

``Command.main(argv)`` parses, fills ``--out``'s ``{field}`` placeholders, checks every run
(task, model and its kind, sizes, training settings) and the recipe's own fields before
TensorFlow is imported or a file is written, sets the Keras backend once, checks the input
choice, sets up the devices (multi-host engines first), prepares the data, writes
``config.json`` (a folder holding another run is refused, untouched), runs the body and
returns its result. Sweep recipes call ``Command.parse_all`` and ``run_sweep``. ``main(fn)``
is a script's entry point: a bad config is a usage error (exit status 2), a run that
finished but failed by the paper's rule exits with ``FAILED_RUN`` (3), a crash 1.

The package, by concern: ``checks`` (flag checks), ``flags`` (flags from dataclasses and
presets), ``model_flags`` (``--model.ARG``), ``folders`` (the output folder and the one
config writer), ``runner`` (``Command``, grids, ``parse``, ``run_sweep``, ``main``).
"""

from pvr_keras.cli.checks import (
    check_finite,
    check_ints,
    check_positive,
    check_range,
    check_stem,
    check_task,
    check_tensorboard,
    flag,
    study_seeds,
)
from pvr_keras.cli.flags import (
    Field,
    build_parser,
    dataclass_fields,
    defaults_of,
    field_of,
    given_flags,
    kind_first,
    out_field,
    parse_flags,
    run_fields,
    system_field,
    trust_flags,
    trust_given,
    trust_modules,
)
from pvr_keras.cli.folders import (
    CONFIG_SECTIONS,
    RUN_MARKERS,
    check_config,
    check_out_folder,
    config_of,
    config_sections,
    format_out,
    make_out_folder,
    sweeps_manifest_compatible,
    to_dict,
    write,
    write_config,
)
from pvr_keras.cli.runner import (
    FAILED_RUN,
    Command,
    Context,
    Parsed,
    callbacks,
    exit_status,
    main,
    parse,
    run_sweep,
    say_epochs,
    start,
    train_one,
)
from pvr_keras.errors import ConfigError

__all__ = [
    "CONFIG_SECTIONS", "Command", "ConfigError", "Context", "FAILED_RUN", "Field", "Parsed",
    "RUN_MARKERS", "build_parser", "callbacks", "check_config", "check_finite", "check_ints",
    "check_out_folder", "check_positive", "check_range", "check_stem", "check_task",
    "check_tensorboard", "config_of", "config_sections", "dataclass_fields", "defaults_of",
    "exit_status", "field_of", "flag", "format_out", "given_flags", "kind_first", "main",
    "make_out_folder", "out_field", "parse", "parse_flags", "run_fields", "run_sweep",
    "say_epochs", "start", "study_seeds", "sweeps_manifest_compatible", "system_field",
    "to_dict", "train_one", "trust_flags", "trust_given", "trust_modules", "write",
    "write_config",
]  # fmt: skip
