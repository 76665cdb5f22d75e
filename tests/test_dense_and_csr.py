"""Dense and CSR input mix: chunks of either format continue the same
stream and give the same model, and CSR support vectors are scipy's
conversion of the dense store."""

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal

from skbudget import Forgetron
from tests.model_state import assert_same_state, model_state
from tests.test_common import ESTIMATORS, IDS, small


def test_csr_chunk_after_dense_chunks_multiclass(multiclass_data):
    X, y = multiclass_data
    est = small(Forgetron, budget=20)
    est.partial_fit(X[:60], y[:60], classes=[0, 1, 2])
    est.partial_fit(sp.csr_matrix(X[60:110]), y[60:110])
    est.partial_fit(X[110:], y[110:])
    dense = small(Forgetron, budget=20)
    for piece in (slice(0, 60), slice(60, 110), slice(110, None)):
        dense.partial_fit(X[piece], y[piece], classes=[0, 1, 2])
    assert_same_state(model_state(est), model_state(dense))


@pytest.mark.parametrize("Est", ESTIMATORS, ids=IDS)
@pytest.mark.parametrize("first", ["dense", "csr"])
def test_dense_and_csr_chunks_mix(Est, first, multiclass_data):
    X, y = multiclass_data
    for labels in (y, (y == 0).astype(int)):        # multi-class, binary
        classes = np.unique(labels)
        dense, mixed = small(Est), small(Est)
        pieces = np.array_split(np.arange(len(labels)), 6)
        for i, piece in enumerate(pieces):
            dense.partial_fit(X[piece], labels[piece], classes=classes)
            as_csr = (i % 2 == 0) == (first == "csr")
            chunk = sp.csr_matrix(X[piece]) if as_csr else X[piece]
            mixed.partial_fit(chunk, labels[piece], classes=classes)
        a, b = model_state(dense), model_state(mixed)
        if "support_vectors_" in a:
            assert sp.issparse(mixed.support_vectors_) == (first == "csr")
        for name in ("dual_coef_", "coef_", "support_vectors_", "n_support_", "mistake_curve_"):
            if name in a:
                assert_allclose(a[name], b[name], rtol=1e-10, atol=1e-10)
        assert_allclose(dense.decision_function(X), mixed.decision_function(X), atol=1e-9)


@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (1, 1), (40, 7)])
def test_support_vectors_as_csr_match_scipys_conversion(shape):
    # CSR support vectors are built from the dense store in compiled code:
    # scipy's matrix (zeros dropped, -0.0 too, NaN kept), canonical, int32
    from skbudget._stream import _dense_to_csr, empty_rows
    rows = np.random.RandomState(0).randn(*shape)
    rows[rows < 0.2] = 0.0
    rows.flat[::5] = -0.0
    rows.flat[1:2] = np.nan
    converted = _dense_to_csr(rows)
    expected = sp.csr_matrix(rows)
    assert converted.shape == expected.shape and converted.has_canonical_format
    assert converted.indices.dtype == converted.indptr.dtype == np.int32
    assert_array_equal(converted.indptr, expected.indptr)
    assert_array_equal(converted.indices, expected.indices)
    assert_array_equal(converted.data, expected.data)
    empty = empty_rows(expected)
    assert sp.issparse(empty) and empty.shape == (0, shape[1]) and empty.nnz == 0
