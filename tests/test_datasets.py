"""The synthetic problems of the papers."""

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from skbudget.datasets import make_checkerboard, make_khardon_wachman, make_noisy_gaussians


def test_checkerboard_parity_and_exact_noise():
    X, y = make_checkerboard(2000, noise=0.0, random_state=0)
    assert X.shape == (2000, 2) and X.min() >= 0 and X.max() < 4
    parity = np.floor(X).astype(int).sum(axis=1) % 2
    assert_array_equal(y, np.where(parity == 1, 1, -1))
    Xn, yn = make_checkerboard(2000, noise=0.15, random_state=0)
    assert_array_equal(Xn, X)                    # same points, same seed
    assert np.sum(yn != y) == 300                # exactly round(0.15 n) flipped


def test_checkerboard_cells():
    X, _ = make_checkerboard(500, n_cells=6, random_state=1)
    assert X.max() < 6 and X.max() > 5


def test_noisy_gaussians_moments_and_noise():
    X, y = make_noisy_gaussians(200_000, noise=0.0, random_state=0)
    pos = X[y == 1]
    np.testing.assert_allclose(pos.mean(axis=0), [1, 1], atol=0.02)
    np.testing.assert_allclose(pos.var(axis=0), [0.2, 2.0], rtol=0.03)
    np.testing.assert_allclose((y == 1).mean(), 0.5, atol=0.01)
    _, y_noisy = make_noisy_gaussians(200_000, noise=0.1, random_state=0)
    np.testing.assert_allclose((y_noisy != y).mean(), 0.1, atol=0.01)


@pytest.mark.parametrize("n_features", [50, 200])
def test_khardon_wachman_margin_and_labels(n_features):
    X, y, (w, theta) = make_khardon_wachman(600, n_features=n_features, margin=0.05,
                                            noise=0.0, random_state=0, return_target=True)
    assert X.shape == (600, n_features)
    assert np.all(X == np.round(X)) and X.min() >= -10 and X.max() <= 10
    assert set(np.unique(w)) <= {0.0, 1.0}
    activation = X @ w - theta
    assert np.all(np.abs(activation) >= 0.05 * theta)
    assert_array_equal(y, np.where(activation > 0, 1, -1))
    _, y_noisy = make_khardon_wachman(600, n_features=n_features, noise=0.25, random_state=0)
    assert 0.15 < np.mean(y_noisy != y) < 0.35


def test_generators_are_deterministic_and_validate():
    for make in (make_checkerboard, make_noisy_gaussians, make_khardon_wachman):
        a = make(100, random_state=3)
        b = make(100, random_state=3)
        for u, v in zip(a, b):
            assert_array_equal(u, v)
    with pytest.raises(ValueError, match="noise"):
        make_checkerboard(10, noise=1.5)
    with pytest.raises(ValueError, match="n_samples"):
        make_noisy_gaussians(0)
