"""Long streams: model size and the cost of a one-row ``partial_fit``.

Target (issue "A streaming engine you can trust", item 3): the pickle of a
budgeted model and the time of a one-row ``partial_fit`` do not depend on
how many examples the model has seen, from 10 000 to 2 000 000.  Each
budgeted estimator (``budget=50``; the Projectron with ``eta=0.7``) streams
an XOR-like problem (2 features, RBF, gamma=1) in calls of 10 000 rows; at
each checkpoint it reports the pickle size and the one-row call time
(minimum and median of 200 calls).  The yardstick is
``SGDClassifier.partial_fit`` on one row of the same data.  Writes
``benchmarks/results/stream[_quick].json``.

    python benchmarks/bench_stream.py            # up to 2 000 000 rows
    python benchmarks/bench_stream.py --quick    # up to 200 000 rows
    python benchmarks/bench_stream.py --only AdaptiveMultiHyperplaneClassifier

Each checkpoint also reports the process's resident memory (``/proc``):
flat from 100 000 rows on when nothing grows with the stream.

``--threads`` (issue "Hardening round", item 2) times instead multi-class
streaming with ``n_jobs=2`` against ``n_jobs=None``: 10-class mnist5k
(d = 784) and a 4-class problem at d = 54, B = 100, a model trained on the
first 1 000 rows streaming the next ones in ``partial_fit`` calls of 1,
10, 100 and 1 000 rows, and ``fit`` on all the rows (target: ``n_jobs=2``
never more than 10 % slower, and >= 1.6x on the 10-class mnist5k ``fit``).
The two settings alternate in every round (the machine is shared); the
minimum and median of the rounds are reported, their ratios, the median of
the rounds' own ratios (``paired``: each pair ran back to back, so load
drifting over the run cancels) and the segments per round that ran in
threads (``threaded``; the others ran in the calling thread).  Before and
after, a probe times two busy child processes against one: the cores the
machine had free (2.0 on an idle 2-core machine; threads cannot gain
where it says 1).  Then the latency of a
Ctrl-C (SIGINT to the main thread, 0.1 s into a 32 768-row call: one
compiled segment) for every budgeted estimator at B = 500, with and
without threads (target: <= 0.2 s).  Writes
``benchmarks/results/stream_threads.json``.

    python benchmarks/bench_stream.py --threads [--rounds 5]
"""

import argparse
import copy
import os
import inspect
import pickle
import signal
import subprocess
import sys
import threading
import time

from _common import DATA, RESULTS, ROOT, use_one_blas_thread, write_json  # noqa: E402

use_one_blas_thread()

import numpy as np  # noqa: E402
from sklearn.datasets import make_classification  # noqa: E402
from sklearn.linear_model import SGDClassifier  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

import skbudget._stream  # noqa: E402
import skbudget._threads  # noqa: E402
from skbudget import (  # noqa: E402
    AdaptiveMultiHyperplaneClassifier,
    BudgetedSGDClassifier,
    BudgetPerceptron,
    Forgetron,
    Projectron,
    RandomBudgetPerceptron,
    Stoptron,
    TighterPerceptron,
    TightestPerceptron,
)

ESTIMATORS = {
    "Stoptron": lambda: Stoptron(budget=50, gamma=1.0),
    "RandomBudgetPerceptron": lambda: RandomBudgetPerceptron(budget=50, gamma=1.0, random_state=0),
    "BudgetPerceptron": lambda: BudgetPerceptron(budget=50, gamma=1.0),
    "Forgetron": lambda: Forgetron(budget=50, gamma=1.0),
    "Projectron": lambda: Projectron(eta=0.7, gamma=1.0),
    "TighterPerceptron": lambda: TighterPerceptron(budget=50, gamma=1.0, random_state=0),
    "TightestPerceptron": lambda: TightestPerceptron(budget=50, gamma=1.0),
    # (no kernel: 50 weights per class on the raw rows, its defaults)
    "AdaptiveMultiHyperplaneClassifier": lambda: AdaptiveMultiHyperplaneClassifier(
        random_state=0),
}
CALL_ROWS = 10_000


def one_row_times(est, X, y, n_calls=200):
    """Seconds of ``n_calls`` one-row partial_fit calls."""
    times = []
    for i in range(n_calls):
        start = time.perf_counter()
        est.partial_fit(X[i:i + 1], y[i:i + 1], classes=[0, 1])
        times.append(time.perf_counter() - start)
    return np.array(times)


def resident_mb():
    """The process's resident memory now (MB, from /proc; None elsewhere)."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:
        return None


def stream(make, X, y, checkpoints):
    """Stream X in calls of CALL_ROWS rows; a row per checkpoint (with the
    process's resident memory: flat when nothing grows with the stream)."""
    est, seen, rows = make(), 0, []
    for stop in checkpoints:
        for start in range(seen, stop, CALL_ROWS):
            est.partial_fit(X[start:start + CALL_ROWS], y[start:start + CALL_ROWS], classes=[0, 1])
        seen = stop
        times = one_row_times(est, X, y)
        rows.append({"examples": stop, "pickle_bytes": len(pickle.dumps(est)),
                     "one_row_us_min": 1e6 * times.min(),
                     "one_row_us_median": 1e6 * float(np.median(times)),
                     # (AMM: its weight vectors, for all classes)
                     "n_support": int(getattr(est, "n_support_", getattr(
                         est, "n_weights_", None)).sum()),
                     "resident_mb": resident_mb()})
    return rows


THREAD_ESTIMATORS = {
    "Forgetron": lambda **kw: Forgetron(budget=100, **kw),
    "BudgetedSGDClassifier": lambda **kw: BudgetedSGDClassifier(budget=100, random_state=0,
                                                                multi_class="ovr", **kw),
    "TightestPerceptron": lambda **kw: TightestPerceptron(budget=100, **kw),
    "Projectron": lambda **kw: Projectron(eta=0.0, budget=100, **kw),
}
THREAD_CHUNKS = (1, 10, 100, 1000)


def thread_problems():
    """(name, X, y, gamma): 10-class mnist5k in a fixed random order
    (pixels / 255) and a 4-class problem at d = 54, 5 000 rows each."""
    # ../shared/data, or ../../shared/data from a git worktree in a subfolder
    data_dir = next((d for d in (DATA, ROOT.parents[1] / "shared" / "data") if d.exists()), DATA)
    files = sorted(p for p in (data_dir / "mnist5k").glob("*")
                   if p.is_file() and p.suffix != ".md")
    data = np.loadtxt(files[0], delimiter=",")
    data = data[np.random.RandomState(0).permutation(len(data))]
    X, y = make_classification(5000, n_features=54, n_informative=10, n_classes=4,
                               flip_y=0.1, random_state=0)
    return [("mnist5k, 10 classes, d=784", data[:, :784] / 255.0, data[:, 784].astype(int), 0.02),
            ("4 classes, d=54", StandardScaler().fit_transform(X), y, 0.02)]


def stream_seconds(model, X, y, chunk):
    """Seconds to stream ``X[1000:]`` into ``model`` in calls of ``chunk``
    rows (1-row calls: the first 300 rows; 10-row: 1 000)."""
    stop = len(y) if chunk >= 100 else 1000 + (300 if chunk == 1 else 1000)
    start = time.perf_counter()
    for i in range(1000, stop, chunk):
        model.partial_fit(X[i:i + chunk], y[i:i + chunk])
    return time.perf_counter() - start


def parallelism_probe():
    """How many cores this process could have had just now: the time of one
    busy child process over that of two at once, times two (2.0: two free
    cores; 1.0: one, the other busy elsewhere)."""
    code = "sum(range(20_000_000))"

    def wall(n):
        start = time.perf_counter()
        children = [subprocess.Popen([sys.executable, "-c", code]) for _ in range(n)]
        for child in children:
            child.wait()
        return time.perf_counter() - start
    return round(2 * min(wall(1) for _ in range(2)) / min(wall(2) for _ in range(2)), 2)


def thread_table(rounds):
    """n_jobs=2 against n_jobs=None, small chunks to ``fit``."""
    out = []
    print(f"n_jobs=2 / n_jobs=None, {rounds} alternating rounds (min and median seconds)")
    print(f"{'problem':28s}{'estimator':24s}{'calls':>7s}{'None min':>10s}{'2 min':>9s}"
          f"{'None med':>10s}{'2 med':>9s}{'ratio min':>10s}{'ratio med':>10s}{'paired':>8s}"
          f"{'threaded':>9s}")
    for problem, X, y, gamma in thread_problems():
        classes = np.unique(y)
        for name, make in THREAD_ESTIMATORS.items():
            started = {}
            for n_jobs in (None, 2):
                started[n_jobs] = make(gamma=gamma, n_jobs=n_jobs).partial_fit(
                    X[:1000], y[:1000], classes=classes)
            cases = [(chunk, lambda n_jobs, chunk=chunk: stream_seconds(
                copy.deepcopy(started[n_jobs]), X, y, chunk)) for chunk in THREAD_CHUNKS]

            def fit(n_jobs):
                model = make(gamma=gamma, n_jobs=n_jobs, max_iter=1, shuffle=False)
                start = time.perf_counter()
                model.fit(X, y)
                return time.perf_counter() - start
            cases.append(("fit", fit))
            for calls, timed in cases:
                times = {None: [], 2: []}
                runs = skbudget._threads.HELPERS.n_runs
                for r in range(rounds):
                    for n_jobs in ((None, 2) if r % 2 == 0 else (2, None)):
                        times[n_jobs].append(timed(n_jobs))
                one, two = np.array(times[None]), np.array(times[2])
                row = {"problem": problem, "estimator": name, "calls": calls,
                       "none_min": one.min(), "two_min": two.min(),
                       "none_median": float(np.median(one)), "two_median": float(np.median(two)),
                       "ratio_min": two.min() / one.min(),
                       "ratio_median": float(np.median(two) / np.median(one)),
                       "ratio_paired_median": float(np.median(two / one)),
                       "threaded_segments": (skbudget._threads.HELPERS.n_runs - runs) // rounds}
                out.append(row)
                print(f"{problem:28s}{name:24s}{calls!s:>7s}{row['none_min']:10.4f}"
                      f"{row['two_min']:9.4f}{row['none_median']:10.4f}{row['two_median']:9.4f}"
                      f"{row['ratio_min']:10.2f}{row['ratio_median']:10.2f}"
                      f"{row['ratio_paired_median']:8.2f}{row['threaded_segments']:9d}", flush=True)
    return out


def interrupt_latency(repeats=3):
    """Seconds from a SIGINT to the KeyboardInterrupt, 0.1 s into a call of
    32 768 rows (one compiled segment), every budgeted estimator at B = 500,
    3 classes, with ``n_jobs=None`` and ``n_jobs=2``; the model must be
    unchanged afterwards."""
    from skbudget.discovery import all_estimators
    rng = np.random.RandomState(0)
    X = rng.normal(size=(32768, 10))
    y = (X[:, 0] * X[:, 1] > 0).astype(int) + (X[:, 2] > 1)
    out = []
    print("\nCtrl-C latency, 0.1 s into a 32 768-row partial_fit, B=500, 3 classes "
          f"(max of {repeats})")
    for name, Est in all_estimators(budgeted=True):
        accepted = inspect.signature(Est.__init__).parameters
        rules = [{}]
        if "maintenance" in accepted:
            rules = [{"maintenance": m} for m in ("merging", "projection", "removal")]
        for rule in rules:
            for n_jobs in ((None, 2) if "n_jobs" in accepted else (None,)):
                params = dict(budget=500, gamma=0.1, **rule)
                if n_jobs is not None:
                    params["n_jobs"] = n_jobs
                    if "multi_class" in accepted:       # one learner per class
                        params["multi_class"] = "ovr"
                if "random_state" in accepted:
                    params["random_state"] = 0
                latencies, unchanged, completed = [], True, 0
                for _ in range(repeats):
                    est = Est(**params).partial_fit(X[:1500], y[:1500], classes=[0, 1, 2])
                    before = pickle.dumps(est)
                    sent = []

                    def fire():
                        sent.append(time.perf_counter())
                        signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)
                    timer = threading.Timer(0.1, fire)
                    timer.start()
                    finished = False
                    try:
                        est.partial_fit(X, y)
                        finished = True         # before the signal: it lands below
                        timer.join()
                        time.sleep(0.05)
                    except KeyboardInterrupt:
                        if not finished:
                            latencies.append(time.perf_counter() - sent[0])
                            unchanged &= pickle.dumps(est) == before
                    completed += finished
                label = name + ("(" + rule["maintenance"] + ")" if rule else "")
                row = {"estimator": label, "n_jobs": n_jobs,
                       "max_latency_s": max(latencies) if latencies else None,
                       "completed_before_signal": completed, "unchanged": unchanged}
                out.append(row)
                shown = f"{row['max_latency_s']:.3f} s" if latencies else "(call < 0.1 s)"
                print(f"{label:36s} n_jobs={n_jobs!s:5s} {shown:>14s}  "
                      f"{'unchanged' if unchanged else 'MODEL CHANGED'}", flush=True)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="streams of 200 000 rows")
    parser.add_argument("--threads", action="store_true",
                        help="n_jobs=2 against n_jobs=None, and Ctrl-C latency")
    parser.add_argument("--rounds", type=int, default=5, help="--threads: alternating rounds")
    parser.add_argument("--only", choices=sorted(ESTIMATORS),
                        help="stream this estimator alone (results to stream_<name>.json)")
    args = parser.parse_args()
    if args.threads:
        probe = parallelism_probe()
        print(f"cores free for two busy processes: {probe} (load average "
              f"{os.getloadavg()[0]:.1f})")
        results = {"rounds": args.rounds, "load_average": list(os.getloadavg()),
                   "cores_free_before": probe,
                   "threads": thread_table(args.rounds),
                   "thread_min_work_ns": skbudget._stream.THREAD_MIN_WORK_NS,
                   "interrupts": interrupt_latency()}
        results["load_average_after"] = list(os.getloadavg())
        results["cores_free_after"] = parallelism_probe()
        print(f"cores free for two busy processes: {results['cores_free_after']}")
        write_json(RESULTS / "stream_threads.json", results)
        return
    n = 200_000 if args.quick else 2_000_000
    checkpoints = [10_000, 100_000, n] if not args.quick else [10_000, n]
    rng = np.random.RandomState(0)
    X = rng.normal(size=(n, 2))
    y = (X[:, 0] * X[:, 1] > 0).astype(int)

    sgd = SGDClassifier(random_state=0).partial_fit(X[:CALL_ROWS], y[:CALL_ROWS], classes=[0, 1])
    sgd_times = one_row_times(sgd, X, y)
    print(f"SGDClassifier one-row partial_fit: min {1e6 * sgd_times.min():.0f} us, "
          f"median {1e6 * np.median(sgd_times):.0f} us")
    results = {"n": n, "call_rows": CALL_ROWS,
               "sgd_one_row_us_min": 1e6 * sgd_times.min(),
               "sgd_one_row_us_median": 1e6 * float(np.median(sgd_times)), "estimators": {}}
    print(f"{'estimator':<24}{'examples':>10}{'pickle B':>10}{'|S|':>6}{'1-row min us':>14}"
          f"{'median us':>11}{'RSS MB':>9}")
    for name, make in ESTIMATORS.items():
        if args.only and name != args.only:
            continue
        rows = stream(make, X, y, checkpoints)
        results["estimators"][name] = rows
        for r in rows:
            print(f"{name[:23]:<24}{r['examples']:>10}{r['pickle_bytes']:>10}{r['n_support']:>6}"
                  f"{r['one_row_us_min']:>14.0f}{r['one_row_us_median']:>11.0f}"
                  f"{r['resident_mb'] or float('nan'):>9.1f}")
    suffix = ("_quick" if args.quick else "") + (f"_{args.only}" if args.only else "")
    write_json(RESULTS / f"stream{suffix}.json", results)


if __name__ == "__main__":
    main()
