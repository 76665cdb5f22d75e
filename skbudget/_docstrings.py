"""Numpydoc pieces shared by the estimators' class docstrings.

Every estimator takes the parameters of ``BaseOnlineKernelClassifier``
(the kernel ones and the stream ones) and has its fitted attributes; these
helpers write their documentation once, with keyword arguments for what
differs between estimators (a default, a unit, a note), and ``docstring``
assembles a class docstring from the summary and the sections.

Fragments are numpydoc entries whose first line is not indented and whose
later lines carry the class-docstring indentation (4 spaces before a name,
8 before its description), so they can be joined with ``"\\n    "``.
"""

BUDGET_DOC = """\
budget : int, default=100
        Maximum number of support vectors ``B`` (per one-vs-rest learner:
        with ``n_classes > 2`` up to ``n_classes * B`` vectors are stored)."""

RBF_WIDTH_NOTE = (
    "  The papers' RBF\n"
    "        ``exp(-||x - y||^2 / (2 delta^2))`` is ``gamma = 1 / (2 delta^2)``."
)


def _plural(unit):
    return unit + ("es" if unit.endswith("s") else "s")


def kernel_doc(*, kernel_note="", gamma_note=RBF_WIDTH_NOTE):
    """The entries of ``kernel``, ``gamma``, ``degree``, ``coef0`` and
    ``kernel_params``; ``kernel_note`` is appended to the ``kernel`` entry
    (indented lines), ``gamma_note`` to the ``gamma`` one."""
    return f"""\
kernel : {{'linear', 'poly', 'rbf', 'sigmoid', 'laplacian', ...}} or callable, default='rbf'
        Any kernel :func:`sklearn.metrics.pairwise.pairwise_kernels` accepts.{kernel_note}
    gamma : {{'scale', 'auto'}} or float, default='scale'
        Kernel coefficient for 'rbf', 'poly', 'sigmoid', 'laplacian' and
        'chi2', resolved as in :class:`sklearn.svm.SVC` from the data of the
        first ``fit`` / ``partial_fit`` call.{gamma_note}
    degree : int, default=3
        Degree of the 'poly' kernel.
    coef0 : float, default=0.0
        Independent term of the 'poly' and 'sigmoid' kernels.
    kernel_params : dict, default=None
        Extra parameters for the kernel (a callable kernel gets only these)."""


def stream_doc(*, max_iter=1, unit="pass",
               max_iter_note="  One online pass is\n        what the papers run.",
               shuffle_note="", random_note="", warm_start_note=""):
    """The entries of ``max_iter``, ``shuffle``, ``random_state``,
    ``warm_start`` and ``verbose``: ``max_iter`` is the default of
    ``max_iter``, ``unit`` what one iteration is called ('pass' or
    'epoch'); the notes are appended to their entries."""
    return f"""\
max_iter : int, default={max_iter}
        {_plural(unit).capitalize()} over the training data in :meth:`fit`.{max_iter_note}
    shuffle : bool, default=True
        Shuffle the training data before each {unit} of :meth:`fit`.{shuffle_note}
    random_state : int, RandomState instance or None, default=None
        Seed of the shuffling{random_note}.
    warm_start : bool, default=False
        Continue from the current model on :meth:`fit`{warm_start_note}.
    verbose : int, default=0
        Print the examples seen, mistakes and support-set size per {unit}.
    n_jobs : int, default=None
        Threads running the one-vs-rest learners of a multi-class problem
        (``None`` means 1, ``-1`` every core); the model does not depend
        on it."""


def attributes_doc(*, unit="pass",
                   support_vectors="The support vectors, learner by learner, oldest first.",
                   dual_coef="Signed coefficients of the support vectors (zeros outside each\n"
                             "        learner's own block).",
                   intercept="Always 0: the model has no bias.",
                   mistake="``y f(x) <= 0``",
                   n_updates="Insertions made, summed over the learners.",
                   extra=""):
    """The fitted attributes of ``BaseOnlineKernelClassifier``; the keyword
    arguments replace an entry's description (``mistake``: the condition
    that counts a training round as a mistake), ``extra`` (entries) is
    appended."""
    return f"""\
classes_ : ndarray of shape (n_classes,)
        Class labels.
    support_vectors_ : ndarray or sparse matrix of shape (n_SV, n_features)
        {support_vectors}
    dual_coef_ : ndarray of shape (n_learners, n_SV)
        {dual_coef}
    intercept_ : ndarray of shape (n_learners,)
        {intercept}
    n_support_ : ndarray of shape (n_learners,)
        Support vectors per learner (one learner for two classes).
    n_mistakes_ : int
        Training rounds with {mistake} (multi-class: the true class's
        score not strictly the largest), over every {unit} and call.
    n_updates_ : int
        {n_updates}
    cumulative_mistakes_ : ndarray of shape (n_rounds,)
        Mistakes up to and including each training round.
    n_iter_ : int
        {_plural(unit).capitalize()} run by the last :meth:`fit`.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during fit, when X has string column names.""" + (
        f"\n    {extra}" if extra else "")


def docstring(summary, parameters, attributes, *, see_also="", notes="", references,
              examples):
    """A numpydoc class docstring: ``summary`` then the sections, each a
    text whose later lines carry the class-docstring indentation;
    ``parameters`` is a list of fragments, joined in order."""
    sections = [("Parameters", "\n    ".join(parameters)), ("Attributes", attributes),
                ("See Also", see_also), ("Notes", notes), ("References", references),
                ("Examples", examples)]
    body = "".join(f"\n\n    {title}\n    {'-' * len(title)}\n    {text}"
                   for title, text in sections if text)
    return f"{summary}{body}\n    "
