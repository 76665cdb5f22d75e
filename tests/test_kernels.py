"""The kernel catalogue, and the engine's kernel blocks equal sklearn's
pairwise_kernels."""

import pickle
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal
from sklearn import get_config
from sklearn.base import clone
from sklearn.metrics.pairwise import (
    KERNEL_PARAMS,
    PAIRWISE_KERNEL_FUNCTIONS,
    euclidean_distances,
    pairwise_kernels,
    rbf_kernel,
)

from skbudget import Forgetron, KernelPerceptron
from skbudget._kernel_catalogue import CATALOGUE
from skbudget._kernels import KernelFunction
from tests.test_common import KERNEL_ESTIMATORS, KERNEL_IDS, small

ROOT = Path(__file__).resolve().parents[1]
COMPILED = sorted(name for name, kernel in CATALOGUE.items() if kernel.compiled_kind is not None)


def test_catalogue_names_scikit_learns_kernels_and_their_parameters():
    assert sorted(CATALOGUE) == sorted(PAIRWISE_KERNEL_FUNCTIONS)
    for name, kernel in CATALOGUE.items():
        assert kernel.name == name
        assert kernel.params == set(KERNEL_PARAMS[name]), name


def test_catalogue_kinds_are_the_compiled_enum():
    # the KernelKind values of _kernel_rows.pxd, by name: LINEAR_KERNEL
    # computes 'linear', POLY_KERNEL 'poly' and its alias 'polynomial'
    enum = (ROOT / "skbudget" / "_kernel_rows.pxd").read_text().split("cdef enum KernelKind:")[1]
    kinds = {name.lower(): int(value)
             for name, value in re.findall(r"^\s+(\w+)_KERNEL = (\d+)$", enum.split("\n\n")[0],
                                           re.MULTILINE)}
    assert kinds == {name: kernel.compiled_kind for name, kernel in CATALOGUE.items()
                     if kernel.compiled_kind is not None and name != "polynomial"}
    assert CATALOGUE["polynomial"].compiled_kind == CATALOGUE["poly"].compiled_kind


def test_catalogue_properties_hold_on_data():
    # positive: every value > 0 (on non-negative rows, which the chi-squared
    # kernels need); not positive: some value <= 0 on non-negative or on
    # signed rows; ranks_by_distance: the largest value marks the nearest
    rng = np.random.RandomState(0)
    rows = {"non-negative": rng.uniform(0.1, 2.0, (50, 4)), "signed": rng.randn(50, 4)}
    for name, kernel in CATALOGUE.items():
        blocks = {}
        for sign, X in rows.items():
            if name in ("chi2", "additive_chi2") and sign == "signed":
                continue
            blocks[sign] = pairwise_kernels(X[:30], X[30:], metric=name, filter_params=True,
                                            gamma=0.3, degree=3, coef0=-1.0)
        assert kernel.positive == all(np.all(K > 0) for K in blocks.values()), name
        if kernel.ranks_by_distance:
            X = rows["signed"]
            assert_array_equal(np.argmax(blocks["signed"], axis=1),
                               np.argmin(euclidean_distances(X[:30], X[30:]), axis=1))


def test_user_guide_kernel_table_is_the_catalogue():
    lines = (ROOT / "doc" / "user_guide" / "kernels.rst").read_text().split(
        "Choosing a kernel")[1].splitlines()
    rules = [i for i, line in enumerate(lines) if re.fullmatch(r"=+( +=+)+", line)][:3]
    spans = [match.span() for match in re.finditer("=+", lines[rules[0]])]
    listed = {}
    for row in lines[rules[1] + 1:rules[2]]:
        names, _, params, compiled = (row[start:stop] for start, stop in spans[:3]
                                      + [(spans[3][0], None)])
        for name in re.findall(r"'(\w+)'", names):
            listed[name] = (set(re.findall(r"\w+", params)) - {"none"}, compiled.strip() == "yes")
    assert listed == {name: (set(kernel.params), kernel.compiled_kind is not None)
                      for name, kernel in CATALOGUE.items()}


@pytest.mark.parametrize("kernel", COMPILED)
@pytest.mark.parametrize("sparse", [False, True])
def test_fast_kernels_equal_pairwise_kernels(kernel, sparse):
    rng = np.random.RandomState(0)
    X, Y = rng.randn(7, 5), rng.randn(4, 5)
    est = KernelPerceptron(kernel=kernel, gamma=0.3, degree=2, coef0=0.5).fit(X, [0, 1] * 3 + [0])
    A, B = (sp.csr_matrix(X), sp.csr_matrix(Y)) if sparse else (X, Y)
    expected = pairwise_kernels(X, Y, metric=kernel, filter_params=True,
                                gamma=0.3, degree=2, coef0=0.5)
    assert_allclose(est._kernel(A, B), expected, rtol=1e-12, atol=1e-12)
    assert_allclose(est._kernel(A, A), pairwise_kernels(X, X, metric=kernel, filter_params=True,
                                                        gamma=0.3, degree=2, coef0=0.5),
                    rtol=1e-12, atol=1e-12)


def test_rbf_self_values_are_exactly_one():
    X = np.random.RandomState(0).randn(6, 3) * 100
    est = KernelPerceptron(gamma=1e-3).fit(X, [0, 1] * 3)
    assert_array_equal(np.diag(est._kernel(X, X)), 1.0)
    # the chunk's block inside k(chunk, [pool; chunk]) gets the same values
    pool = X[:2]
    est._driver.pools = [pool]
    K, D = est._driver.chunk_blocks(X, X[2:], np.arange(2, 6), 0, None)
    assert K.shape == (4, 6) and D is None
    assert_array_equal(np.diag(K[:, 2:]), 1.0)
    assert_allclose(K[:, :2], est._kernel(X[2:], pool))


@pytest.mark.parametrize("kernel", COMPILED + ["laplacian"])
@pytest.mark.parametrize("sparse", [False, True])
def test_kernel_diagonal_equals_the_diagonal_of_the_blocks(kernel, sparse):
    rng = np.random.RandomState(3)
    X = rng.normal(size=(150, 4)) * (rng.uniform(size=(150, 4)) < 0.6)
    X = sp.csr_matrix(X) if sparse else X
    function = KernelFunction(kernel, 0.3, 2, 0.5, None)
    assert_array_equal(function.diagonal(X), np.diag(function(X, X)))


@pytest.mark.parametrize("make", [
    lambda rng: rng.randn(20000, 54),
    lambda rng: rng.randn(3000, 7) * 1e-3 + 1e6,              # a large common offset
    lambda rng: np.r_[rng.randn(3000) + 1e6, rng.randn(3000) - 1e6][:, None],
    lambda rng: np.asfortranarray(rng.randn(301, 9)),          # F order: read as it lies
    lambda rng: rng.randn(400, 12)[::2, 1::3],                 # strided: the block path
    lambda rng: rng.randn(1, 1),
    lambda rng: np.full((5, 3), 2.5),
])
@pytest.mark.parametrize("sparse", [False, True])
def test_gamma_scale_variance_equals_numpy(make, sparse):
    # gamma='scale' reads X once (no temporary of its size): X.var() up to
    # the last bits, however X lies in memory (CSR: over every entry, the
    # implicit zeros included)
    from skbudget._kernels import _variance, compute_gamma
    X = make(np.random.RandomState(0))
    if sparse:
        X = np.where(np.abs(X) < np.median(np.abs(X)), 0.0, X)   # about half zeros
        X_csr = sp.csr_matrix(X)
    variance = _variance(X_csr if sparse else X)
    assert variance == pytest.approx(X.var(), rel=1e-13, abs=1e-300)
    assert compute_gamma("scale", X_csr if sparse else X) == pytest.approx(
        1.0 / (X.shape[1] * X.var()) if X.var() else 1.0, rel=1e-13)


@pytest.mark.parametrize("sparse", [False, True])
def test_gamma_scale_moments_give_the_range_of_X(sparse):
    # the variance's pass also takes X's smallest and largest value (a CSR
    # matrix's implicit zeros included) and its mean
    from skbudget._kernels import _moments
    rng = np.random.RandomState(3)
    X = rng.randn(517, 13) * 4 + 2
    if sparse:
        X[X < 3] = 0.0
    variance, mean, lowest, highest = _moments(sp.csr_matrix(X) if sparse else X)
    assert variance == pytest.approx(X.var(), rel=1e-13)
    assert mean == pytest.approx(X.mean(), rel=1e-13)
    assert (lowest, highest) == (X.min(), X.max())


@pytest.mark.parametrize("sparse", [False, True])
def test_outlier_bound_never_hides_the_warning(sparse):
    # gamma='scale' reads X's rows for the outlier warning only when the
    # bound from the variance's pass (n_features times the largest squared
    # deviation of one value) leaves it open: wherever the bound answers,
    # the rows' own pass would not have warned, and a planted outlier of
    # any size either warns or is within the bound
    from skbudget._kernels import _moments, _no_row_can_dominate, _warn_if_one_row_dominates
    rng = np.random.RandomState(0)
    answered = 0
    for n, d in [(2, 1), (3, 2), (5, 1), (20, 3), (50, 54), (400, 2)]:
        for size in [0.0, 1.0, 3.0, 10.0, 30.0, 100.0, 1e3, 1e6]:
            X = rng.randn(n, d)
            X[rng.randint(n), rng.randint(d)] += size
            if sparse:
                X[np.abs(X) < 0.5] = 0.0
            Xin = sp.csr_matrix(X) if sparse else X
            variance, mean, lowest, highest = _moments(Xin)
            if variance == 0:
                continue
            if _no_row_can_dominate(Xin, variance, mean, lowest, highest):
                answered += 1
                with warnings.catch_warnings():
                    warnings.simplefilter("error")
                    _warn_if_one_row_dominates(Xin, variance)
    assert answered > 10          # the bound answers on ordinary data


def test_gamma_scale_variance_of_csr_with_duplicates_or_no_values():
    from skbudget._kernels import _variance
    X = sp.csr_matrix((np.array([1.0, 2.0, 5.0]), np.array([0, 0, 2]), np.array([0, 2, 3])),
                      shape=(2, 3))                      # two entries of (0, 0): 3.0
    assert not X.has_canonical_format
    assert _variance(X) == pytest.approx(X.toarray().var(), rel=1e-14)
    assert _variance(sp.csr_matrix((4, 3))) == 0.0


# ---------------------------------------------------------------------------
# callables: SVC's matrix convention and pairwise_kernels' per-pair one
# ---------------------------------------------------------------------------
def rbf_matrix_05(A, B):
    """A module-level matrix callable (picklable)."""
    return rbf_kernel(A, B, gamma=0.5)


def _models_agree(a, b):
    assert_allclose(a.dual_coef_, b.dual_coef_, rtol=1e-9, atol=1e-12)
    sv_a, sv_b = a.support_vectors_, b.support_vectors_
    assert_allclose(sv_a.toarray() if sp.issparse(sv_a) else sv_a,
                    sv_b.toarray() if sp.issparse(sv_b) else sv_b)
    assert a.n_mistakes_ == b.n_mistakes_


@pytest.mark.parametrize("Est", KERNEL_ESTIMATORS, ids=KERNEL_IDS)
def test_svc_matrix_callable_works_as_written(Est, multiclass_data):
    # the user guide's example, exactly as for SVC: two blocks in, the matrix out
    X, y = multiclass_data
    named = small(Est, kernel="rbf", gamma=0.5).fit(X, y)
    matrix = small(Est, kernel=lambda A, B: rbf_kernel(A, B, gamma=0.5)).fit(X, y)
    assert matrix._kernel_function.convention == "matrix"
    _models_agree(named, matrix)
    assert_allclose(matrix.decision_function(X), named.decision_function(X), rtol=1e-9,
                    atol=1e-10)


def test_callable_conventions_are_told_apart():
    rng = np.random.RandomState(0)
    y = np.array([0, 1] * 10)
    for d in [1, 2, 3, 4]:
        X = rng.randn(20, d)
        conventions = {
            "matrix": lambda A, B: rbf_kernel(A, B, gamma=0.5),
            "pair": lambda a, b: np.exp(-0.5 * np.sum((a - b) ** 2)),
            # a per-pair linear kernel: `a @ b` on blocks whose row count is
            # the feature count would return a matrix of the probed shape
            "pair ": lambda a, b: a @ b,
        }
        for expected, kernel in conventions.items():
            est = KernelPerceptron(kernel=kernel, max_iter=1).fit(X, y)
            assert est._kernel_function.convention == expected.strip(), (d, expected)
        # works both ways and agrees: the matrix convention (one call a block)
        both = KernelPerceptron(kernel=lambda A, B: A @ B.T, random_state=0).fit(X, y)
        assert both._kernel_function.convention == "matrix"
        per_pair = KernelPerceptron(kernel=lambda a, b: a @ b, random_state=0).fit(X, y)
        linear = KernelPerceptron(kernel="linear", random_state=0).fit(X, y)
        for est in (both, per_pair):
            assert_allclose(est.decision_function(X), linear.decision_function(X),
                            rtol=1e-10, atol=1e-10)


def test_matrix_callable_gets_kernel_params_and_runs_on_sparse_input(multiclass_data):
    X, y = multiclass_data

    def rbf_with(A, B, width):
        return rbf_kernel(A, B, gamma=width)

    named = KernelPerceptron(kernel="rbf", gamma=0.3, max_iter=2, random_state=0).fit(X, y)
    dense = KernelPerceptron(kernel=rbf_with, kernel_params={"width": 0.3}, max_iter=2,
                             random_state=0).fit(X, y)
    sparse = KernelPerceptron(kernel=rbf_with, kernel_params={"width": 0.3}, max_iter=2,
                              random_state=0).fit(sp.csr_matrix(X), y)
    assert dense._kernel_function.convention == sparse._kernel_function.convention == "matrix"
    _models_agree(named, dense)
    _models_agree(named, sparse)


def test_callables_that_fit_neither_convention_are_clear_errors(binary_data):
    X, y = binary_data
    bad = {
        "returned shape": lambda A, B: np.ones(3),                   # not a matrix
        "non-finite": lambda A, B: np.full((A.shape[0], B.shape[0]), np.nan),
        "raised RuntimeError": lambda A, B: (_ for _ in ()).throw(RuntimeError("nope")),
    }
    for message, kernel in bad.items():
        est = KernelPerceptron(kernel=kernel)
        with pytest.raises(ValueError, match=f"fits neither convention.*{message}"):
            est.fit(X, y)
        assert not hasattr(est, "classes_")
    # rows of a block that depend on the rest of the block
    with pytest.raises(ValueError, match="one row of each block"):
        KernelPerceptron(kernel=lambda A, B: rbf_kernel(A, B) * A.shape[0]).fit(X, y)
    # works on blocks and on rows, with different values
    with pytest.raises(ValueError, match="ambiguous"):
        KernelPerceptron(kernel=lambda A, B: A @ B.T if np.ndim(A) == 2 else 1.0).fit(X, y)
    # a matrix callable that returns a wrong shape later: named, not a crash
    est = Forgetron(kernel=lambda A, B: (rbf_kernel(A, B) if A.shape[0] < 5
                                         else rbf_kernel(A, B)[:, :1]), budget=10)
    with pytest.raises(ValueError, match=r"returned a block of shape .* it must return"):
        est.fit(X, y)


def test_matrix_callable_models_pickle_and_clone(binary_data):
    X, y = binary_data
    est = Forgetron(kernel=rbf_matrix_05, budget=20, random_state=0).fit(X, y)
    again = pickle.loads(pickle.dumps(est))
    assert_array_equal(again.decision_function(X), est.decision_function(X))
    again.partial_fit(X[:20], y[:20])
    assert clone(est).get_params()["kernel"] is rbf_matrix_05
    # lambdas do not pickle (as before): a clear PicklingError, not a crash
    with pytest.raises((pickle.PicklingError, AttributeError)):
        pickle.dumps(Forgetron(kernel=lambda A, B: rbf_kernel(A, B)).fit(X, y))


def test_callables_train_under_assume_finite_and_the_config_is_restored(binary_data):
    # training hands a callable rows of X the estimator has checked, and
    # checks what it returns: scikit-learn's finiteness checks inside it are
    # skipped; the user's configuration is back after fit, also on an error
    X, y = binary_data
    seen = []

    def recording_rbf(A, B):
        seen.append((np.shape(A)[0], get_config()["assume_finite"]))
        return rbf_kernel(A, B, gamma=0.5)

    est = Forgetron(kernel=recording_rbf, budget=20)
    est._chunk_size = 20
    est.fit(X, y)
    assert get_config()["assume_finite"] is False
    # the probe (blocks of at most 6 rows) runs as the user configured it,
    # the stream's chunks of 20 rows under assume_finite
    assert {flag for rows, flag in seen if rows <= 6} == {False}
    assert [flag for rows, flag in seen if rows == 20] == [True] * (len(y) // 20)
    seen.clear()
    est.decision_function(X)
    assert seen and not any(flag for _, flag in seen)

    def failing(A, B):
        if len(seen) > 3:
            raise RuntimeError("kernel failed mid-stream")
        seen.append(True)
        return rbf_kernel(A, B)

    with pytest.raises(RuntimeError, match="mid-stream"):
        Forgetron(kernel=failing, budget=20).fit(X, y)
    assert get_config()["assume_finite"] is False
    # a non-finite block is still caught after the call
    with pytest.raises(ValueError, match="non-finite"):
        Forgetron(kernel=lambda A, B: (rbf_kernel(A, B) if A.shape[0] < 5
                                       else np.full((A.shape[0], B.shape[0]), np.inf)),
                  budget=20).fit(X, y)
