"""The average of kernel expansions, as one model of the same estimator.

The average ``sum_k w_k f_k`` of kernel expansions ``f_k(x) = sum_i a_ki
k(x_ki, x) + b_k`` is one expansion: the union of the support sets (model by
model, oldest first within each) with every coefficient multiplied by its
model's weight, and the intercept ``sum_k w_k b_k``.  :func:`averaged_model`
builds it as a fitted model of the models' class by composing the states of
their learners (``OnlineLearner.get_state`` / ``set_state``): cells
``0 .. n-1`` in the union's order, the features (store mode) or the pool
rows (block mode), the coefficients in the learner's units, and what each
rule keeps besides.  Which estimators average, and by which rule, each
estimator's class declares (``Declaration.averaging``, a rule of
:mod:`skbudget._averaging`); this module holds the generic machinery
only.  ``doc/algorithms.md`` ("Parameter mixing") defines the online state
of the average.
"""

import copy
from types import SimpleNamespace

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_is_fitted

from skbudget._averaging import gathered_cells, padded, summed_counts
from skbudget._declaration import CannotAverage
from skbudget._params import _same_value
from skbudget._record import OnlineRecord

__all__ = ["Origin", "averaged_model", "averaging_estimators", "check_supported",
           "compressed_model"]


def _averaging(estimator):
    """The averaging rule ``estimator``'s class declares (inherited from
    the class it derives from, for a user's subclass), or the
    :class:`~skbudget._declaration.CannotAverage` of why it has none."""
    declaration = getattr(type(estimator), "_declaration", None)
    if declaration is None:
        return CannotAverage("it declares no rule for the average of its online state")
    return declaration.averaging


def averaging_estimators():
    """The names of the exported estimators whose models average (for some
    parameter values), in the order of ``skbudget.__all__``."""
    from skbudget.discovery import all_estimators

    return [name for name, cls in all_estimators() if cls._declaration.averages]


def check_supported(estimator):
    """Raise ``TypeError`` unless ``estimator``'s class declares a rule for
    the average of its models (``Declaration.averaging``), naming the
    reason it declares instead, and ``ValueError`` when its parameters
    leave its average undefined."""
    averaging = _averaging(estimator)
    if isinstance(averaging, CannotAverage):
        raise TypeError(
            f"skbudget.parallel supports {', '.join(averaging_estimators())}; got "
            f"{type(estimator).__name__}: {averaging.reason}.")
    averaging.check_parameters(estimator)


def with_common_draw(estimator):
    """``estimator`` (an unfitted clone of a supported estimator) set so
    that every worker's copy averages with the others' (an estimator that
    draws random features from ``random_state=None`` gets a fixed integer
    seed: every copy draws the same features)."""
    return _averaging(estimator).with_common_draw(estimator)


def _check_models(models):
    """The models as a list, after checking that they can be averaged: at
    least one, fitted, of one supported class, built with the same
    parameters, classes, features, storage format and data-dependent
    constants."""
    if isinstance(models, (str, bytes)) or not hasattr(models, "__iter__"):
        raise TypeError(f"models must be a sequence of fitted models; got {type(models).__name__}")
    models = list(models)
    if not models:
        raise ValueError("models is empty: average needs at least one fitted model")
    first = models[0]
    averaging = _averaging(first)
    if isinstance(averaging, CannotAverage):
        check_supported(first)
    for k, model in enumerate(models):
        if type(model) is not type(first):
            raise TypeError(f"every model must be a {type(first).__name__}; models[{k}] is a "
                            f"{type(model).__name__}")
        check_is_fitted(model)
        if model is not first:
            _check_like(averaging, first, model, k)
    for model in models:
        averaging.check_parameters(model)
    return models


def _check_like(averaging, first, model, k):
    """Raise ``ValueError`` unless ``model`` (``models[k]``) was built as
    ``first`` was: what the ``averaging`` rule needs beyond the parameters
    (the same random features), the same parameters, classes, features,
    data-dependent constants and storage format."""
    averaging.check_like(first, model, k)
    for name, value in first._params_at_start.items():
        other = model._params_at_start.get(name)
        if not _same_value(value, other):
            raise ValueError(f"models[{k}] was fitted with {name}={other!r}, models[0] with "
                             f"{name}={value!r}: only models of the same parameters average")
    checks = {"classes_": (first.classes_, model.classes_),
              "n_features_in_": (first.n_features_in_, model.n_features_in_)}
    constants = averaging.constants(model)
    for name, value in averaging.constants(first).items():
        checks[name] = (value, constants.get(name))
    for name, (a, b) in checks.items():
        if not _same_value(a, b):
            raise ValueError(f"models[{k}] has {name}={b!r}, models[0] {name}={a!r}: only "
                             f"models of the same classes, features and kernel average "
                             f"(pass a numeric gamma to models trained on different data)")
    # (a model that stores no vectors, as FOGD's, is of one kind from
    # either format, and the average continues in models[0]'s)
    if averaging.stores_vectors and first._sparse_storage != model._sparse_storage:
        raise ValueError(f"models[{k}] stores its support vectors "
                         f"{'sparse' if model._sparse_storage else 'dense'}, models[0] "
                         f"{'sparse' if first._sparse_storage else 'dense'}: fit every model "
                         f"on data of one format (all dense or all CSR)")


def _checked_weights(weights, n_models):
    """The weights as an array of ``n_models`` finite non-negative numbers
    that do not all vanish (None: ``1 / n_models`` each)."""
    if weights is None:
        return np.full(n_models, 1.0 / n_models)
    weights = np.asarray(weights, dtype=np.float64)
    if weights.shape != (n_models,):
        raise ValueError(f"weights must hold one number per model ({n_models}); got shape "
                         f"{weights.shape}")
    if not (np.all(np.isfinite(weights)) and np.all(weights >= 0) and np.any(weights > 0)):
        raise ValueError(f"weights must be finite, non-negative and not all 0; got "
                         f"{weights.tolist()}")
    return weights


def _check_representable(state, weights):
    """``ValueError`` naming ``weights`` when the weighted coefficients of
    a learner's average ``state`` overflow (are not all finite): the
    average ``sum_k w_k f_k`` is beyond the floating-point range."""
    values = [np.asarray(state[name], dtype=np.float64) for name in
              ("alpha", "tau", "row_sqnorm", "intercept", "theta", "scale", "w", "W")
              if name in state]
    # and the coefficients' absolute sum: a bound of the decision function
    # under a kernel bounded by 1 (RBF, Laplacian), or on features of at
    # most 1 in magnitude (FOGD's ``w``, and its shared rows ``W`` per
    # class), which would overflow
    with np.errstate(over="ignore"):
        values += [np.sum(np.abs(state[name]), axis=0) for name in ("alpha", "tau")
                   if name in state]
        values += [np.sum(np.abs(state[name]), axis=-1) for name in ("w", "W") if name in state]
    if not all(np.all(np.isfinite(v)) for v in values):
        raise ValueError(
            f"weights {weights.tolist()} are too large for these models: the coefficients "
            f"of the average sum_k weights[k] f_k overflow the floating-point range. "
            f"Scale the weights down (the ratios between them alone set the average's "
            f"predictions; divided by their sum they give the convex average).")


def averaged_model(models, weights=None, origin=None, record=None, copy_first=True):
    """The fitted model whose decision function is ``sum_k w_k f_k`` (see
    :func:`skbudget.parallel.average`).

    For parameter mixing: ``origin``, the :class:`Origin` of the model
    every one of ``models`` continued from (the counts it holds, updates,
    maintenance steps, degradation and examples, are then counted once, not
    once per model, and vectors the models kept from it are stored once);
    ``record``, the online record of the result (None: the models' records
    summed).
    ``copy_first=False`` builds the result in ``models[0]`` itself (a model
    the caller owns and drops: parameter mixing's, fresh from a worker);
    each learner's state is composed before it is replaced."""
    models = _check_models(models)
    weights = _checked_weights(weights, len(models))
    averaging = _averaging(models[0])
    result = copy.deepcopy(models[0]) if copy_first else models[0]
    rule = averaging.learner_rule_of(result)
    driver = result._driver
    for j, learner in enumerate(driver.learners):
        sources = [model._learners[j] for model in models]
        base = None if origin is None else origin._learners[j]
        with np.errstate(over="ignore", invalid="ignore"):      # checked below
            if not averaging.stores_vectors:
                state = _linear_state(rule, learner, sources, weights, base)
            else:
                rows = [model._driver.support_vectors(j) for model in models]
                state, vectors = _union_state(result, rule, learner, sources, rows, weights,
                                              base)
        _check_representable(state, weights)
        if not averaging.stores_vectors:
            learner.set_state(state)
        else:
            _install(driver, j, state, vectors)
    result._record = (_summed_record([m._record for m in models],
                                      sum(n_stored(m) for m in models))
                      if record is None else record)
    result._n_examples_seen = summed_counts([m._n_examples_seen for m in models],
                                            None if origin is None else origin._n_examples_seen)
    result._update_fitted_attributes()
    return result


class Origin:
    """The counts of a model that several models continued from (parameter
    mixing's common model, taken before a round): all that
    :func:`averaged_model` reads of it, so that the model itself may
    continue (one worker streams the common model itself, not a copy).
    ``_learners``: per learner, its updates (and BSGD's maintenance steps
    and degradation); ``_n_examples_seen``: the model's examples."""

    _COUNTS = ("n_updates", "n_maintenance", "degradation")

    def __init__(self, model):
        self._n_examples_seen = model._n_examples_seen
        self._learners = [SimpleNamespace(**{name: getattr(learner, name)
                                             for name in self._COUNTS if hasattr(learner, name)})
                          for learner in model._learners]


def n_stored(model):
    """The number of support vectors ``model`` stores (0 for a model that
    is no kernel expansion, as FOGD's)."""
    return int(np.sum(getattr(model, "n_support_", 0)))


def _linear_state(rule, learner, sources, weights, base):
    """The state of a linear learner (``learner``, a copy of ``sources[0]``)
    whose model (the arrays ``rule.summed``: ``w``, or the shared
    multi-class rows ``W``) is the weighted sum of the ``sources``' (FOGD:
    the same features, so the average of the linear models is that of
    their weights; doc/algorithms.md, "Parameter mixing"); ``n_updates``
    add up (counted once from ``base``, the learner they all continued
    from, or None)."""
    state = learner.get_state()
    for name in rule.summed:
        state[name] = sum(w * np.asarray(getattr(src, name)) for w, src in zip(weights, sources))
    state["n_updates"] = int(summed_counts([src.n_updates for src in sources],
                                           None if base is None else base.n_updates))
    return state


def compressed_model(model, copy_model=True):
    """A copy of ``model`` with every learner over its budget brought back
    to it by its maintenance rule (see :func:`skbudget.parallel.compress`);
    ``copy_model=False``: ``model`` itself, compressed in place."""
    check_supported(model)
    check_is_fitted(model)
    result = copy.deepcopy(model) if copy_model else model
    if _averaging(result).compresses:
        driver = result._driver
        for j, learner in enumerate(driver.learners):
            n_before = learner.n_sv
            learner.compress(-1 if driver.uses_store else driver.pools[j].shape[0])
            if learner.n_sv < n_before:
                _laid_out_afresh(result, j)
        result._update_fitted_attributes()
    return result


def _laid_out_afresh(result, j):
    """Learner ``j`` of ``result`` (just compressed) laid out as a new
    learner of its budget would be: its support vectors in cells 0, 1, ...
    oldest first, at the capacity a fresh learner has grown to when it
    holds as many (:meth:`grown_capacity`), the store holding just them.
    The compression leaves the survivors in the union's cells, up to
    twice the budget apart, and every later round's kernel block
    covers every cell up to the highest in use (a mixed model continued 15 %
    slower than a stream's own, doc/user_guide/parameter_mixing.rst, "Cost").
    The same model: the same vectors, coefficients, scale and counts."""
    driver = result._driver
    learner = driver.learners[j]
    rule = _averaging(result).learner_rule_of(result)
    _install(driver, j, *_union_state(result, rule, learner, [learner],
                                      [driver.support_vectors(j)], np.ones(1), None,
                                      capacity=learner.grown_capacity(learner.n_sv)))


def _install(driver, j, state, vectors):
    """Give learner ``j`` of ``driver`` the state :func:`_union_state` built
    and, when the driver keeps the learners' vectors in pools (not in the
    learners' stores), ``vectors`` as its pool (no row of the stream)."""
    driver.learners[j].set_state(state)
    if not driver.uses_store:
        driver.pools[j] = vectors
        driver.pool_ids[j] = np.full(vectors.shape[0], -1, dtype=np.intp)


def _summed_record(records, n_support):
    """The online record of an average: rounds and mistakes add up.  The
    models' rounds have no order among each other, so the learning curve
    holds no point before the average: its last round is the combined
    count, read with the average's support size ``n_support``, and the
    rounds after it add points as usual."""
    record = OnlineRecord()
    record.n_rounds = int(sum(r.n_rounds for r in records))
    record.n_mistakes = int(sum(r.n_mistakes for r in records))
    while record.width <= record.n_rounds:
        record.width *= 2
    if record.n_rounds:
        record.last_support = n_support
    return record


def _union_state(result, rule, learner, sources, rows, weights, base, capacity=None):
    """The state of ``learner`` (a copy of ``sources[0]``) holding the
    weighted union of the ``sources``' expansions, whose support vectors
    are ``rows``, composed by the learner ``rule`` (what the learner keeps
    besides its expansion, and its units).  ``base``: the learner every source continued from, or
    None; with it, a vector several sources hold (one of ``base``'s they
    all kept) is stored once, with the sum of its coefficients.
    ``capacity``: the state's cells, at least the union's size (None:
    ``learner``'s, or the union's size and 2 when larger)."""
    state = learner.get_state()
    cells = [src.support_order() for src in sources]
    scale = rule.scale(sources, weights)
    vectors = (sp.vstack(rows, format="csr") if sp.issparse(rows[0])
               else np.concatenate(rows))
    per_vector = rule.coefficients(sources, cells, weights, scale)
    per_vector["kself"] = gathered_cells(sources, cells, "kself")
    if learner.uses_store:
        per_vector["store_sq"] = np.concatenate(
            [np.asarray(src.store_sq)[np.asarray(src.slot)[c]] for src, c in zip(sources, cells)])
    if base is not None:
        vectors, per_vector = _without_repeats(vectors, per_vector, rule.summed)
    n = vectors.shape[0]
    capacity = max(n + 2, int(state["capacity"])) if capacity is None else max(n, capacity)
    order = np.zeros(capacity, dtype=np.intp)
    order[:n] = np.arange(n)
    free = np.zeros(capacity, dtype=np.intp)
    free[:capacity - n] = np.arange(capacity - 1, n - 1, -1)
    state.update(n_sv=n, capacity=capacity, n_free=capacity - n, order=order, free_cells=free,
                 scale=scale, first_example_id=-1, k_row=np.zeros(capacity),
                 intercept=float(sum(w * src.intercept for w, src in zip(weights, sources))),
                 slot=padded(np.arange(n, dtype=np.intp), capacity),
                 alpha=np.zeros(capacity),
                 n_updates=int(summed_counts([src.n_updates for src in sources],
                                             None if base is None else base.n_updates)))
    for name, values in per_vector.items():
        state[name] = padded(values, capacity + 8 if name == "store_sq" else capacity)
    if learner.uses_store:
        store = np.zeros((capacity + 8, learner.n_features), dtype=learner.store.dtype)
        store[:n] = vectors.toarray() if sp.issparse(vectors) else vectors
        state.update(store=store, n_slots=n)
    if state["track_gram"]:
        gram = np.zeros((capacity, capacity))
        gram[:n, :n] = result._kernel(vectors, vectors)
        gram[np.arange(n), np.arange(n)] = per_vector["kself"]
        state["gram"] = gram
    rule.fill(state, sources, weights, base)
    return state, vectors


def _without_repeats(vectors, per_vector, summed):
    """The distinct rows of ``vectors`` (the first of equal ones, in order)
    and their per-vector values: the ``summed`` ones added over the equal
    rows, the others the first's."""
    if sp.issparse(vectors):
        vectors = vectors.tocsr()
        vectors.sum_duplicates()
        keys = [vectors.indices[a:b].tobytes() + vectors.data[a:b].tobytes()
                for a, b in zip(vectors.indptr[:-1], vectors.indptr[1:])]
    else:
        keys = [row.tobytes() for row in np.ascontiguousarray(vectors)]
    first = {}
    owner = np.array([first.setdefault(key, len(first)) for key in keys], dtype=np.intp)
    keep = np.unique(owner, return_index=True)[1]
    out = {}
    for name, values in per_vector.items():
        if name in summed:
            total = np.zeros((len(keep),) + values.shape[1:])
            np.add.at(total, owner, values)
            out[name] = total
        else:
            out[name] = values[keep]
    return vectors[keep], out
