"""What each estimator class declares about itself, in one place.

Every estimator class of skbudget sets ``_declaration``, a
:class:`Declaration`, on the class itself (not inherited: a subclass is
another rule and says so).  The tests, the parallel code and the
documentation read it instead of keeping lists of estimators, so a new
estimator is covered everywhere by exporting it and declaring it:

- the parameter sets the common tests run (as river's
  ``_unit_test_params``) and the options that build other models, whose
  digests ``tests/test_model_digest.py`` keeps;
- whether its models average (:mod:`skbudget._averaging`: the rule), or
  the reason they cannot;
- its shared multi-class mode (one support set for every class), if any,
  and, for a model that is no kernel expansion, what bounds its size;
- the weights its ``fit`` takes.

Its row of the user guide's table of estimators is not declared here but on
its family's page of the user guide (``doc/user_guide/families/``), where
the estimator is introduced, by an ``estimator-summary`` directive
(``doc/sphinxext/capability_tables.py``): the page that holds it is the
estimator's page, under whose title the API reference lists it.

The meta-estimator :class:`~skbudget.SequentialSearchCV` declares nothing:
it has no learner of its own (it tunes a declared estimator), so it has no
parameters of the common tests, weights, multi-class mode or average;
``tests/test_common.py`` accepts it as a wrapper.

This module sits at the bottom of the package: it imports nothing of
skbudget.
"""

from dataclasses import dataclass

__all__ = ["CannotAverage", "Declaration", "SharedMulticlass", "declaration_of"]

WEIGHT_KINDS = ("sample_weight", "class_weight")


@dataclass(frozen=True)
class CannotAverage:
    """The models of an estimator have no defined average.

    Parameters
    ----------
    reason : str
        Why, in the words of the refusal (a clause that follows the
        estimator's name: "it stops updating once full, ...").
    """

    reason: str


@dataclass(frozen=True)
class SharedMulticlass:
    """The estimator's mode that learns every class on one support set
    shared by all classes (a budget then counts vectors for all classes
    together), instead of one binary learner per class.

    Parameters
    ----------
    param : str or None, default=None
        The parameter that selects the mode; None: the estimator always
        learns this way.
    shared : object, default=None
        The value of ``param`` that selects the shared mode.
    one_vs_rest : object, default=None
        The value of ``param`` that selects one-vs-rest learners.
    """

    param: str | None = None
    shared: object = None
    one_vs_rest: object = None


@dataclass(frozen=True)
class Declaration:
    """What an estimator class declares (see the module docstring).

    Parameters
    ----------
    test_params : tuple of dict
        The parameter sets of the common tests, each given to the
        constructor (river's ``_unit_test_params``).  The first is small and
        fast (a budget that binds on small data, a fixed ``gamma``,
        ``random_state=0``) and serves every property test; a test that
        sets parameters of its own takes the first set the estimator
        accepts with them (e.g. BSGD's merging takes only the RBF kernel,
        so its second set merges no vectors).
    model_variants : tuple of dict, default=({},)
        The options beyond the defaults that build other models, each run
        by ``tests/test_model_digest.py`` (their positions are part of the
        digests' keys: append, never reorder).
    averaging : rule or CannotAverage
        How its models average (an averaging rule of
        :mod:`skbudget._averaging`), or why they cannot.
    shared_multiclass : SharedMulticlass or None, default=None
        Its shared multi-class mode; None: multi-class problems are always
        learned one-vs-rest.
    weights : tuple of str, default=()
        The weights its ``fit`` takes: ``'sample_weight'`` (a ``fit``
        argument) and ``'class_weight'`` (a parameter).
    check_params : dict or None, default=None
        The parameters scikit-learn's estimator checks run it with (None:
        the defaults), for an estimator whose defaults need more rows than
        the checks' small data sets have (LLSVM's 100 landmarks are chosen
        among the first call's rows).
    model_size : str or None, default=None
        What bounds the size of a model that is no kernel expansion, in
        the words of the user guide's table of multi-class models (a
        clause: "``n_components`` random features, shared by every
        class"); None for a kernel expansion, whose ``budget`` (if any)
        bounds each one-vs-rest learner's support set, or the whole
        model's in its shared mode.
    solves_calls : bool, default=False
        Each training call solves a problem over all its rows (LLSVM's
        proximal step) instead of a pass of rounds, one example after
        another: ``fit`` is one call, not ``max_iter`` epochs (its
        ``max_iter`` bounds the solver's sweeps), and ``partial_fit`` calls
        cut the stream into other problems, so they are not one ``fit``.
    """

    test_params: tuple
    averaging: object
    model_variants: tuple = ({},)
    shared_multiclass: SharedMulticlass | None = None
    weights: tuple = ()
    check_params: dict | None = None
    model_size: str | None = None
    solves_calls: bool = False

    def __post_init__(self):
        if not self.test_params or not all(isinstance(p, dict) for p in self.test_params):
            raise TypeError("test_params must be a non-empty tuple of dicts")
        unknown = set(self.weights) - set(WEIGHT_KINDS)
        if unknown:
            raise ValueError(f"weights must be among {WEIGHT_KINDS}; got {sorted(unknown)}")

    @property
    def averages(self):
        """Whether the estimator's models average (for some parameters)."""
        return not isinstance(self.averaging, CannotAverage)


def declaration_of(cls):
    """The :class:`Declaration` that ``cls`` sets on itself.

    Raises ``TypeError`` naming the class when it sets none (one inherited
    from a base class does not count: a subclass is another rule).
    """
    declaration = vars(cls).get("_declaration")
    if not isinstance(declaration, Declaration):
        raise TypeError(f"{cls.__name__} declares no _declaration of its own (a "
                        f"skbudget._declaration.Declaration set on the class itself)")
    return declaration
