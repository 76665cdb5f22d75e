"""Properties every estimator of skbudget must have.

Estimators are discovered from ``skbudget.__all__``, so a new algorithm is
covered as soon as it is exported.
"""

import io
import logging
import pickle
from contextlib import redirect_stdout

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

import skbudget
import skbudget._stream
from skbudget._averaging import ExpansionAverage
from skbudget._base import BaseKernelExpansionClassifier
from skbudget._declaration import CannotAverage, declaration_of
from skbudget._kernel_catalogue import KERNEL_NAMES
from skbudget.discovery import all_estimators

ESTIMATORS = [Est for _, Est in all_estimators()]
BUDGETED = [Est for _, Est in all_estimators(budgeted=True)]
IDS = [Est.__name__ for Est in ESTIMATORS]
# the kernel expansions (the others, e.g. FourierOGDClassifier, take no
# kernel parameter and store no support vectors)
KERNEL_ESTIMATORS = [Est for Est in ESTIMATORS if issubclass(Est, BaseKernelExpansionClassifier)]
KERNEL_IDS = [Est.__name__ for Est in KERNEL_ESTIMATORS]


def params_taken(Est, **params):
    """The subset of ``params`` that ``Est`` takes (by its ``get_params()``):
    e.g. ``gamma`` for a kernel model, nothing for a linear model on the raw
    features."""
    taken = Est().get_params()
    return {name: value for name, value in params.items() if name in taken}


def accepts(Est, params):
    """Whether ``Est(**params)`` passes its parameter validation."""
    try:
        Est(**params)._validate_params()
    except ValueError:
        return False
    return True


def small(Est, **params):
    """``Est`` with the first parameter set it declares for the common tests
    (``_declaration.test_params``: small and fast, a budget that binds on
    small data, a fixed gamma since 'scale' is resolved on the first call's
    data) and ``params``: the first set it accepts them with, and, when
    ``params`` set the kernel, with every named kernel (so that the models
    of one test's kernels come from one set: BSGD's merging takes the RBF
    kernel alone, so such a test takes its set that does not merge)."""
    kernels = [{}] + [{"kernel": name} for name in KERNEL_NAMES] if "kernel" in params else [{}]
    for declared in declaration_of(Est).test_params:
        if all(accepts(Est, {**declared, **params, **kernel}) for kernel in kernels):
            return Est(**{**declared, **params})
    raise AssertionError(f"{Est.__name__} declares no test parameters that accept {params}")


# the fitted attributes that describe the data or the parameters, not the
# model (gamma_: None for a callable kernel)
_DATA_ATTRIBUTES = {"classes_", "feature_names_in_", "gamma_", "n_features_in_", "n_iter_"}


def fitted_state(est):
    """The model: every fitted attribute (public, ending in ``_``, the
    online record's curves included), by name, sparse ones made dense."""
    names = sorted({name for name in vars(est) if name.endswith("_") and not name.startswith("_")}
                   - _DATA_ATTRIBUTES)
    names += [name for name in ("mistake_curve_", "support_curve_") if hasattr(type(est), name)]
    values = [getattr(est, name) for name in names]
    return [(name, value.toarray() if sp.issparse(value) else value)
            for name, value in zip(names, values)]


def assert_same_model(a, b, rtol=0.0):
    """The fitted models of ``a`` and ``b``: equal bit for bit (``rtol=0``,
    the default: the same arithmetic, e.g. another cut of the stream, an
    engine knob, a pickle round trip), or within ``rtol`` where they come by
    different arithmetic (dense and CSR input, a kernel by name and the
    same kernel as a callable)."""
    for (name_a, x), (name_b, y) in zip(fitted_state(a), fitted_state(b), strict=True):
        assert name_a == name_b
        if rtol and np.asarray(x).dtype.kind == "f":
            assert_allclose(x, y, rtol=rtol, atol=rtol)
        else:
            assert_array_equal(x, y, strict=True)


def _expected_failed_checks(estimator):
    """The checks an online learner cannot pass by design (as scikit-learn
    marks them for SGDClassifier and PassiveAggressiveClassifier): a weight
    of 2 scales one step, it does not replay the example (and the pass's
    step count, order and budget differ), so weights are not repeats."""
    if "sample_weight" not in declaration_of(type(estimator)).weights:
        return {}
    reason = "sample_weight is not equivalent to removing/repeating samples (online updates)."
    if declaration_of(type(estimator)).solves_calls:
        reason = ("a weight of 2 and a repeated row have one optimum, but the solver stops at "
                  "tol on different iterates (and draws another order of rows).")
    return {"check_sample_weight_equivalence_on_dense_data": reason,
            "check_sample_weight_equivalence_on_sparse_data": reason}


def _other_multiclass_modes():
    """Every estimator whose shared multi-class mode is a parameter
    (``_declaration.shared_multiclass``), in the mode it does not take by
    default: another model (BudgetedSGDClassifier's one-vs-rest)."""
    for Est in ESTIMATORS:
        mode = declaration_of(Est).shared_multiclass
        if mode is not None and mode.param is not None:
            default = Est().get_params()[mode.param]
            yield Est(**{mode.param: mode.one_vs_rest if default == mode.shared else mode.shared})


def _checked_instance(Est):
    """``Est`` with the parameters it declares for scikit-learn's checks
    (``_declaration.check_params``; None: its defaults)."""
    return Est(**(declaration_of(Est).check_params or {}))


@parametrize_with_checks([_checked_instance(Est) for Est in ESTIMATORS]
                         + list(_other_multiclass_modes()),
                         expected_failed_checks=_expected_failed_checks)
@pytest.mark.filterwarnings("ignore:gamma='scale' was resolved from the:UserWarning")
@pytest.mark.filterwarnings("ignore:.*hold.? no support vector:UserWarning")
def test_sklearn_compatible(estimator, check, monkeypatch):
    name = getattr(check, "func", check).__name__
    if name == "check_array_api_input":
        # Run with NumPy inputs only (the estimators declare no array API
        # support): it checks that array_api_dispatch=True does not change
        # the results.  scikit-learn skips it unless SCIPY_ARRAY_API=1 is
        # set, which matters only for other array namespaces (SciPy reads
        # it at import); without this every run reported 14 skips.
        monkeypatch.setenv("SCIPY_ARRAY_API", "1")
    check(estimator)


@pytest.mark.parametrize("Est", ESTIMATORS, ids=IDS)
def test_partial_fit_chunks_equal_one_fit_epoch(Est, binary_data):
    X, y = binary_data
    if declaration_of(Est).solves_calls:
        pytest.skip("each call solves a problem over its rows: calls cut anywhere are other "
                    "problems (its own tests: fit is one partial_fit call)")
    fitted = small(Est, shuffle=False, max_iter=1).fit(X, y)
    streamed = small(Est)
    for piece in np.array_split(np.arange(len(y)), [1, 8, 50, 51, 120]):
        streamed.partial_fit(X[piece], y[piece], classes=np.unique(y))
    assert_same_model(fitted, streamed)
    assert_array_equal(fitted.predict(X), streamed.predict(X))


@pytest.mark.parametrize("Est", ESTIMATORS, ids=IDS)
@pytest.mark.parametrize("knob, value", [
    ("_chunk_size", 3),          # tiny chunks instead of the adaptive size
    ("_gram_cache_limit", 0),    # kernel blocks computed, not looked up in k(X, X)
])
def test_engine_knobs_never_change_the_model(Est, knob, value, multiclass_data):
    X, y = multiclass_data
    default = small(Est, max_iter=3).fit(X, y)
    changed = small(Est, max_iter=3)
    setattr(changed, knob, value)
    changed.fit(X, y)
    assert_same_model(default, changed)


@pytest.mark.parametrize("Est", ESTIMATORS, ids=IDS)
def test_random_state_determinism(Est, multiclass_data):
    X, y = multiclass_data
    a = small(Est, max_iter=2).fit(X, y)
    b = small(Est, max_iter=2).fit(X, y)
    assert_same_model(a, b)


@pytest.mark.parametrize("Est", ESTIMATORS, ids=IDS)
def test_pickle_round_trip_continues_identically(Est, binary_data):
    X, y = binary_data
    est = small(Est).partial_fit(X[:80], y[:80], classes=np.unique(y))
    copy = pickle.loads(pickle.dumps(est))
    assert_same_model(est, copy)
    est.partial_fit(X[80:], y[80:])
    copy.partial_fit(X[80:], y[80:])
    assert_same_model(est, copy)
    assert_array_equal(est.decision_function(X), copy.decision_function(X))


@pytest.mark.parametrize("Est", ESTIMATORS, ids=IDS)
def test_sparse_input_gives_the_dense_model(Est, binary_data):
    X, y = binary_data
    dense = small(Est).fit(X, y)
    sparse = small(Est).fit(sp.csr_matrix(X), y)
    assert sp.issparse(getattr(sparse, "support_vectors_", sp.csr_matrix(0)))
    assert_same_model(dense, sparse, rtol=1e-12)
    assert_allclose(dense.decision_function(X), sparse.decision_function(sp.csr_matrix(X)))


@pytest.mark.parametrize("Est", ESTIMATORS, ids=IDS)
def test_one_vs_rest_learners_are_the_binary_learners(Est, multiclass_data):
    X, y = multiclass_data
    if small(Est)._draws_random_numbers():
        pytest.skip("each one-vs-rest learner draws from its own generator")
    mode = declaration_of(Est).shared_multiclass
    if mode is not None and mode.param is None:
        pytest.skip("one learner for every class on a shared support set, not one-vs-rest")
    one_vs_rest = {} if mode is None else {mode.param: mode.one_vs_rest}
    multi = small(Est, shuffle=False, max_iter=1, **one_vs_rest).fit(X, y)
    offsets = np.concatenate([[0], np.cumsum(getattr(multi, "n_support_", [0] * 3))])
    for k, label in enumerate(multi.classes_):
        binary = small(Est, shuffle=False, max_iter=1, **one_vs_rest).fit(
            X, (y == label).astype(int))
        if not isinstance(multi, BaseKernelExpansionClassifier):   # features shared by every class
            assert_array_equal(multi.coef_[k], binary.coef_[0])
            assert_allclose(multi.decision_function(X)[:, k], binary.decision_function(X))
            continue
        block = slice(offsets[k], offsets[k + 1])
        assert_allclose(multi.support_vectors_[block], binary.support_vectors_)
        assert_allclose(multi.dual_coef_[k, block], binary.dual_coef_[0], rtol=1e-12, atol=1e-12)
        assert_allclose(multi.intercept_[k], binary.intercept_[0])
        assert_allclose(multi.decision_function(X)[:, k], binary.decision_function(X), atol=1e-9)


@pytest.mark.parametrize("Est", BUDGETED, ids=[E.__name__ for E in BUDGETED])
@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), budget=st.integers(1, 6), n_classes=st.sampled_from([2, 3]))
def test_budget_never_exceeded(Est, seed, budget, n_classes):
    if declaration_of(Est).solves_calls:
        pytest.skip("its budget is the number of landmarks, fixed by the first call (one-row "
                    "calls cannot choose them): tests/test_llsvm.py")
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(40, 2))
    y = rng.randint(n_classes, size=40)
    budget = max(budget, Est._parameter_constraints["budget"][0].left)  # BOGD: B >= 2
    est = Est(budget=budget, random_state=seed, **params_taken(Est, gamma=1.0))
    classes = np.arange(n_classes)
    for i in range(len(y)):
        est.partial_fit(X[i:i + 1], y[i:i + 1], classes=classes)
        # (a model of weight vectors, AMM: its budget is per class)
        assert np.all(getattr(est, "n_support_", getattr(est, "n_weights_", None)) <= budget)


@pytest.mark.parametrize("Est", ESTIMATORS, ids=IDS)
def test_failed_partial_fit_leaves_model_unchanged(Est, binary_data):
    X, y = binary_data
    est = small(Est).partial_fit(X[:50], y[:50], classes=np.unique(y))
    before = pickle.dumps(est)
    with pytest.raises(ValueError, match="not in classes_"):
        est.partial_fit(X[50:60], np.full(10, 7))
    with pytest.raises(ValueError, match="features"):
        est.partial_fit(X[50:60, :2], y[50:60])
    bad = X[50:60].copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        est.partial_fit(bad, y[50:60])
    assert pickle.dumps(est) == before


@pytest.mark.parametrize("Est", KERNEL_ESTIMATORS, ids=KERNEL_IDS)
def test_failing_callable_kernel_leaves_model_unchanged(Est, binary_data):
    X, y = binary_data
    budget = {"calls_left": np.inf}

    def flaky_rbf(a, b):
        budget["calls_left"] -= 1
        if budget["calls_left"] < 0:
            raise RuntimeError("kernel failed")
        return np.exp(-np.sum((a - b) ** 2))

    est = small(Est, kernel=flaky_rbf)
    est._chunk_size = 4
    est.partial_fit(X[:30], y[:30], classes=np.unique(y))
    before = pickle.dumps((est._learners, est._driver.pools, est._record, est._rng))
    budget["calls_left"] = 300   # fails a few chunks into the next call
    with pytest.raises(RuntimeError, match="kernel failed"):
        est.partial_fit(X[30:90], y[30:90])
    assert pickle.dumps((est._learners, est._driver.pools, est._record, est._rng)) == before


@pytest.mark.parametrize("Est", ESTIMATORS, ids=IDS)
def test_partial_fit_needs_classes_first(Est, binary_data):
    X, y = binary_data
    if not Est()._learns_open_label_sets():     # (a shared mode: tests/test_shared_multiclass.py)
        with pytest.raises(ValueError, match="classes must be passed"):
            Est().partial_fit(X, y)
    with pytest.raises(ValueError, match="at least two classes"):
        Est().partial_fit(X, y, classes=[0])


@pytest.mark.parametrize("Est", KERNEL_ESTIMATORS, ids=KERNEL_IDS)
@pytest.mark.parametrize("params, message", [
    (dict(kernel="nope"), "kernel"),
    (dict(gamma=-1.0), "gamma"),
    (dict(max_iter=0), "max_iter"),
    (dict(kernel_params=[1]), "kernel_params"),
])
def test_bad_parameters_are_named(Est, params, message, binary_data):
    X, y = binary_data
    with pytest.raises(ValueError, match=message):
        Est(**params).fit(X, y)


@pytest.mark.parametrize("Est", KERNEL_ESTIMATORS, ids=KERNEL_IDS)
def test_kernels_and_callables_agree(Est, binary_data):
    X, y = binary_data
    named = small(Est, kernel="rbf", gamma=0.7).fit(X, y)
    func = small(Est, kernel=lambda a, b: np.exp(-0.7 * np.sum((a - b) ** 2))).fit(X, y)
    assert_same_model(named, func, rtol=1e-12)
    poly = small(Est, kernel="poly", degree=2, gamma=0.5, coef0=1.0).fit(X, y)
    via_params = small(Est, kernel="poly", kernel_params={"degree": 2, "gamma": 0.5, "coef0": 1.0}).fit(X, y)
    assert_same_model(poly, via_params, rtol=1e-12)


@pytest.mark.parametrize("Est", KERNEL_ESTIMATORS, ids=KERNEL_IDS)
def test_fitted_attributes_are_svc_like(Est, multiclass_data):
    X, y = multiclass_data
    est = small(Est).fit(X, y)
    n_sv = int(est.n_support_.sum())
    assert est.support_vectors_.shape == (n_sv, X.shape[1])
    assert est.dual_coef_.shape == (3, n_sv)
    assert est.intercept_.shape == (3,)
    assert est.n_rounds_ == len(y) * est.max_iter
    assert tuple(est.mistake_curve_[-1]) == (est.n_rounds_, est.n_mistakes_)
    assert np.all(np.diff(est.mistake_curve_, axis=0) >= 0)
    manual = est._kernel(X, est.support_vectors_) @ est.dual_coef_.T + est.intercept_
    if getattr(est, "hypothesis", "last") != "voted":
        assert_allclose(est.decision_function(X), manual, atol=1e-10)


@pytest.mark.parametrize("Est", ESTIMATORS, ids=IDS)
def test_warm_start_continues(Est, binary_data):
    X, y = binary_data
    est = small(Est, warm_start=True, max_iter=1).fit(X, y)
    seen = est.n_rounds_
    est.fit(X, y)
    assert est.n_rounds_ == 2 * seen
    cold = small(Est, max_iter=1).fit(X, y)
    cold.fit(X, y)
    assert cold.n_rounds_ == seen


@pytest.mark.parametrize("Est", ESTIMATORS, ids=IDS)
def test_verbose_reports_each_epoch(Est, binary_data, caplog):
    X, y = binary_data
    with caplog.at_level(logging.INFO, logger="skbudget"):
        small(Est, verbose=1, max_iter=2).fit(X, y)
    lines = [line for line in caplog.messages if line.startswith("-- Epoch")]
    # (a fit that solves its call's problem is one call, whatever max_iter)
    assert len(lines) == (1 if declaration_of(Est).solves_calls else 2)
    assert "mistakes" in lines[0]
    assert ("support vectors" in lines[0]) == issubclass(Est, BaseKernelExpansionClassifier)


@pytest.mark.parametrize("kernel", ["rbf", "laplacian"])   # store mode, block mode
@pytest.mark.parametrize("Est", KERNEL_ESTIMATORS, ids=KERNEL_IDS)
def test_verbose_reports_progress_within_a_pass(Est, kernel, binary_data, monkeypatch,
                                                caplog):
    # a progress line after every chunk (block mode) or segment (store mode)
    # of 40 examples (interval 0 s): 4 per pass
    X, y = binary_data
    monkeypatch.setattr(skbudget._stream, "SEGMENT", 40)
    est = small(Est, verbose=1, kernel=kernel)
    est._progress_interval, est._chunk_size = 0.0, 40
    with caplog.at_level(logging.INFO, logger="skbudget"):
        est.partial_fit(X[:80], y[:80], classes=np.unique(y))
        est.partial_fit(X[80:], y[80:])
    progress = [line for line in caplog.messages if "examples/s" in line]
    assert len(progress) == 4
    seen = [int(line.split("examples seen ")[1].split(",")[0]) for line in progress]
    assert seen == [40, 80, 120, 160]
    last = progress[-1]
    assert f"mistakes {est.n_mistakes_}, online error {est.n_mistakes_ / 160:.4f}" in last
    assert last.endswith(f"support vectors {est.n_support_.sum()}")


def test_verbose_lines_go_to_stdout_unless_logging_is_configured(binary_data, monkeypatch,
                                                                  caplog):
    # no handler of the application's: the lines show on the current
    # stdout, as scikit-learn's verbose estimators print them; with one,
    # they go through it alone; verbose=0 logs nothing
    X, y = binary_data
    est = small(ESTIMATORS[0], verbose=1, max_iter=2)
    monkeypatch.setattr(logging.getLogger(), "handlers", [])
    out = io.StringIO()
    with redirect_stdout(out):
        est.fit(X, y)
    assert out.getvalue().count("-- Epoch") == 2
    monkeypatch.undo()
    out = io.StringIO()
    with caplog.at_level(logging.INFO, logger="skbudget"), redirect_stdout(out):
        est.fit(X, y)
        est.set_params(verbose=0).fit(X, y)
    assert out.getvalue() == ""
    assert sum(line.startswith("-- Epoch") for line in caplog.messages) == 2
    assert all(record.name == "skbudget" for record in caplog.records)


@pytest.mark.parametrize("Est", ESTIMATORS, ids=IDS)
def test_pipeline_grid_search_and_cross_validation(Est, binary_data):
    X, y = binary_data
    pipe = make_pipeline(StandardScaler(), small(Est))
    # gamma and the budget where the estimator takes them, else its number of passes
    searched = params_taken(Est, gamma=[0.5, 2.0], budget=[5, 20]) or {"max_iter": [1, 2]}
    grid = {f"{pipe.steps[-1][0]}__{name}": values for name, values in searched.items()}
    search = GridSearchCV(pipe, grid, cv=3).fit(X, y)
    assert search.best_score_ > 0.5
    assert cross_val_score(clone(pipe), X, y, cv=3).shape == (3,)


@pytest.mark.parametrize("name", skbudget.__all__)
def test_every_exported_estimator_declares_itself(name):
    # the tests, the parallel code and the documentation read the
    # declaration instead of lists of estimators: a class without its own
    # fails here, by name (SequentialSearchCV has none: a meta-estimator of
    # a declared estimator, with no learner of its own to test, weigh or
    # average)
    cls = getattr(skbudget, name)
    if cls not in ESTIMATORS and hasattr(cls, "transform"):
        return      # a transformer (LandmarkNystroem): tests/test_llsvm.py checks it
    if cls not in ESTIMATORS:
        assert "estimator" in cls._get_param_names(), f"{name}: no online learner nor a wrapper"
        return
    declaration = declaration_of(cls)
    for params in declaration.test_params + declaration.model_variants:
        cls(**params)._validate_params()        # the constructor and validation take them
    assert isinstance(declaration.averaging, (ExpansionAverage, CannotAverage))
    for need in getattr(declaration.averaging, "only_with", ()):
        assert need.param in cls().get_params()


@pytest.mark.parametrize("Est", ESTIMATORS, ids=IDS)
def test_the_declared_multi_class_mode_is_the_estimators(Est):
    mode = declaration_of(Est).shared_multiclass
    if mode is None:
        assert not Est()._shares_support(3)
        return
    if mode.param is None:
        assert Est()._shares_support(3)
    else:
        assert Est(**{mode.param: mode.shared})._shares_support(3)
        assert not Est(**{mode.param: mode.one_vs_rest})._shares_support(3)
    averaging = declaration_of(Est).averaging
    if not isinstance(averaging, CannotAverage):      # a rule for the shared learner too
        assert averaging.shared_learner_rule is not None
