"""PVR as a benchmark for any framework: named, versioned configs with fixed splits, random-
access sources, text prompts for language models, a scorer and a manifest of split hashes.

    from pvr_keras import benchmarks

    benchmarks.names()                              # token/w1 ... boolean/f3-frozen10
    test = benchmarks.source("token/w3", "test")    # len(test), test[i], test[10:20]
    report = benchmarks.score("token/w3", predictions)   # accuracy, per slice, split hash
    benchmarks.save_predictions("p.npy", predictions, "token/w3")  # + what they are for
    prompts = benchmarks.text_source("token/w3", "test") # {question, answer, metadata}

Token and Boolean configs import neither TensorFlow nor JAX here. ``import pvr_keras.tfds``
registers the same configs as the TFDS dataset ``pvr`` (``tfds.load("pvr/token_w3")``);
``tools/export_dataset.py`` writes Parquet, TFRecord or text files of one config or several
with a dataset card (a Hugging Face dataset folder), or lm-evaluation-harness tasks.

A config names its task kind, and the kind's ``BenchmarkHooks`` (``TaskKind.benchmark``) say
what differs between kinds (sizes, rows, TFDS features, hashing, text, scoring): a kind of
yours with hooks becomes a family of configs with ``register_config(Config(...))``.
"""

from pvr_keras.benchmarks.catalog import (
    CONFIGS,
    RELEASE_NOTES,
    SIZES,
    SPLITS,
    VERSION,
    Config,
    get,
    names,
    register_config,
)
from pvr_keras.benchmarks.hashes import canonical_bytes, manifest, split_hash
from pvr_keras.benchmarks.predictions import save_predictions
from pvr_keras.benchmarks.scoring import score
from pvr_keras.benchmarks.sources import Source, cube, source, task_of
from pvr_keras.benchmarks.text import score_answer, text_source

__all__ = [
    "CONFIGS",
    "RELEASE_NOTES",
    "SIZES",
    "SPLITS",
    "VERSION",
    "Config",
    "Source",
    "canonical_bytes",
    "cube",
    "get",
    "manifest",
    "names",
    "register_config",
    "save_predictions",
    "score",
    "score_answer",
    "source",
    "split_hash",
    "task_of",
    "text_source",
]
