"""Scale-out on a dask.distributed cluster: the estimators travel to worker
processes by pickle and come back unchanged, scikit-learn's searches run on
the workers through joblib's dask backend, and prediction runs block-wise on
a dask array.  This is the code of ``doc/user_guide/dask.rst``.
"""

import pickle

import numpy as np
import pytest
from numpy.testing import assert_array_equal
from sklearn.model_selection import GridSearchCV, cross_val_score

from skbudget import Forgetron, TightestPerceptron
from skbudget.datasets import make_checkerboard

distributed = pytest.importorskip(
    "distributed", reason="dask.distributed is not installed (pip install -e '.[dask]')")
da = pytest.importorskip("dask.array", reason="dask.array is not installed")
joblib = pytest.importorskip("joblib")


@pytest.fixture(scope="module")
def client():
    """A local cluster of 2 worker processes, 1 thread each."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        yield client


@pytest.fixture(scope="module")
def data():
    X, y = make_checkerboard(600, noise=0.1, random_state=0)
    return X, y


def test_fitted_model_travels_to_workers_unchanged(client, data):
    X, y = data
    clf = TightestPerceptron(budget=30, gamma=2.0, random_state=0).fit(X, y)
    assert_array_equal(pickle.loads(pickle.dumps(clf)).decision_function(X),
                       clf.decision_function(X))
    # a worker process unpickles it, predicts, and sends the model back
    remote = client.submit(lambda model, X: (model.decision_function(X), model), clf, X)
    scores, back = remote.result()
    assert_array_equal(scores, clf.decision_function(X))
    assert_array_equal(back.support_vectors_, clf.support_vectors_)
    assert_array_equal(back.dual_coef_, clf.dual_coef_)
    # and it keeps learning where it stopped
    assert_array_equal(back.partial_fit(X[:50], y[:50]).dual_coef_,
                       clf.partial_fit(X[:50], y[:50]).dual_coef_)


def test_searches_run_on_the_workers(client, data):
    X, y = data
    grid = {"budget": [10, 30], "gamma": [1.0, 4.0]}
    local = GridSearchCV(Forgetron(random_state=0), grid, cv=3).fit(X, y)
    local_scores = cross_val_score(Forgetron(budget=30, gamma=2.0, random_state=0), X, y, cv=4)

    with distributed.get_task_stream(client) as tasks, \
            joblib.parallel_config(backend="dask", n_jobs=-1):
        remote = GridSearchCV(Forgetron(random_state=0), grid, cv=3).fit(X, y)
        remote_scores = cross_val_score(
            Forgetron(budget=30, gamma=2.0, random_state=0), X, y, cv=4)

    workers = {task["worker"] for task in tasks.data}
    assert workers, "no task ran on the cluster"
    assert workers <= set(client.scheduler_info()["workers"])
    assert_array_equal(remote.cv_results_["mean_test_score"],
                       local.cv_results_["mean_test_score"])
    assert remote.best_params_ == local.best_params_
    assert_array_equal(remote_scores, local_scores)


def test_blockwise_prediction_on_a_dask_array(client, data):
    X, y = data
    clf = Forgetron(budget=30, gamma=2.0, random_state=0).fit(X, y)
    X_big = da.from_array(np.tile(X, (4, 1)), chunks=(500, X.shape[1]))
    labels = X_big.map_blocks(clf.predict, dtype=clf.classes_.dtype, drop_axis=1)
    scores = X_big.map_blocks(clf.decision_function, dtype=np.float64, drop_axis=1)
    assert labels.numblocks == (5,)
    assert_array_equal(labels.compute(), np.tile(clf.predict(X), 4))
    assert_array_equal(scores.compute(), np.tile(clf.decision_function(X), 4))
