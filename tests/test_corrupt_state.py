"""Corrupt and tampered state: compiled calls check the learner state they
are handed (an error naming the problem, never a crash), a tampered file
cannot hang the process or hold two models, and the list of types the
"Deploying" page says to trust loads every model."""

import pickle
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_array_equal

from skbudget import Forgetron, KernelPerceptron
from skbudget._engine import gather_block
from tests.test_common import ESTIMATORS, IDS, small

ROOT = Path(__file__).resolve().parents[1]


def test_corrupted_learner_state_raises_instead_of_crashing():
    # every field of every estimator's learner state, in child processes
    # (each shared multi-class mode too), two side by side: every
    # configuration runs in exactly one of them
    n_parts = 2
    children = [subprocess.Popen([sys.executable, "-m", "tests.corrupt_states", str(part),
                                  str(n_parts)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True, cwd=Path(__file__).parents[1])
                for part in range(n_parts)]
    refused = set()
    try:
        for child in children:
            stdout, stderr = child.communicate(timeout=900)
            assert child.returncode == 0, stderr[-2000:]
            lines = stdout.splitlines()
            assert lines[-1] == "done"
            refused |= {tuple(line.split()[1:]) for line in lines[:-1]}
    finally:
        for child in children:      # (none left running when one failed)
            child.kill()
            child.wait()
    # the entry checks fire: the store's indices, and each policy's own state
    shared = [(f"{name}-shared", field)
              for name in ("Stoptron", "RandomBudgetPerceptron", "Forgetron",
                           "KernelPassiveAggressive", "Projectron", "ProjectronPlusPlus")
              for field in ("tau", "label", "new_row")]
    shared += [("Forgetron-shared", field) for field in ("Q", "n_removals")]
    shared += [("Stoptron-shared", "budget")]
    shared += [(f"{name}-shared", field) for name in ("Projectron", "ProjectronPlusPlus")
               for field in ("chol", "w", "c")]
    for name, field in shared + [("Forgetron", "order"), ("Forgetron", "free_cells"),
                        ("KernelPerceptron", "event_cell"), ("Projectron", "chol"),
                        ("TighterPerceptron", "vslot"), ("TightestPerceptron", "wpos"),
                        ("BudgetMIRA", "label"), ("BudgetedSGDClassifier", "budget"),
                        ("BudgetedSGDClassifier", "row_sqnorm"),
                        # the shared multi-class modes' own state
                        ("Stoptron-shared", "new_row"), ("Forgetron-shared", "newer_sum"),
                        ("Projectron-shared", "chol"), ("ProjectronPlusPlus-shared", "work"),
                        ("TighterPerceptron-shared", "vslot"),
                        ("TightestPerceptron-shared", "counts"),
                        ("BudgetedPassiveAggressive-shared", "row_sqnorm"),
                        ("BoundedOGDClassifier-shared", "row_norm"),
                        ("KernelOGDClassifier-shared", "new_row"),
                        ("NystromOGDClassifier-shared", "tau")]:
        for kernel in ("rbf", "laplacian"):
            assert (name, kernel, field) in refused


def test_check_state_names_the_problem(binary_data):
    X, y = binary_data
    est = small(Forgetron).partial_fit(X[:100], y[:100], classes=[0, 1])
    learner = est._learners[0]
    state = learner.get_state()
    state["order"][0] = 10 ** 6
    learner.set_state(state)
    with pytest.raises(ValueError, match="inconsistent state.*out of range"):
        est.partial_fit(X[100:110], y[100:110])
    assert learner.get_state()["order"][0] == 10 ** 6   # rolled back to what it was


def test_gram_gather_checks_its_indices():
    M = np.arange(12.0).reshape(3, 4)
    assert_array_equal(gather_block(M, np.array([0, 2]), np.array([3, 1])), [[3, 1], [11, 9]])
    for rows, cols in (([0, 3], [1]), ([0], [-1]), ([-2], [0]), ([1], [4])):
        with pytest.raises(ValueError, match="outside"):
            gather_block(M, np.array(rows, dtype=np.intp), np.array(cols, dtype=np.intp))


@pytest.mark.parametrize("Est", ESTIMATORS, ids=IDS)
@pytest.mark.parametrize("field, value", [("max_points", -1), ("max_points", 0),
                                          ("max_points", 3), ("width", 0), ("n_rounds", -5),
                                          ("n_mistakes", 10 ** 9)])
def test_tampered_online_record_is_refused_on_loading(Est, field, value, binary_data):
    X, y = binary_data
    state = small(Est).partial_fit(X[:60], y[:60], classes=[0, 1]).__getstate__()
    state["_record"][field] = value
    with pytest.raises(ValueError, match="online record"):
        Est().__setstate__(state)           # what skops.io.load does


@pytest.mark.parametrize("field, value", [
    ("support_points", np.zeros(3, dtype=np.int64)),           # not one per point
    ("support_points", np.zeros(15, dtype=np.int32)),
    ("support_points", np.full(15, -2, dtype=np.int64)),
    ("support_points", [0] * 15),
    ("last_support", -2), ("last_support", 7.0), ("last_support", None),
    ("last_support", 10 ** 6),                 # the last round ends a bin: two sizes
    ("support", np.zeros((0, 2), dtype=np.int64)),             # a second layout beside
])
def test_tampered_support_sizes_of_the_record_are_refused(field, value, binary_data):
    X, y = binary_data
    est = Forgetron(budget=7, gamma=1.0).partial_fit(X[:60], y[:60], classes=[0, 1])
    state = est.__getstate__()
    state["_record"]["max_points"], state["_record"]["width"] = 16, 4
    state["_record"]["points"] = state["_record"]["points"][3::4]
    state["_record"]["support_points"] = state["_record"]["support_points"][3::4]
    assert state["_record"]["points"].size == 15
    Forgetron().__setstate__(state)         # a record 4 rounds a bin loads
    state["_record"][field] = value
    with pytest.raises(ValueError, match="online record"):
        Forgetron().__setstate__(state)


@pytest.mark.parametrize("support", [
    np.array([[0, 3]]), np.array([[61, 3]]), np.array([[4, 3], [8, 2]]),   # rounds
    np.array([[60, -1]]), np.array([[60, 3]], dtype=np.int32), np.zeros((1, 3), np.int64),
])
def test_tampered_record_of_the_earlier_layout_is_refused(support, binary_data):
    # the sparse reads of an earlier version ((round, size), see
    # skbudget._record._support_of_sparse_reads) index the new points
    X, y = binary_data
    est = Forgetron(budget=7, gamma=1.0).partial_fit(X[:60], y[:60], classes=[0, 1])
    state = est.__getstate__()
    del state["_record"]["support_points"], state["_record"]["last_support"]
    state["_record"]["support"] = np.array([[20, 5], [60, 7]], dtype=np.int64)
    Forgetron().__setstate__(state)
    state["_record"]["support"] = support.astype(support.dtype)
    with pytest.raises(ValueError, match="online record"):
        Forgetron().__setstate__(state)


@pytest.mark.parametrize("kernel", ["rbf", "laplacian"])      # store and block mode
@pytest.mark.parametrize("field, value", [("chunk_size", 0), ("chunk_size", -1),
                                          ("chunk_size", 2.5), ("shared_support", "yes"),
                                          ("pools", []), ("pool_ids", [])])
def test_tampered_stream_driver_is_refused_on_loading(kernel, field, value, binary_data):
    X, y = binary_data
    est = Forgetron(budget=7, kernel=kernel, gamma=1.0).partial_fit(X[:60], y[:60],
                                                                    classes=[0, 1])
    state = est.__getstate__()
    state["_driver"][field] = value
    with pytest.raises(ValueError, match="stream"):
        Forgetron().__setstate__(state)


@pytest.mark.parametrize("Est", ESTIMATORS, ids=IDS)
def test_file_whose_attributes_and_learners_disagree_is_refused(Est, binary_data):
    # the public attributes (what predict uses) of one model, the learners
    # (what partial_fit continues) of another
    X, y = binary_data
    first = small(Est).partial_fit(X[:60], y[:60], classes=[0, 1])
    second = small(Est).partial_fit(X[60:120], y[60:120], classes=[0, 1])
    state = first.__getstate__()
    state["_driver"] = second.__getstate__()["_driver"]
    with pytest.raises(ValueError, match="do not match"):
        Est().__setstate__(state)
    # each file alone loads
    for model in (first, second):
        loaded = Est()
        loaded.__setstate__(model.__getstate__())
        assert_array_equal(loaded.decision_function(X), model.decision_function(X))


def test_model_whose_read_out_changed_after_training_loads(binary_data):
    # hypothesis may change between calls: the attributes were computed
    # with the old one, and the file is still one model
    X, y = binary_data
    est = KernelPerceptron(gamma=1.0).fit(X, y).set_params(hypothesis="averaged")
    loaded = pickle.loads(pickle.dumps(est))
    assert_array_equal(loaded.decision_function(X), est.decision_function(X))
    loaded.partial_fit(X, y)
    assert not np.array_equal(loaded.dual_coef_, est.dual_coef_)     # now the averaged one


def test_skops_file_with_a_tampered_record_does_not_load(binary_data):
    sio = pytest.importorskip("skops.io")
    X, y = binary_data
    est = Forgetron(budget=7, gamma=1.0).partial_fit(X[:60], y[:60], classes=[0, 1])
    record = est._record
    record.max_points = -1                     # as a tampered file would say
    data = sio.dumps(est)
    with pytest.raises(ValueError, match="online record"):
        sio.loads(data, trusted=["skbudget._budget.Forgetron"])


def _deploying_trusted_list():
    """The list of types the "Deploying" page says to trust, by running the
    page's code block that builds it."""
    text = (ROOT / "doc" / "user_guide" / "deploying.rst").read_text()
    blocks = re.findall(r"\.\. code-block:: python\n\n((?:   .*\n|\n)+)", text)
    block = next(b for b in blocks if "TRUSTED =" in b)
    namespace = {}
    exec("\n".join(line[3:] for line in block.splitlines()), namespace)
    return text, namespace["TRUSTED"]


@pytest.mark.parametrize("sparse", [False, True])
def test_deploying_page_trusts_a_fixed_list_that_loads_every_model(sparse, binary_data):
    sio = pytest.importorskip("skops.io")
    text, trusted = _deploying_trusted_list()
    assert "trusted=untrusted" not in text and "scipy.sparse._csr.csr_matrix" in text
    X, y = binary_data
    X = sp.csr_matrix(X) if sparse else X
    for Est in ESTIMATORS:
        data = sio.dumps(small(Est).partial_fit(X[:60], y[:60], classes=[0, 1]))
        assert set(sio.get_untrusted_types(data=data)) <= set(trusted)
        sio.loads(data, trusted=trusted)
