"""Training: the paper's recipes, the fit glue with run records, and resume after a kill."""

from pvr_keras.training.loop import TrainData, compile_model, train
from pvr_keras.training.recipe import RECIPES, TOKEN, VISUAL, TrainRecipe
from pvr_keras.training.records import read_record
from pvr_keras.training.schedules import WarmupCosine

__all__ = [
    "RECIPES",
    "TOKEN",
    "VISUAL",
    "TrainData",
    "TrainRecipe",
    "WarmupCosine",
    "compile_model",
    "read_record",
    "train",
]
