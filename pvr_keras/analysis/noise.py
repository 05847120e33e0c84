"""Noise sensitivity of token PVR rules (Section 4.1 and Appendix C of the paper).

``NS_delta[f] = P[f(x) != f(y)]``: ``x`` is a uniformly random bit string, ``y`` is ``x`` with
each bit flipped independently with probability ``delta``. A token sequence is read as bits by
writing every token as ``D`` bits (unsigned binary, most significant bit first), where ``D`` is
the smallest integer with ``num_values <= 2**D``. Bit strings that spell a digit outside
``0..num_values-1`` are mapped back into range by ``mod num_values`` (on both ``x`` and ``y``),
as Appendix C does. The whole sequence is noised, pointer token included; with
``pointer=False`` the pointer bits are noised too but the rule ignores them.

``window_mode`` has no effect here: it only says which pointers a data set draws, while the
inputs here are uniform bits, so every pointer the bits spell is read (cyclically) by the rule.
"""

import numpy as np

from pvr_keras.checks import check_positive, check_seed
from pvr_keras.tasks import TokenTask

# Samples drawn per random call: bounds memory for large ``num_samples`` (each chunk holds
# chunk x seq_len x D flip uniforms).
_CHUNK = 65_536


def bits_per_token(num_values):
    """``D``, the smallest integer with ``num_values <= 2**D`` (4 for the paper's 10 values)."""
    return int(num_values - 1).bit_length()


def _check_deltas(delta):
    """Returns the deltas as a 1-D float64 array."""
    if isinstance(delta, bool | np.bool_ | str | bytes):
        raise ValueError(f"delta must be a number in (0, 0.5]; received {delta!r}")
    try:
        deltas = np.asarray(delta, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            f"delta must be a number in (0, 0.5] or a 1-D array of them; received {delta!r}"
        ) from None
    if deltas.ndim > 1 or deltas.size == 0:
        raise ValueError(
            f"delta must be a number in (0, 0.5] or a non-empty 1-D array of them; "
            f"received an array of shape {deltas.shape}"
        )
    bad = ~((deltas > 0) & (deltas <= 0.5))  # NaN fails both comparisons, so it is bad too
    if bad.any():
        raise ValueError(
            f"delta must be in (0, 0.5] (0 gives no noise, above 0.5 flips are likelier than "
            f"not); received {deltas[bad].tolist()}"
        )
    return deltas.reshape(-1)


def noise_sensitivity_runs(task, delta, *, num_samples=10_000, runs=10, seed=0):
    """Per-run estimates of ``NS_delta`` for a token task: an array (runs, len(delta)).

    Random draws, in order, from ``np.random.default_rng(seed)``: for each run, for each chunk
    of at most 65,536 samples, the bits of ``x`` (``integers(0, 2, (n, seq_len, D))``) and then
    one uniform per bit (``random((n, seq_len, D))``); bit ``i`` flips when its uniform is
    below ``delta``. All deltas share these draws (common random numbers), so the estimate of
    one delta does not depend on which other deltas are asked for, and curves over delta are
    smooth.

    Args:
        task: a ``pvr_keras.tasks.TokenTask``.
        delta: flip probability in (0, 0.5], or a 1-D array of them.
        num_samples: pairs ``(x, y)`` per run.
        runs: independent runs.
        seed: seed of ``np.random.default_rng``.

    Returns:
        float64 array (runs, number of deltas): fraction of pairs whose labels differ.

    Example:
        >>> task = TokenTask(window=3)
        >>> noise_sensitivity_runs(task, [0.01, 0.1], num_samples=1000, runs=2).shape
        (2, 2)
    """
    if not isinstance(task, TokenTask):
        raise ValueError(
            f"task must be a pvr_keras.tasks.TokenTask; received {type(task).__name__}"
        )
    deltas = _check_deltas(delta)
    num_samples = check_positive("num_samples", num_samples)
    runs = check_positive("runs", runs)
    rng = np.random.default_rng(check_seed(seed))

    num_bits = bits_per_token(task.num_values)
    place = 2 ** np.arange(num_bits - 1, -1, -1, dtype=np.int64)  # most significant bit first
    # Small integer codes keep the inner loop cheap; the table maps a bit string to its digit.
    code = np.uint8 if num_bits <= 8 else np.int64
    digit_of = (np.arange(2**num_bits) % task.num_values).astype(code)
    order = np.argsort(deltas, kind="stable")
    rank_type = np.uint8 if len(deltas) < 255 else np.int64
    result = np.zeros((runs, len(deltas)))
    for run in range(runs):
        for start in range(0, num_samples, _CHUNK):
            n = min(_CHUNK, num_samples - start)
            x_bits = rng.integers(0, 2, size=(n, task.seq_len, num_bits), dtype=np.int64)
            uniforms = rng.random((n, task.seq_len, num_bits))
            x_raw = (x_bits @ place).astype(code)  # (n, seq_len) the bit strings as integers
            x_digits = digit_of[x_raw]
            x_label = task.label(x_digits)  # (n,)
            # A bit flips at delta j iff its uniform < deltas[j], i.e. iff j >= first[bit]:
            # comparing small integers per delta is cheaper than comparing the uniforms.
            first = np.searchsorted(deltas[order], uniforms, side="right")
            first = np.moveaxis(first.astype(rank_type), -1, 0).copy()  # (D, n, seq_len)
            for rank, j in enumerate(order):
                y_raw = x_raw.copy()
                for b in range(num_bits):
                    y_raw ^= (first[b] <= rank).astype(code) * code(place[b])
                y_digits = digit_of[y_raw]
                # Only sequences whose digits changed can change label.
                changed = np.flatnonzero((y_digits != x_digits).any(axis=1))
                if changed.size:
                    y_label = task.label(y_digits[changed])
                    result[run, j] += np.count_nonzero(y_label != x_label[changed])
    return result / num_samples


def noise_sensitivity(task, delta, *, num_samples=10_000, runs=10, seed=0):
    """Noise sensitivity ``NS_delta`` of a token PVR rule, as in Appendix C of the paper.

    The mean over ``runs`` runs of the fraction of ``num_samples`` pairs ``(x, y)`` whose labels
    differ, where ``x`` is uniformly random bits and ``y`` flips each bit of ``x`` with
    probability ``delta`` (see the module docstring for the bit encoding and
    ``noise_sensitivity_runs`` for the random draws). Figure 5 uses 10,000 samples and 10 runs.

    Args:
        task: a ``pvr_keras.tasks.TokenTask``.
        delta: flip probability in (0, 0.5], or a 1-D array of them.
        num_samples: pairs ``(x, y)`` per run.
        runs: independent runs averaged.
        seed: seed of ``np.random.default_rng``.

    Returns:
        A float for a scalar ``delta``; a float64 array of one value per delta otherwise.

    Example:
        >>> task = TokenTask(window=3, aggregation="mod_sum")
        >>> ns = noise_sensitivity(task, 0.05, num_samples=2000, runs=2)
        >>> 0.0 < ns < 1.0
        True
    """
    per_run = noise_sensitivity_runs(task, delta, num_samples=num_samples, runs=runs, seed=seed)
    mean = per_run.mean(axis=0)
    return float(mean[0]) if np.ndim(delta) == 0 else mean
