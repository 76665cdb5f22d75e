"""The budget families of issue 35 side by side: BPA, BOGD, kernel OGD /
NORMA, FOGD and NOGD against BSGD, the Forgetron and the Nystroem / random
Fourier feature pipelines; the KOL (LIBOKL) comparison; the BSGD paper's
BPA-NN figure on Adult; and the per-round cost.

Sections (``--parts``; all but ``kol`` by default, ``--kol`` adds it):

``families``
    Test accuracy (mean +- std over 5 random orders, one pass each) and fit
    time (the median over the orders, wall clock and CPU time; every order
    fits all the estimators in turn, so a slow stretch of the shared machine
    weighs on all alike) of one
    row per estimator on a9a (B = 100 and 500), mnist5k's ten classes
    one-vs-rest (B = 100 *per class*: ten binary learners, 1 000 stored
    vectors in all) and Banana (B = 100).  Rows: BudgetedPassiveAggressive
    in its three maintenance modes (BPA-S, BPA-NN, BPA-P),
    BoundedOGDClassifier (BOGD, BOGD++), KernelOGDClassifier at the budget
    (NORMA's oldest-first truncation), FourierOGDClassifier (FOGD),
    NystromOGDClassifier (NOGD), BudgetedSGDClassifier (removal, merging),
    Forgetron, ``Nystroem + SGDClassifier(hinge)`` and
    ``RBFSampler + SGDClassifier(hinge)``.  Equal memory: a budgeted learner
    stores B vectors per class; the approximations get B landmarks
    (Nystroem) or B random directions (RBFSampler, FOGD's ``n_components``:
    a d x B projection matrix) per class, so B x 10 on mnist5k, where they
    are shared by the ten classes.  NOGD keeps B landmarks per class and its
    default rank ceil(0.2 B).  Parameters are fixed per data set, not
    searched: one RBF width for every row (a9a raw features gamma = 0.05,
    Banana standardized gamma = 5 i.e. Wang & Vucetic's delta^2 = 0.1,
    mnist5k pixels / 255 gamma = 0.04, as ``bench_bsgd.py``), each new
    estimator at its defaults, BSGD and the SGD pipelines with one
    ``alpha`` (a9a 1e-4, Banana 1e-3, mnist5k 1e-4).  Estimators that the
    installed skbudget does not export are skipped with a message.

``kol`` (``--kol``; needs ``SKBUDGET_KOL``, the path of a KOL binary built
from its public source: see ``doc/benchmarks.md``)
    KOL's BPA-S, "BOGD", FOGD and NOGD against ours on a9a at KOL's
    defaults (gamma = 0.01, B = 100, eta = 0.5, lambda = 1e-3, C = 1,
    D = 400, k = 20), in file order (KOL does not shuffle), in interleaved
    rounds (KOL, ours, KOL, ours, ...).  KOL reports its own test accuracy
    and its "Learning time" (wall clock around its training loop, which
    also waits for the reader thread that parses the file); ours is the
    ``fit`` time on the CSR matrix that ``load_svmlight_file`` returns, and
    the load time is reported apart.  CPU times beside them: KOL's
    training-only process (no ``-t``) less that of its floor
    (``kernel-bogd -B 1``: reading the file, one kernel value a round),
    from ``getrusage`` of the children, against our fit's
    ``process_time``; on a loaded machine the CPU ratio is the steadier.  Ours run the same algorithm at the
    equivalent settings: KOL's "BOGD" is NORMA with the oldest vector
    removed, so ``KernelOGDClassifier(budget=100, eta0=0.5, alpha=1e-3)``
    (and the published BOGD, ``BoundedOGDClassifier``, beside it); KOL's
    FOGD omits the 1/sqrt(D) of the features, so its eta = 0.5 is our
    ``eta0 = 0.5 * D`` (and our default ``eta0 = 0.5`` beside it: KOL
    scores the test set with the average of its iterates, we with the last
    one); KOL's NOGD uses k = 20 and eta1 = 0.5.  FOGD also on a9a loaded
    as float32 (``load_svmlight_file(..., dtype=np.float32)``; its
    features then computed in float32, as KOL computes everything in
    ``float``; the test set float32 too).

``bpa_nn``
    The BSGD paper's (Wang, Crammer & Vucetic, JMLR 2012) BPA-NN figure on
    Adult: 83.38 % at B = 100 and 83.58 % at B = 500 after one pass.  On
    a9a (32 561 / 16 281, raw binary features), 5 random orders, one pass,
    C = 1 and gamma = 0.05 (the a9a width used everywhere here) as the
    stated setting; gamma = 0.02 (Wang & Vucetic's Adult width,
    delta^2 = 25) and C = 0.1 as sensitivity rows.

``cost``
    Per-round cost on a9a (CSR, one pass, file order, gamma = 0.05) at
    B = 100 and 500: BPA-S, BOGD, BOGD++, kernel OGD (budget B), BPA-NN and
    BPA-P against the Forgetron at the same B, in interleaved rounds; the
    median time of each and the median of the per-round ratios to the
    Forgetron (wall clock and CPU time, ``process_time``: on a loaded
    machine the CPU ratio is the steadier).  The issue's targets: BPA-S,
    BOGD and kernel OGD within 1.5x the Forgetron, BPA-NN within 3x; BPA-P
    is O(B^2) a round.

Usage::

    python benchmarks/bench_families.py --quick          # smoke run (~ 2 min)
    python benchmarks/bench_families.py                  # families, bpa_nn, cost
    SKBUDGET_KOL=/path/to/KOL python benchmarks/bench_families.py --kol --parts kol
    python benchmarks/bench_families.py --parts cost --rounds 7

Prints the tables and writes ``benchmarks/results/families[_quick].json``
(a run of some parts keeps the other parts already in the file).
"""

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import time
import warnings

from _common import DATA, RESULTS, use_one_blas_thread, write_json  # noqa: E402  (before NumPy)

use_one_blas_thread()

import numpy as np  # noqa: E402
from sklearn.datasets import load_svmlight_file  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.kernel_approximation import Nystroem, RBFSampler  # noqa: E402
from sklearn.linear_model import SGDClassifier  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.pipeline import Pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

import skbudget  # noqa: E402

A9A_TRAIN = DATA / "a9a" / "a9a.train"
A9A_TEST = DATA / "a9a" / "a9a.test"

# one RBF width and one SVM alpha per data set (module docstring)
SETTINGS = {
    "a9a": {"gamma": 0.05, "alpha": 1e-4},
    "mnist5k": {"gamma": 0.04, "alpha": 1e-4},
    "banana": {"gamma": 5.0, "alpha": 1e-3},
}
# (data set, budget per class) in the order of the tables
CASES = [("a9a", 100), ("a9a", 500), ("mnist5k", 100), ("banana", 100)]
QUICK_CASES = [("a9a", 100), ("mnist5k", 100), ("banana", 100)]

PAPER_BPA_NN = {100: 83.38, 500: 83.58}   # BSGD paper, Adult, one pass


# ----------------------------------------------------------------- data
def _require(path):
    if not path.exists():
        raise SystemExit(f"missing data file {path}: see ../shared/data/README.md")
    return path


def load_a9a(quick=False):
    """a9a as ``load_svmlight_file`` gives it (CSR, raw 0/1 features), in
    file order; ``quick``: the first 6 000 / 3 000 rows."""
    X, y = load_svmlight_file(str(_require(A9A_TRAIN)), n_features=123)
    Xt, yt = load_svmlight_file(str(_require(A9A_TEST)), n_features=123)
    if quick:
        X, y, Xt, yt = X[:6000], y[:6000], Xt[:3000], yt[:3000]
    return X, y, Xt, yt


def load(name, quick=False):
    """(X_train, y_train, X_test, y_test): a9a's own split; mnist5k 4 000 /
    1 000 (stratified, pixels / 255, as ``bench_bsgd_multiclass.py``);
    Banana 4 300 / 1 000 standardized on the training part (one fixed
    split: the orders are what varies)."""
    if name == "a9a":
        return load_a9a(quick)
    if name == "mnist5k":
        data = np.loadtxt(_require(DATA / "mnist5k" / "mnist_5k.csv.gz"), delimiter=",")
        X, y = data[:, :-1] / 255.0, data[:, -1].astype(int)
        X, Xt, y, yt = train_test_split(X, y, stratify=y, random_state=0,
                                        train_size=2000 if quick else 4000,
                                        test_size=500 if quick else 1000)
        return X, y, Xt, yt
    if name == "banana":
        X, y = load_svmlight_file(str(_require(DATA / "banana" / "banana.svmlight")),
                                  n_features=2)
        X, Xt, y, yt = train_test_split(X.toarray(), y, train_size=4300, test_size=1000,
                                        random_state=0)
        scaler = StandardScaler().fit(X)
        return scaler.transform(X), y, scaler.transform(Xt), yt
    raise ValueError(name)


# ----------------------------------------------------------- estimators
def _cls(name):
    return getattr(skbudget, name, None)


def _ours(name, **params):
    """A factory for skbudget's ``name`` (None when it is not exported);
    parameters the class does not take are an error, not silently dropped."""
    cls = _cls(name)
    if cls is None:
        return None

    def make(budget, n_classes, rep, setting, order=True):
        kw = dict(params)
        accepted = cls().get_params()
        kw.setdefault("gamma", setting["gamma"])
        if "budget" in accepted and "budget" not in params:
            kw["budget"] = budget
        if "n_components" in accepted and name == "FourierOGDClassifier":
            kw.setdefault("n_components", budget * (n_classes if n_classes > 2 else 1))
        if name == "BudgetedSGDClassifier":
            kw.setdefault("alpha", setting["alpha"])
            if n_classes > 2:
                kw["multi_class"] = "ovr"      # B per class, as every other row
        kw.update(random_state=rep, max_iter=1, shuffle=order)
        return cls(**{k: v for k, v in kw.items() if k in accepted or k in params})
    return make


def _pipeline(transformer):
    def make(budget, n_classes, rep, setting, order=True):
        n = budget * (n_classes if n_classes > 2 else 1)
        first = transformer(gamma=setting["gamma"], n_components=n, random_state=rep)
        return Pipeline([("features", first),
                         ("linear", SGDClassifier(loss="hinge", alpha=setting["alpha"],
                                                  max_iter=1, tol=None, shuffle=order,
                                                  random_state=rep))])
    return make


ROWS = [
    ("BPA-S", "BudgetedPassiveAggressive", {"maintenance": "simple"}),
    ("BPA-NN", "BudgetedPassiveAggressive", {"maintenance": "nearest"}),
    ("BPA-P", "BudgetedPassiveAggressive", {"maintenance": "projection"}),
    ("BOGD", "BoundedOGDClassifier", {"sampling": "uniform"}),
    ("BOGD++", "BoundedOGDClassifier", {"sampling": "coefficient"}),
    ("kernel OGD / NORMA (budget B)", "KernelOGDClassifier", {}),
    ("FOGD (D = B)", "FourierOGDClassifier", {}),
    ("NOGD", "NystromOGDClassifier", {}),
    ("BSGD removal", "BudgetedSGDClassifier", {"maintenance": "removal"}),
    ("BSGD merging", "BudgetedSGDClassifier", {"maintenance": "merging"}),
    ("Forgetron", "Forgetron", {}),
    ("Nystroem(B) + SGDClassifier(hinge)", None, Nystroem),
    ("RBFSampler(B) + SGDClassifier(hinge)", None, RBFSampler),
]


def factories():
    """(row, factory) for every row the installed skbudget can build; the
    missing classes are named once."""
    out, missing = [], set()
    for row, name, params in ROWS:
        if name is None:
            out.append((row, _pipeline(params)))
            continue
        make = _ours(name, **params)
        if make is None:
            missing.add(name)
            continue
        out.append((row, make))
    if missing:
        print(f"not exported by this skbudget (rows skipped): {', '.join(sorted(missing))}",
              flush=True)
    return out


def _summary(values):
    return {"mean": float(np.mean(values)),
            "std": float(np.std(values, ddof=1)) if len(values) > 1 else 0.0,
            "runs": [float(v) for v in values]}


# --------------------------------------------------------------- families
def run_families(orders, quick):
    out = {}
    rows = factories()
    for name, budget in (QUICK_CASES if quick else CASES):
        X, y, Xt, yt = load(name, quick)
        n_classes = len(np.unique(y))
        setting = SETTINGS[name]
        acc = {row: [] for row, _ in rows}
        secs = {row: [] for row, _ in rows}
        cpu = {row: [] for row, _ in rows}
        n_sv = {row: [] for row, _ in rows}
        for rep in range(orders):
            for row, make in rows:
                est = make(budget, n_classes, rep, setting)
                start, start_cpu = time.perf_counter(), time.process_time()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ConvergenceWarning)
                    est.fit(X, y)
                secs[row].append(time.perf_counter() - start)
                cpu[row].append(time.process_time() - start_cpu)
                acc[row].append(100.0 * est.score(Xt, yt))
                n_sv[row].append(_stored(est))
            print(f"  {name} B={budget}: order {rep + 1}/{orders} done", file=sys.stderr,
                  flush=True)
        key = f"{name} B={budget}"
        out[key] = {"n_train": int(X.shape[0]), "n_test": int(Xt.shape[0]),
                    "n_classes": int(n_classes), "budget_per_class": budget,
                    "setting": setting, "orders": orders,
                    "rows": {row: {"accuracy": _summary(acc[row]),
                                   "fit_seconds_median": float(np.median(secs[row])),
                                   "fit_seconds": [float(s) for s in secs[row]],
                                   "fit_cpu_seconds_median": float(np.median(cpu[row])),
                                   "stored": n_sv[row][0]}
                             for row, _ in rows}}
        print_families(key, out[key])
    return out


def _stored(est):
    """What the fitted model stores: support vectors (all classes), or the
    pipeline's / FOGD's feature count."""
    if isinstance(est, Pipeline):
        return f"{est[0].n_components} components"
    if hasattr(est, "n_support_"):
        return f"{int(np.sum(est.n_support_))} vectors"
    if hasattr(est, "coef_"):
        return f"{np.shape(est.coef_)[-1]} features"
    return "-"


def print_families(key, res):
    print(f"\n== {key} (n_train = {res['n_train']}, {res['orders']} orders, one pass; "
          f"gamma = {res['setting']['gamma']:g}) ==")
    print(f"{'estimator':<40}{'accuracy %':>16}{'fit s (median)':>16}{'cpu s':>8}  stored")
    for row, r in res["rows"].items():
        a = r["accuracy"]
        print(f"{row:<40}{a['mean']:9.2f} +- {a['std']:4.2f}{r['fit_seconds_median']:16.3f}"
              f"{r['fit_cpu_seconds_median']:8.3f}  {r['stored']}")


# ---------------------------------------------------------------- KOL
KOL_ALGOS = [
    # (KOL -opt, our row, factory of ours at KOL's defaults)
    ("kernel-bpas", "BPA-S", lambda rep: _new("BudgetedPassiveAggressive", budget=100, C=1.0,
                                              maintenance="simple", gamma=0.01)),
    ("kernel-bogd", "kernel OGD / NORMA (KOL's 'BOGD')",
     lambda rep: _new("KernelOGDClassifier", budget=100, eta0=0.5, alpha=1e-3, gamma=0.01)),
    ("kernel-bogd", "BOGD (published, beside it)",
     lambda rep: _new("BoundedOGDClassifier", budget=100, eta0=0.5, alpha=1e-3, gamma=0.01,
                      random_state=rep)),
    ("kernel-fogd", "FOGD (eta0 = 0.5 D)",
     lambda rep: _new("FourierOGDClassifier", n_components=400, eta0=0.5 * 400, gamma=0.01,
                      random_state=rep)),
    ("kernel-fogd", "FOGD (eta0 = 0.5 D), float32 input",
     lambda rep: _new("FourierOGDClassifier", n_components=400, eta0=0.5 * 400, gamma=0.01,
                      random_state=rep)),
    ("kernel-fogd", "FOGD (our default eta0 = 0.5)",
     lambda rep: _new("FourierOGDClassifier", n_components=400, eta0=0.5, gamma=0.01,
                      random_state=rep)),
    ("kernel-nogd", "NOGD (k = 20)",
     lambda rep: _new("NystromOGDClassifier", budget=100, n_components=20, eta0=0.5,
                      gamma=0.01)),
]


# rows fitted on a9a loaded as float32 (load_svmlight_file(..., dtype=np.float32)):
# FOGD then computes its features in float32, as KOL computes everything
KOL_FLOAT32_ROWS = {"FOGD (eta0 = 0.5 D), float32 input"}


def _new(name, **params):
    cls = _cls(name)
    if cls is None:
        return None
    return cls(max_iter=1, shuffle=False, **params)


_KOL_FIELDS = {"test_accuracy": r"Test acuracy:\s*([0-9.]+)",
               "learn_accuracy": r"Learn acuracy:\s*([0-9.]+)",
               "learning_seconds": r"Learning time:\s*([0-9.]+)",
               "n_sv": r"#SV:\s*([0-9]+)"}


def _children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_kol_once(binary, opt, extra=(), test=True):
    """One KOL run: its printed figures, the process's wall time and its
    CPU time (user + system, all its threads, from the OS's accounting).
    ``test=False``: training only, for the CPU time of the training."""
    start, cpu = time.perf_counter(), _children_cpu()
    args = [binary, "-i", str(A9A_TRAIN), *(["-t", str(A9A_TEST)] if test else []), "-opt", opt]
    proc = subprocess.run([*args, *extra], capture_output=True, text=True, timeout=3600)
    wall = time.perf_counter() - start
    cpu = _children_cpu() - cpu
    if proc.returncode != 0:
        raise RuntimeError(f"KOL -opt {opt} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    found = {}
    for field, pattern in _KOL_FIELDS.items():
        m = re.search(pattern, proc.stdout)
        found[field] = float(m.group(1)) if m else float("nan")
    found["process_seconds"] = wall
    found["process_cpu_seconds"] = cpu
    return found


def run_kol(rounds):
    binary = os.environ.get("SKBUDGET_KOL")
    if not binary:
        print("\nKOL section skipped: set SKBUDGET_KOL to the path of a KOL binary "
              "(doc/benchmarks.md says how to build it).", flush=True)
        return None
    if not os.path.exists(binary):
        print(f"\nKOL section skipped: SKBUDGET_KOL={binary} does not exist.", flush=True)
        return None
    algos = [(opt, row, make) for opt, row, make in KOL_ALGOS if make(0) is not None]
    skipped = [row for opt, row, make in KOL_ALGOS if make(0) is None]
    if skipped:
        print(f"KOL: ours not exported yet, compared without them: {', '.join(skipped)}")
    kol_opts = sorted({opt for opt, _, _ in KOL_ALGOS}, key=[a[0] for a in KOL_ALGOS].index)
    kol = {opt: [] for opt in kol_opts}
    ours = {row: {"accuracy": [], "fit_seconds": [], "fit_cpu_seconds": []}
            for _, row, _ in algos}
    load_secs, floor = [], []
    for r in range(rounds):
        start = time.perf_counter()
        X, y = load_svmlight_file(str(A9A_TRAIN), n_features=123)
        load_secs.append(time.perf_counter() - start)
        Xt, yt = load_svmlight_file(str(A9A_TEST), n_features=123)
        X32, Xt32 = (load_svmlight_file(str(path), n_features=123, dtype=np.float32)[0]
                     for path in (A9A_TRAIN, A9A_TEST))
        # KOL's reader and loop with one kernel value a round: its floor
        floor.append(run_kol_once(binary, "kernel-bogd", ("-B", "1"), test=False))
        for opt in kol_opts:
            kol[opt].append(run_kol_once(binary, opt))                # A
            kol[opt][-1]["train_cpu_seconds"] = run_kol_once(
                binary, opt, test=False)["process_cpu_seconds"]
            for o, row, make in algos:                                # B
                if o != opt:
                    continue
                est = make(r)
                X_fit, X_test = (X32, Xt32) if row in KOL_FLOAT32_ROWS else (X, Xt)
                start, cpu = time.perf_counter(), time.process_time()
                est.fit(X_fit, y)
                ours[row]["fit_seconds"].append(time.perf_counter() - start)
                ours[row]["fit_cpu_seconds"].append(time.process_time() - cpu)
                ours[row]["accuracy"].append(100.0 * est.score(X_test, yt))
        print(f"  KOL round {r + 1}/{rounds} done", file=sys.stderr, flush=True)
    out = {"binary": binary, "rounds": rounds, "train_load_seconds": load_secs, "kol": {},
           "ours": {}, "load": os.getloadavg(),
           "kol_floor_B1_learning_seconds": [run["learning_seconds"] for run in floor],
           "kol_floor_B1_cpu_seconds": [run["process_cpu_seconds"] for run in floor]}
    for opt, runs in kol.items():
        out["kol"][opt] = {field: [run[field] for run in runs]
                           for field in (*_KOL_FIELDS, "process_seconds",
                                         "process_cpu_seconds", "train_cpu_seconds")}
    for opt, row, _ in algos:
        k_times = out["kol"][opt]["learning_seconds"]
        o_times = ours[row]["fit_seconds"]
        load_med = float(np.median(load_secs))      # a9a.train only
        out["ours"][row] = {
            "kol_opt": opt, "accuracy": _summary(ours[row]["accuracy"]),
            "fit_seconds": o_times, "fit_seconds_median": float(np.median(o_times)),
            "ratio_kol_over_ours": float(np.median(np.divide(k_times, o_times))),
            "ratio_kol_over_ours_plus_load": float(np.median(k_times) /
                                                   (np.median(o_times) + load_med)),
            # KOL's time less its floor (reading the file, one kernel value a round)
            "ratio_kol_minus_floor_over_ours": float(
                (np.median(k_times) - np.median(out["kol_floor_B1_learning_seconds"]))
                / np.median(o_times)),
            # CPU: KOL's training-only process less its floor's, against our fit's
            "fit_cpu_seconds": ours[row]["fit_cpu_seconds"],
            "ratio_cpu": float(
                (np.median(out["kol"][opt]["train_cpu_seconds"])
                 - np.median(out["kol_floor_B1_cpu_seconds"]))
                / np.median(ours[row]["fit_cpu_seconds"])),
        }
    print_kol(out)
    return out


def print_kol(out):
    print(f"\n== KOL vs skbudget on a9a at KOL's defaults (file order; {out['rounds']} "
          f"interleaved rounds; load average {out['load'][0]:.1f}) ==")
    print(f"{'KOL -opt / ours':<40}{'test %':>16}{'train s':>9}{'KOL/ours':>10}"
          f"{'(KOL-floor)/ours':>18}{'KOL/(ours+load)':>17}{'cpu s':>8}{'cpu ratio':>11}")
    for opt, k in out["kol"].items():
        acc = k["test_accuracy"]
        std = np.std(acc, ddof=1) if len(acc) > 1 else 0.0
        print(f"KOL {opt:<36}{np.mean(acc):9.2f} +- {std:4.2f}"
              f"{np.median(k['learning_seconds']):9.3f}{'':>45}"
              f"{np.median(k['train_cpu_seconds']) - np.median(out['kol_floor_B1_cpu_seconds']):8.3f}")
        for row, r in out["ours"].items():
            if r["kol_opt"] != opt:
                continue
            print(f"  ours: {row:<32}{r['accuracy']['mean']:9.2f} +- {r['accuracy']['std']:4.2f}"
                  f"{r['fit_seconds_median']:9.3f}{r['ratio_kol_over_ours']:9.1f}x"
                  f"{r['ratio_kol_minus_floor_over_ours']:17.1f}x"
                  f"{r['ratio_kol_over_ours_plus_load']:16.1f}x"
                  f"{np.median(r['fit_cpu_seconds']):8.3f}{r['ratio_cpu']:10.1f}x")
    print("(cpu s: KOL's training-only process less its floor's, user + system time of all "
          "its threads; ours: process_time of the fit)")
    print(f"(KOL's train s: its own 'Learning time', which includes reading the file; "
          f"KOL kernel-bogd -B 1, its floor: median "
          f"{np.median(out['kol_floor_B1_learning_seconds']):.3f} s.  Ours: fit only; "
          f"load_svmlight_file of a9a.train: median {np.median(out['train_load_seconds']):.3f} s)")


# ------------------------------------------------------------- BPA-NN
def run_bpa_nn(orders, quick):
    if _cls("BudgetedPassiveAggressive") is None:
        print("\nBPA-NN section skipped: BudgetedPassiveAggressive is not exported yet.")
        return None
    X, y, Xt, yt = load_a9a(quick)
    settings = [("stated: gamma = 0.05, C = 1", 0.05, 1.0),
                ("gamma = 0.02 (delta^2 = 25), C = 1", 0.02, 1.0),
                ("gamma = 0.05, C = 0.1", 0.05, 0.1)]
    out = {"n_train": int(X.shape[0]), "orders": orders, "paper": PAPER_BPA_NN, "rows": {}}
    for label, gamma, C in settings:
        for budget in (100, 500):
            acc = []
            for rep in range(orders):
                est = skbudget.BudgetedPassiveAggressive(
                    budget=budget, C=C, maintenance="nearest", gamma=gamma, max_iter=1,
                    shuffle=True, random_state=rep).fit(X, y)
                acc.append(100.0 * est.score(Xt, yt))
            out["rows"][f"{label}, B = {budget}"] = {
                "gamma": gamma, "C": C, "budget": budget, "accuracy": _summary(acc),
                "paper": PAPER_BPA_NN[budget],
                "within_1_point": bool(abs(np.mean(acc) - PAPER_BPA_NN[budget]) <= 1.0)}
    print(f"\n== BPA-NN on a9a, one pass ({orders} orders; n_train = {out['n_train']}) "
          f"against the BSGD paper's Adult figures ==")
    for label, r in out["rows"].items():
        a = r["accuracy"]
        print(f"{label:<48}{a['mean']:7.2f} +- {a['std']:4.2f}   paper {r['paper']:.2f}   "
              f"{'within 1 point' if r['within_1_point'] else 'NOT within 1 point'}")
    return out


# --------------------------------------------------------------- cost
COST_ROWS = [
    ("Forgetron", "Forgetron", {}),
    ("BPA-S", "BudgetedPassiveAggressive", {"maintenance": "simple"}),
    ("BOGD", "BoundedOGDClassifier", {"sampling": "uniform"}),
    ("BOGD++", "BoundedOGDClassifier", {"sampling": "coefficient"}),
    ("kernel OGD (budget B)", "KernelOGDClassifier", {}),
    ("BPA-NN", "BudgetedPassiveAggressive", {"maintenance": "nearest"}),
    ("BPA-P", "BudgetedPassiveAggressive", {"maintenance": "projection"}),
]
COST_TARGET = {"BPA-S": 1.5, "BOGD": 1.5, "kernel OGD (budget B)": 1.5, "BPA-NN": 3.0}


def run_cost(rounds, quick):
    X, y, _, _ = load_a9a(quick)
    rows = [(row, name, params) for row, name, params in COST_ROWS if _cls(name) is not None]
    missing = [row for row, name, _ in COST_ROWS if _cls(name) is None]
    if missing:
        print(f"\ncost: not exported yet, skipped: {', '.join(missing)}")
    out = {"n_train": int(X.shape[0]), "rounds": rounds, "gamma": 0.05, "budgets": {}}
    for budget in (100, 500):
        ests = [(row, _cls(name)(budget=budget, gamma=0.05, max_iter=1, shuffle=False,
                                 random_state=0, **params)) for row, name, params in rows]
        times = {row: [] for row, _ in ests}
        cpu = {row: [] for row, _ in ests}
        updates = {}
        for _ in range(rounds):
            for row, est in ests:
                start, start_cpu = time.perf_counter(), time.process_time()
                est.fit(X, y)
                times[row].append(time.perf_counter() - start)
                cpu[row].append(time.process_time() - start_cpu)
                updates[row] = int(getattr(est, "n_updates_", -1))
        base, base_cpu = times["Forgetron"], cpu["Forgetron"]
        res = {}
        for row, _ in ests:
            ratio = float(np.median(np.divide(times[row], base)))
            res[row] = {"seconds": [float(t) for t in times[row]],
                        "seconds_median": float(np.median(times[row])),
                        "us_per_round": 1e6 * float(np.median(times[row])) / X.shape[0],
                        "ratio_to_forgetron": ratio, "n_updates": updates[row],
                        "cpu_seconds": [float(t) for t in cpu[row]],
                        "cpu_us_per_round": 1e6 * float(np.median(cpu[row])) / X.shape[0],
                        "cpu_ratio_to_forgetron": float(np.median(np.divide(cpu[row],
                                                                            base_cpu))),
                        "target": COST_TARGET.get(row)}
        out["budgets"][str(budget)] = res
    out["load"] = os.getloadavg()
    print(f"\n== Per-round cost on a9a (n = {out['n_train']}, one pass, file order, "
          f"{rounds} interleaved rounds, medians; load average {out['load'][0]:.1f}) ==")
    print(f"{'estimator':<24}" + "".join(f"{'B=' + b + ' s':>10}{'us/round':>10}{'x Forg.':>9}"
                                         f"{'cpu us':>9}{'x Forg.':>9}"
                                         for b in out["budgets"]) + "  target")
    for row, _, _ in rows:
        line = f"{row:<24}"
        for b, res in out["budgets"].items():
            r = res[row]
            line += (f"{r['seconds_median']:10.3f}{r['us_per_round']:10.1f}"
                     f"{r['ratio_to_forgetron']:9.2f}{r['cpu_us_per_round']:9.1f}"
                     f"{r['cpu_ratio_to_forgetron']:9.2f}")
        target = COST_TARGET.get(row)
        line += f"  <= {target}x" if target else ""
        print(line)
    if "BPA-P" in out["budgets"]["100"]:
        growth = (out["budgets"]["500"]["BPA-P"]["seconds_median"]
                  / out["budgets"]["100"]["BPA-P"]["seconds_median"])
        out["bpa_p_growth_500_over_100"] = growth
        print(f"BPA-P: B = 500 / B = 100 time {growth:.1f}x (O(B^2) maintenance: up to 25x)")
    return out


# ---------------------------------------------------------------- main
def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: a9a cut to 6 000 / 3 000, 2 orders and rounds")
    parser.add_argument("--kol", action="store_true",
                        help="add the KOL comparison (needs SKBUDGET_KOL)")
    parser.add_argument("--parts", nargs="+", choices=("families", "kol", "bpa_nn", "cost"),
                        default=None)
    parser.add_argument("--orders", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    parts = args.parts or ["families", "bpa_nn", "cost"] + (["kol"] if args.kol else [])
    orders = 2 if args.quick else args.orders
    rounds = 2 if args.quick else args.rounds
    path = RESULTS / ("families_quick.json" if args.quick else "families.json")
    results = {}
    if path.exists():
        try:
            results = json.loads(path.read_text())
        except json.JSONDecodeError:
            print(f"{path} is not valid JSON: starting it afresh")
    results.update({"quick": args.quick, "load_at_start": os.getloadavg(),
                    "skbudget_exports": sorted(n for n in skbudget.__all__)})
    print(f"load average at start: {os.getloadavg()[0]:.1f}", flush=True)
    if "families" in parts:
        results["families"] = run_families(orders, args.quick)
    if "kol" in parts:
        kol = run_kol(rounds)
        if kol is not None:
            results["kol"] = kol
    if "bpa_nn" in parts:
        res = run_bpa_nn(orders, args.quick)
        if res is not None:
            results["bpa_nn"] = res
    if "cost" in parts:
        results["cost"] = run_cost(rounds, args.quick)
    results["load_at_end"] = os.getloadavg()
    json.dumps(results)             # fails here, not half-way through the file
    write_json(path, results)


if __name__ == "__main__":
    main()
