"""FOGD: linear hinge OGD on random Fourier features of the RBF kernel.

The model is no kernel expansion: its features ``z(x) = [cos(xU),
sin(xU)] / sqrt(D)`` do not depend on the model, so they are computed in
compiled code and shared by every one-vs-rest learner, or by the one
learner of every class of the shared multi-class mode
(``multi_class='crammer_singer'``, ``MulticlassHingeLearner``)
(``doc/algorithms.md#kernel-ogd``).  CSR input: one compiled call per segment of
the stream (:func:`~skbudget._ogd_fast.fourier_sparse_rounds`) maps each
row (its projections ``xU`` summed over its nonzeros, then the vectorized
cosine and sine of ``_fourier_loops.h``) and runs every learner's hinge
step on it while the features are in L1.  Dense input: a block's
projections in compiled register tiles (``_fourier_loops_real.h``: each
one FMA chain over the features from +0, so the same bits however the
rows are blocked), then the same cosine and sine
(:func:`~skbudget._ogd_fast.fourier_from_projections`), then each
learner's compiled loop over the block.  :class:`RandomFourierFeatures` is
what the stream driver feeds the learners (its feature mode).

float32 input (dense or CSR) is kept float32: its projections (with a
float32 copy of ``U``, derived, never saved) and their cosine and sine are
computed in float32 (``_fourier_loops.h``), the features then stored as
float64 values and the learners' steps run in float64 as for float64
input.  Training calls follow the first call's dtype (the estimator
converts a later call's X, ``_as_storage_format``); prediction computes
in its input's precision.
"""

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import StrOptions

from skbudget._averaging import LinearState, SameFeaturesAverage, SharedLinearState
from skbudget._base import (BaseOnlineClassifier, LinearFeaturesMixin, LinearModelMixin,
                            MultiClassModeMixin, keep_resolved_gamma)
from skbudget._budget import _example
from skbudget._declaration import Declaration, SharedMulticlass
from skbudget._docstrings import docstring, feature_record_doc, stream_doc
from skbudget._kernels import compute_gamma
from skbudget._ogd_fast import (LinearHingeLearner, MulticlassHingeLearner,
                                fourier_dense_projections, fourier_from_projections,
                                fourier_sparse_features, fourier_sparse_rounds)
from skbudget._params import MULTI_CLASS_CONSTRAINT, Integer, RealNumber, keep_params
from skbudget._stream import COMPILED_CSR_ROWS, FeatureMap, StreamDriver

__all__ = ["FourierOGDClassifier"]

_NOT_FINITE = (
    "FourierOGDClassifier: a projection x U of a row of X onto the random weights is not a "
    "finite number (NaN or infinity): X holds values too large for the kernel width gamma_. "
    "Rescale X (e.g. StandardScaler)."
)


def _real_dtype(X):
    """The precision FOGD computes ``X``'s features in: float32 for float32
    input, float64 otherwise."""
    return np.float32 if X.dtype == np.float32 else np.float64


def _csr_parts(X):
    """``(data, indices, indptr)`` of the CSR matrix ``X`` (float64 values,
    or float32 for float32 input; int32 indices: no copy when they are
    already)."""
    X = X.tocsr()
    return (np.ascontiguousarray(X.data, dtype=_real_dtype(X)),
            np.ascontiguousarray(X.indices, dtype=np.int32),
            np.ascontiguousarray(X.indptr, dtype=np.int32))


def fourier_features(X, U):
    """``z(x) = [cos(xU), sin(xU)] / sqrt(D)`` for every row of ``X``
    (dense or CSR), ``U`` of shape ``(n_features, D)``: C-contiguous,
    ``(n_rows, 2 D)``.  Dense rows: ``xU`` in compiled register tiles, one
    FMA chain per projection over the features in order; CSR rows: summed
    over the row's nonzeros in order in compiled code.  A projection ``xU``
    that is not finite (a row of values near the floating-point limit) is
    a ValueError.  A float32 ``X``: the projections and their cosine and
    sine in float32, with ``U`` cast to float32 (pass that copy to skip
    the cast), the features float64 values either way."""
    if U.dtype != _real_dtype(X):
        U = np.ascontiguousarray(U, dtype=_real_dtype(X))
    factor = 1.0 / np.sqrt(U.shape[1])
    Z = np.empty((X.shape[0], 2 * U.shape[1]))
    if sp.issparse(X):
        rows = np.arange(X.shape[0], dtype=np.intp)
        not_finite = fourier_sparse_features(*_csr_parts(X), rows, U, factor, Z)
    else:
        P = np.empty((X.shape[0], U.shape[1]), dtype=U.dtype)
        fourier_dense_projections(np.ascontiguousarray(X), np.ascontiguousarray(U), P)
        not_finite = fourier_from_projections(P, Z, factor)
    if not_finite:
        raise ValueError(_NOT_FINITE)
    return Z


class RandomFourierFeatures(FeatureMap):
    """The features of one FOGD model, ``z(x) = [cos(xU), sin(xU)] /
    sqrt(D)``, from the random weights ``U`` it draws when it starts: what
    the stream driver feeds its learners (feature mode,
    ``skbudget._stream``).

    Parameters
    ----------
    U : ndarray of shape (n_features, n_components)
        The random weights.
    """

    csr_rows_per_call = COMPILED_CSR_ROWS

    def __init__(self, U):
        self.U = U

    def __getstate__(self):
        state = self.__dict__.copy()
        state.pop("_U32", None)     # (derived from U: rebuilt when needed)
        return state

    def __setstate__(self, state):
        state = dict(state)
        state.pop("_U32", None)
        U = state.get("U")
        if not (set(state) == {"U"} and isinstance(U, np.ndarray) and U.dtype == np.float64
                and U.ndim == 2 and U.shape[1] >= 1 and np.isfinite(U).all()):
            raise ValueError("FourierOGDClassifier: the saved random weights are not a finite "
                             "float64 matrix; the file is corrupted.")
        self.__dict__.update(state)

    @property
    def n_outputs(self):
        return 2 * self.U.shape[1]

    @property
    def n_features_in(self):
        """The width of the rows the features are computed from."""
        return self.U.shape[0]

    def check_learner(self, learner):
        """The base's check; the shared multi-class learner's width is that
        of its rows ``W``."""
        if isinstance(learner, MulticlassHingeLearner):
            width = np.shape(learner.W)[1]
            if width != self.n_outputs:
                return f"a learner of {width} coefficients per class for {self.n_outputs} features"
            return None
        return super().check_learner(learner)

    def onnx_features(self, graph, X):
        """``[cos(X U), sin(X U)] / sqrt(D)``, ``(n, 2 D)``, in ONNX nodes."""
        P = graph.node("MatMul", [X, graph.constant("random_weights", self.U)])
        Z = graph.node("Concat", [graph.node("Cos", [P]), graph.node("Sin", [P])], axis=1)
        return graph.node("Div", [Z, graph.constant("sqrt_D", [np.sqrt(self.U.shape[1])])])

    def weights_for(self, X):
        """``U`` in ``X``'s precision: ``U`` itself for float64 input, a
        float32 copy (made at the first float32 call, kept in memory, never
        saved) for float32 input."""
        if _real_dtype(X) == np.float64:
            return self.U
        U32 = self.__dict__.get("_U32")
        if U32 is None or U32.shape != self.U.shape:
            U32 = self._U32 = np.ascontiguousarray(self.U, dtype=np.float32)
        return U32

    def transform(self, X):
        """``z(X)`` (see :func:`fourier_features`)."""
        return fourier_features(X, self.weights_for(X))

    def uses_blas(self, X):
        """No BLAS: dense rows' projections are compiled tiles, CSR rows'
        sums over their nonzeros."""
        return False

    def runner(self, X, learners, in_stream_order):
        """CSR input: one compiled call per piece maps each row (read in
        place) and runs every learner's hinge step on it
        (:func:`~skbudget._ogd_fast.fourier_sparse_rounds`); dense input:
        the base's (a block of features, then each learner's loop)."""
        if not sp.issparse(X):
            return super().runner(X, learners, in_stream_order)
        parts = _csr_parts(X)
        U = self.weights_for(X)
        factor = 1.0 / np.sqrt(self.U.shape[1])

        def run(rows, labels, scores):
            if fourier_sparse_rounds(learners, *parts, rows, U, factor, labels,
                                     scores) < len(rows):
                raise ValueError(_NOT_FINITE)
        return run


class FourierOGDClassifier(MultiClassModeMixin, LinearFeaturesMixin, LinearModelMixin,
                           BaseOnlineClassifier):
    __doc__ = docstring(
        """Fourier online gradient descent (FOGD): linear hinge OGD on random
    Fourier features of the RBF kernel.

    At the first fit, ``n_components = D`` random directions are drawn from
    ``random_state``, ``U = sqrt(2 gamma) N(0, 1)^(n_features x D)``, and
    each example is mapped to ``z(x) = [cos(xU), sin(xU)] / sqrt(D)``
    (``2 D`` values, ``z(x).z(x') ~ exp(-gamma ||x - x'||^2)``).  Each
    round: if ``y w.z(x) < 1`` (strictly), ``w += eta y z(x)``.  The
    memory is ``n_components`` per feature plus ``2 D`` per class, however
    long the stream: the budget is the feature dimension.  No bias; the
    RBF kernel only.

    With three or more classes, ``multi_class='ovr'`` (the default) learns
    one ``w`` per class one-vs-rest; ``multi_class='crammer_singer'``
    learns one row ``w_c`` per class together by Crammer and Singer's
    top-two rule: with the runner-up ``r = argmax_{c != y} w_c.z(x)``
    (ties: the lowest index), when ``w_y.z(x) - w_r.z(x) < 1``,
    ``w_y += eta z(x)`` and ``w_r -= eta z(x)``.  Both modes use the same
    draw ``U`` and the same memory (``2 D`` values per class).

    The features do not depend on the model: they are computed in compiled
    code and shared by every one-vs-rest learner (CSR rows: each projection
    summed over the row's nonzeros, with the bits of SciPy's ``X @ U``;
    dense rows: compiled register tiles, one FMA chain per projection, the
    same bits however the rows are blocked), their cosines and sines by a
    vectorized pair within 1 ULP of libm's (not its bits; libm itself for
    ``|xU| > 2^19``), and each learner runs its compiled per-example loop
    on them while they are in cache.  float32 ``X`` (dense or CSR) is
    kept: its projections (with a float32 copy of ``U``) and their cosines
    and sines are computed in float32 (within 1.5 float32 ULP; libm in
    float64 for ``|xU| > 2^12``), for training and prediction alike (the
    training calls in the first call's dtype, a later call's ``X``
    converted to it with a ``DataConversionWarning``; each prediction in
    its input's); ``coef_`` and ``random_weights_``
    stay float64 (other dtypes are converted to float64).  The authors'
    MATLAB code and the C++ LIBOKL/KOL toolbox leave out the ``1 /
    sqrt(D)``, so their step is this one's divided by ``D``; KOL's cosine
    also has the wrong sign on half the circle, and it seeds from the
    clock.""",
        ["""n_components : int, default=400
        ``D``, the number of random directions (the features are ``2 D``
        values: a cosine and a sine each).""",
         """gamma : {'scale', 'auto'} or float, default='scale'
        The width of the RBF kernel ``exp(-gamma ||x - y||^2)`` the
        features approximate, resolved as in :class:`sklearn.svm.SVC` from
        the data of the call that starts the model and kept as ``gamma_``;
        for streaming, pass a number ('scale' from fewer than 100 rows
        warns).  The papers' ``exp(-||x - y||^2 / (2 sigma^2))`` is
        ``gamma = 1 / (2 sigma^2)``.""",
         """eta0 : float, default=0.5
        The constant step ``eta`` (with ``'crammer_singer'``, the step of
        each of the two rows an update moves).""",
         """multi_class : {'ovr', 'crammer_singer'}, default='ovr'
        How three or more classes are learned (the names of
        :class:`sklearn.svm.LinearSVC`): ``'ovr'``, one binary hinge
        learner per class; ``'crammer_singer'``, one learner of every
        class on the margin ``w_y.z(x) - max_{c != y} w_c.z(x)`` against
        the runner-up class (see above; the user guide's "Multi-class
        models").  The features, and so the memory, are the same either
        way.  Binary problems are learned by the binary rule either way.""",
         stream_doc(random_note=" and of the random weights ``U`` (drawn when the model "
                               "starts)", one_vs_rest=False)],
        """classes_ : ndarray of shape (n_classes,)
        Class labels.
    coef_ : ndarray of shape (n_learners, 2 * n_components)
        The linear model ``w`` of each one-vs-rest learner (one row for two
        classes), or ``w_c`` of each class (``'crammer_singer'``), on the
        features ``[cos(xU), sin(xU)] / sqrt(D)``.
    intercept_ : ndarray of shape (n_learners,)
        Always 0: the model has no bias.
    random_weights_ : ndarray of shape (n_features, n_components)
        ``U``, shared by every learner (as
        :class:`sklearn.kernel_approximation.RBFSampler`'s, which uses
        ``cos(xU + b)`` with a random offset instead of the sine).
    """ + feature_record_doc(
            "with ``y w.z(x) <= 0`` (multi-class: the true\n        class's score not "
            "strictly the largest; ``'crammer_singer'``: ``argmax_c\n        w_c.z(x) != y``, "
            "ties to the lowest class index)",
            "Updates of ``w``, summed over the learners (``'crammer_singer'``: rounds\n"
            "        with ``w_y.z(x) - w_r.z(x) < 1``, each moving two rows).", """
    gamma_ : float
        The kernel width used."""),
        see_also="""sklearn.kernel_approximation.RBFSampler : Random Fourier features as a
        transformer (then e.g. ``SGDClassifier(loss='hinge')``).
    NystromOGDClassifier : The Nystrom approximation of the same paper.""",
        references="""J. Lu, S. C. H. Hoi, J. Wang, P. Zhao and Z.-Y. Liu, "Large Scale
    Online Kernel Learning", Journal of Machine Learning Research 17(47),
    1-43, 2016.

    A. Rahimi and B. Recht, "Random Features for Large-Scale Kernel
    Machines", NIPS 2007.""",
        examples=_example("FourierOGDClassifier",
                          "FourierOGDClassifier(n_components=200, gamma=2.0, random_state=0)"),
    )

    _declaration = Declaration(
        test_params=(dict(gamma=1.0, random_state=0),),
        model_variants=({}, dict(n_components=20, eta0=0.1),
                        dict(multi_class="crammer_singer")),
        averaging=SameFeaturesAverage(
            "the weighted sum of the models' ``coef_``, on the same random features only (the "
            "same integer ``random_state``, ``n_components``, ``gamma_`` and number of "
            "features; both ``multi_class`` modes)",
            learner_rule=LinearState, shared_learner_rule=SharedLinearState),
        shared_multiclass=SharedMulticlass("multi_class", shared="crammer_singer",
                                           one_vs_rest="ovr"),
        model_size="``n_components`` random features, one draw shared by every class",
    )

    _parameter_constraints: dict = {
        **BaseOnlineClassifier._parameter_constraints,
        "n_components": [Integer(1, None, closed="left")],
        "gamma": [StrOptions({"scale", "auto"}), RealNumber(0.0, None, closed="left")],
        "eta0": [RealNumber(0.0, None, closed="neither")],
        **MULTI_CLASS_CONSTRAINT,
    }
    _fitted_scalar_constraints = {
        "_gamma": [RealNumber(0.0, None, closed="neither")],
        "gamma_": [RealNumber(0.0, None, closed="neither")],
    }
    _feature_map_class = RandomFourierFeatures
    # float32 input is kept: its features are computed in float32
    _input_dtype = [np.float64, np.float32]

    def __init__(self, *, n_components=400, gamma="scale", eta0=0.5, multi_class="ovr",
                 max_iter=1, shuffle=True, random_state=None, warm_start=False, verbose=0):
        keep_params(self, locals())

    def _make_learner(self, rng):
        if self._shared_support:
            return MulticlassHingeLearner(n_outputs=len(self.classes_),
                                          n_features=2 * self.n_components, eta=self.eta0)
        return LinearHingeLearner(n_features=2 * self.n_components, eta=self.eta0)

    def _reads_every_value(self):
        """``gamma='scale'`` reads every value of ``X`` for its variance."""
        return isinstance(self.gamma, str) and self.gamma == "scale"

    def _data_constants(self, X, reads_every_value):
        """The numeric gamma (as a kernel expansion's, the same function)."""
        return compute_gamma(self.gamma, X, type(self).__name__ if reads_every_value else None)

    def _start_model(self, X, gamma, streaming):
        keep_resolved_gamma(self, gamma, X.shape[0], streaming)

    def _init_constants(self, X):
        # the model's first draw from random_state (before anything else
        # draws: the same U for any number of classes)
        self._new_weights = np.sqrt(2.0 * self._gamma) * self._rng.standard_normal(
            (X.shape[1], self.n_components))

    def _make_driver(self, learners, X):
        U = self.__dict__.pop("_new_weights")
        return StreamDriver.for_features(learners, RandomFourierFeatures(U), self._chunk_size,
                                         shared_support=self._shared_support)

    def _check_saved_constants(self):
        self._check_resolved_gamma()

    def _update_model_attributes(self):
        if self._shared_support:     # (one row per class)
            coef = np.array(self._learners[0].W)
        else:
            coef = np.array([np.asarray(learner.w) for learner in self._learners])
        self._set_linear_model(coef, np.zeros(len(coef)))
        self.random_weights_ = self._driver.features.U
