"""Everything a fitted model is made of, to check that a call which failed
(an exception, Ctrl-C, a kernel error) left the model exactly as it was."""

import numpy as np
import scipy.sparse as sp
from numpy.testing import assert_array_equal


def model_state(est):
    """Everything a model is made of, comparable with ``==``: the fitted
    attributes, each learner's full state and every generator's state."""
    if not hasattr(est, "classes_"):
        return None
    state = {name: getattr(est, name) for name in (
        "classes_", "dual_coef_", "coef_", "intercept_", "n_support_", "n_mistakes_",
        "n_rounds_", "n_updates_", "mistake_curve_", "n_iter_", "_n_examples_seen")
        if hasattr(est, name)}
    if hasattr(est, "support_vectors_"):
        vectors = est.support_vectors_
        state["support_vectors_"] = vectors.toarray() if sp.issparse(vectors) else vectors
    state["pools"] = [p.toarray() if sp.issparse(p) else p for p in est._driver.pools]
    state["pool_ids"] = est._driver.pool_ids
    state["rng"] = est._rng.get_state()[1]
    for k, learner in enumerate(est._learners):
        for name, value in learner.get_state().items():
            rng = isinstance(value, np.random.RandomState)
            state[f"learner{k}.{name}"] = value.get_state()[1] if rng else value
    return state


def assert_same_state(a, b):
    assert (a is None) == (b is None)
    if a is None:
        return
    assert a.keys() == b.keys()
    for name in a:
        x, y = a[name], b[name]
        if isinstance(x, list):
            assert len(x) == len(y), name
            for u, v in zip(x, y):
                assert_array_equal(u, v, err_msg=name)
        else:
            assert_array_equal(x, y, err_msg=name)
