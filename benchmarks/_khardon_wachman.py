"""Shared by the Khardon & Wachman benchmarks (Tables 4 and 6)."""

from _common import RESULTS, write_json  # noqa: F401  (re-exported)

# the paper's settings (§3.2); the training set is permuted once beforehand
PAPER_SETTINGS = dict(kernel="linear", eta0=0.1, theta_init="kappa", threshold_step="kappa",
                      max_iter=100, shuffle=False)
HYPOTHESES = {"Last": "last", "Longest": "longest_survivor", "Voted": "voted"}


def switch_hypothesis(est, hypothesis):
    """Predict with another hypothesis of the same training run (equal to a
    separate fit with that hypothesis: the training run does not depend on
    it)."""
    est.set_params(hypothesis=hypothesis)
    est._update_fitted_attributes()
    return est


def hypothesis_scores(est, X, y):
    """Accuracy of every hypothesis of one fitted model on (X, y)."""
    return {name: switch_hypothesis(est, h).score(X, y) for name, h in HYPOTHESES.items()}

