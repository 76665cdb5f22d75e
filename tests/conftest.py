"""Data shared by the test modules."""

import pytest
from sklearn.datasets import make_blobs, make_classification
from sklearn.preprocessing import StandardScaler


@pytest.fixture(scope="module")
def binary_data():
    X, y = make_classification(160, n_features=4, n_informative=3, n_redundant=0,
                               flip_y=0.1, random_state=0)
    return StandardScaler().fit_transform(X), y


@pytest.fixture(scope="module")
def multiclass_data():
    X, y = make_blobs(150, centers=3, n_features=3, cluster_std=2.0, random_state=0)
    return StandardScaler().fit_transform(X), y
