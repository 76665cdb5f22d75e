"""The averaging rules estimators declare (``Declaration.averaging``).

A rule says how the models of one estimator average, as one model of the
same estimator (doc/algorithms.md, "Parameter mixing").  A model-level rule
(``ExpansionAverage`` and its subclasses) says which parameter values leave
the average defined, which fitted constants the models must share, and
names the learner-level rule (``ExpansionState``, ``PegasosState``, ...):
what each learner keeps besides its kernel expansion, and in which units.
The generic machinery that checks the models and composes the learners'
states is :mod:`skbudget._mixing`, above the estimators; this module sits
below them (it imports no estimator), so that each estimator's declaration
can name its rule.
"""

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from skbudget._bsgd_fast import PROJECTION
from skbudget._params import _same_value
from skbudget._span_factor import _span_factor

__all__ = ["ExpansionAverage", "ExpansionState", "LinearState", "OnlyWith", "PegasosState",
           "PerceptronAverage", "PerceptronState", "SameFeaturesAverage", "SharedExpansionState",
           "SharedLinearState", "SharedPegasosState", "gathered_cells", "padded", "summed_counts"]


def summed_counts(values, base):
    """``sum(values)``, or ``base + sum(v - base)`` when every value counts
    on from ``base``."""
    total = sum(values)
    return total if base is None else total - (len(values) - 1) * base


def padded(values, length, square=False):
    """``values`` with zeros appended up to ``length`` rows (``square``: and
    as many columns)."""
    values = np.asarray(values)
    shape = (length, length) if square else (length,) + values.shape[1:]
    out = np.zeros(shape, dtype=values.dtype)
    out[tuple(slice(0, s) for s in values.shape)] = values
    return out


def gathered_cells(sources, cells, name):
    """The per-cell array ``name`` of every source at its support cells,
    one source after the other."""
    return np.concatenate([np.asarray(getattr(src, name))[c] for src, c in zip(sources, cells)])


class ExpansionState:
    """A rule whose learner is its kernel expansion alone (scale 1):
    coefficients ``alpha`` per cell."""

    summed = ("alpha",)

    @staticmethod
    def scale(sources, weights):
        return 1.0

    @staticmethod
    def coefficients(sources, cells, weights, scale):
        """The union's per-vector values in the learner's units."""
        return {"alpha": np.concatenate([w * src.coefficients()
                                         for w, src in zip(weights, sources)]) / scale}

    @staticmethod
    def fill(state, sources, weights, base):
        """The rest of the rule's state."""


class SharedExpansionState(ExpansionState):
    """A shared multi-class learner (doc/algorithms.md#shared-multi-class)
    whose state is its kernel expansion alone (scale 1): a coefficient row
    ``tau`` and a class label per vector (kernel OGD's and kernel PA-I's
    shared modes)."""

    summed = ("tau",)

    @staticmethod
    def coefficients(sources, cells, weights, scale):
        return {"tau": np.concatenate([w * src.coefficient_matrix()
                                       for w, src in zip(weights, sources)]) / scale,
                "label": gathered_cells(sources, cells, "label")}


class PegasosState(ExpansionState):
    """BSGD (doc/algorithms.md#bsgd): coefficients stored as ``w_i = lambda t alpha_i`` under
    the scale ``1 / (lambda t)``.  The average's ``t`` is the weighted mean
    of the models' (rounded): the models of one mixing round all continue
    from one model for the same number of rows, so it is their common
    ``t``, and every never-changed vector keeps ``w_i = w_k`` exactly."""

    @staticmethod
    def steps(sources, weights):
        # the weighted mean with the weights over their largest: in [1, K]
        # their sum never overflows, nor the dot product lose precision
        ratios = weights / weights.max()
        t = np.dot(ratios, [src.n_steps for src in sources]) / ratios.sum()
        return max(int(np.rint(t)), 1)

    @classmethod
    def scale(cls, sources, weights):
        return 1.0 / (sources[0].lam * cls.steps(sources, weights))

    @classmethod
    def stored(cls, sources, cells, weights, name):
        """The per-cell values ``name`` (``alpha`` or the rows ``tau``) of
        the union, in the units of the average's ``t``."""
        t = cls.steps(sources, weights)
        return np.concatenate([w * (t / src.n_steps if src.n_steps else 1.0)
                               * np.asarray(getattr(src, name))[c]
                               for w, src, c in zip(weights, sources, cells)])

    @classmethod
    def coefficients(cls, sources, cells, weights, scale):
        return {"alpha": cls.stored(sources, cells, weights, "alpha")}

    @classmethod
    def fill(cls, state, sources, weights, base):
        state["n_steps"] = cls.steps(sources, weights)
        state["n_maintenance"] = int(summed_counts([src.n_maintenance for src in sources],
                                                   None if base is None else base.n_maintenance))
        state["degradation"] = float(summed_counts([src.degradation for src in sources],
                                                   None if base is None else base.degradation))
        if state["maintenance"] == PROJECTION:      # the span's factor, of the union's Gram
            n, capacity = state["n_sv"], state["capacity"]
            factor, gap = _span_factor(state["gram"][:n, :n])
            state["chol"] = padded(factor, capacity, square=True)
            state["span_gap"] = padded(gap, capacity)


class SharedPegasosState(PegasosState):
    """Multi-class BSGD (doc/algorithms.md#bsgd-multi-class): rows ``W_i = lambda t alpha_i`` in ``tau``,
    their squared norms kept per cell, a class label per vector."""

    summed = ("tau",)

    @classmethod
    def coefficients(cls, sources, cells, weights, scale):
        return {"tau": cls.stored(sources, cells, weights, "tau"),
                "label": gathered_cells(sources, cells, "label")}

    @classmethod
    def fill(cls, state, sources, weights, base):
        PegasosState.fill(state, sources, weights, base)
        tau = state["tau"]
        state["row_sqnorm"] = np.einsum("ij,ij->i", tau, tau)


class PerceptronState(ExpansionState):
    """The Kernel Perceptron (Khardon-Wachman): the expansion of its last
    hypothesis, threshold ``theta = sum_k w_k theta_k``.  Its history of
    hypotheses starts anew at the average (one hypothesis, no update yet):
    the earlier hypotheses of several models form no history of one."""

    @staticmethod
    def coefficients(sources, cells, weights, scale):
        values = ExpansionState.coefficients(sources, cells, weights, scale)
        values["m_count"] = gathered_cells(sources, cells, "m_count")
        return values

    @staticmethod
    def fill(state, sources, weights, base):
        theta = float(sum(w * src.theta for w, src in zip(weights, sources)))
        thetas = np.zeros(9)
        thetas[0] = theta
        state.update(theta=theta, intercept=-theta, n_updates=0, thetas=thetas,
                     votes=np.zeros(9, dtype=np.int64), event_cell=np.zeros(8, dtype=np.intp),
                     tally=0, best_tally=0, survivor=0,
                     cell_of_example=np.full(0, -1, dtype=np.intp))


class LinearState:
    """A linear learner on fixed features (FOGD's one-vs-rest
    ``LinearHingeLearner``): its model ``w``, the weighted sum of the
    models' (``summed``: the arrays of the learner's state that average)."""

    summed = ("w",)


class SharedLinearState(LinearState):
    """FOGD's shared multi-class learner (``MulticlassHingeLearner``): its
    rows ``W``, one per class, on the same features."""

    summed = ("W",)


@dataclass(frozen=True)
class OnlyWith:
    """A parameter value without which an estimator's models have no
    defined average.

    Parameters
    ----------
    param : str
        The parameter (read as the model was started when it is fitted).
    value : object
        The one value under which the models average.
    reason : str
        Why no other value does (a clause of the refusal).
    """

    param: str
    value: object
    reason: str


@dataclass(frozen=True)
class ExpansionAverage:
    """Models that are kernel expansions average as one: the union of their
    support sets, every coefficient times its model's weight.

    Parameters
    ----------
    how : str
        The average in words (for the documentation's table).
    learner_rule : type, default=ExpansionState
        What each binary or one-vs-rest learner keeps besides its expansion,
        and in which units.
    shared_learner_rule : type or None, default=None
        The same for the learner of the estimator's shared multi-class mode.
    only_with : tuple of OnlyWith, default=()
        The parameter values without which the average is not defined.
    compresses : bool, default=False
        Whether :func:`skbudget.parallel.compress` brings a union over the
        budget back to it by the learners' own maintenance rule (the
        learners have a ``compress`` method); otherwise it has nothing to
        do.
    """

    # whether the models store support vectors (all of one format)
    stores_vectors: ClassVar[bool] = True

    how: str
    learner_rule: type = ExpansionState
    shared_learner_rule: type = None
    only_with: tuple = ()
    compresses: bool = False

    def check_parameters(self, estimator):
        """Raise ``ValueError`` when a parameter of ``estimator`` leaves its
        models' average undefined (read, for a fitted model, as the model
        was started when the parameter is built into its learners)."""
        started = getattr(estimator, "_params_at_start", {})
        for need in self.only_with:
            value = started.get(need.param, getattr(estimator, need.param))
            if not _same_value(value, need.value):
                raise ValueError(
                    f"{type(estimator).__name__} models average only with "
                    f"{need.param}={need.value!r}; got {need.param}={value!r}: {need.reason}")

    def with_common_draw(self, estimator):
        """``estimator`` (an unfitted clone for the workers) set so that every
        worker's copy can average with the others'."""
        return estimator

    def check_like(self, first, model, k):
        """Raise ``ValueError`` unless ``model`` (``models[k]``) was built on
        what ``first``'s average needs beyond its parameters and constants."""

    def constants(self, model):
        """The data-dependent constants the models must share."""
        return {"gamma_": model.gamma_}

    def learner_rule_of(self, model):
        """The learner rule of ``model``'s learners."""
        return self.shared_learner_rule if model._shared_support else self.learner_rule


@dataclass(frozen=True)
class PerceptronAverage(ExpansionAverage):
    """The Kernel Perceptron's average (:class:`PerceptronState`): its models
    must share ``kappa_`` too where its rule reads it."""

    def constants(self, model):
        constants = super().constants(model)
        if "kappa" in (model.theta_init, model.threshold_step) or model.tau > 0:
            constants["kappa_"] = model.kappa_
        return constants


@dataclass(frozen=True)
class SameFeaturesAverage(ExpansionAverage):
    """Linear models on random features (FOGD) average on the same draw:
    the average of the linear models is that of their ``w``.  They store
    no vectors, so models fitted on dense and CSR rows average alike."""

    stores_vectors: ClassVar[bool] = False

    def with_common_draw(self, estimator):
        """``estimator`` given a fixed integer ``random_state`` drawn from
        NumPy's global generator when it would draw its features from
        ``random_state=None``: every worker's copy then draws the same
        features, on which alone their models average."""
        if estimator.random_state is None:
            estimator.set_params(random_state=int(np.random.randint(np.iinfo(np.int32).max)))
        return estimator

    def check_like(self, first, model, k):
        if not _same_value(first.random_weights_, model.random_weights_):
            name = type(first).__name__
            raise ValueError(
                f"models[{k}] and models[0] were fitted on different random Fourier features "
                f"(their random_weights_ differ): {name} models average only on "
                f"the same draw; refit them with the same integer random_state, n_components "
                f"and gamma (numeric, or resolved from the same data) on data of the same "
                f"number of features")
