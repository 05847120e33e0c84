"""The gotu kind's ``TaskKind``: a Boolean function learned on a seen domain (Abbe, Bengio,
Lotfi, Rizk 2023, "Generalization on the Unseen"), ``FunctionTask``, regressed with the mean
squared error.

Registered as ``gotu`` when ``pvr_keras.kinds`` is imported. Training and validation examples
are drawn from the task's ``domain`` only; the test split is the whole cube (uniform, or every
point with ``draw="all"``), so ``test_loss`` counts the unseen part. The exact measures on the
cube (the min-degree interpolator, the leak, the unseen error) come from
``analysis.fourier_tracking.FourierTracker`` during training (``recipes/gotu.py``). Its
generators are the boolean kind's (they draw any Boolean target on its seen domain), named
``"module:function"``; its models are the boolean kind's, the models of bits. Its default
training settings are ``hyperparams.GOTU`` (in the table of the papers' settings,
``hyperparams.RECIPES``, below this layer).
"""

from pvr_keras.errors import ConfigError
from pvr_keras.hyperparams import GOTU
from pvr_keras.kinds.boolean.domains import Domain, slug
from pvr_keras.kinds.boolean.kind import model_arguments  # the models of bits take d
from pvr_keras.kinds.gotu.task import FunctionTask
from pvr_keras.kinds.spec import TaskKind, register_kind

DATA = "pvr_keras.kinds.boolean"  # the generators of Boolean targets

# Always in a run's identity, whatever their value.
IDENTITY = ("model", "num_bits", "target", "domain", "num_examples", "seed")


def check(task, holdout):
    """The domain is the task's; a holdout is not used by this kind."""
    if holdout:
        raise ValueError(
            f"the gotu kind draws its training points from the task's domain (e.g. "
            f"--domain frozen:0,1), not a holdout; received holdout={holdout}"
        )
    return 0


def check_run(run):
    """A ``draw="all"`` run trains on every seen point once an epoch and tests on the cube's
    points, each at most once: ``num_examples`` is the number of seen points and
    ``test_examples`` at most 2**d (a ``ConfigError`` otherwise)."""
    task, data = run.task, run.data
    if task.draw != "all":
        return
    seen, cube = task.num_seen, 2**task.num_bits
    if data.num_examples != seen or data.test_examples > cube:
        raise ConfigError(
            f"draw='all' trains on every seen point once an epoch and tests on the cube's "
            f"points once: num_examples must be the {seen} seen points of {task.domain!r} "
            f"and test_examples at most 2**{task.num_bits} = {cube}; received num_examples="
            f"{data.num_examples}, test_examples={data.test_examples}"
        )


def id_parts(run):
    """``d15-x0x1-any_of_0_1[-all]``."""
    task = run.task
    parts = [f"d{task.num_bits}", slug(task.target)]
    if Domain.parse(task.domain).kind != "all":
        parts.append(slug(task.domain))
    if task.draw != "uniform":
        parts.append(f"draw{task.draw}")
    return parts


GOTU_KIND = register_kind(
    TaskKind(
        name="gotu",
        task=FunctionTask,
        models="bits",
        recipe=GOTU,
        dataset=f"{DATA}.tf_data:boolean_dataset",
        device=f"{DATA}.jax_data:boolean_stream",
        arrays=f"{DATA}.tf_data:boolean_arrays",
        model_arguments=model_arguments,
        check=check,
        defaults={
            "model": "bits_mlp",
            "num_examples": 24_576,
            "test_examples": 32_768,
            "train_eval_examples": 8_192,
        },  # fmt: skip
        identity=IDENTITY,
        iid_eval=False,
        eval_batch_size=2048,  # a mean-field net's 65,536 units: 0.5 GB of outputs a batch
        metric="mse",
        id_parts=id_parts,
        check_run=check_run,
    )
)
