"""Export fitted skbudget classifiers to ONNX (``pip install skbudget[onnx]``).

Importing this module registers a converter for every classifier of
:mod:`skbudget` with :func:`skl2onnx.update_registered_converter`, so that
scikit-learn's usual conversion works, on an estimator or on a
:class:`~sklearn.pipeline.Pipeline` that ends in one::

    import skbudget.onnx                      # registers the converters
    from skl2onnx import to_onnx
    onx = to_onnx(model, X[:1].astype(np.float32))

The ONNX model has one input (dense ``float`` or ``double`` rows, the type
of the sample given to ``to_onnx``) and two outputs:

* ``label``: the predicted class, as ``predict`` gives it (int64 for
  integer labels, strings for string labels);
* ``scores``: the decision scores, as ``decision_function`` gives them:
  shape ``(n,)`` for a binary problem, ``(n, n_classes)`` otherwise.

The graph is the model's kernel expansion in standard ONNX operators
(``MatMul``, ``ReduceSum``, ``Exp``, ``Tanh``, ``Pow``, ``Abs``, ``ArgMax``,
``Gather``...): ``scores = k(X, support_vectors_) @ dual_coef_.T +
intercept_``, with the kernel and its parameters of the fitted model (the
resolved ``gamma_`` when ``gamma='scale'`` or ``'auto'``).
:class:`~skbudget.FourierOGDClassifier`, a linear model on random
features, exports ``[cos(X U), sin(X U)] / sqrt(D) @ coef_.T + intercept_``
(``U`` = ``random_weights_``; ``Cos``, ``Sin``, ``Concat``).
:class:`~skbudget.AdaptiveMultiHyperplaneClassifier` exports ``X @
coef_.T + intercept_`` then the largest score of each class's rows
(``Gather``, ``ReduceMax``; two classes: the second's minus the first's).  A binary
problem's label is ``classes_[1]`` where the score is ``> 0``; a
multi-class one's is the arg-max (ties: the lowest class index, as
:func:`numpy.argmax`).  ``KernelPerceptron(hypothesis='voted')`` exports
the vote of its hypotheses exactly as it predicts: the updates' kernel
columns times their steps summed cumulatively (``CumSum``), the ``Sign``
of every voted hypothesis's score weighted by its votes.

Precision: by default the graph computes in double whatever the input
type (float32 rows are cast once), and casts the scores back to the input
type at the end, so the scores are ``decision_function``'s on the rows
as given, up to rounding.  The converter option ``precision='float'``
(``to_onnx(model, X, options={id(model): {"precision": "float"}})``)
computes the kernel block in float32 whatever the input type (double
rows are cast once; faster for large batches); the
expansion is still summed, and the label read, in double.  float32 scores
beyond float32's range saturate at its largest value (``Clip``), with the
sign of the double score.  ONNX export keeps the model's dtype: a model
whose ``support_vectors_`` are float32 (trained on float32 rows; its
``decision_function`` computes in float32) exports them as float32 and
computes its kernel block in float32 by default (``precision='float'``:
double rows are cast to float32, as ``decision_function`` converts them);
``precision='double'`` computes its kernel block in double.  The option
``zipmap`` (which a ``Pipeline`` sets for every classifier) is accepted
and has no effect: there are no probabilities.

Kernels: ``linear``, ``rbf``, ``poly`` / ``polynomial``, ``sigmoid``,
``laplacian``, ``cosine``, ``chi2`` and ``additive_chi2`` (their rows must
be non-negative, which scikit-learn checks and the graph does not), with
or without ``kernel_params`` (numeric ``gamma`` / ``degree`` / ``coef0``
overrides).  A callable kernel raises :class:`ValueError` at conversion.
A model that is no kernel expansion is exported by its feature map's
:meth:`~skbudget._stream.FeatureMap.onnx_features` (the features of the
rows) and the linear model on them; a map without an ONNX form raises
:class:`NotImplementedError` at conversion, naming the estimator.
"""

import numbers

import numpy as np

try:
    from onnx import TensorProto
    from skl2onnx import update_registered_converter
    from skl2onnx._parse import _parse_sklearn
    from skl2onnx.common.data_types import (
        DoubleTensorType,
        FloatTensorType,
        Int64TensorType,
        StringTensorType,
    )
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "skbudget.onnx needs the optional packages skl2onnx (to convert) and onnxruntime "
        "(to run the converted models): pip install skbudget[onnx]"
    ) from exc

from sklearn.preprocessing import normalize
from sklearn.utils.validation import check_is_fitted

from skbudget._base import BaseKernelExpansionClassifier, KernelParamsMixin
from skbudget._kernel_catalogue import CATALOGUE
from skbudget._llsvm import LandmarkNystroem
from skbudget.model_selection import SequentialSearchCV

__all__ = ["ONNX_KERNELS", "register_converters"]

# the kernels the converter expresses in ONNX operators
ONNX_KERNELS = tuple(name for name, kernel in CATALOGUE.items() if kernel.onnx)


# ----------------------------------------------------------------------
# what the model computes
# ----------------------------------------------------------------------
def _kernel_parameters(model):
    """(kernel name, {parameter: value}) of a fitted model's kernel, as
    ``skbudget._kernels.KernelFunction`` applies it (``kernel_params``
    overriding ``gamma_``, ``degree``, ``coef0``; only the parameters the
    kernel takes); ValueError for kernels ONNX cannot express."""
    kernel = model.kernel
    name = type(model).__name__
    if callable(kernel):
        raise ValueError(
            f"{name} with a callable kernel ({getattr(kernel, '__name__', kernel)!r}) cannot be "
            f"exported to ONNX: only the kernels {list(ONNX_KERNELS)} can be expressed in ONNX "
            f"operators."
        )
    if kernel not in ONNX_KERNELS:
        raise ValueError(
            f"{name} with kernel={kernel!r} cannot be exported to ONNX: only the kernels "
            f"{list(ONNX_KERNELS)} can be expressed in ONNX operators."
        )
    merged = {"gamma": model.gamma_, "degree": model.degree, "coef0": model.coef0}
    merged.update(model.kernel_params or {})
    params = {}
    for key in sorted(CATALOGUE[kernel].params):
        value = merged[key]
        if key == "gamma" and value is None:   # scikit-learn's default for these kernels
            value = 1.0 / model.n_features_in_
        if not isinstance(value, numbers.Real) or isinstance(value, bool):
            raise ValueError(
                f"{name}: kernel_params gives {key}={value!r}, which the ONNX export cannot "
                f"express (a real number is needed)."
            )
        params[key] = float(value)
    return kernel, params


def _expansion(model):
    """The kernel expansion ``decision_function`` computes, as ``(A, a)``:
    ``scores = k(X, support_vectors_) @ A + a`` (FourierOGDClassifier:
    ``z(X) @ A + a``), one column of ``A`` per score; coefficients in
    float64."""
    if hasattr(model, "weight_class_"):
        # several weight vectors per class (AMM): one column per weight,
        # then each class's largest (_class_scores)
        return (np.asarray(model.coef_, dtype=np.float64).T,
                np.asarray(model.intercept_, dtype=np.float64))
    # (a model on fixed features: coef_ over its features, the same layout)
    dual_coef = np.asarray(model.dual_coef_ if isinstance(model, BaseKernelExpansionClassifier)
                           else model.coef_, dtype=np.float64)
    intercept = np.asarray(model.intercept_, dtype=np.float64)
    n_classes = len(model.classes_)
    n_rows = dual_coef.shape[0]
    if n_rows == 1 or n_rows == n_classes > 2:
        return dual_coef.T, intercept
    if n_rows == n_classes == 2:
        # one row per class on a shared support set: decision_function is
        # the difference of the two class scores
        return (dual_coef[1] - dual_coef[0])[:, None], intercept[1:] - intercept[:1]
    raise ValueError(
        f"{type(model).__name__}: dual_coef_ has {n_rows} rows for {n_classes} classes; the "
        f"ONNX export knows one row (binary), or one row per class."
    )


def _voted_hypotheses(model):
    """KernelPerceptron's voted hypotheses, per learner: ``(columns, steps,
    voted, thetas, votes, constant)``.  Update ``e`` added ``steps[e]`` to
    the coefficient of support vector ``columns[e]`` (its column of
    ``support_vectors_``); hypothesis ``e + 1`` scores the running sum
    ``w_{e+1}(x)`` less its threshold, and its sign counts ``votes`` times
    (only the hypotheses with a vote are kept: ``voted`` are their update
    indices); the first hypothesis (w = 0) is the ``constant``
    ``votes_0 sign(-theta_0)``.  As the learner's ``voted_scores``."""
    offsets = np.concatenate([[0], np.cumsum(model.n_support_)])
    for k, learner in enumerate(model._learners):
        n_hyp = learner.n_updates + 1
        thetas = np.asarray(learner.thetas)[:n_hyp]
        votes = np.asarray(learner.votes)[:n_hyp].astype(np.float64)
        cells, steps = learner._events()
        voted = np.flatnonzero(votes[1:])
        yield (offsets[k] + cells, steps, voted, thetas[voted + 1], votes[voted + 1],
               votes[0] * np.sign(-thetas[0]))


# ----------------------------------------------------------------------
# skl2onnx's parser, shape calculator and converter
# ----------------------------------------------------------------------
def _label_type(model):
    """The ONNX tensor type and the values of the class labels."""
    classes = np.asarray(model.classes_)
    if classes.dtype.kind in "biuf":
        return Int64TensorType, classes.astype(np.int64)
    return StringTensorType, classes.astype(str)


def _parser(scope, model, inputs, custom_parsers=None):
    """Two outputs: ``label`` and ``scores`` (no probabilities, no ZipMap)."""
    check_is_fitted(model)
    if len(model.classes_) < 2:
        raise ValueError(
            f"{type(model).__name__} has learned one class so far ({model.classes_[0]!r}, a "
            f"stream without classes=): it predicts that class whatever the input; export it "
            f"once it has seen two.")
    operator = scope.declare_local_operator(_ALIASES[type(model)], model)
    operator.inputs = inputs
    label_type, _ = _label_type(model)
    label = scope.declare_local_variable("label", label_type())
    scores = scope.declare_local_variable("scores", type(inputs[0].type)())
    operator.outputs.append(label)
    operator.outputs.append(scores)
    return operator.outputs


def _shape_calculator(operator):
    model = operator.raw_operator
    input_type = _checked_input_type(operator)
    n = operator.inputs[0].get_first_dimension()
    label_type, _ = _label_type(operator.raw_operator)
    operator.outputs[0].type = label_type([n])
    score_shape = [n] if _n_scores(model) == 1 else [n, _n_scores(model)]
    operator.outputs[1].type = type(input_type)(score_shape)


def _checked_input_type(operator):
    """The type of the operator's one input: a float or double tensor of
    rows of the model's width (else a clear error)."""
    model = operator.raw_operator
    if len(operator.inputs) != 1:
        raise RuntimeError(f"{type(model).__name__} takes one input, got {len(operator.inputs)}")
    input_type = operator.inputs[0].type
    if not isinstance(input_type, (FloatTensorType, DoubleTensorType)):
        raise TypeError(
            f"{type(model).__name__} exports to ONNX with a float or double input tensor "
            f"(dense rows); got {type(input_type).__name__}. Pass X.astype(np.float32) or "
            f"np.float64 to to_onnx."
        )
    shape = input_type.shape
    if len(shape) != 2 or (isinstance(shape[1], numbers.Integral)
                           and shape[1] != model.n_features_in_):
        raise ValueError(
            f"{type(model).__name__} was fitted on {model.n_features_in_} features; the ONNX "
            f"input is declared with shape {list(shape)}. Pass rows of "
            f"{model.n_features_in_} features to to_onnx."
        )
    return input_type


def _map_shape_calculator(operator):
    """:class:`~skbudget.LandmarkNystroem`: ``(n, n_components)`` features of
    the input's type."""
    input_type = _checked_input_type(operator)
    n = operator.inputs[0].get_first_dimension()
    operator.outputs[0].type = type(input_type)([n, operator.raw_operator.components_.shape[0]])


def _map_converter(scope, operator, container):
    """:class:`~skbudget.LandmarkNystroem`'s features, ``k(X, components_) @
    normalization_.T``, in the input's precision (so that a pipeline's next
    step, e.g. scikit-learn's ``LinearSVC``, takes them)."""
    model = operator.raw_operator
    proto_type = (TensorProto.DOUBLE if isinstance(operator.inputs[0].type, DoubleTensorType)
                  else TensorProto.FLOAT)
    graph = _Graph(scope, container, proto_type)
    K = graph.kernel(operator.inputs[0].full_name, model.components_,
                     *_kernel_parameters(model))
    graph.node("MatMul", [K, graph.constant("normalization_T", model.normalization_.T)],
               output=operator.outputs[0].full_name)


def _default_precision(model):
    """The converter's default ``precision``: ``'float'`` for a model that
    scores rows in float32 (its ``_prediction_dtype``: float32 support
    vectors), else ``'double'``."""
    dtype = model._prediction_dtype()
    single = not isinstance(dtype, (list, tuple)) and np.dtype(dtype) == np.float32
    return "float" if single else "double"


def _n_scores(model):
    return 1 if len(model.classes_) == 2 else len(model.classes_)


class _Graph:
    """A few helpers to add nodes and constants of one dtype."""

    # the model's (kernel name, parameters) where a feature map computes
    # kernel rows (_feature_block)
    model_kernel = None

    def __init__(self, scope, container, proto_type):
        self.scope, self.container = scope, container
        self.proto_type = proto_type
        self.dtype = np.float32 if proto_type == TensorProto.FLOAT else np.float64
        self.opset = container.target_opset

    def name(self, seed):
        return self.scope.get_unique_variable_name(seed)

    def constant(self, seed, values, proto_type=None, dtype=None):
        values = np.asarray(values, dtype=dtype or self.dtype)
        name = self.name(seed)
        proto = self.proto_type if proto_type is None else proto_type
        if values.dtype.kind == "U":
            content = [v.encode("utf-8") for v in values.ravel()]
        else:
            content = values.ravel()
        self.container.add_initializer(name, proto, list(values.shape), content)
        return name

    def node(self, op_type, inputs, seed=None, output=None, **attrs):
        output = output or self.name(seed or op_type.lower())
        self.container.add_node(op_type, inputs, [output], name=self.scope.get_unique_operator_name(
            op_type), **attrs)
        return output

    def reduce_max(self, x, axis):
        """Max over ``axis``, the dimension kept (opset 18 takes the axes as an input)."""
        if self.opset is not None and self.opset < 18:
            return self.node("ReduceMax", [x], axes=[axis], keepdims=1)
        axes = self.constant("axes", [axis], TensorProto.INT64, np.int64)
        return self.node("ReduceMax", [x, axes], keepdims=1)

    def reduce_sum(self, x, axis):
        """Sum over ``axis``, the dimension kept (opset 13 takes the axes as an input)."""
        if self.opset is not None and self.opset < 13:
            return self.node("ReduceSum", [x], axes=[axis], keepdims=1)
        axes = self.constant("axes", [axis], TensorProto.INT64, np.int64)
        return self.node("ReduceSum", [x, axes], keepdims=1)

    def kernel(self, X, support_vectors, kernel, params):
        """The (n, n_support) block ``k(X, support_vectors)``."""
        if kernel == "cosine":   # scikit-learn's normalize: norms below 10 eps count as 1
            norms = self.node("Sqrt", [self.reduce_sum(self.node("Mul", [X, X]), 1)])
            tiny = self.constant("tiny", [10 * np.finfo(np.float64).eps])
            one = self.constant("one", [1.0])
            norms = self.node("Where", [self.node("Less", [norms, tiny]), one, norms])
            X = self.node("Div", [X, norms])
            support_vectors = normalize(support_vectors)
        if kernel in ("laplacian", "chi2", "additive_chi2"):
            # feature by feature against every support vector: (n, n_support, d)
            sv = self.constant("support_vectors", support_vectors[None, :, :])
            axis = self.constant("axis", [1], TensorProto.INT64, np.int64)
            x3 = self.node("Unsqueeze", [X, axis]) if self.opset is None or self.opset >= 13 \
                else self.node("Unsqueeze", [X], axes=[1])
            difference = self.node("Sub", [x3, sv])
            if kernel == "laplacian":   # exp(-gamma ||x - v||_1)
                terms = self.node("Abs", [difference])
            else:   # (x - v)^2 / (x + v), 0 where x + v = 0 (scikit-learn's additive chi2)
                total = self.node("Add", [x3, sv])
                zero = self.constant("zero", [0.0])
                empty = self.node("Equal", [total, zero])
                safe = self.node("Where", [empty, self.constant("one", [1.0]), total])
                ratio = self.node("Div", [self.node("Mul", [difference, difference]), safe])
                terms = self.node("Where", [empty, zero, ratio])
            sums = self.reduce_sum(terms, 2)
            shape = self.constant("shape", [0, -1], TensorProto.INT64, np.int64)
            sums = self.node("Reshape", [sums, shape])
            factor = {"laplacian": -params.get("gamma", 0.0), "chi2": -params.get("gamma", 0.0),
                      "additive_chi2": -1.0}[kernel]
            scaled = self.node("Mul", [sums, self.constant("factor", [factor])])
            return scaled if kernel == "additive_chi2" else self.node("Exp", [scaled])
        dots = self.node("MatMul", [X, self.constant("support_vectors_T", support_vectors.T)])
        if kernel in ("linear", "cosine"):
            return dots
        if kernel == "rbf":   # as rbf_kernel: (-2 <x, v> + ||x||^2) + ||v||^2, clipped at 0
            x_sq = self.reduce_sum(self.node("Mul", [X, X]), 1)
            sv_sq = np.einsum("ij,ij->i", support_vectors, support_vectors)[None, :]
            d = self.node("Mul", [dots, self.constant("minus_two", [-2.0])])
            d = self.node("Add", [self.node("Add", [d, x_sq]), self.constant("sv_sq", sv_sq)])
            d = self.node("Max", [d, self.constant("zero", [0.0])])
            return self.node("Exp", [self.node("Mul", [d, self.constant("neg_gamma",
                                                                         [-params["gamma"]])])])
        argument = self.node("Add", [self.node("Mul", [dots, self.constant("gamma",
                                                                           [params["gamma"]])]),
                                     self.constant("coef0", [params["coef0"]])])
        if kernel == "sigmoid":
            return self.node("Tanh", [argument])
        return self.node("Pow", [argument, self.constant("degree", [params["degree"]])])


def _kernel_block(graph, X, model, voted):
    """``(K, A, a)``: the kernel block of the rows ``X`` against the
    support vectors and the expansion over it, ``scores = K @ A + a``
    (the linear kernel collapsed to ``X @ (dual_coef_ @ support_vectors_).T``
    as predict computes it)."""
    kernel, params = _kernel_parameters(model)
    support_vectors = model.support_vectors_
    if hasattr(support_vectors, "toarray"):
        support_vectors = support_vectors.toarray()
    support_vectors = np.asarray(support_vectors, dtype=np.float64)
    A, a = _expansion(model)
    if support_vectors.shape[0] == 0:   # no support vector: one with coefficient 0
        support_vectors = np.zeros((1, model.n_features_in_))
        A = np.zeros((1, A.shape[1]))
    if kernel == "linear" and not voted:
        return X, support_vectors.T @ A, a
    return graph.kernel(X, support_vectors, kernel, params), A, a


def _feature_block(graph, X, model):
    """``(Z, A, a)`` of a linear model on fixed features: ``scores = Z @ A
    + a``, ``Z`` the features of ``X`` that its stream driver's feature map
    computes, in the map's own graph."""
    features = model._driver.features
    if isinstance(model, KernelParamsMixin):
        # a map of kernel rows (LLSVM's landmarks): the model's kernel, for
        # graph.kernel (a kernel ONNX cannot express is refused here)
        graph.model_kernel = _kernel_parameters(model)
    Z = features.onnx_features(graph, X)
    if Z is None:
        raise NotImplementedError(
            f"skbudget.onnx has no ONNX converter for {type(model).__name__}: its feature map "
            f"{type(features).__name__} has no ONNX form (FeatureMap.onnx_features).")
    return (Z, *_expansion(model))


def _converter(scope, operator, container):
    model = operator.raw_operator
    X = operator.inputs[0].full_name
    input_type = (TensorProto.DOUBLE if isinstance(operator.inputs[0].type, DoubleTensorType)
                  else TensorProto.FLOAT)
    precision = container.get_options(model, dict(precision=_default_precision(model)))[
        "precision"]
    graph = _Graph(scope, container,
                   TensorProto.DOUBLE if precision == "double" else TensorProto.FLOAT)
    if graph.proto_type != input_type:
        X = graph.node("Cast", [X], to=graph.proto_type)
    voted = getattr(model, "hypothesis", None) == "voted"
    if isinstance(model, BaseKernelExpansionClassifier):
        K, A, a = _kernel_block(graph, X, model, voted)
    else:       # a linear model on fixed features (FourierOGDClassifier: random Fourier)
        K, A, a = _feature_block(graph, X, model)
    # the expansion is summed in double (with precision='float' too: a
    # float32 sum of many kernel values times coefficients of both signs
    # loses more than the values' own rounding), the label read from it
    double = _Graph(scope, container, TensorProto.DOUBLE)
    if graph.proto_type != TensorProto.DOUBLE:
        K = graph.node("Cast", [K], to=TensorProto.DOUBLE)
    if voted:
        scores = _voted_scores(double, K, model)
    else:
        scores = double.node("Add", [double.node("MatMul", [K, double.constant("coef_T", A)]),
                                     double.constant("intercept", a)])
    if hasattr(model, "weight_class_"):
        scores = _class_scores(double, scores, model)
    label_type, classes = _label_type(model)
    classes_name = graph.constant(
        "classes", classes, TensorProto.INT64 if label_type is Int64TensorType
        else TensorProto.STRING, np.int64 if label_type is Int64TensorType else str)
    if _n_scores(model) == 1:
        shape = graph.constant("shape", [-1], TensorProto.INT64, np.int64)
        scores = graph.node("Reshape", [scores, shape])
        positive = double.node("Greater", [scores, double.constant("zero", [0.0])])
        index = graph.node("Cast", [positive], to=TensorProto.INT64)
    else:
        index = graph.node("ArgMax", [scores], axis=1, keepdims=0)
    graph.node("Gather", [classes_name, index], output=operator.outputs[0].full_name)
    if input_type == TensorProto.DOUBLE:
        graph.node("Identity", [scores], output=operator.outputs[1].full_name)
    else:   # float32 scores saturate at float32's largest value, never inf
        largest = float(np.finfo(np.float32).max)
        scores = double.node("Clip", [scores, double.constant("lowest", -largest),
                                      double.constant("largest", largest)])
        graph.node("Cast", [scores], output=operator.outputs[1].full_name, to=input_type)


def _class_scores(graph, S, model):
    """The scores of a model of several weight vectors per class (AMM):
    the largest of each class's columns of ``S`` (its ``weight_class_``),
    ``(n, n_classes)``; two classes: the second's minus the first's."""
    int64 = dict(proto_type=TensorProto.INT64, dtype=np.int64)
    per_class = [graph.reduce_max(graph.node("Gather", [S, graph.constant(
        "columns", np.flatnonzero(model.weight_class_ == i), **int64)], axis=1), 1)
        for i in range(len(model.classes_))]
    if len(per_class) == 2:
        return graph.node("Sub", per_class[::-1])
    return graph.node("Concat", per_class, axis=1)


def _voted_scores(graph, K, model):
    """The (n, n_learners) scores of voted hypotheses: per learner, its
    updates' kernel columns times their steps, summed cumulatively
    (``CumSum``: hypothesis after hypothesis, as ``voted_scores``), the
    voted ones' signs weighted by their votes.  O(updates) constants."""
    int64 = dict(proto_type=TensorProto.INT64, dtype=np.int64)
    per_learner = []
    zeros = graph.node("MatMul", [K, graph.constant("zeros", np.zeros((_n_columns(model), 1)))])
    for columns, steps, voted, thetas, votes, constant in _voted_hypotheses(model):
        score = graph.node("Add", [zeros, graph.constant("constant", [constant])])
        if len(voted):
            events = graph.node("Gather", [K, graph.constant("columns", columns, **int64)], axis=1)
            terms = graph.node("Mul", [events, graph.constant("steps", steps)])
            sums = graph.node("CumSum", [terms, graph.constant("axis", np.int64(1), **int64)])
            sums = graph.node("Gather", [sums, graph.constant("voted", voted, **int64)], axis=1)
            signs = graph.node("Sign", [graph.node("Sub", [sums, graph.constant("thetas",
                                                                                 thetas)])])
            weighted = graph.node("MatMul", [signs, graph.constant("votes", votes[:, None])])
            score = graph.node("Add", [weighted, score])
        per_learner.append(score)
    if len(per_learner) == 1:
        return per_learner[0]
    return graph.node("Concat", per_learner, axis=1)


def _n_columns(model):
    """Columns of the kernel block: the support vectors (at least one)."""
    return max(int(np.sum(model.n_support_)), 1)


_ALIASES = {}


def _search_parser(scope, model, inputs, custom_parsers=None):
    """:class:`~skbudget.SequentialSearchCV` exports its ``best_estimator_``
    (with the options given for the search)."""
    check_is_fitted(model)
    options = scope.get_options(model)
    if options:
        scope.add_options(id(model.best_estimator_), options)
    return _parse_sklearn(scope, model.best_estimator_, inputs, custom_parsers=custom_parsers)


def register_converters():
    """Register the ONNX converter of every skbudget classifier with skl2onnx.

    Importing :mod:`skbudget.onnx` calls it; calling it again registers
    them anew (e.g. after a new estimator was exported).  A
    :class:`~skbudget.SequentialSearchCV` exports its ``best_estimator_``.  Each classifier
    gets a parser (outputs ``label`` and ``scores``), a shape calculator
    and a converter, with the options ``precision`` (``'double'``, the
    default, or ``'float'``, the default of a model of float32 support
    vectors) and ``zipmap`` (accepted, no effect).  The
    transformer :class:`~skbudget.LandmarkNystroem` exports its features
    (one output, in the input's precision), so a pipeline of it and a
    linear model scikit-learn's converters know exports whole.

    Examples
    --------
    >>> import numpy as np
    >>> from skl2onnx import to_onnx
    >>> from skbudget import Forgetron
    >>> from skbudget.onnx import register_converters
    >>> register_converters()
    >>> X = np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0], [0.0, 0.0]])
    >>> clf = Forgetron(budget=4, gamma=1.0).fit(X, [0, 1, 1, 0])
    >>> [o.name for o in to_onnx(clf, X[:1].astype(np.float32)).graph.output]
    ['label', 'scores']
    """
    from skbudget.discovery import all_estimators

    options = {"zipmap": [True, False, "columns"], "precision": ["double", "float"]}
    for name, cls in all_estimators():
        alias = f"Skbudget{name}"
        _ALIASES[cls] = alias
        update_registered_converter(cls, alias, _shape_calculator, _converter,
                                    parser=_parser, options=options)
    # the landmark map alone: a transformer (skl2onnx's parser of one output)
    update_registered_converter(LandmarkNystroem, "SkbudgetLandmarkNystroem",
                                _map_shape_calculator, _map_converter)
    # the search's parser declares its best estimator's operator (the
    # search's own converter is registered for its options only)
    update_registered_converter(SequentialSearchCV, "SkbudgetSequentialSearchCV",
                                _shape_calculator, _converter, parser=_search_parser,
                                options=options)


register_converters()
