"""Every model, bit for bit: a digest of what each estimator learns.

The digests in ``tests/data/model_digests.json`` were taken from the code as
it stood before the structural split of the engine (issue "Make room for
the next families"); a change meant to be behaviour-preserving must leave
every one of them equal.  Each configuration fits a small stream, continues
it with ``partial_fit`` and hashes the fitted arrays and the decision
function on held-out rows, exactly (``tobytes``, no rounding).

The digests are exact floating-point values, so they hold on the machine
kind CI runs on (one BLAS, one CPU family).  A change that *means* to change
a model regenerates them and says why in its commit::

    python tests/test_model_digest.py --regenerate
"""

import hashlib
import json
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_blobs, make_classification
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.preprocessing import StandardScaler

from skbudget._base import BaseKernelExpansionClassifier
from skbudget._declaration import declaration_of
from skbudget.discovery import all_estimators
from tests.test_common import accepts, params_taken

DIGESTS = Path(__file__).parent / "data" / "model_digests.json"

def _gamma_rbf(A, B):
    return rbf_kernel(A, B, gamma=0.5)


KERNELS = {
    "rbf": dict(kernel="rbf", gamma=0.5),
    "poly": dict(kernel="poly", gamma=0.3, degree=2, coef0=1.0),
    "linear": dict(kernel="linear"),
    "callable": dict(kernel=_gamma_rbf),
}


def _data(task, sparse):
    if task == "binary":
        X, y = make_classification(200, n_features=5, n_informative=3, n_redundant=0,
                                   flip_y=0.1, random_state=0)
    else:
        X, y = make_blobs(200, centers=3, n_features=4, cluster_std=2.5, random_state=0)
    X = StandardScaler().fit_transform(X)
    X[np.abs(X) < 0.4] = 0.0          # zeros, so that CSR input stores fewer values
    if sparse:
        X = sp.csr_matrix(X)
    return X[:120], y[:120], X[120:160], y[120:160], X[160:]


def _configurations():
    # each estimator's options beyond the defaults that build another model
    # (``_declaration.model_variants``; ``v`` is the option's position),
    # each run with every kernel and data set below
    for name, Est in all_estimators():
        for v, variant in enumerate(declaration_of(Est).model_variants):
            for kernel in KERNELS:
                if "kernel" not in Est().get_params() and kernel != "rbf":
                    continue                # no kernel parameter: the RBF kernel's features
                est = _estimator(name, variant, kernel)
                if not accepts(Est, est.get_params()):    # (BSGD merges RBF only)
                    continue
                for task in ("binary", "3class"):
                    for data in ("dense", "csr"):
                        yield f"{name}-v{v}-{kernel}-{task}-{data}", name, variant, kernel, task, data


def _estimator(name, variant, kernel):
    Est = dict(all_estimators())[name]
    params = dict(KERNELS[kernel], random_state=0, max_iter=2)
    if not issubclass(Est, BaseKernelExpansionClassifier):
        # the kernel parameters it takes (FOGD: the RBF width of its
        # features; LLSVM: all of them)
        params = params_taken(Est, **params)
    params.update(params_taken(Est, budget=7), **variant)
    return Est(**params)


CONFIGURATIONS = list(_configurations())


def _fitted_arrays(est):
    """The arrays of a model that is no kernel expansion: its public fitted
    ndarray attributes but ``classes_``, first those of the features its
    stream driver feeds the learners (the feature map's, e.g. FOGD's
    ``random_weights_``), then those learned on them, each group by name."""
    features = est._driver.features
    map_arrays = [value for value in vars(features).values()
                  if isinstance(value, np.ndarray)] if features is not None else []
    names = sorted(name for name, value in vars(est).items()
                   if name.endswith("_") and not name.startswith("_")
                   and isinstance(value, np.ndarray) and name != "classes_")
    return tuple(getattr(est, name) for name in sorted(
        names, key=lambda name: not any(getattr(est, name) is a for a in map_arrays)))


def _digest(name, variant, kernel, task, data):
    est = _estimator(name, variant, kernel)
    X, y, X_more, y_more, X_test = _data(task, data == "csr")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
        est.partial_fit(X_more, y_more)
        scores = est.decision_function(X_test)
    if isinstance(est, BaseKernelExpansionClassifier):
        support = est.support_vectors_
        if sp.issparse(support):
            support = support.toarray()
        arrays = (support, est.dual_coef_, est.intercept_, est.n_support_)
    else:
        arrays = _fitted_arrays(est)
    hasher = hashlib.sha256()
    for value in arrays + (est.mistake_curve_, est.n_updates_, scores):
        value = np.ascontiguousarray(np.asarray(value))
        hasher.update(f"{value.dtype.str}{value.shape}".encode())
        hasher.update(value.tobytes())
    return hasher.hexdigest()


@pytest.fixture(scope="module")
def stored_digests():
    return json.loads(DIGESTS.read_text())


@pytest.mark.parametrize("config", CONFIGURATIONS, ids=[c[0] for c in CONFIGURATIONS])
def test_model_unchanged_bit_for_bit(config, stored_digests):
    key, *spec = config
    if key not in stored_digests:
        pytest.fail(f"{key}: no stored digest (a new estimator or variant: regenerate "
                    f"with `python tests/test_model_digest.py --regenerate` and say why)")
    assert _digest(*spec) == stored_digests[key]


def test_every_stored_digest_is_still_checked(stored_digests):
    assert sorted(stored_digests) == sorted(c[0] for c in CONFIGURATIONS)


if __name__ == "__main__":
    if sys.argv[1:] != ["--regenerate"]:
        sys.exit("usage: python tests/test_model_digest.py --regenerate")
    digests = {key: _digest(*spec) for key, *spec in CONFIGURATIONS}
    DIGESTS.write_text(json.dumps(digests, indent=1, sort_keys=True) + "\n")
    print(f"{len(digests)} digests written to {DIGESTS}")
