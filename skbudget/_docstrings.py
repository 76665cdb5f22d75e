"""Numpydoc pieces shared by the estimators' class docstrings.

Every kernel expansion takes the parameters of ``BaseKernelExpansionClassifier``
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
        Maximum number of support vectors ``B``, at most ``2**31 - 3``: for
        the whole model with ``multi_class='crammer_singer'`` (and on
        binary problems); per one-vs-rest learner with ``'ovr'`` (up to
        ``n_classes * B`` vectors)."""

def multi_class_doc(default="ovr", budget_note=""):
    """The ``multi_class`` entry of a family with a shared multi-class mode
    (``MultiClassModeMixin``); ``budget_note`` says what the shared mode
    does with the family's rule, if anything beyond the common reduction."""
    return f"""multi_class : {{'ovr', 'crammer_singer'}}, default='{default}'
        How three or more classes are learned (the names of
        :class:`sklearn.svm.LinearSVC`): ``'ovr'``, one binary learner per
        class, each with its own budget (up to ``n_classes * B`` vectors);
        ``'crammer_singer'``, one support set of at most ``B`` vectors for
        the whole model, each vector with a coefficient per class, updated
        by the binary rule on the margin ``f_y(x) - max_{{c != y}} f_c(x)``
        against the runner-up class (the user guide's "Multi-class
        models").{budget_note}  Binary problems are learned by the binary
        rule either way."""


def class_weight_doc(step):
    """The ``class_weight`` entry; ``step`` says what an example's weight
    scales (e.g. "its step ``eta_t w``")."""
    return f"""class_weight : dict, 'balanced' or None, default=None
        Weights of the classes (``{{class_label: weight}}``): an example's
        weight ``w`` (its ``sample_weight`` times the weight of its class)
        scales its loss, so {step}.  ``'balanced'`` gives class ``c`` the
        weight ``n_samples / (n_classes * n_c)`` of each ``fit`` call's
        ``y``, as :class:`sklearn.linear_model.SGDClassifier` does; it is
        not supported by :meth:`partial_fit` (pass a dict, e.g. from
        :func:`~sklearn.utils.class_weight.compute_class_weight` on a
        sample).  One-vs-rest, every learner weighs an example alike (as
        ``SVC`` scales ``C`` per class; ``SGDClassifier`` weighs only each
        learner's positive examples).  The remedy for a rare class of a
        binary stream; None: every class 1."""


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
        A name :func:`sklearn.metrics.pairwise.pairwise_kernels` accepts, or a
        callable: ``kernel(A, B)`` returning the ``(n_A, n_B)`` matrix for two
        blocks of rows (as for :class:`sklearn.svm.SVC`, at block speed), or
        ``kernel(a, b)`` returning a number for two rows (as
        ``pairwise_kernels`` takes it, called per pair); which one is told
        once, when the model starts (the user guide's "Callable kernels").{kernel_note}
    gamma : {{'scale', 'auto'}} or float, default='scale'
        Kernel coefficient for 'rbf', 'poly', 'sigmoid', 'laplacian' and
        'chi2', resolved as in :class:`sklearn.svm.SVC` from the data of the
        call that starts the model (``fit``, or the first ``partial_fit``)
        and kept as ``gamma_``; for streaming, pass a number ('scale' from
        fewer than 100 rows warns).{gamma_note}
    degree : int, default=3
        Degree of the 'poly' kernel.
    coef0 : float, default=0.0
        Independent term of the 'poly' and 'sigmoid' kernels.
    kernel_params : dict, default=None
        Extra parameters for the kernel (a callable kernel gets only these,
        as keyword arguments)."""


def stream_doc(*, max_iter=1, unit="pass",
               max_iter_note="  One online pass is\n        what the papers run.",
               shuffle_note="", random_note="", warm_start_note="", one_vs_rest=True):
    """The entries of ``max_iter``, ``shuffle``, ``random_state``,
    ``warm_start``, ``verbose`` and (``one_vs_rest``: for estimators whose
    multi-class learners may run in threads) ``n_jobs``: ``max_iter`` is
    the default of ``max_iter``, ``unit`` what one iteration is called
    ('pass' or 'epoch'); the notes are appended to their entries."""
    call_params = "``max_iter``, ``n_jobs``, ``shuffle``" if one_vs_rest else (
        "``max_iter``, ``shuffle``")
    n_jobs = """
    n_jobs : int, default=None
        Threads running the one-vs-rest learners of a multi-class problem
        (``None`` means 1, ``-1`` every core); the model does not depend
        on it.  Threads pay off on large calls (``fit``, ``partial_fit``
        on thousands of rows: close to ``n_jobs`` times faster on as many
        free cores); a call too small for them (estimated from its rows,
        support vectors and features) runs in the calling thread, so
        small chunks cost what they cost without ``n_jobs``.  The threads
        are started once and reused; a Ctrl-C stops them and leaves the
        model as it was before the call.""" if one_vs_rest else ""
    return f"""\
max_iter : int, default={max_iter}
        {_plural(unit).capitalize()} over the training data in :meth:`fit`.{max_iter_note}
    shuffle : bool, default=True
        Shuffle the training data before each {unit} of :meth:`fit`.{shuffle_note}
    random_state : int, RandomState instance or None, default=None
        Seed of the shuffling{random_note}.
    warm_start : bool, default=False
        Continue from the current model on :meth:`fit`{warm_start_note}.
        A continuing call (``partial_fit``, warm-start ``fit``) may change
        only {call_params}, ``verbose`` and ``warm_start`` (and
        :class:`KernelPerceptron`'s ``hypothesis``); every other parameter
        is built into the model when it starts, and a changed one raises a
        ValueError that says to call ``fit`` (``warm_start=False``).
    verbose : int, default=0
        Report the examples seen, mistakes and support-set size after each
        {unit}, and during a long one a progress line at most once a
        second (examples seen, examples per second, mistakes and online
        error so far, support-set size): INFO records of the
        ``skbudget`` logger, shown on standard output while the
        application configures no logging.{n_jobs}"""


def attributes_doc(*, unit="pass",
                   support_vectors="The support vectors, learner by learner, oldest first.",
                   dual_coef="Signed coefficients of the support vectors (zeros outside each\n"
                             "        learner's own block).",
                   intercept="Always 0: the model has no bias.",
                   mistake="``y f(x) <= 0``",
                   multiclass_mistake="the true class's\n        score not strictly the largest",
                   n_updates="Insertions made, summed over the learners.",
                   rows="n_learners",
                   n_support="(n_learners,)\n        Support vectors per learner (one learner for two classes).",
                   extra=""):
    """The fitted attributes of ``BaseKernelExpansionClassifier``; the keyword
    arguments replace an entry's description (``mistake``: the condition
    that counts a training round as a mistake, ``multiclass_mistake`` on
    several classes; ``rows``: what the rows of
    ``dual_coef_`` and ``intercept_`` are; ``n_support``: the shape and
    description of ``n_support_``), ``extra`` (entries) is appended."""
    return f"""\
classes_ : ndarray of shape (n_classes,)
        Class labels.
    support_vectors_ : ndarray or sparse matrix of shape (n_SV, n_features)
        {support_vectors}  float32 when the model was started on
        float32 input, else float64.
    dual_coef_ : ndarray of shape ({rows}, n_SV)
        {dual_coef}
    intercept_ : ndarray of shape ({rows},)
        {intercept}
    n_support_ : ndarray of shape {n_support}
    n_mistakes_ : int
        Training rounds with {mistake} (multi-class: {multiclass_mistake}),
        over every {unit} and call.
    n_updates_ : int
        {n_updates}
    n_rounds_ : int
        Training rounds (examples processed) over every {unit} and call.
    mistake_curve_ : ndarray of shape (n_points, 2)
        The learning curve at bounded resolution: rows ``(t, mistakes up to
        and including round t)`` at every multiple of a bin width, and at
        the last round ``(n_rounds_, n_mistakes_)``.  At most 257 rows
        however long the stream: when it outgrows 256 bins the width
        doubles and the bins merge pairwise.  ``mistakes / t`` is the online
        error the papers plot.
    support_curve_ : ndarray of shape (n_points, 2)
        The support size along the stream: rows ``(t, support vectors of
        every learner after round t)`` at the rounds of
        ``mistake_curve_`` (every bin end and the last round), merging
        with it, so at most 257 rows.  The compiled loops report the size
        after every round; the model is the same as without the record.
        A model loaded from a file of an earlier version lacks the rows of
        its rounds before loading except at the bin ends (and the last
        round) where that version read the size; a
        :class:`~skbudget.parallel.ParameterMixingClassifier`'s has only
        the ends of its mixing rounds (inside one, the workers' models are
        several).
        :class:`~skbudget.inspection.OnlineRecordDisplay` plots both
        curves.
    gamma_ : float or None
        The kernel width used (``gamma='scale'`` / ``'auto'`` resolved from
        the data of the call that started the model); None for a callable
        kernel.
    n_iter_ : int
        {_plural(unit).capitalize()} run by the last :meth:`fit`.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, when X has string column names.""" + (
        f"\n    {extra}" if extra else "")


def feature_record_doc(mistakes, updates, constants=""):
    """The last attributes of a model on features (FOGD, AMM): the online
    record's (``n_mistakes_``, ``mistakes`` saying which rounds count;
    ``n_updates_``, described by ``updates``; ``n_rounds_``,
    ``mistake_curve_``), the model's ``constants`` (entries), then
    ``n_iter_`` and the input's."""
    return f"""n_mistakes_ : int
        Training rounds {mistakes}, over every pass and call.
    n_updates_ : int
        {updates}
    n_rounds_ : int
        Training rounds (examples processed) over every pass and call.
    mistake_curve_ : ndarray of shape (n_points, 2)
        The learning curve at bounded resolution: rows ``(t, mistakes up to
        and including round t)`` (at most 257 rows however long the
        stream).{constants}
    n_iter_ : int
        Passes run by the last :meth:`fit`.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, when X has string column names."""


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


def samples_method_doc(summary, returns):
    """The docstring of a method whose only argument is the samples ``X``
    (``predict``, ``decision_function``): ``summary``, then Parameters and
    ``returns``, the Returns entry (its later lines indented 12 spaces)."""
    return f"""{summary}

        Parameters
        ----------
        X : {{array-like, sparse matrix}} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        {returns}
        """


_SAMPLE_WEIGHT_ENTRY = """
        sample_weight : array-like of shape (n_samples,), default=None
            Weight of each example's loss (finite, >= 0), multiplied by the
            ``class_weight`` of its class; None: every weight 1.{note}"""


def fit_doc(weighted=False):
    """The docstring of ``fit`` (``weighted``: with ``sample_weight``)."""
    weight = _SAMPLE_WEIGHT_ENTRY.format(
        note="  It\n            follows the example through shuffled epochs.") if weighted else ""
    return f"""Fit the model with ``max_iter`` passes over the training data.

        With ``warm_start=True`` and a fitted model, the passes continue
        that model.  If the call raises, the model is left as it was.

        Parameters
        ----------
        X : {{array-like, sparse matrix}} of shape (n_samples, n_features)
            Training vectors.  float32 input is kept float32 by the
            estimators that store rows or compute features from them (the
            kernel expansions, ``LowRankLinearizedSVC``,
            ``FourierOGDClassifier``); other dtypes
            are converted to float64.
        y : array-like of shape (n_samples,)
            Target values (class labels).{weight}

        Returns
        -------
        self : object
            Fitted estimator.
        """


def partial_fit_doc(weighted=False):
    """The docstring of ``partial_fit`` (``weighted``: with ``sample_weight``
    and the ``class_weight='balanced'`` note)."""
    weight = _SAMPLE_WEIGHT_ENTRY.format(note="") if weighted else ""
    balanced = """  ``class_weight='balanced'`` is not supported here
        (as in :class:`sklearn.linear_model.SGDClassifier`): pass
        ``compute_class_weight('balanced', classes=classes, y=y)`` of a
        representative sample as a dict.""" if weighted else ""
    same = " (with\n        the same weights)" if weighted else ""
    return f"""Learn from one more piece of the stream, in the order given.

        A single call is one online pass (no shuffling); calls on
        consecutive chunks of a stream give exactly the model of one
        ``fit`` epoch over the whole stream with ``shuffle=False``{same}.  If the
        call raises (bad input, a kernel error, an interrupt), the model is
        left exactly as it was, and continuing gives the model of a stream
        without the failed call.  The first call fixes the storage format of
        the support vectors (dense or CSR) and their dtype (float32 input
        is kept float32 where the estimator keeps it, see ``fit``); later
        chunks in another format or dtype are converted to it (another
        dtype with a ``DataConversionWarning``).{balanced}

        Parameters
        ----------
        X : {{array-like, sparse matrix}} of shape (n_samples, n_features)
            Examples of the stream, in stream order.
        y : array-like of shape (n_samples,)
            Their class labels.
        classes : array-like of shape (n_classes,), default=None
            All the classes; required on the first call, ignored after.{weight}

        Returns
        -------
        self : object
            The updated estimator.
        """
