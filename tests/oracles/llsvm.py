"""doc/algorithms.md#llsvm: the landmark map and the per-call dual
coordinate descent of LLSVM, written plainly from the spec (NumPy kernel
blocks, one coordinate at a time in a Python loop).

:func:`plain_landmark_map` gives ``(Z, M)``; :class:`PlainLLSVM` takes
``(kernel, **the estimator's parameters)`` with ``kernel(A, B) -> ndarray``
and learns from ``partial_fit(X, y, sample_weight)``, ``y`` any labels of
``classes`` (one-vs-rest, one learner for two classes).  Each call records
per learner its ``scores`` before the call, the solver's sweeps
(``n_iter``), coordinate updates (``n_updates``) and whether it reached
``tol``; ``W`` holds every learner's ``w``.

The coordinate descent is liblinear's ``solve_l2r_l1l2_svc`` for the hinge
loss (the choices the estimator documents): every sweep the active rows in
the order ``rng.permutation(n_active)`` applied to the active list; a row at
a bound whose gradient points outward beyond the previous sweep's extreme
projected gradients is shrunk; a sweep with ``max PG - min PG <= tol``
ends the call (after one more sweep over every row if rows were shrunk).
Rows with ``e.e = 0`` or ``C_i = 0`` are left out of the problem.
"""

import numpy as np
from sklearn.cluster import KMeans
from threadpoolctl import threadpool_limits


def plain_landmark_map(X, budget, landmarks, kmeans_iter, rng, kernel):
    """``(Z, M)``: ``Z`` the landmarks (``'kmeans'``: KMeans(n_clusters=B,
    n_init=1, max_iter=kmeans_iter, random_state=rng) on the first 50 000
    rows, dense; ``'random'``: ``X[rng.choice(n, B, replace=False)]``; or
    the array), ``M = U diag(l^-1/2 where l > 1e-5 l_max, else 0)`` from
    ``K_ZZ = U diag(l) U^T``; the features are ``k(x, Z) @ M``."""
    X = X.toarray() if hasattr(X, "toarray") else np.asarray(X, dtype=float)
    if isinstance(landmarks, str) and landmarks == "kmeans":
        # (one OpenMP thread, as the estimator: KMeans' sum of its threads'
        # partial centres depends on their order with three or more)
        with threadpool_limits(limits=1, user_api="openmp"):
            Z = KMeans(n_clusters=budget, n_init=1, max_iter=kmeans_iter,
                       random_state=rng).fit(X[:50_000]).cluster_centers_
    elif isinstance(landmarks, str):
        Z = X[rng.choice(X.shape[0], budget, replace=False)]
    else:
        Z = np.asarray(landmarks, dtype=float)
    lam, U = np.linalg.eigh(kernel(Z, Z))
    kept = (lam > 1e-5 * lam[-1]) & (lam[-1] > 0)
    M = np.zeros_like(U)
    M[:, kept] = U[:, kept] / np.sqrt(lam[kept])
    return Z, M


def plain_dcd(E, y, upper, w, rng, tol, max_iter):
    """One call: ``w`` (changed in place) moves to ``argmin 1/2 ||w -
    w_prev||^2 + sum_i upper_i max(0, 1 - y_i w.e_i)``; returns (sweeps,
    coordinate updates, reached tol)."""
    QD = np.einsum("ij,ij->i", E, E)
    index = [i for i in range(len(y)) if QD[i] > 0 and upper[i] > 0]
    n_rows = len(index)
    alpha = np.zeros(len(y))
    active = n_rows
    pg_max_old, pg_min_old = np.inf, -np.inf
    sweeps = updates = 0
    while sweeps < max_iter:
        perm = rng.permutation(active)
        index[:active] = [index[p] for p in perm]
        pg_max, pg_min = -np.inf, np.inf
        s = 0
        while s < active:
            i = index[s]
            G = y[i] * (w @ E[i]) - 1.0
            at_zero, at_upper = alpha[i] == 0.0, alpha[i] == upper[i]
            if at_zero and G > pg_max_old or at_upper and G < pg_min_old:
                # shrunk: the last active row takes its place, visited next
                active -= 1
                index[s], index[active] = index[active], index[s]
                continue
            # the projected gradient: 0 where the bound holds the gradient back
            PG = min(G, 0.0) if at_zero else max(G, 0.0) if at_upper else G
            pg_max, pg_min = max(pg_max, PG), min(pg_min, PG)
            if abs(PG) > 1e-12:
                old = alpha[i]
                alpha[i] = min(max(old - G / QD[i], 0.0), upper[i])
                w += (alpha[i] - old) * y[i] * E[i]
                updates += 1
            s += 1
        sweeps += 1
        if pg_max - pg_min <= tol:
            if active == n_rows:
                return sweeps, updates, True
            active = n_rows
            pg_max_old, pg_min_old = np.inf, -np.inf
            continue
        pg_max_old = pg_max if pg_max > 0 else np.inf
        pg_min_old = pg_min if pg_min < 0 else -np.inf
    return sweeps, updates, False


class PlainLLSVM:
    """doc/algorithms.md#llsvm: the map from the first call, then per call
    and learner :func:`plain_dcd` from the learner's ``w``."""

    def __init__(self, kernel, budget=100, landmarks="kmeans", kmeans_iter=10, C=1.0, tol=1e-4,
                 max_iter=1000, random_state=0):
        self.kernel, self.budget, self.landmarks = kernel, budget, landmarks
        self.kmeans_iter, self.C, self.tol, self.max_iter = kmeans_iter, C, tol, max_iter
        self.rng = np.random.RandomState(random_state)
        self.Z = None

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        if self.Z is None:
            self.classes = np.unique(classes)
            self.Z, self.M = plain_landmark_map(X, self.budget, self.landmarks,
                                                self.kmeans_iter, self.rng, self.kernel)
            n_learners = 1 if len(self.classes) == 2 else len(self.classes)
            if n_learners == 1:
                self.rngs = [self.rng]
            else:       # one generator per learner, seeded from the model's
                seeds = self.rng.randint(np.iinfo(np.int32).max, size=n_learners)
                self.rngs = [np.random.RandomState(s) for s in seeds]
            self.W = np.zeros((n_learners, self.M.shape[1]))
            self.n_updates = 0
        E = self.features(X)
        upper = self.C * (np.ones(len(y)) if sample_weight is None else sample_weight)
        self.scores, self.n_iter, self.converged = E @ self.W.T, [], []
        for k in range(len(self.W)):
            positive = self.classes[1] if len(self.W) == 1 else self.classes[k]
            signs = np.where(np.asarray(y) == positive, 1.0, -1.0)
            sweeps, updates, reached = plain_dcd(E, signs, upper, self.W[k], self.rngs[k],
                                                 self.tol, self.max_iter)
            self.n_iter.append(sweeps)
            self.n_updates += updates
            self.converged.append(reached)
        return self

    def features(self, X):
        X = X.toarray() if hasattr(X, "toarray") else np.asarray(X, dtype=float)
        return self.kernel(X, self.Z) @ self.M

    def decision_function(self, X):
        return self.features(X) @ self.W.T
