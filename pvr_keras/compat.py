"""Workarounds of third-party behaviour, each with where it was seen and when it stops.

Every workaround of a third-party bug or private API in pvr_keras lives here, with the
versions it was checked on and a guard that turns it off (or fails loudly) where it no
longer applies.
"""

import contextlib
import os
import re
import sys
import tempfile

# TensorFlow logs from C++ before absl's logging is initialised, and absl writes every such
# line to stderr whatever its level, so TF_CPP_MIN_LOG_LEVEL does not hide them
# (abseil/abseil-cpp#1718 and #1957, tensorflow/tensorflow#102212): "WARNING: All log
# messages before absl::InitializeLog() ...", oneDNN and CUDA-stub notices, twice per
# process. On a machine without a GPU it also logs "failed call to cuInit" as an error.
# Checked with tensorflow 2.21.0. The filter only drops lines of these shapes, so on a
# TensorFlow that no longer writes them it changes nothing.
_TF_NOISE = (
    re.compile(r"^[IW]\d{4} [\d:. ]+\d+ [\w.]+:\d+\] "),  # absl INFO / WARNING lines
    re.compile(r"^WARNING: All log messages before absl::InitializeLog\(\) is called"),
    re.compile(r"^To enable the following instructions: .* rebuild TensorFlow"),
)
_NO_GPU_NOISE = re.compile(r"^E\d{4} [\d:. ]+\d+ cuda_\w+\.cc:\d+\] failed call to cuInit")


@contextlib.contextmanager
def _stderr_lines():
    """Captures what the process (C++ included) writes to file descriptor 2; yields a list
    that holds the captured lines once the block ends."""
    lines = []
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile(mode="w+b") as capture:
        os.dup2(capture.fileno(), 2)
        try:
            yield lines
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            capture.seek(0)
            lines.extend(capture.read().decode(errors="replace").splitlines())


def import_tensorflow_quietly():
    """Imports TensorFlow without its C++ INFO / WARNING start-up lines; returns the module.

    ``TF_CPP_MIN_LOG_LEVEL`` defaults to 2 (the user's value is kept); with a value below 2
    nothing is filtered. Error lines pass through, except "failed call to cuInit" on a machine
    that has no GPU. Only for programs (recipes, tools), never at library import: it swaps the
    process's standard error while TensorFlow loads.
    """
    if "tensorflow" in sys.modules:
        return sys.modules["tensorflow"]
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    if os.environ["TF_CPP_MIN_LOG_LEVEL"] < "2":
        import tensorflow as tf

        return tf
    with _stderr_lines() as lines:
        import tensorflow as tf

        has_gpu = bool(tf.config.list_physical_devices("GPU"))  # where cuInit is logged
    for line in lines:
        if any(p.match(line) for p in _TF_NOISE):
            continue
        if not has_gpu and _NO_GPU_NOISE.match(line):
            continue
        print(line, file=sys.stderr)
    return tf
