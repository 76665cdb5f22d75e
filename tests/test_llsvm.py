"""LowRankLinearizedSVC and LandmarkNystroem (doc/algorithms.md#llsvm):
against the plain implementation (tests/oracles/llsvm.py) call by call,
``fit`` against LinearSVC on the same features, the map against
scikit-learn's Nystroem, and their properties (determinism, CSR = dense,
atomic calls, proximal steps, weights)."""

import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.datasets import make_blobs, make_classification, make_moons
from sklearn.exceptions import ConvergenceWarning
from sklearn.kernel_approximation import Nystroem
from sklearn.linear_model import LogisticRegression, SGDClassifier
from sklearn.metrics.pairwise import polynomial_kernel, rbf_kernel
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC
from sklearn.utils.estimator_checks import parametrize_with_checks

from skbudget import LandmarkNystroem, LowRankLinearizedSVC
from tests.oracles.llsvm import PlainLLSVM, plain_dcd, plain_landmark_map
from tests.test_common import assert_same_model
from tests.test_interrupts import _Interrupter, sigint_raises  # noqa: F401 (a fixture)


@pytest.fixture(scope="module")
def blobs():
    X, y = make_blobs(300, centers=3, n_features=3, cluster_std=2.0, random_state=0)
    return StandardScaler().fit_transform(X), y


@pytest.fixture(scope="module")
def moons():
    X, y = make_moons(300, noise=0.2, random_state=0)
    return X, y


KERNELS = {
    "rbf": (dict(kernel="rbf", gamma=0.5), lambda A, B: rbf_kernel(A, B, gamma=0.5)),
    "poly": (dict(kernel="poly", gamma=0.5, degree=2, coef0=1.0),
             lambda A, B: polynomial_kernel(A, B, degree=2, gamma=0.5, coef0=1.0)),
}


# ----------------------------------------------------------------------
# against the plain implementation
# ----------------------------------------------------------------------
@pytest.mark.parametrize("kernel", list(KERNELS))
@pytest.mark.parametrize("landmarks", ["kmeans", "random", "given"])
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("weighted", [False, True])
def test_every_call_matches_the_plain_implementation(kernel, landmarks, n_classes, weighted,
                                                     blobs):
    X, y = blobs
    if n_classes == 2:
        y = (y == 1).astype(int)
    params, function = KERNELS[kernel]
    if landmarks == "given":
        landmarks = X[::30][:10] + 0.01
    weights = np.random.RandomState(1).choice([0.0, 0.5, 1.0, 3.0], len(y)) if weighted else None
    if weighted:
        weights[180] = 2.0          # (a one-row call: scikit-learn refuses all-zero weights)
    est = LowRankLinearizedSVC(budget=10, landmarks=landmarks, C=5.0, random_state=3, **params)
    plain = PlainLLSVM(function, budget=10, landmarks=landmarks, C=5.0, random_state=3)
    classes = np.unique(y)
    for part in np.array_split(np.arange(len(y)), [100, 180, 181]):
        sw = None if weights is None else weights[part]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            est.partial_fit(X[part], y[part], classes=classes, sample_weight=sw)
        plain.partial_fit(X[part], y[part], classes=classes, sample_weight=sw)
        # the same coordinate updates in the same order: the same counts and w
        assert est.n_updates_ == plain.n_updates
        assert est.n_iter_ == max(plain.n_iter)
        assert_allclose(est.coef_, plain.W, rtol=1e-9, atol=1e-11)
    assert_allclose(est.components_, plain.Z, rtol=1e-12, atol=1e-12)
    assert_allclose(est.normalization_, plain.M.T, rtol=1e-9, atol=1e-9)
    assert_allclose(est.decision_function(X), np.squeeze(plain.decision_function(X)),
                    rtol=1e-9, atol=1e-9)
    assert est.n_rounds_ == len(y)


def test_the_plain_solver_reaches_every_branch(blobs):
    # shrinking at both bounds, a row between them, and the extra sweep over
    # every row: the comparison above is not vacuous
    X, y = blobs
    rng = np.random.RandomState(0)
    Z, M = plain_landmark_map(X, 10, "kmeans", 10, rng, KERNELS["rbf"][1])
    E = KERNELS["rbf"][1](X, Z) @ M
    signs = np.where(y == 1, 1.0, -1.0)
    w = np.zeros(E.shape[1])
    sweeps, updates, reached = plain_dcd(E, signs, np.full(len(y), 1.0), w, rng, 1e-6, 1000)
    assert reached and sweeps > 3 and updates > len(y)
    margins = signs * (E @ w)
    assert np.any(margins < 1 - 1e-3) and np.any(margins > 1 + 1e-3)   # at C and at 0
    # the hinge SVM optimum, against LinearSVC's on the same features: the
    # primal objective, strongly convex, has one minimizer; the plain
    # solver's value is as low as liblinear's (whose own stop, at its
    # max_iter, may leave it a little short in another environment)
    ref = LinearSVC(loss="hinge", C=1.0, fit_intercept=False, tol=1e-12, max_iter=100_000,
                    random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        reference = ref.fit(E, signs).coef_[0]

    def objective(v):
        return 0.5 * v @ v + np.maximum(0.0, 1.0 - signs * (E @ v)).sum()

    assert objective(w) <= objective(reference) * (1 + 1e-7)


# ----------------------------------------------------------------------
# fit, partial_fit
# ----------------------------------------------------------------------
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("C", [0.1, 10.0])
def test_fit_is_linear_svc_on_the_same_features(n_classes, C, blobs):
    X, y = blobs
    if n_classes == 2:
        y = (y == 1).astype(int)
    est = LowRankLinearizedSVC(budget=20, gamma=0.5, C=C, tol=1e-10, max_iter=100_000,
                               random_state=0).fit(X, y)
    E = LandmarkNystroem(20, gamma=0.5, random_state=0).fit(X).transform(X)
    ref = LinearSVC(loss="hinge", C=C, fit_intercept=False, tol=1e-10, max_iter=1_000_000)
    ref.fit(E, y)
    assert_allclose(est.coef_, ref.coef_, rtol=1e-5, atol=1e-6 * np.abs(ref.coef_).max())
    assert_array_equal(est.intercept_, np.zeros(len(est.coef_)))
    assert np.mean(est.predict(X) == ref.predict(E)) > 0.99


def test_fit_is_one_partial_fit_call_from_zero(blobs):
    X, y = blobs
    fitted = LowRankLinearizedSVC(budget=10, gamma=0.5, random_state=2).fit(X, y)
    streamed = LowRankLinearizedSVC(budget=10, gamma=0.5, random_state=2)
    streamed.partial_fit(X, y, classes=np.unique(y))
    assert_same_model(fitted, streamed)
    assert fitted.n_mistakes_ == len(y)         # w = 0 before the call: every score 0


def _proximal_objective(w, w_prev, E, signs, C):
    return 0.5 * np.sum((w - w_prev) ** 2) + C * np.maximum(0, 1 - signs * (E @ w)).sum()


def test_each_partial_fit_call_is_a_proximal_step(moons):
    X, y = moons
    est = LowRankLinearizedSVC(budget=15, gamma=1.0, C=2.0, tol=1e-8, max_iter=100_000,
                               random_state=0)
    est.partial_fit(X[:100], y[:100], classes=[0, 1])
    w_prev = est.coef_[0].copy()
    est.partial_fit(X[100:200], y[100:200])
    E = LandmarkNystroem(15, gamma=1.0, random_state=0).fit(X[:100]).transform(X[100:200])
    signs = np.where(y[100:200] == 1, 1.0, -1.0)
    best = _proximal_objective(est.coef_[0], w_prev, E, signs, 2.0)
    # no better point nearby, and neither w_prev nor the batch optimum of
    # the call's rows alone (LinearSVC from 0) does better
    rng = np.random.RandomState(0)
    for _ in range(50):
        other = est.coef_[0] + 1e-3 * rng.normal(size=w_prev.shape)
        assert _proximal_objective(other, w_prev, E, signs, 2.0) >= best - 1e-9
    assert _proximal_objective(w_prev, w_prev, E, signs, 2.0) > best
    alone = LinearSVC(loss="hinge", C=2.0, fit_intercept=False, tol=1e-10,
                      max_iter=100_000).fit(E, signs).coef_[0]
    assert _proximal_objective(alone, w_prev, E, signs, 2.0) > best
    # the model of the whole stream in calls differs from the batch fit
    batch = LowRankLinearizedSVC(budget=15, gamma=1.0, C=2.0, random_state=0).fit(X[:200],
                                                                                   y[:200])
    assert not np.allclose(batch.coef_, est.coef_)


def test_landmarks_come_from_the_first_call_only(moons):
    X, y = moons
    est = LowRankLinearizedSVC(budget=8, gamma=1.0, random_state=0)
    est.partial_fit(X[:50], y[:50], classes=[0, 1])
    landmarks = est.components_.copy()
    est.partial_fit(X[50:], y[50:])
    assert_array_equal(est.components_, landmarks)
    random = LowRankLinearizedSVC(budget=8, landmarks="random", gamma=1.0, random_state=4)
    random.fit(X, y)
    rows = np.random.RandomState(4).choice(len(y), 8, replace=False)
    assert_array_equal(random.components_, X[rows])


def test_fewer_rows_than_landmarks_is_a_clear_error(moons):
    X, y = moons
    with pytest.raises(ValueError, match="10 landmarks need at least 10 rows.*got 6 rows"):
        LowRankLinearizedSVC(budget=10).fit(X[:6], [0, 1] * 3)
    with pytest.raises(ValueError, match="10 landmarks need at least 10 rows"):
        LandmarkNystroem(10, landmarks="random").fit(X[:6])
    with pytest.raises(ValueError, match="budget=3 rows"):
        LowRankLinearizedSVC(budget=3, landmarks=X[:4]).fit(X, y)
    with pytest.raises(ValueError, match=r"shape \(4, 2\).*got \(4, 3\)"):
        LandmarkNystroem(4, landmarks=np.ones((4, 3))).fit(X)


def test_not_reaching_tol_warns(moons):
    X, y = moons
    with pytest.warns(ConvergenceWarning, match="max_iter=1 sweeps"):
        est = LowRankLinearizedSVC(budget=10, gamma=1.0, C=100.0, max_iter=1,
                                   random_state=0).fit(X, y)
    assert est.n_iter_ == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est.set_params(max_iter=10_000).partial_fit(X, y)      # a call parameter


def test_a_constant_weight_is_a_larger_C(moons):
    X, y = moons
    weighted = LowRankLinearizedSVC(budget=10, gamma=1.0, C=0.5, random_state=0).fit(
        X, y, sample_weight=np.full(len(y), 4.0))
    assert_same_model(weighted, LowRankLinearizedSVC(budget=10, gamma=1.0, C=2.0,
                                                     random_state=0).fit(X, y))
    # zero weights leave rows out: LinearSVC on the other rows
    w = np.where(np.arange(len(y)) % 3 == 0, 0.0, 1.0)
    zeroed = LowRankLinearizedSVC(budget=10, gamma=1.0, tol=1e-10, max_iter=100_000,
                                  random_state=0).fit(X, y, sample_weight=w)
    E = LandmarkNystroem(10, gamma=1.0, random_state=0).fit(X).transform(X)
    ref = LinearSVC(loss="hinge", fit_intercept=False, tol=1e-10, max_iter=1_000_000)
    assert_allclose(zeroed.coef_, ref.fit(E[w > 0], y[w > 0]).coef_, rtol=1e-5, atol=1e-6)


def test_csr_input_gives_the_dense_model_bit_for_bit(blobs):
    X, y = blobs
    X = X.copy()
    X[np.abs(X) < 0.3] = 0.0
    dense = LowRankLinearizedSVC(budget=10, gamma=0.5, random_state=0).fit(X, y)
    sparse = LowRankLinearizedSVC(budget=10, gamma=0.5, random_state=0).fit(sp.csr_matrix(X), y)
    assert_same_model(dense, sparse)
    assert_array_equal(dense.decision_function(X), sparse.decision_function(sp.csr_matrix(X)))
    assert_array_equal(LandmarkNystroem(10, random_state=0).fit(X).transform(X),
                       LandmarkNystroem(10, random_state=0).fit(sp.csr_matrix(X)).transform(X))


class _FailingRandomState(np.random.RandomState):
    """A generator whose ``permutation`` raises after ``calls_left`` draws:
    an interrupt in the middle of a call's solve."""

    calls_left = np.inf

    def permutation(self, n):
        type(self).calls_left -= 1
        if type(self).calls_left < 0:
            raise KeyboardInterrupt
        return super().permutation(n)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_an_interrupted_call_leaves_the_model_as_it_was(n_classes, blobs):
    X, y = blobs
    if n_classes == 2:
        y = (y == 1).astype(int)
    est = LowRankLinearizedSVC(budget=10, gamma=0.5, C=10.0, random_state=0)
    est.partial_fit(X[:150], y[:150], classes=np.unique(y))
    for learner in est._learners:
        learner.rng = _FailingRandomState(7)
    before = pickle.dumps(est)
    reference = pickle.loads(before)
    _FailingRandomState.calls_left = 5      # a few sweeps into the call
    with pytest.raises(KeyboardInterrupt):
        est.partial_fit(X[150:], y[150:])
    assert pickle.dumps(est) == before
    _FailingRandomState.calls_left = np.inf
    est.partial_fit(X[150:], y[150:])
    reference.partial_fit(X[150:], y[150:])
    assert_same_model(est, reference)


def test_long_streams_keep_memory_flat():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(500, 4))
    y = (X[:, 0] * X[:, 1] > 0).astype(int)
    est = LowRankLinearizedSVC(budget=20, gamma=0.5, random_state=0)
    sizes = []
    for repeat in range(40):
        est.partial_fit(X, y, classes=[0, 1])
        if repeat in (4, 39):
            sizes.append(len(pickle.dumps(est)))
    assert est.n_rounds_ == 20_000
    assert sizes[1] - sizes[0] < 1_500


def test_onnx_export_of_other_kernels(blobs):
    onnxruntime = pytest.importorskip("onnxruntime")
    from skl2onnx import to_onnx

    import skbudget.onnx  # noqa: F401  (registers the converters)

    X, y = blobs
    for params in (KERNELS["poly"][0], dict(kernel="laplacian", gamma=0.3)):
        est = LowRankLinearizedSVC(budget=10, random_state=0, **params).fit(X, y)
        model = to_onnx(est, X[:1].astype(np.float64))
        session = onnxruntime.InferenceSession(model.SerializeToString(),
                                               providers=["CPUExecutionProvider"])
        labels, scores = session.run(None, {session.get_inputs()[0].name: X})
        assert_array_equal(labels, est.predict(X))
        assert_allclose(scores, est.decision_function(X), rtol=1e-9, atol=1e-9)


# ----------------------------------------------------------------------
# LandmarkNystroem
# ----------------------------------------------------------------------
@parametrize_with_checks([LandmarkNystroem(n_components=5),
                          LandmarkNystroem(n_components=5, landmarks="random")])
def test_landmark_nystroem_is_a_scikit_learn_transformer(estimator, check):
    check(estimator)


def test_the_map_is_the_classifiers(blobs):
    X, y = blobs
    est = LowRankLinearizedSVC(budget=12, gamma=0.5, random_state=5).fit(X, y)
    transformer = LandmarkNystroem(12, gamma=0.5, random_state=5).fit(X)
    assert_array_equal(transformer.components_, est.components_)
    assert_array_equal(transformer.normalization_, est.normalization_)
    assert_allclose(transformer.transform(X) @ est.coef_.T, est.decision_function(X),
                    rtol=1e-12, atol=1e-12)
    names = transformer.get_feature_names_out()
    assert names.shape == (12,) and names[0] == "landmarknystroem0"


def test_the_map_is_nystroem_up_to_a_rotation(moons):
    # on the same landmarks both maps give the same approximate kernel
    # e(x).e(x') = k(x, Z) K_ZZ^+ k(Z, x') (no eigenvalue cut here)
    X, _ = moons
    ours = LandmarkNystroem(20, landmarks="random", gamma=1.0, random_state=0).fit(X)
    theirs = Nystroem(gamma=1.0, n_components=20, random_state=0).fit(X)
    given = LandmarkNystroem(20, landmarks=theirs.components_, gamma=1.0).fit(X)
    A, B = given.transform(X), theirs.transform(X)
    assert_allclose(A @ A.T, B @ B.T, rtol=1e-6, atol=1e-8)
    assert ours.components_.shape == (20, 2)


def test_small_eigenvalues_give_zero_features(moons):
    # a repeated landmark makes K_ZZ singular: its eigenvalue (about 0) is cut
    X, _ = moons
    landmarks = np.vstack([X[:5], X[:1]])
    nys = LandmarkNystroem(6, landmarks=landmarks, gamma=1.0).fit(X)
    assert np.count_nonzero(np.all(nys.normalization_ == 0, axis=1)) == 1
    assert np.isfinite(nys.transform(X)).all()
    K = rbf_kernel(X[:5], X[:5], gamma=1.0)
    E = nys.transform(X[:5])
    assert_allclose(E @ E.T, K, atol=1e-8)      # exact on the landmarks


@pytest.mark.parametrize("linear", [LinearSVC(C=10.0),
                                    SGDClassifier(alpha=1e-4, random_state=0)])
def test_landmark_nystroem_in_a_pipeline(linear, moons):
    X, y = moons
    pipe = make_pipeline(LandmarkNystroem(30, gamma=2.0, random_state=0), linear).fit(X, y)
    assert pipe.score(X, y) > 0.93
    linear_only = make_pipeline(StandardScaler(), LinearSVC()).fit(X, y)
    assert pipe.score(X, y) > linear_only.score(X, y) + 0.03


def test_kmeans_landmarks_beat_random_ones_on_clustered_data():
    # few landmarks on data in tight clusters: k-means covers every cluster
    X, y = make_classification(600, n_features=6, n_informative=6, n_redundant=0,
                               n_clusters_per_class=4, class_sep=2.0, random_state=0)
    scores = {}
    for landmarks in ("kmeans", "random"):
        accuracy = []
        for seed in range(5):
            est = LowRankLinearizedSVC(budget=8, landmarks=landmarks, gamma=0.1, C=10.0,
                                       random_state=seed).fit(X[:400], y[:400])
            accuracy.append(est.score(X[400:], y[400:]))
        scores[landmarks] = np.mean(accuracy)
    assert scores["kmeans"] > scores["random"]


def test_keyboard_interrupt_during_a_long_solve_is_prompt_and_changes_nothing(sigint_raises):
    # a Ctrl-C (SIGINT to the main thread) in the middle of a call's solve:
    # seen between two sweeps, the call rolled back
    rng = np.random.RandomState(0)
    X = rng.normal(size=(3000, 5))
    y = (X[:, 0] * X[:, 1] + 0.3 * rng.normal(size=len(X)) > 0).astype(int)
    est = LowRankLinearizedSVC(budget=100, gamma=0.5, C=1e4, max_iter=3, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.partial_fit(X[:200], y[:200], classes=[0, 1])
    est.set_params(tol=1e-12, max_iter=10 ** 6)         # a solve of seconds
    before = pickle.dumps(est)
    with pytest.raises(KeyboardInterrupt), _Interrupter(0.3) as interrupter:
        est.partial_fit(X, y)
    assert interrupter.latency < 0.5
    assert pickle.dumps(est) == before


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_landmark_nystroem_pipeline_exports_to_onnx(dtype, blobs):
    onnxruntime = pytest.importorskip("onnxruntime")
    from skl2onnx import to_onnx

    import skbudget.onnx  # noqa: F401  (registers the converters)

    # (LogisticRegression: skl2onnx 1.x's pipeline parser gives LinearSVC an
    # option it refuses, with or without skbudget)
    X, y = blobs
    pipe = make_pipeline(LandmarkNystroem(15, gamma=0.5, random_state=0),
                         LogisticRegression(C=10.0)).fit(X, y)
    model = to_onnx(pipe, X[:1].astype(dtype), options={"zipmap": False})
    session = onnxruntime.InferenceSession(model.SerializeToString(),
                                           providers=["CPUExecutionProvider"])
    labels, probabilities = session.run(None, {session.get_inputs()[0].name: X.astype(dtype)})
    assert np.mean(labels == pipe.predict(X)) > (0.999 if dtype == np.float64 else 0.99)
    atol = 1e-9 if dtype == np.float64 else 1e-4
    assert_allclose(probabilities, pipe.predict_proba(X), rtol=atol, atol=atol)
