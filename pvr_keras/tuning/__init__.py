"""Hyperparameter search with keras-tuner: HyperModels over the builders, distributed search.

from pvr_keras import tuning
hypermodel = tuning.PVRHyperModel(TokenTask(window=2), 50_000, epochs=10)
tuner = tuning.make_tuner("hyperband", hypermodel, directory="runs/tune")
tuning.search(tuner)
"""

from pvr_keras.tuning.distributed import configure, search, wait_for_chief
from pvr_keras.tuning.hypermodels import (
    BATCH_SIZES,
    LEARNING_RATES,
    OBJECTIVE,
    OPTIMIZERS,
    TUNERS,
    PVRHyperModel,
    make_optimizer,
    make_tuner,
)

__all__ = [
    "BATCH_SIZES",
    "LEARNING_RATES",
    "OBJECTIVE",
    "OPTIMIZERS",
    "TUNERS",
    "PVRHyperModel",
    "configure",
    "make_optimizer",
    "make_tuner",
    "search",
    "wait_for_chief",
]
