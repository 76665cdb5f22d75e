"""Input validation: X and y checked as scikit-learn's ``validate_data``
checks them (the same errors, warnings and results) by the shortcuts of
fit and predict; labels read block by block; the compiled label table."""

import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from numpy.testing import assert_array_equal
from sklearn.base import clone

from skbudget import Forgetron


def test_labels_are_checked_and_collected_block_by_block(monkeypatch):
    # fit reads y a block at a time (bounded memory): the classes of every
    # block, and a regression target in a late block, still count
    import skbudget._base as base
    monkeypatch.setattr(base, "_LABEL_BLOCK", 7)
    rng = np.random.RandomState(0)
    X = rng.randn(40, 3)
    y = np.array(["b", "a"] * 15 + ["c", "d"] * 5)       # 'c', 'd' only after block 4
    est = Forgetron(budget=5, random_state=0).fit(X, y)
    assert_array_equal(est.classes_, ["a", "b", "c", "d"])
    y_float = np.ones(40)
    y_float[::2] = 0.0
    y_float[33] = 0.5                                    # continuous, in the last block
    with pytest.raises(ValueError, match="Unknown label type: continuous"):
        Forgetron(budget=5).fit(X, y_float)


@pytest.mark.parametrize("y", [
    np.array([1, -1, 1, 1, -1] * 8),
    np.array([0, 1] * 17 + [2, 5, 5, 2, 5, 2], dtype=np.uint8),     # 2 and 5 in late blocks
    np.array([-3, 3] * 19 + [0, 0], dtype=np.int8),
    np.array([True, False] * 20),
    np.array([3.0, -1.0] * 19 + [-0.0, 2.0], dtype=np.float32),
    np.array([0, 10 ** 6] * 20),                                    # range beyond a block
    np.array([2 ** 63 + 1, 2 ** 63] * 20, dtype=np.uint64),         # beyond int64
])
def test_numeric_labels_shortcut_gives_np_unique(monkeypatch, y):
    # integral numeric labels skip type_of_target: the same classes (values
    # and dtype) as np.unique, whatever the blocks
    import skbudget._base as base
    monkeypatch.setattr(base, "_LABEL_BLOCK", 7)
    classes = base._checked_classes(y)
    assert classes.dtype == y.dtype
    assert_array_equal(classes, np.unique(y))


@pytest.mark.parametrize("y", [
    np.array([0.0, 1.0, np.nan] * 10),
    np.array([0.0, 1.0, np.inf] * 10),
    np.array([0, 1, 1] * 9),                          # one label short
    np.array([0, 1, 1] * 11),                         # three too many
    np.array([[0, 1, 1] * 10]),                       # a row, not a column
])
@pytest.mark.parametrize("method", ["fit", "partial_fit"])
def test_plain_labels_fail_with_scikit_learns_errors(y, method):
    # a 1-D numeric y skips check_array: the same errors as validate_data's
    from sklearn.utils.validation import validate_data
    X = np.random.RandomState(0).randn(30, 2)
    est = Forgetron(budget=5)
    with pytest.raises(ValueError) as expected:
        validate_data(est, X, y, accept_sparse="csr", dtype=np.float64)
    with pytest.raises(ValueError) as raised:
        if method == "fit":
            clone(est).fit(X, y)
        else:
            clone(est).partial_fit(X, y, classes=[0, 1])
    assert str(raised.value) == str(expected.value)


@pytest.mark.parametrize("dtype", [np.int64, np.int16, np.uint32, np.float64, np.float32, bool])
def test_plain_labels_in_any_layout_give_the_same_model(dtype):
    # strided (a column of a 2-D array) and read-only labels: the same
    # model as a contiguous copy, the same classes_ dtype as np.unique
    rng = np.random.RandomState(1)
    X = rng.randn(120, 2)
    labels = np.column_stack([rng.randint(0, 2, 120), rng.randint(0, 2, 120)]).astype(dtype)
    y = labels[:, 1]
    y_read_only = y.copy()
    y_read_only.flags.writeable = False
    reference = Forgetron(budget=10, random_state=0).fit(X, np.ascontiguousarray(y))
    for labels_given in (y, y_read_only):
        est = Forgetron(budget=10, random_state=0).fit(X, labels_given)
        assert est.classes_.dtype == np.unique(y).dtype
        assert_array_equal(est.classes_, reference.classes_)
        assert_array_equal(est.dual_coef_, reference.dual_coef_)
        assert_array_equal(est.support_vectors_, reference.support_vectors_)


@pytest.mark.parametrize("y", [
    np.array([0.0, 1.0, np.nan]),
    np.array([0.0, 1.0, np.inf]),
    np.array([0.0, 1.5]),
    np.array([2.0 ** 53, 2.0 ** 53 - 2.0]),           # integral, beyond 2^52
    np.array([0, 70_000]),                            # a range beyond the table
    np.array([], dtype=np.int64),
])
def test_compiled_label_table_declines_what_it_cannot_read(y):
    # integral_classes returns None: the general path (np.unique after
    # scikit-learn's check) decides
    from skbudget._elementwise import integral_classes
    assert integral_classes(y, 1 << 16) is None


def test_compiled_label_table_reads_integral_floats_and_extremes():
    from skbudget._elementwise import integral_classes
    assert_array_equal(integral_classes(np.array([3.0, -1.0, -0.0, 3.0]), 8), [-1, 0, 3])
    assert_array_equal(integral_classes(np.array([2 ** 52, 2 ** 52 - 3], dtype=np.uint64), 8),
                       [2 ** 52 - 3, 2 ** 52])
    assert_array_equal(integral_classes(np.array([-128, 127, 0], dtype=np.int8), 256),
                       [-128, 0, 127])
    assert integral_classes(np.array([-128, 127], dtype=np.int8), 255) is None


def _validation_outcome(call):
    """What a validation call gave: ('ok', returned object) or ('error',
    its type and message), with the warnings it raised."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = ("ok", call())
        except Exception as error:          # noqa: BLE001 (compared below)
            out = ("error", (type(error), str(error)))
    return out, [str(w.message) for w in caught]


@pytest.mark.parametrize("make", [
    lambda rng: rng.randn(30, 4),
    lambda rng: np.asfortranarray(rng.randn(30, 4)),
    lambda rng: rng.randn(60, 8)[::2, 1::2],
    lambda rng: sp.csr_matrix(rng.randn(30, 4)),
    lambda rng: sp.csr_array(rng.randn(30, 4)),
    lambda rng: np.where(rng.randn(30, 4) > 1, np.nan, 1.0),
    lambda rng: sp.csr_matrix(np.where(rng.randn(30, 4) > 1, np.inf, 1.0)),
    lambda rng: rng.randn(0, 4),
    lambda rng: rng.randn(30, 0),
    lambda rng: rng.randn(30),
    lambda rng: rng.randn(30, 4).astype(np.float32),
    lambda rng: rng.randn(30, 4).astype(">f8"),
    lambda rng: rng.randn(30, 4, 2),
    lambda rng: pd.DataFrame(rng.randn(30, 4), columns=list("abcd")),
])
@pytest.mark.parametrize("fitted_with_names", [False, True])
@pytest.mark.parametrize("ensure_all_finite", [True, False])
def test_checked_X_is_validate_data(make, fitted_with_names, ensure_all_finite):
    # fit's and decision_function's X: a plain float64 array or CSR matrix
    # skips validate_data's generic path; the same X, n_features_in_,
    # feature names, errors and warnings as validate_data for any input
    from sklearn.utils.validation import validate_data

    from skbudget._base import _checked_X
    X = make(np.random.RandomState(0))
    for reset in (True, False):
        outcomes = []
        for check in (_checked_X, None):
            est = Forgetron(budget=5)
            names = pd.DataFrame(np.ones((3, 4)), columns=list("abcd"))
            if fitted_with_names:
                validate_data(est, names, reset=True)
            elif not reset:
                validate_data(est, np.ones((3, 4)), reset=True)
            if check is None:
                outcome = _validation_outcome(lambda: validate_data(
                    est, X, accept_sparse="csr", dtype=np.float64, reset=reset,
                    ensure_all_finite=ensure_all_finite))
            else:
                outcome = _validation_outcome(lambda: check(
                    est, X, reset, ensure_all_finite=ensure_all_finite))
            outcomes.append((outcome, getattr(est, "n_features_in_", None),
                             list(getattr(est, "feature_names_in_", []))))
        (a, a_warnings), a_n, a_names = outcomes[0]
        (b, b_warnings), b_n, b_names = outcomes[1]
        assert a[0] == b[0] and a_warnings == b_warnings and (a_n, a_names) == (b_n, b_names)
        if a[0] == "error":
            assert a[1] == b[1]
        else:
            assert type(a[1]) is type(b[1])
            if isinstance(X, np.ndarray) and X.dtype == np.float64 and X.ndim == 2:
                assert a[1] is X                # validated as it is, no copy
            left, right = a[1], b[1]
            if sp.issparse(left):
                left, right = left.toarray(), right.toarray()
            assert_array_equal(np.asarray(left), np.asarray(right))
