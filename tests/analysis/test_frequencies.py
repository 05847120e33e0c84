"""label_frequencies against a slow double loop over classes, on circles of known frequency."""

import math

import numpy as np
import pytest

from pvr_keras.analysis import label_frequencies, main_frequencies


def _slow(features, labels, num_classes):
    """The definition: class means of centred features, power by a cosine double sum."""
    centred = features - features.mean(axis=0)
    means = [centred[labels == c].mean(axis=0) for c in range(num_classes)]
    power = []
    for k in range(num_classes // 2 + 1):
        total = 0.0
        for c in range(num_classes):
            for d in range(num_classes):
                total += float(means[c] @ means[d]) * math.cos(
                    2 * math.pi * k * (c - d) / num_classes
                )
        partner = num_classes - k
        power.append(total * (2 if 0 < k < partner else 1))
    explained = sum(float(means[y] @ means[y]) for y in labels)
    return explained / float((centred**2).sum()), [p / sum(power) for p in power]


@pytest.mark.parametrize("num_classes", [10, 7])
def test_matches_the_definition(num_classes):
    rng = np.random.default_rng(num_classes)
    labels = rng.integers(0, num_classes, size=500)
    features = rng.normal(size=(500, 6)) + rng.normal(size=(num_classes, 6))[labels]
    got = label_frequencies(features, labels, num_classes)
    share, freq = _slow(features, labels, num_classes)
    assert got["class_share"] == pytest.approx(share, rel=1e-9)
    np.testing.assert_allclose(got["frequency_share"], freq, rtol=1e-9, atol=1e-12)
    assert sum(got["frequency_share"]) == pytest.approx(1.0)


def test_a_circle_is_found_at_its_frequency():
    rng = np.random.default_rng(0)
    labels = np.arange(10).repeat(200)
    for k in (1, 3, 5):
        angle = 2 * np.pi * k * labels / 10
        circle = np.stack([np.cos(angle), np.sin(angle)], axis=1) * 3
        noisy = np.concatenate([circle, np.zeros((len(labels), 3))], axis=1)
        noisy += rng.normal(scale=0.3, size=noisy.shape)
        got = label_frequencies(noisy @ rng.normal(size=(5, 8)), labels, 10)
        assert np.argmax(got["frequency_share"]) == k and got["frequency_share"][k] > 0.98
        assert 0.9 < got["class_share"] < 1.0
    two = np.concatenate([np.cos(2 * np.pi * 2 * labels / 10)[:, None],
                          np.cos(2 * np.pi * 4 * labels / 10)[:, None]], axis=1)  # fmt: skip
    shares = label_frequencies(two, labels, 10)["frequency_share"]
    np.testing.assert_allclose(shares, [0, 0, 0.5, 0, 0.5, 0], atol=1e-12)


def test_features_without_the_label():
    labels = np.arange(4).repeat(2)
    got = label_frequencies(np.ones((8, 3)), labels, 4)
    assert got == {"class_share": 0.0, "frequency_share": [0.0, 0.0, 0.0]}


@pytest.mark.parametrize(
    "features, labels, num_classes, match",
    [
        (np.zeros((4, 2)), np.arange(4), 1, "num_classes must be an integer >= 2"),
        (np.zeros((4, 2)), np.arange(4), 4.0, "num_classes must be an integer >= 2"),
        (np.zeros(4), np.arange(4), 4, r"features must have shape \(N, D\)"),
        (np.zeros((0, 2)), np.zeros(0, int), 4, "N >= 1"),
        (np.zeros((4, 2)), np.arange(3), 4, r"labels must have shape \(N,\) = \(4,\)"),
        (np.zeros((4, 2)), np.arange(4.0), 4, "labels must be integers"),
        (np.zeros((4, 2)), np.array([0, 1, 2, 5]), 4, r"labels must be in 0..3"),
        (np.zeros((4, 2)), np.array([0, 1, 1, 3]), 4, r"classes \[2\] have none"),
        (np.full((4, 2), np.nan), np.arange(4), 4, "features must be finite"),
    ],
)
def test_bad_input(features, labels, num_classes, match):
    with pytest.raises(ValueError, match=match):
        label_frequencies(features, labels, num_classes)


def test_main_frequencies_keep_shares_at_the_threshold_largest_first():
    assert main_frequencies([0.05, 0.3, 0.1, 0.55]) == [(3, 0.55), (1, 0.3), (2, 0.1)]
    assert main_frequencies([0.2, 0.2, 0.6], at_least=0.25) == [(2, 0.6)]
    assert main_frequencies([0.0, 0.0]) == []
