"""Find the estimators skbudget exports (like ``sklearn.utils.discovery``)."""

import inspect

__all__ = ["all_estimators"]


def all_estimators(budgeted=None):
    """The online kernel classifiers exported by :mod:`skbudget`.

    Every class listed in ``skbudget.__all__`` that derives from the shared
    estimator base; the meta-estimator
    :class:`~skbudget.SequentialSearchCV` is not one of them.  A new
    estimator shows up here (and in the tests, benchmarks and documentation
    examples that use this function) as soon as it is exported.

    Parameters
    ----------
    budgeted : bool, default=None
        ``True``: only the estimators with a ``budget`` parameter;
        ``False``: only those without one; ``None``: all.

    Returns
    -------
    estimators : list of (str, type)
        ``(name, class)`` pairs in the order of ``skbudget.__all__``.

    Examples
    --------
    >>> from skbudget.discovery import all_estimators
    >>> names = [name for name, _ in all_estimators()]
    >>> "Forgetron" in names and "SequentialSearchCV" not in names
    True
    """
    import skbudget
    from skbudget._base import BaseOnlineClassifier

    found = []
    for name in skbudget.__all__:
        obj = getattr(skbudget, name)
        if not (inspect.isclass(obj) and issubclass(obj, BaseOnlineClassifier)):
            continue
        if budgeted is None or ("budget" in obj().get_params()) == budgeted:
            found.append((name, obj))
    return found
