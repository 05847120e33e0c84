"""mean_logits_by_class (Figure 8's logit analysis) against a per-class loop."""

import numpy as np
import pytest

from pvr_keras.analysis import mean_logits_by_class


def test_matches_a_loop_over_classes():
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(200, 5))
    labels = rng.integers(0, 5, size=200)
    got = mean_logits_by_class(logits, labels, 5)
    assert got.shape == (5, 5)
    for c in range(5):
        np.testing.assert_allclose(got[c], logits[labels == c].mean(axis=0), rtol=1e-12)


def test_absent_class_is_nan():
    logits = np.array([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]])
    got = mean_logits_by_class(logits, np.array([0, 0]), 3)
    np.testing.assert_allclose(got[0], [2.0, 2.0, 2.0])
    assert np.isnan(got[1:]).all()


@pytest.mark.parametrize(
    "logits, labels, num_classes, match",
    [
        (
            np.zeros((4, 3)),
            np.zeros(4, int),
            0,
            "num_classes must be a positive integer; received 0",
        ),
        (np.zeros((4, 3)), np.zeros(4, int), 3.0, "num_classes must be a positive integer"),
        (np.zeros((4, 2)), np.zeros(4, int), 3, r"logits must have shape \(N, num_classes=3\)"),
        (np.zeros(4), np.zeros(4, int), 3, r"received \(4,\)"),
        (np.zeros((4, 3)), np.zeros(5, int), 3, r"labels must have shape \(N,\) = \(4,\)"),
        (np.zeros((4, 3)), np.zeros(4), 3, "labels must be integers; received dtype float64"),
        (np.zeros((4, 3)), np.array([0, 1, 2, 3]), 3, r"labels must be in 0..2; .*0..3"),
        (np.zeros((4, 3)), np.array([0, -1, 2, 2]), 3, r"labels must be in 0..2; .*-1..2"),
        (np.zeros((4, 3), complex), np.zeros(4, int), 3, "logits must be real numbers"),
        (np.zeros((4, 3)), np.zeros(4, "m8[s]"), 3, "labels must be integers; .*timedelta64"),
    ],
)
def test_bad_inputs_raise(logits, labels, num_classes, match):
    with pytest.raises(ValueError, match=match):
        mean_logits_by_class(logits, labels, num_classes)
