"""Exact Boolean measures (Abbe et al. 2022): Fourier coefficients, influences, degree profile.

The cube: row r of ``boolean_cube(d)`` has x_j = 1 - 2*((r >> j) & 1) (row 0 is all +1). A
subset S of bits is the integer s with bit j set iff j is in S. For values f on the cube in
row order:

- ``fourier_coefficients``: f^(S) = mean over the cube of f(x) * prod_{j in S} x_j, for
  every S at once by a fast Walsh-Hadamard transform (d = 20: a million values, well under a
  second on a CPU);
- ``boolean_influence``: Inf_i(f) = E[(f(x) - f(x with x_i = +1))^2] / 2
  = sum over S containing i of f^(S)^2, per bit;
- ``degree_profile``: the Fourier weight sum_{|S| = k} f^(S)^2 per degree k.

``model_values`` evaluates a trained model on the whole cube in batches, so the same measures
apply to what it learned. Trained with bit i frozen to +1, a network's generalisation error on
the cube (half its mean squared error) is close to Inf_i of the target (the paper's claim; see
``recipes/boolean_holdout.py``).

Example:
    >>> values = boolean_cube(3).prod(axis=1)          # parity of 3 bits
    >>> boolean_influence(values).tolist()
    [1.0, 1.0, 1.0]
"""

import numpy as np

from pvr_keras.checks import check_positive, check_real_dtype

MAX_CUBE_BITS = 20  # 2**20 rows; the cube is enumerated


def _check_bits(num_bits):
    check_positive("num_bits", num_bits)
    if num_bits > MAX_CUBE_BITS:
        raise ValueError(
            f"the cube is enumerated (2**d rows), so d must be at most {MAX_CUBE_BITS}; "
            f"received {num_bits}"
        )
    return int(num_bits)


def boolean_cube(num_bits):
    """Every point of {+1, -1}^d in row order: int8 (2**d, d)."""
    d = _check_bits(num_bits)
    rows = np.arange(2**d, dtype=np.int64)[:, None]
    return (1 - 2 * ((rows >> np.arange(d)) & 1)).astype(np.int8)


def _check_values(values, name="values"):
    """``(values as float64, d)``: real numbers (no complex, no timedelta64), 2**d of them
    with d at most ``MAX_CUBE_BITS`` (checked before any float64 copy), finite."""
    values = check_real_dtype(name, np.asarray(values))
    if values.ndim != 1 or values.size < 2 or values.size & (values.size - 1):
        raise ValueError(
            f"{name} must be a 1-D array of a function on the cube, of length 2**d (d >= 1); "
            f"received shape {values.shape}"
        )
    d = int(values.size).bit_length() - 1
    _check_bits(d)
    values = np.asarray(values, np.float64)
    if not np.isfinite(values).all():
        raise ValueError(f"{name} must be finite")
    return values, d


def fourier_coefficients(values):
    """f^(S) for every subset S: (2**d,) float64 indexed by the subset integer.

    ``values``: f on the cube in row order (``boolean_cube``), length 2**d.

    Row r's x_j is (-1)^(bit j of r), so prod_{j in S} x_j = (-1)^popcount(r & s): the
    coefficients are the Walsh-Hadamard transform of the values over 2**d.
    """
    values, d = _check_values(values)
    out = values.copy()
    h = 1
    while h < out.size:  # in place, one butterfly layer per bit
        out = out.reshape(-1, 2, h)
        out = np.stack([out[:, 0] + out[:, 1], out[:, 0] - out[:, 1]], axis=1)
        out = out.reshape(-1)
        h *= 2
    return out / out.size


def subset_sizes(num_bits):
    """|S| of every subset integer S < 2**d: int64 (2**d,)."""
    d = _check_bits(num_bits)
    s = np.arange(2**d, dtype=np.int64)
    return ((s[:, None] >> np.arange(d)) & 1).sum(axis=1)


def boolean_influence(values):
    """Inf_i(f) = sum over S containing i of f^(S)^2, for every bit i: (d,) float64."""
    values, d = _check_values(values)
    weight = fourier_coefficients(values) ** 2
    s = np.arange(values.size, dtype=np.int64)
    return np.array([weight[(s >> i) & 1 == 1].sum() for i in range(d)])


def degree_profile(values):
    """Fourier weight per degree: (d + 1,) float64, entry k = sum over |S| = k of f^(S)^2
    (sums to E[f^2])."""
    values, d = _check_values(values)
    weight = fourier_coefficients(values) ** 2
    return np.bincount(subset_sizes(d), weights=weight, minlength=d + 1)


def subset_of(bits):
    """The subset integer of a sequence of bits (``(0, 2)`` -> 5)."""
    return sum(1 << int(b) for b in set(bits))


def bits_of(subset):
    """The bits of a subset integer (5 -> (0, 2))."""
    return tuple(j for j in range(int(subset).bit_length()) if (int(subset) >> j) & 1)


def target_values(task):
    """A task's (``BooleanTask`` or ``BooleanFunction``) labels on the whole cube: (2**d,)."""
    return np.asarray(task.label(boolean_cube(task.num_bits)), np.float64)


EVAL_FLOATS = 2**26  # the widest layer's outputs of one batch of model_values: 256 MB


def _widest(model):
    """The most numbers one example makes in any layer's output (1 if unknown)."""
    widest = 1
    for layer in getattr(model, "layers", ()):
        try:
            shapes = layer.output.shape
        except (AttributeError, ValueError):
            continue
        for shape in shapes if isinstance(shapes, list) else [shapes]:
            dims = [int(n) for n in tuple(shape)[1:] if n is not None]
            widest = max(widest, int(np.prod(dims)) if dims else 1)
    return widest


def model_values(model, num_bits, batch_size=65_536):
    """A trained model's outputs on the whole cube in row order: (2**d,) float64.

    The model takes int8 bits (batch, d) (the Boolean models do) and returns one number per
    input (batch,) or (batch, 1). The batch is cut so that the widest layer's outputs of one
    batch stay within ``EVAL_FLOATS`` numbers (a mean-field net's 65,536 units: 1,024).
    """
    return model_outputs(model, boolean_cube(num_bits), batch_size)


def model_outputs(model, x, batch_size=65_536):
    """A trained model's outputs at the points ``x``, int8 (N, d) (``model_values``' batches):
    (N,) float64."""
    batch_size = max(1, min(batch_size, EVAL_FLOATS // _widest(model)))
    outputs = []
    for start in range(0, len(x), batch_size):
        out = np.asarray(model.predict_on_batch(x[start : start + batch_size]), np.float64)
        outputs.append(out.reshape(len(out), -1)[:, 0])
    return np.concatenate(outputs)


def frozen_prediction(values, bit):
    """The target restricted to the training distribution with ``bit`` frozen to +1, extended
    to the whole cube: f(x with x_i = +1). Its squared distance to f, halved, is Inf_i(f)."""
    values, d = _check_values(values)
    if isinstance(bit, bool) or not isinstance(bit, int | np.integer) or not 0 <= bit < d:
        raise ValueError(f"bit must be in 0..{d - 1}; received {bit!r}")
    rows = np.arange(values.size)
    return values[rows & ~(1 << int(bit))]


def half_mse(predictions, values):
    """Half the mean squared error on the cube, the paper's generalisation error."""
    predictions, _ = _check_values(predictions, "predictions")
    values, _ = _check_values(values)
    if predictions.shape != values.shape:
        raise ValueError(f"shapes differ: {predictions.shape} and {values.shape}")
    return float(np.mean((predictions - values) ** 2) / 2)


__all__ = ["MAX_CUBE_BITS", "bits_of", "boolean_cube", "boolean_influence", "degree_profile",
           "fourier_coefficients", "frozen_prediction", "half_mse", "model_outputs", "model_values",
           "subset_of", "subset_sizes", "target_values"]  # fmt: skip
