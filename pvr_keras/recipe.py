"""The former path of ``pvr_keras.hyperparams`` (a run's ``train`` section and the paper's
settings of it), kept for ``runconfig`` until it imports the new one: "recipe" means a script
in ``recipes/``. Define nothing here."""

from pvr_keras.hyperparams import (  # noqa: F401
    OPTIMIZERS,
    RECIPES,
    SCHEDULES,
    TOKEN,
    VISUAL,
    TrainRecipe,
)
