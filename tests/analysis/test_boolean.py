"""Exact Boolean measures against their definitions, computed the slow way."""

import numpy as np
import pytest

from pvr_keras.analysis import boolean
from pvr_keras.tasks import BOOLEAN_AGGREGATIONS, BooleanFunction, BooleanTask, f3


def slow_coefficients(values):
    """f^(S) = mean over the cube of f(x) prod_{j in S} x_j, subset by subset."""
    d = int(np.log2(len(values)))
    cube = boolean.boolean_cube(d).astype(np.int64)
    out = np.zeros(len(values))
    for s in range(len(values)):
        bits = [j for j in range(d) if (s >> j) & 1]
        monomial = cube[:, bits].prod(axis=1) if bits else np.ones(len(values))
        out[s] = np.mean(values * monomial)
    return out


def slow_influence(values):
    """Inf_i = E[(f(x) - f(x with x_i = +1))^2] / 2, by looking each row's twin up."""
    d = int(np.log2(len(values)))
    cube = boolean.boolean_cube(d)
    index = {tuple(row): r for r, row in enumerate(cube)}
    out = []
    for i in range(d):
        total = 0.0
        for r, row in enumerate(cube):
            twin = list(row)
            twin[i] = 1
            total += (values[r] - values[index[tuple(twin)]]) ** 2
        out.append(total / len(values) / 2)
    return np.array(out)


def test_the_cube_is_in_row_order():
    cube = boolean.boolean_cube(3)
    assert cube.dtype == np.int8 and cube.shape == (8, 3)
    assert cube[0].tolist() == [1, 1, 1]
    assert cube[1].tolist() == [-1, 1, 1]  # row 1: bit 0 set
    assert cube[6].tolist() == [1, -1, -1]
    assert len({tuple(r) for r in cube}) == 8


@pytest.mark.parametrize("d", [1, 2, 5, 8, 10])
def test_random_functions_match_the_slow_reference(d):
    rng = np.random.default_rng(d)
    values = rng.normal(size=2**d)
    coefficients = boolean.fourier_coefficients(values)
    np.testing.assert_allclose(coefficients, slow_coefficients(values), atol=1e-12)
    # The expansion gives the function back (Fourier inversion).
    cube = boolean.boolean_cube(d).astype(np.int64)
    rebuilt = np.zeros(2**d)
    for s, c in enumerate(coefficients):
        bits = [j for j in range(d) if (s >> j) & 1]
        rebuilt += c * (cube[:, bits].prod(axis=1) if bits else 1)
    np.testing.assert_allclose(rebuilt, values, atol=1e-10)
    if d <= 8:
        np.testing.assert_allclose(boolean.boolean_influence(values), slow_influence(values),
                                   atol=1e-10)  # fmt: skip
    profile = boolean.degree_profile(values)
    assert profile.shape == (d + 1,)
    np.testing.assert_allclose(profile.sum(), np.mean(values**2))


@pytest.mark.parametrize("aggregation", BOOLEAN_AGGREGATIONS)
@pytest.mark.parametrize("mode", ["cyclic", "truncated"])
@pytest.mark.parametrize("p", [1, 2])
def test_pvr_influences_match_the_slow_reference(aggregation, mode, p):
    task = BooleanTask(pointer_bits=p, window=2, aggregation=aggregation, window_mode=mode)
    values = boolean.target_values(task)
    np.testing.assert_allclose(boolean.boolean_influence(values), slow_influence(values),
                               atol=1e-12)  # fmt: skip


def test_parity_of_k_bits_has_influence_one_on_its_bits():
    for subset in [(0,), (1, 3), (0, 2, 4, 5)]:
        values = boolean.target_values(BooleanFunction.of_subset(6, subset))
        expected = np.array([1.0 if j in subset else 0.0 for j in range(6)])
        np.testing.assert_allclose(boolean.boolean_influence(values), expected, atol=1e-12)
        profile = boolean.degree_profile(values)
        assert profile[len(subset)] == pytest.approx(1.0) and profile.sum() == pytest.approx(1.0)


def test_majority_of_three_has_influence_one_half():
    values = boolean.target_values(BooleanFunction.of_subset(3, (0, 1, 2), "majority"))
    np.testing.assert_allclose(boolean.boolean_influence(values), [0.5, 0.5, 0.5])
    # maj3 = (x0 + x1 + x2 - x0 x1 x2) / 2
    coefficients = boolean.fourier_coefficients(values)
    assert coefficients[0b001] == coefficients[0b010] == coefficients[0b100] == 0.5
    assert coefficients[0b111] == -0.5


def test_frozen_prediction_is_half_the_influence_away():
    values = boolean.target_values(f3())
    influence = boolean.boolean_influence(values)
    for bit in range(11):
        frozen = boolean.frozen_prediction(values, bit)
        assert boolean.half_mse(frozen, values) == pytest.approx(influence[bit])
        # it does not depend on x_bit: its coefficients on monomials holding the bit are 0
        c = boolean.fourier_coefficients(frozen)
        held = [(s >> bit) & 1 == 1 for s in range(len(c))]
        assert np.abs(c[held]).max() < 1e-12


def test_subset_integers():
    assert boolean.subset_of((0, 2)) == 5
    assert boolean.bits_of(5) == (0, 2)
    assert boolean.subset_sizes(3).tolist() == [0, 1, 1, 2, 1, 2, 2, 3]


def test_twenty_bits_work():
    values = np.sign(boolean.boolean_cube(20)[:, :3].sum(axis=1)).astype(np.float64)
    influence = boolean.boolean_influence(values)
    np.testing.assert_allclose(influence[:3], 0.5)
    assert np.abs(influence[3:]).max() < 1e-12


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: boolean.fourier_coefficients(np.ones(6)), "length 2\\*\\*d"),
        (lambda: boolean.fourier_coefficients(np.ones((4, 2))), "1-D array"),
        (lambda: boolean.fourier_coefficients(np.ones(1)), "length 2\\*\\*d"),
        (lambda: boolean.boolean_influence([1.0, np.nan]), "finite"),
        (lambda: boolean.boolean_cube(21), "at most 20"),
        (lambda: boolean.boolean_cube(0), "positive integer"),
        (lambda: boolean.fourier_coefficients(np.ones(2**21)), "at most 20"),
        (lambda: boolean.frozen_prediction(np.ones(8), 3), r"bit must be in 0\.\.2"),
        (lambda: boolean.half_mse(np.ones(8), np.ones(4)), "shapes differ"),
    ],
)
def test_bad_input_is_refused(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_model_values_cuts_its_batch_to_the_widest_layer(monkeypatch):
    """A wide model is evaluated on the cube in small enough batches (a mean-field net's
    65,536 units at 65,536 points would be 17 GB of outputs)."""
    import types

    from pvr_keras.analysis import boolean as measures

    seen = []

    class Wide:
        layers = [
            types.SimpleNamespace(output=types.SimpleNamespace(shape=shape))
            for shape in ((None, 1000), (None, 4, 8))
        ]

        def predict_on_batch(self, x):
            seen.append(len(x))
            return x.sum(axis=1, keepdims=True).astype(np.float32)

    monkeypatch.setattr(measures, "EVAL_FLOATS", 64_000)
    values = measures.model_values(Wide(), 10)
    assert max(seen) == 64 and sum(seen) == 1024
    np.testing.assert_array_equal(values, measures.boolean_cube(10).sum(axis=1))
