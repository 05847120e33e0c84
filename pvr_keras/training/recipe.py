"""The former path of ``training.optimizers`` and of the ``train`` section's names, kept for
the importers not yet moved (``training.loop``, ``tuning.hypermodels``, ``training``'s lazy
names): "recipe" means a script in ``recipes/``. Define nothing here."""

from pvr_keras.hyperparams import OPTIMIZERS, RECIPES, TOKEN, VISUAL, TrainRecipe  # noqa: F401
from pvr_keras.training.optimizers import make_optimizer, optimizer_for  # noqa: F401
