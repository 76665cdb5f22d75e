"""Plain, obviously-correct implementations written straight from
doc/algorithms.md: one example at a time, kernel rows from NumPy, no tricks.

The tests replay streams through them and through the estimators and
compare update by update.  Each class is named ``Plain<Estimator>``,
takes the estimator's own parameters (plus ``kernel``, a function
``k(A, B) -> ndarray``) and offers ``partial_fit(X, y)`` over labels in
{-1, +1}, recording ``mistakes`` (one flag per round), plus
``support_indices`` (stream positions of the support vectors, oldest first),
``coef`` and ``intercept``.
"""


def keeping_flags(est):
    """``est``, set to keep every round's mistake flag (the test switch
    ``_keep_mistake_flags``: the fitted record is bounded otherwise)."""
    est._keep_mistake_flags = True
    return est


def mistake_flags(est):
    """The per-round mistake flags of an estimator made by ``keeping_flags``."""
    return est._mistake_flags()
