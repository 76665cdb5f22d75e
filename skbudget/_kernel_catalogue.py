"""The named kernels: the one place that knows each of them.

``kernel`` takes the names of :func:`sklearn.metrics.pairwise.pairwise_kernels`.
:data:`CATALOGUE` has one :class:`NamedKernel` per name, and every other
module asks it: the parameter constraint of ``kernel``, the kernel blocks
and the choice of store mode (``skbudget._kernels``), prediction, the
estimators' kernel-dependent rules and warnings, the ONNX converter, and
the kernel table of the user guide (checked by ``tests/test_kernels.py``).

The compiled code numbers the kernels it computes itself (``KernelKind``
in ``skbudget/_kernel_rows.pxd``); a kernel's ``compiled_kind`` is that
number, and ``tests/test_kernels.py`` checks the two against each other.
"""

from typing import NamedTuple

__all__ = ["CATALOGUE", "KERNEL_NAMES", "LINEAR_KIND", "POLY_KIND", "RBF_KIND", "SIGMOID_KIND",
           "NamedKernel", "named_kernel"]

# ``_kernel_rows.KernelKind``: the kernels the compiled loops compute
LINEAR_KIND, RBF_KIND, POLY_KIND, SIGMOID_KIND = 0, 1, 2, 3


class NamedKernel(NamedTuple):
    """What the package knows about one kernel name.

    Attributes
    ----------
    name : str
        The name, as ``pairwise_kernels`` takes it.
    compiled_kind : int or None
        The ``KernelKind`` the compiled loops compute it with (store mode,
        fused prediction, Python blocks without ``pairwise_kernels``' input
        checks), or None: its blocks come from ``pairwise_kernels``.
    params : frozenset of str
        Which of ``gamma``, ``degree``, ``coef0`` it takes (scikit-learn's
        ``KERNEL_PARAMS``).
    positive : bool
        Whether every value is positive: an expansion whose coefficients
        share a sign has that sign everywhere.
    ranks_by_distance : bool
        Whether its value is a decreasing function of the Euclidean
        distance, so that the largest value marks the nearest vector
        (``'laplacian'``'s marks the L1-nearest one).
    onnx : bool
        Whether ``skbudget.onnx`` can express it in ONNX operators.
    """

    name: str
    compiled_kind: object
    params: frozenset
    positive: bool
    ranks_by_distance: bool
    onnx: bool


_GAMMA = frozenset({"gamma"})
_POLY = frozenset({"gamma", "degree", "coef0"})

# in the order messages list them
CATALOGUE = {kernel.name: kernel for kernel in (
    NamedKernel("linear", LINEAR_KIND, frozenset(), False, False, True),
    NamedKernel("rbf", RBF_KIND, _GAMMA, True, True, True),
    NamedKernel("poly", POLY_KIND, _POLY, False, False, True),
    NamedKernel("polynomial", POLY_KIND, _POLY, False, False, True),
    NamedKernel("sigmoid", SIGMOID_KIND, frozenset({"gamma", "coef0"}), False, False, True),
    NamedKernel("laplacian", None, _GAMMA, True, False, True),
    NamedKernel("cosine", None, frozenset(), False, False, True),
    NamedKernel("chi2", None, _GAMMA, True, False, True),
    NamedKernel("additive_chi2", None, frozenset(), False, False, True),
)}

# every name ``kernel`` accepts
KERNEL_NAMES = tuple(CATALOGUE)


def named_kernel(kernel):
    """The catalogue's entry of ``kernel``, or None for a callable."""
    return None if callable(kernel) else CATALOGUE[kernel]
