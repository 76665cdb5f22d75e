"""LLSVM: the Nystrom map on chosen landmarks, then a linear SVM
(``doc/algorithms.md#llsvm``).

:class:`LandmarkNystroem` is the map alone as a transformer: landmarks
``Z`` (k-means centres, random rows or given), ``K_ZZ = U L U^T`` and
``e(x) = k(x, Z) U diag(l^-1/2)`` (eigenvalues at most ``1e-5 l_max``
give zero features).  :class:`LowRankLinearizedSVC` is the classifier: the
same map (:class:`LandmarkFeatures`, what the stream driver feeds its
learners in feature mode) and per one-vs-rest learner the hinge-loss SVM
without intercept on it, each training call solved by dual coordinate
descent in compiled code (:class:`~skbudget._llsvm_fast.ProximalHingeLearner`)
as a proximal step from the model before the call.
"""

import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
    _fit_context,
)
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_array, check_random_state
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data
from threadpoolctl import threadpool_limits

from skbudget._base import (
    KERNEL_CONSTRAINTS,
    BaseOnlineClassifier,
    KernelParamsMixin,
    LinearFeaturesMixin,
    LinearModelMixin,
)
from skbudget._blas import single_threaded_blas
from skbudget._declaration import CannotAverage, Declaration
from skbudget._docstrings import class_weight_doc, docstring, kernel_doc
from skbudget._kernels import KernelFunction, compute_gamma
from skbudget._llsvm_fast import ProximalHingeLearner
from skbudget._params import Integer, RealNumber, keep_params
from skbudget._stream import FeatureMap, StreamDriver
from skbudget._weights import CLASS_WEIGHT_CONSTRAINT, ExampleWeightsMixin

__all__ = ["LandmarkNystroem", "LowRankLinearizedSVC"]

# k-means runs on at most this many rows of the first call (doc/algorithms.md#llsvm)
KMEANS_MAX_ROWS = 50_000
# eigenvalues of K_ZZ at most this fraction of the largest give zero features
EIGEN_RTOL = 1e-5
# CSR rows at most this wide are densified a block at a time for the
# kernel (the same bits as dense input); wider ones go to the kernel as CSR
DENSIFY_MAX_FEATURES = 1 << 15
# rows per block of kernel values: about this many values (and this many
# values of densified CSR rows)
_BLOCK_VALUES = 1 << 17

_LANDMARKS_CONSTRAINT = [StrOptions({"kmeans", "random"}), "array-like"]


def choose_landmarks(X, n_landmarks, landmarks, kmeans_iter, rng, owner):
    """The landmarks ``Z`` (``(n_landmarks, n_features)``, dense, of ``X``'s
    dtype: float64, or float32 for float32 rows) chosen on the rows ``X``
    of the call that starts the model:
    ``'kmeans'``: ``KMeans(n_clusters=n_landmarks, n_init=1,
    max_iter=kmeans_iter, random_state=rng)``'s centres, fitted on the
    first ``KMEANS_MAX_ROWS`` rows (densified unless wider than
    ``DENSIFY_MAX_FEATURES``); ``'random'``: the rows
    ``rng.choice(n, n_landmarks, replace=False)`` in that order; an array:
    itself, checked.  ``owner`` names the estimator in errors."""
    if not isinstance(landmarks, str):
        Z = check_array(landmarks, dtype=np.float64, input_name="landmarks").astype(
            X.dtype, copy=False)
        if Z.shape != (n_landmarks, X.shape[1]):
            raise ValueError(
                f"{owner}: landmarks given as an array must have shape ({n_landmarks}, "
                f"{X.shape[1]}) (the number of landmarks, the number of features of X); got "
                f"{Z.shape}.")
        return np.ascontiguousarray(Z)
    n = X.shape[0]
    if n < n_landmarks:
        raise ValueError(
            f"{owner}: {n_landmarks} landmarks need at least {n_landmarks} rows in the call "
            f"that chooses them; got {n} rows (n_samples={n}). Pass more rows to the first "
            f"call or fewer landmarks.")
    if landmarks == "random":
        rows = X[rng.choice(n, n_landmarks, replace=False)]
        return np.ascontiguousarray(rows.toarray() if sp.issparse(rows) else rows,
                                    dtype=X.dtype)
    rows = X[:KMEANS_MAX_ROWS]
    if sp.issparse(rows) and rows.shape[1] <= DENSIFY_MAX_FEATURES:
        rows = rows.toarray()
    km = KMeans(n_clusters=n_landmarks, n_init=1, max_iter=kmeans_iter, random_state=rng)
    # one OpenMP thread: Lloyd's steps sum their threads' partial centres in
    # the order the threads finish, so with three or more the centres' last
    # bits (and the model) would change from run to run; one BLAS thread:
    # k-means++'s products are a few rows against all (8 x n), too thin for
    # threads, whose wake-ups cost 10-100 times the work on a busy machine
    with threadpool_limits(limits=1, user_api="openmp"), single_threaded_blas():
        km.fit(rows)
    return np.ascontiguousarray(km.cluster_centers_, dtype=X.dtype)


def landmark_normalization(K_ZZ):
    """The map's matrix ``M`` (``(B, B)``) from the landmarks' kernel
    matrix: ``K_ZZ = U diag(l) U^T`` (``numpy.linalg.eigh``, eigenvalues
    ascending), ``M = U diag(l_i^-1/2 if l_i > EIGEN_RTOL l_max else 0)``
    (no eigenvalue kept when ``l_max <= 0``); returned transposed, as
    :class:`sklearn.kernel_approximation.Nystroem`'s ``normalization_``
    (the features are ``k(x, Z) @ normalization.T``)."""
    with single_threaded_blas():    # (the same bits whatever the cores; on a busy
        eigenvalues, U = np.linalg.eigh(K_ZZ)   # machine 100 times faster at B = 500)
    largest = eigenvalues[-1]
    keep = (eigenvalues > EIGEN_RTOL * largest) & (largest > 0)
    scale = np.zeros_like(eigenvalues)
    scale[keep] = 1.0 / np.sqrt(eigenvalues[keep])
    return np.ascontiguousarray((U * scale).T)


def landmark_features(X, components, normalization, kernel):
    """``e(x) = k(x, Z) @ normalization.T`` for the rows of ``X`` (dense or
    CSR), a block of rows at a time: C-contiguous float64 ``(n_rows,
    n_components)``."""
    n, width = X.shape[0], X.shape[1]
    out = np.empty((n, normalization.shape[0]))
    densify = sp.issparse(X) and width <= DENSIFY_MAX_FEATURES
    landmarks = sp.csr_matrix(components) if sp.issparse(X) and not densify else components
    step = max(1, _BLOCK_VALUES // max(components.shape[0], width if densify else 1))
    for start in range(0, n, step):
        rows = X[start:start + step]
        if densify:
            rows = rows.toarray()
        np.matmul(kernel(rows, landmarks), normalization.T, out=out[start:start + step])
    return out


def _check_map_arrays(components, normalization, owner):
    """Raise unless a saved map's arrays are consistent finite matrices:
    ``components`` ``(B, n_features)`` (float64, or float32 for a model
    started on float32 rows), ``normalization`` ``(B, B)`` float64."""
    if not (isinstance(components, np.ndarray) and isinstance(normalization, np.ndarray)
            and components.dtype in (np.float64, np.float32)
            and normalization.dtype == np.float64
            and components.ndim == normalization.ndim == 2
            and components.shape[0] >= 1 and components.shape[1] >= 1
            and normalization.shape == (components.shape[0], components.shape[0])
            and np.isfinite(components).all() and np.isfinite(normalization).all()):
        raise ValueError(f"{owner}: the saved landmarks and normalization are not finite "
                         f"matrices (float64 or float32 landmarks, float64 normalization) of "
                         f"shapes (B, n_features) and (B, B); the file is corrupted.")


class LandmarkFeatures(FeatureMap):
    """The landmark map of one LLSVM model, ``e(x) = k(x, Z) @
    normalization.T``: what the stream driver feeds its learners (feature
    mode, ``skbudget._stream``).  Each call's rows are one piece (the
    learners solve a problem over all of them), so a call's memory is its
    rows' features.

    Parameters
    ----------
    components : ndarray of shape (B, n_features)
        The landmarks ``Z``.
    normalization : ndarray of shape (B, B)
        ``M^T`` (:func:`landmark_normalization`).
    kernel : KernelFunction
        The model's kernel (not saved with the map: the estimator's own
        ``_kernel_function``, checked on loading, is given back to it).
    """

    def __init__(self, components, normalization, kernel):
        self.components = components
        self.normalization = normalization
        self.kernel = kernel

    def __getstate__(self):
        state = self.__dict__.copy()
        state.pop("kernel", None)
        return state

    def __setstate__(self, state):
        state = dict(state)
        if set(state) != {"components", "normalization"}:
            raise ValueError("LowRankLinearizedSVC: the saved landmark map must hold "
                             "'components' and 'normalization'; the file is corrupted.")
        _check_map_arrays(state["components"], state["normalization"], "LowRankLinearizedSVC")
        self.__dict__.update(state, kernel=None)

    @property
    def n_outputs(self):
        return self.normalization.shape[0]

    @property
    def n_features_in(self):
        """The width of the rows the features are computed from."""
        return self.components.shape[1]

    def transform(self, X):
        """``e(X)`` (see :func:`landmark_features`)."""
        return landmark_features(X, self.components, self.normalization, self.kernel)

    def rows_per_piece(self, X, chunk_size):
        """Every row of the call (the learners' problem is the call's)."""
        return max(X.shape[0], 1)

    def runner(self, X, learners, in_stream_order):
        """The call's features, then each learner's solve on them (with the
        rows' weights, if any)."""
        def run(rows, labels, scores, weights=None):
            E = self.transform(X[rows[0]:rows[-1] + 1] if in_stream_order else X[rows])
            for k, learner in enumerate(learners):
                learner.solve(E, labels[k], weights, scores[k])
        return run

    def onnx_features(self, graph, X):
        """``k(X, Z) @ normalization.T`` in ONNX nodes: the kernel rows by
        :mod:`skbudget.onnx`'s kernel block (``graph.kernel``, with the
        model's kernel, ``graph.model_kernel``), then a matrix product."""
        kernel, params = graph.model_kernel
        K = graph.kernel(X, self.components, kernel, params)
        return graph.node("MatMul", [K, graph.constant("normalization_T", self.normalization.T)])


# the fitted attributes of both estimators that describe the data
_DATA_ATTRIBUTES_DOC = """gamma_ : float or None
        The kernel width used (None for a callable kernel).
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, when X has string column names."""

_LANDMARK_DOCS = [
    """landmarks : {'kmeans', 'random'} or array-like of shape (n_landmarks, n_features), \
default='kmeans'
        How the landmarks ``Z`` are chosen, from the rows of the call that
        starts the model: ``'kmeans'``, the centres of
        :class:`sklearn.cluster.KMeans` (``n_init=1``,
        ``max_iter=kmeans_iter``, ``random_state`` the estimator's), fitted
        on its first 50 000 rows; ``'random'``, distinct rows drawn
        uniformly (as :class:`sklearn.kernel_approximation.Nystroem`); or
        the given rows.  Fewer rows than landmarks is an error.""",
    """kmeans_iter : int, default=10
        Lloyd iterations of the k-means run (``'kmeans'`` only).""",
]


class LandmarkNystroem(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    __doc__ = docstring(
        """The Nystrom feature map on chosen landmarks: k-means centres, random
    rows or given points.

    :meth:`fit` chooses ``n_components`` landmarks ``Z`` and
    eigendecomposes their kernel matrix, ``K_ZZ = U diag(l) U^T``;
    :meth:`transform` maps each row to ``e(x) = k(x, Z) U diag(l^-1/2)``
    (``e(x).e(x')`` approximates ``k(x, x')``), where eigenvalues at most
    ``1e-5`` times the largest give zero features instead of huge ones.
    The map of :class:`LowRankLinearizedSVC`, alone, to put before any
    linear model (:class:`~sklearn.linear_model.SGDClassifier`,
    :class:`~sklearn.svm.LinearSVC`) in a :class:`~sklearn.pipeline.Pipeline`.
    :class:`sklearn.kernel_approximation.Nystroem` samples its landmarks at
    random only; k-means centres cover the data better at the same size
    (Zhang, Tsang & Kwok 2008).  Kernel values are computed a block of rows
    at a time; CSR input is densified a block at a time (up to 32768
    features), so it gives the dense input's features.""",
        ["""n_components : int, default=100
        The number of landmarks ``B`` (and of output features).""",
         *_LANDMARK_DOCS,
         kernel_doc(gamma_note="  Resolved by :meth:`fit` and kept as ``gamma_``."),
         """random_state : int, RandomState instance or None, default=None
        Seed of the k-means initialization or of the random rows."""],
        """components_ : ndarray of shape (n_components, n_features)
        The landmarks ``Z``.
    normalization_ : ndarray of shape (n_components, n_components)
        ``(U diag(l^-1/2))^T`` (rows of dropped eigenvalues zero): the
        features are ``k(X, components_) @ normalization_.T``, as
        :class:`~sklearn.kernel_approximation.Nystroem`'s.
    """ + _DATA_ATTRIBUTES_DOC,
        see_also="""sklearn.kernel_approximation.Nystroem : The same map on random landmarks.
    LowRankLinearizedSVC : This map followed by a linear SVM, as one estimator.""",
        references="""K. Zhang, I. W. Tsang and J. T. Kwok, "Improved Nystrom Low-Rank
    Approximation and Error Analysis", ICML 2008.

    K. Zhang, L. Lan, Z. Wang and F. Moerchen, "Scaling up Kernel SVM on
    Limited Resources: A Low-rank Linearization Approach", AISTATS 2012.""",
        examples=""">>> from sklearn.datasets import make_moons
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.svm import LinearSVC
    >>> from skbudget import LandmarkNystroem
    >>> X, y = make_moons(500, noise=0.1, random_state=0)
    >>> clf = make_pipeline(LandmarkNystroem(n_components=30, gamma=2.0, random_state=0),
    ...                     LinearSVC(C=10.0)).fit(X, y)
    >>> clf.score(X, y) > 0.95
    True""",
    )

    _parameter_constraints: dict = {
        "n_components": [Integer(1, None, closed="left")],
        "landmarks": _LANDMARKS_CONSTRAINT,
        "kmeans_iter": [Integer(1, None, closed="left")],
        **KERNEL_CONSTRAINTS,
        "random_state": ["random_state"],
    }

    def __init__(self, n_components=100, *, landmarks="kmeans", kmeans_iter=10, kernel="rbf",
                 gamma="scale", degree=3, coef0=0.0, kernel_params=None, random_state=None):
        keep_params(self, locals())

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Choose the landmarks and the map on ``X``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data.
        y : None
            Ignored.

        Returns
        -------
        self : LandmarkNystroem
            The fitted transformer.
        """
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64)
        rng = check_random_state(self.random_state)
        gamma = None if callable(self.kernel) else compute_gamma(self.gamma, X)
        kernel = KernelFunction(self.kernel, gamma, self.degree, self.coef0,
                                self.kernel_params).resolve_callable(X)
        components = choose_landmarks(X, self.n_components, self.landmarks, self.kmeans_iter,
                                      rng, type(self).__name__)
        self.normalization_ = landmark_normalization(kernel(components, components))
        self.components_ = components
        self.gamma_ = gamma
        self._kernel_function = kernel
        self._n_features_out = self.n_components
        return self

    def transform(self, X):
        """The features ``e(x) = k(x, components_) @ normalization_.T``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Data to transform.

        Returns
        -------
        X_transformed : ndarray of shape (n_samples, n_components)
            The features.
        """
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        with single_threaded_blas():
            return landmark_features(X, self.components_, self.normalization_,
                                     self._kernel_function)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


class LowRankLinearizedSVC(ExampleWeightsMixin, LinearFeaturesMixin, LinearModelMixin,
                           KernelParamsMixin, BaseOnlineClassifier):
    __doc__ = docstring(
        """Low-rank linearization SVM (LLSVM): a linear SVM on the Nystrom map of
    ``budget`` landmarks (k-means centres by default).

    The call that starts the model chooses the landmarks ``Z`` and the map
    ``e(x) = k(x, Z) U diag(l^-1/2)`` (as :class:`LandmarkNystroem`,
    shared by every class).  Each one-vs-rest learner (one for two
    classes) is the hinge-loss linear SVM without intercept on ``e(x)``,
    ``min_w 1/2 ||w||^2 + C sum_n max(0, 1 - y_n w.e(x_n))``, solved by dual
    coordinate descent in compiled code: :meth:`fit` gives the solution of
    ``LinearSVC(loss='hinge', C=C, fit_intercept=False, tol=tol)`` on the
    same features.  :meth:`partial_fit` takes a proximal step per call:
    ``w`` moves to ``argmin_w 1/2 ||w - w_prev||^2 + C sum max(0, 1 - y
    w.e(x))`` over the call's rows (the same solver, started from
    ``w_prev``), so a stream is learned in chunks at a memory of the map
    and ``w`` (and of one call's features), however long it is; it is not
    the batch optimum over all calls.  ``fit`` is one such call from
    ``w = 0``.  The model stores ``B`` landmarks, a ``B x B`` matrix and
    ``B`` weights per learner.

    The solver is liblinear's (``solve_l2r_l1l2_svc``): every sweep visits
    the active rows in a random order drawn from ``random_state``, rows at
    a bound whose gradient points outward are shrunk away, and a sweep
    whose projected gradients spread by at most ``tol`` ends the call
    (after one more sweep over every row if some were shrunk); rows whose
    features are zero or whose weight is 0 cannot move ``w`` and are left
    out.  BudgetedSVM's LLSVM is binary only and writes the RBF kernel as
    ``exp(-gamma ||x - y||^2 / 2)`` (its gamma is twice this one) and the
    loss weight as ``C = 1 / lambda``.

    The online record (``n_mistakes_``, ``mistake_curve_``) counts the rows
    each call's model *before* the call misclassifies (progressive
    validation by calls; a ``fit`` from ``w = 0`` scores 0 everywhere, a
    mistake on every row).""",
        ["""budget : int, default=100
        The number of landmarks ``B`` (the features are ``B`` values, the
        same for every class).""",
         *_LANDMARK_DOCS,
         """C : float, default=1.0
        The weight of the hinge loss (``1 / lambda``), times each example's
        weight.""",
         """tol : float, default=1e-4
        The solver's stopping tolerance: the spread of the projected
        gradients over a sweep (liblinear's).""",
         kernel_doc(gamma_note="  BudgetedSVM's RBF ``exp(-g ||x - y||^2 / 2)`` is "
                               "``gamma = g / 2``."),
         """max_iter : int, default=1000
        The most sweeps of the solver per call (each call, ``fit``'s one and
        every ``partial_fit``); a call that stops there warns
        (``ConvergenceWarning``), as :class:`~sklearn.svm.LinearSVC` does.""",
         class_weight_doc("its ``C`` is ``C w``"),
         """random_state : int, RandomState instance or None, default=None
        Seed of the landmarks (k-means or random rows), then of the
        solver's order of rows.""",
         """warm_start : bool, default=False
        :meth:`fit` continues from the current model: a proximal step from
        its ``w`` on the landmarks it has, as :meth:`partial_fit`.  A
        continuing call may change only ``tol``, ``max_iter``,
        ``class_weight``, ``verbose`` and ``warm_start``;
        every other parameter is built into the model when it starts, and a
        changed one raises a ValueError that says to call ``fit``
        (``warm_start=False``).""",
         """verbose : int, default=0
        Print the examples seen and mistakes after each call."""],
        """classes_ : ndarray of shape (n_classes,)
        Class labels.
    coef_ : ndarray of shape (n_learners, budget)
        ``w`` of each one-vs-rest learner (one row for two classes) on the
        features ``e(x)``.
    intercept_ : ndarray of shape (n_learners,)
        Always 0: the model has no intercept.
    components_ : ndarray of shape (budget, n_features)
        The landmarks ``Z``.
    normalization_ : ndarray of shape (budget, budget)
        The map's matrix, as :class:`LandmarkNystroem`'s: ``e(x) = k(x,
        components_) @ normalization_.T``.
    n_iter_ : int
        The solver's sweeps in the last call (the most of any learner).
    n_mistakes_ : int
        Rows misclassified by the model before the call that took them.
    n_updates_ : int
        Coordinate updates of the solver, summed over learners and calls.
    n_rounds_ : int
        Rows seen over every call.
    mistake_curve_ : ndarray of shape (n_points, 2)
        Rows ``(t, mistakes up to row t)`` at bounded resolution.
    """ + _DATA_ATTRIBUTES_DOC,
        see_also="""LandmarkNystroem : The map alone, as a transformer.
    sklearn.svm.LinearSVC : The same solver on features of your own.
    NystromOGDClassifier : A Nystrom map learned online, one example at a time.""",
        references="""K. Zhang, L. Lan, Z. Wang and F. Moerchen, "Scaling up Kernel SVM on
    Limited Resources: A Low-rank Linearization Approach", AISTATS 2012.

    C.-J. Hsieh, K.-W. Chang, C.-J. Lin, S. S. Keerthi and S. Sundararajan,
    "A Dual Coordinate Descent Method for Large-scale Linear SVM", ICML
    2008.

    N. Djuric, L. Lan, S. Vucetic and Z. Wang, "BudgetedSVM: A Toolbox for
    Scalable SVM Approximations", JMLR 14, 2013.""",
        examples=""">>> from sklearn.datasets import make_moons
    >>> from skbudget import LowRankLinearizedSVC
    >>> X, y = make_moons(500, noise=0.1, random_state=0)
    >>> clf = LowRankLinearizedSVC(budget=30, gamma=2.0, C=10.0, random_state=0).fit(X, y)
    >>> clf.score(X, y) > 0.95
    True""",
    )

    _declaration = Declaration(
        test_params=(dict(budget=5, gamma=1.0, random_state=0),
                     dict(budget=5, landmarks="random", gamma=1.0, C=10.0, random_state=0)),
        model_variants=({}, dict(landmarks="random"), dict(C=10.0, kmeans_iter=2)),
        averaging=CannotAverage(
            "each model's landmarks and map come from its own first call's data (k-means "
            "centres or drawn rows), so two models' features differ and their ``coef_`` do not "
            "add up"),
        weights=("sample_weight", "class_weight"),
        check_params=dict(budget=5),
        model_size=("``budget`` landmarks for the whole model (one map, a linear model per "
                    "class on its features)"),
        solves_calls=True,
    )

    _parameter_constraints: dict = {
        "budget": [Integer(1, None, closed="left")],
        "landmarks": _LANDMARKS_CONSTRAINT,
        "kmeans_iter": [Integer(1, None, closed="left")],
        "C": [RealNumber(0.0, None, closed="neither")],
        "tol": [RealNumber(0.0, None, closed="neither")],
        **KERNEL_CONSTRAINTS,
        "max_iter": [Integer(1, 2 ** 63 - 1, closed="both")],
        "class_weight": CLASS_WEIGHT_CONSTRAINT,
        "random_state": ["random_state"],
        "warm_start": ["boolean"],
        "verbose": ["verbose"],
    }
    # float32 X is kept: the landmarks are float32 (half the bytes), their
    # kernel values with the rows float32, the map and the model float64
    _input_dtype = [np.float64, np.float32]
    # (the solver's stopping rule and the weights of the next call's rows
    # may change between calls)
    _call_params = ("class_weight", "max_iter", "tol", "verbose", "warm_start")
    _feature_map_class = LandmarkFeatures
    # no epochs to shuffle: each call is one problem over its rows
    shuffle = False

    def __init__(self, *, budget=100, landmarks="kmeans", kmeans_iter=10, C=1.0, tol=1e-4,
                 kernel="rbf", gamma="scale", degree=3, coef0=0.0, kernel_params=None,
                 max_iter=1000, class_weight=None, random_state=None, warm_start=False,
                 verbose=0):
        keep_params(self, locals())

    def _validate_params(self):
        super()._validate_params()
        if (not isinstance(self.landmarks, str)
                and np.shape(self.landmarks)[:1] != (self.budget,)):
            raise ValueError(f"LowRankLinearizedSVC: landmarks given as an array must have "
                             f"budget={self.budget} rows; got shape "
                             f"{np.shape(self.landmarks)}.")

    def _fit_passes(self):
        """One: every call is one problem over its rows (``max_iter`` bounds
        the solver's sweeps)."""
        return 1

    def _prediction_dtype(self):
        """The landmarks' dtype: float32 rows are scored against float32
        landmarks (as the training calls' are), float64 otherwise."""
        return np.float32 if self._storage_dtype == "float32" else np.float64

    def _draws_random_numbers(self):
        """The solver draws each sweep's order of rows."""
        return True

    def _init_constants(self, X):
        # the model's first draws from random_state: the landmarks (then the
        # one-vs-rest learners' seeds, then the solver's orders)
        components = choose_landmarks(X, self.budget, self.landmarks, self.kmeans_iter,
                                      self._rng, type(self).__name__)
        # (float32 landmarks: their kernel matrix from their values in
        # float64, so that the eigendecomposition keeps float64's precision)
        widened = components.astype(np.float64, copy=False)
        normalization = landmark_normalization(self._kernel_function(widened, widened))
        self._new_map = LandmarkFeatures(components, normalization, self._kernel_function)

    def _make_learner(self, rng):
        new_map = self.__dict__.get("_new_map")
        # (tol and max_iter are call parameters: each call gives them to the
        # learners, _set_stopping_rule)
        return ProximalHingeLearner(0 if new_map is None else new_map.n_outputs, C=self.C,
                                    rng=rng)

    def _make_driver(self, learners, X):
        driver = StreamDriver.for_features(learners, self.__dict__.pop("_new_map"))
        self._driver = driver
        self._set_stopping_rule()
        return driver

    def __setstate__(self, state):
        super().__setstate__(state)
        driver = self.__dict__.get("_driver")
        if driver is not None:      # the map's kernel is the model's (checked on loading)
            driver.features.kernel = self._kernel_function

    def _fit(self, X, y, continuing, sample_weight=None):
        self._set_stopping_rule()
        super()._fit(X, y, continuing, sample_weight)
        self._warn_unconverged()
        return self

    def _partial_fit(self, X, y, classes, first_call, sample_weight=None):
        self._set_stopping_rule()
        super()._partial_fit(X, y, classes, first_call, sample_weight)
        self._warn_unconverged()
        return self

    def _set_stopping_rule(self):
        """A continuing call's ``tol`` and ``max_iter`` given to the
        learners (call parameters; a new model's learners are made with
        them; inside the call's rollback, which restores the learners'
        state)."""
        if hasattr(self, "_driver"):
            for learner in self._learners:
                learner.tol, learner.max_iter = self.tol, self.max_iter

    def _warn_unconverged(self):
        if not all(learner.converged for learner in self._learners):
            warnings.warn(
                f"LowRankLinearizedSVC: the solver stopped at max_iter={self.max_iter} sweeps "
                f"before reaching tol={self.tol}; increase max_iter (or tol).",
                ConvergenceWarning)

    def _update_model_attributes(self):
        coef = np.array([np.asarray(learner.w) for learner in self._learners])
        self._set_linear_model(coef, np.zeros(len(coef)))
        features = self._driver.features
        self.components_ = features.components
        self.normalization_ = features.normalization
        self.n_iter_ = int(max(learner.n_iter for learner in self._learners))
