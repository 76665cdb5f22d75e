"""Synthetic problems of the budget-perceptron papers, like
:func:`sklearn.datasets.make_moons`.  Labels are in {-1, +1}."""

import numbers

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, validate_params

__all__ = ["make_checkerboard", "make_noisy_gaussians", "make_khardon_wachman"]


def _flip_exactly(y, fraction, rng):
    """Flip the labels of exactly ``round(fraction * n)`` random examples."""
    y = y.copy()
    flipped = rng.choice(y.shape[0], size=int(round(fraction * y.shape[0])), replace=False)
    y[flipped] = -y[flipped]
    return y


@validate_params(
    {
        "n_samples": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_cells": [Interval(numbers.Integral, 1, None, closed="left")],
        "noise": [Interval(numbers.Real, 0, 1, closed="both")],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def make_checkerboard(n_samples=10000, *, n_cells=4, noise=0.0, random_state=None):
    """Uniform points on an ``n_cells x n_cells`` checkerboard.

    The class of a point is the parity of its unit cell; then exactly
    ``round(noise * n_samples)`` labels, chosen at random, are flipped
    (wang-vucetic's NCheckerboard: ``noise=0.15`` for training, ``0`` for
    the test set).

    Parameters
    ----------
    n_samples : int, default=10000
        Number of points.
    n_cells : int, default=4
        Cells per side; the points lie in ``[0, n_cells)^2``.
    noise : float in [0, 1], default=0.0
        Fraction of labels flipped.
    random_state : int, RandomState instance or None, default=None
        Seed of the points and of the choice of the labels flipped.

    Returns
    -------
    X : ndarray of shape (n_samples, 2)
        The points, uniform in the square ``[0, n_cells)^2``.
    y : ndarray of shape (n_samples,) with values in {-1, +1}
        Their labels: +1 on the cells of odd parity, some flipped.

    References
    ----------
    Z. Wang and S. Vucetic, "Tighter Perceptron with Improved Dual Use of
    Cached Data for Model Representation and Validation", IJCNN 2009.
    """
    rng = check_random_state(random_state)
    X = rng.uniform(0, n_cells, size=(n_samples, 2))
    parity = np.floor(X).astype(int).sum(axis=1) % 2
    y = np.where(parity == 1, 1, -1)
    return X, _flip_exactly(y, noise, rng)


@validate_params(
    {
        "n_samples": [Interval(numbers.Integral, 1, None, closed="left")],
        "noise": [Interval(numbers.Real, 0, 1, closed="both")],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def make_noisy_gaussians(n_samples=10000, *, noise=0.1, random_state=None):
    """Two Gaussians, means (1, 1) and (-1, -1), covariance diag(0.2, 2).

    Each point comes from either class with probability 1/2 and its label
    is flipped with probability ``noise`` (the synthetic problem of the
    Forgetron and Projectron papers).

    Parameters
    ----------
    n_samples : int, default=10000
        Number of points.
    noise : float in [0, 1], default=0.1
        Probability of flipping each label.
    random_state : int, RandomState instance or None, default=None
        Seed of the classes, the points and the flips.

    Returns
    -------
    X : ndarray of shape (n_samples, 2)
        The points, each from the Gaussian of its class.
    y : ndarray of shape (n_samples,) with values in {-1, +1}
        Their labels (+1: mean (1, 1)), after the flips.

    References
    ----------
    F. Orabona, J. Keshet and B. Caputo, "The Projectron: a Bounded
    Kernel-Based Perceptron", ICML 2008.

    O. Dekel, S. Shalev-Shwartz and Y. Singer, "The Forgetron: A
    Kernel-Based Perceptron on a Budget", SIAM J. Comput. 37(5), 2008.
    """
    rng = check_random_state(random_state)
    y = np.where(rng.uniform(size=n_samples) < 0.5, 1, -1)
    X = rng.normal(size=(n_samples, 2)) * np.sqrt([0.2, 2.0]) + y[:, None] * 1.0
    flip = rng.uniform(size=n_samples) < noise
    return X, np.where(flip, -y, y)


@validate_params(
    {
        "n_samples": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_features": [Interval(numbers.Integral, 1, None, closed="left")],
        "margin": [Interval(numbers.Real, 0, None, closed="left")],
        "noise": [Interval(numbers.Real, 0, 1, closed="both")],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def make_khardon_wachman(n_samples=600, *, n_features=50, margin=0.05, noise=0.0,
                         random_state=None, return_target=False):
    """The artificial linear-threshold data of Khardon & Wachman (§3.1).

    Features are integers uniform in [-10, 10]; the target ``w`` has each
    coordinate 0 or 1 by a fair coin; ``theta`` is the mean of
    ``|<w, x>| / 2`` over a first batch of candidates; candidates with
    ``|<w, x> - theta| < margin * theta`` are dropped; the label is
    ``sign(<w, x> - theta)``, then flipped with probability ``noise``.

    Parameters
    ----------
    n_samples : int, default=600
        Number of examples kept.
    n_features : int, default=50
        The paper's ``f`` (50, 200 or 500).
    margin : float, default=0.05
        The paper's ``M``: relative width of the empty band around the
        separating hyperplane.
    noise : float in [0, 1], default=0.0
        The paper's ``N``: probability of flipping each label.
    random_state : int, RandomState instance or None, default=None
        Seed.
    return_target : bool, default=False
        Also return ``(w, theta)``.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
        The points.
    y : ndarray of shape (n_samples,) with values in {-1, +1}
        Their labels.
    (w, theta) : tuple, only when ``return_target``
        The target hyperplane ``w . x = theta``.

    References
    ----------
    R. Khardon and G. Wachman, "Noise Tolerant Variants of the Perceptron
    Algorithm", Journal of Machine Learning Research 8, 227-248, 2007.
    """
    rng = check_random_state(random_state)
    w = rng.randint(0, 2, size=n_features).astype(float)
    batch = 4 * n_samples
    candidates = rng.randint(-10, 11, size=(batch, n_features)).astype(float)
    theta = np.mean(0.5 * np.abs(candidates @ w))
    kept = []
    n_kept = 0
    while n_kept < n_samples:
        activation = candidates @ w
        good = candidates[np.abs(activation - theta) >= margin * theta]
        kept.append(good)
        n_kept += good.shape[0]
        candidates = rng.randint(-10, 11, size=(batch, n_features)).astype(float)
    X = np.concatenate(kept)[:n_samples]
    y = np.where(X @ w - theta > 0, 1, -1)
    flip = rng.uniform(size=n_samples) < noise
    y = np.where(flip, -y, y)
    return (X, y, (w, theta)) if return_target else (X, y)
