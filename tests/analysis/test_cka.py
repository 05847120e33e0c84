"""CKA (Kornblith et al. 2019) and minibatch CKA (Nguyen et al. 2021) against direct formulas."""

import numpy as np
import pytest

from pvr_keras.analysis import (
    MinibatchCKA,
    center_gram,
    cka,
    gram_linear,
    gram_rbf,
    hsic_unbiased,
    linear_cka,
    rbf_cka,
)


def direct_unbiased_hsic(k, l_):
    """Song et al. 2012, written out term by term with explicit ones vectors."""
    n = k.shape[0]
    k, l_ = k.copy(), l_.copy()
    np.fill_diagonal(k, 0)
    np.fill_diagonal(l_, 0)
    one = np.ones(n)
    return (
        np.trace(k @ l_)
        + (one @ k @ one) * (one @ l_ @ one) / ((n - 1) * (n - 2))
        - 2 / (n - 2) * (one @ k @ l_ @ one)
    ) / (n * (n - 3))


def direct_biased_cka(k, l_):
    """HSIC with the centring matrix H = I - 11'/n; CKA = HSIC(K,L)/sqrt(HSIC(K,K) HSIC(L,L))."""
    n = k.shape[0]
    h = np.eye(n) - np.ones((n, n)) / n

    def hsic(a, b):
        return np.trace(a @ h @ b @ h)

    return hsic(k, l_) / np.sqrt(hsic(k, k) * hsic(l_, l_))


@pytest.fixture
def pair():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(60, 7))
    y = np.tanh(x @ rng.normal(size=(7, 5))) + 0.5 * rng.normal(size=(60, 5))
    return x, y


def random_rotation(dim, seed):
    q, _ = np.linalg.qr(np.random.default_rng(seed).normal(size=(dim, dim)))
    return q


def test_linear_cka_matches_direct_formulas(pair):
    x, y = pair
    k, l_ = x @ x.T, y @ y.T
    assert linear_cka(x, y) == pytest.approx(direct_biased_cka(k, l_), rel=1e-10)
    direct = direct_unbiased_hsic(k, l_) / np.sqrt(
        direct_unbiased_hsic(k, k) * direct_unbiased_hsic(l_, l_)
    )
    assert linear_cka(x, y, debiased=True) == pytest.approx(direct, rel=1e-10)


def test_debiased_gram_cka_matches_song_formula_for_rbf(pair):
    x, y = pair
    k, l_ = gram_rbf(x, 0.5), gram_rbf(y, 0.5)
    direct = direct_unbiased_hsic(k, l_) / np.sqrt(
        direct_unbiased_hsic(k, k) * direct_unbiased_hsic(l_, l_)
    )
    assert rbf_cka(x, y, debiased=True) == pytest.approx(direct, rel=1e-10)
    assert rbf_cka(x, y) == pytest.approx(direct_biased_cka(k, l_), rel=1e-10)
    assert hsic_unbiased(k, l_) == pytest.approx(direct_unbiased_hsic(k, l_), rel=1e-10)
    # The U-centred Gram matrices give n (n - 3) times the unbiased HSIC (Kornblith's notebook).
    n = len(x)
    inner = np.sum(center_gram(k, unbiased=True) * center_gram(l_, unbiased=True))
    assert inner == pytest.approx(n * (n - 3) * direct_unbiased_hsic(k, l_), rel=1e-10)


@pytest.mark.parametrize("debiased", [False, True])
def test_feature_space_and_gram_routes_agree(pair, debiased):
    x, y = pair
    expected = cka(gram_linear(x), gram_linear(y), debiased=debiased)
    assert linear_cka(x, y, debiased=debiased) == pytest.approx(expected, rel=1e-10)
    # More features than examples: linear_cka takes the Gram route; still the same number.
    wide_x = np.concatenate([x, x[:, :1] * np.ones((1, 80))], axis=1)
    expected = cka(gram_linear(wide_x), gram_linear(y), debiased=debiased)
    assert linear_cka(wide_x, y, debiased=debiased) == pytest.approx(expected, rel=1e-10)


def test_rbf_gram_uses_median_distance_bandwidth():
    x = np.array([[0.0], [1.0], [3.0]])
    sq = np.array([[0, 1, 9], [1, 0, 4], [9, 4, 0]], float)
    median = np.median(sq)  # over all n^2 entries, diagonal included, as in the notebook
    np.testing.assert_allclose(gram_rbf(x, 0.5), np.exp(-sq / (2 * 0.25 * median)))


@pytest.mark.parametrize("debiased", [False, True])
def test_invariances_and_self_similarity(pair, debiased):
    x, y = pair
    q = random_rotation(y.shape[1], 3)
    linear = linear_cka(x, y, debiased=debiased)
    assert linear_cka(x, 4.2 * y @ q + 1.5, debiased=debiased) == pytest.approx(linear, rel=1e-9)
    assert linear_cka(x, x, debiased=debiased) == pytest.approx(1.0, rel=1e-12)
    assert linear_cka(x, y, debiased=debiased) == pytest.approx(
        linear_cka(y, x, debiased=debiased), rel=1e-12
    )
    # RBF with a median-distance bandwidth: distances are kept by rotations and translations,
    # and isotropic scaling scales the median with them.
    rbf = rbf_cka(x, y, debiased=debiased)
    assert rbf_cka(x, 4.2 * y @ q + 1.5, debiased=debiased) == pytest.approx(rbf, rel=1e-9)
    assert rbf_cka(x, x, debiased=debiased) == pytest.approx(1.0, rel=1e-12)
    # Neither is invariant to an anisotropic scaling.
    stretch = np.array([10.0, 1, 1, 1, 1])
    assert abs(linear_cka(x, y * stretch, debiased=debiased) - linear) > 0.1
    assert abs(rbf_cka(x, y * stretch, debiased=debiased) - rbf) > 0.1


def test_single_features_give_squared_correlation():
    rng = np.random.default_rng(1)
    a = rng.normal(size=200)
    b = 0.6 * a + rng.normal(size=200)
    assert linear_cka(a[:, None], b[:, None]) == pytest.approx(np.corrcoef(a, b)[0, 1] ** 2)


def test_debiasing_removes_the_bias_of_independent_representations():
    rng = np.random.default_rng(2)
    x, y = rng.normal(size=(400, 50)), rng.normal(size=(400, 50))
    # Biased CKA of independent wide representations sits well above zero; debiased near zero.
    assert linear_cka(x, y) > 0.08
    assert abs(linear_cka(x, y, debiased=True)) < 0.02


def minibatch_cka(x, y, batch_size):
    metric = MinibatchCKA()
    for start in range(0, len(x), batch_size):
        metric.update(x[start : start + batch_size], y[start : start + batch_size])
    return metric.result()


def test_minibatch_with_one_batch_is_the_full_debiased_cka(pair):
    x, y = pair
    assert minibatch_cka(x, y, len(x)) == pytest.approx(linear_cka(x, y, debiased=True), rel=1e-10)


@pytest.mark.parametrize("batch_size", [10, 15, 20, 30])
def test_minibatch_is_the_ratio_of_mean_batch_hsic(pair, batch_size):
    x, y = pair
    terms = []
    for start in range(0, len(x), batch_size):
        k = x[start : start + batch_size] @ x[start : start + batch_size].T
        l_ = y[start : start + batch_size] @ y[start : start + batch_size].T
        terms.append(
            [direct_unbiased_hsic(k, l_), direct_unbiased_hsic(k, k), direct_unbiased_hsic(l_, l_)]
        )
    xy, xx, yy = np.mean(terms, axis=0)
    assert minibatch_cka(x, y, batch_size) == pytest.approx(xy / np.sqrt(xx * yy), rel=1e-10)


def test_minibatch_agrees_with_full_debiased_up_to_sampling_noise():
    rng = np.random.default_rng(4)
    n = 3000
    x = rng.normal(size=(n, 16))
    y = np.maximum(x @ rng.normal(size=(16, 12)), 0) + rng.normal(size=(n, 12))
    full = linear_cka(x, y, debiased=True)
    for batch_size in (100, 300, 1000):
        # Measured differences are about 0.001 here; the two estimate the same population CKA.
        assert minibatch_cka(x, y, batch_size) == pytest.approx(full, abs=0.01)


def test_minibatch_reset_and_errors():
    metric = MinibatchCKA()
    with pytest.raises(ValueError, match="no minibatch seen yet"):
        metric.result()
    x = np.random.default_rng(0).normal(size=(8, 3))
    metric.update(x, x)
    assert metric.num_batches == 1
    with pytest.raises(ValueError, match=r"same feature sizes as the first, \(3, 3\); .*\(3, 2\)"):
        metric.update(x, x[:, :2])
    with pytest.raises(ValueError, match="at least 4 examples.*received 3"):
        metric.update(x[:3], x[:3])
    with pytest.raises(ValueError, match="same first dimension.*8 and 6"):
        metric.update(x, x[:6])
    metric.reset()
    assert metric.num_batches == 0
    metric.update(x, x[:, :2])  # a fresh start takes new feature sizes


@pytest.mark.parametrize("fn", [linear_cka, rbf_cka])
def test_bad_inputs_raise(fn):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(10, 3))
    with pytest.raises(ValueError, match="same first dimension.*10 and 9"):
        fn(x, x[:9])
    with pytest.raises(ValueError, match=r"X must be 2-D.*received shape \(10, 3, 1\)"):
        fn(x[:, :, None], x)
    with pytest.raises(ValueError, match=r"Y must be 2-D.*received shape \(10,\)"):
        fn(x, x[:, 0])
    with pytest.raises(ValueError, match="debiased estimator needs at least 4 examples; .*3"):
        fn(x[:3], x[:3], debiased=True)
    with pytest.raises(ValueError, match="CKA needs at least 2 examples; received 1"):
        fn(x[:1], x[:1])
    with pytest.raises(ValueError, match="must be finite"):
        fn(np.where(x > 1, np.nan, x), x)
    with pytest.raises(ValueError, match="all examples of Y are identical"):
        fn(x, np.ones_like(x))
    with pytest.raises(ValueError, match="numeric array"):
        fn(x, [["a", "b", "c"]] * 10)


def test_bad_gram_and_threshold_raise():
    x = np.random.default_rng(0).normal(size=(6, 2))
    with pytest.raises(ValueError, match="threshold must be a positive number; received 0"):
        rbf_cka(x, x, threshold=0)
    with pytest.raises(ValueError, match="threshold must be a positive number; received '1'"):
        gram_rbf(x, threshold="1")
    with pytest.raises(ValueError, match="median distance between examples is 0"):
        gram_rbf(np.array([[0.0], [0.0], [0.0], [1.0]]))
    with pytest.raises(ValueError, match="gram must be symmetric"):
        center_gram(np.arange(9.0).reshape(3, 3))
    with pytest.raises(ValueError, match=r"square Gram matrix; received shape \(6, 2\)"):
        cka(x, x)
    with pytest.raises(ValueError, match=r"same examples; received shapes \(6, 6\) and \(5, 5\)"):
        cka(gram_linear(x), gram_linear(x[:5]))
    with pytest.raises(ValueError, match="unbiased HSIC needs at least 4 examples; received 3"):
        hsic_unbiased(gram_linear(x[:3]), gram_linear(x[:3]))
