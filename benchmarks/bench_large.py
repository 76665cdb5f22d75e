"""A 10-million-row stream at flat memory: throughput, resident memory and
accuracy of each budgeted model against rows seen.

The stream is generated chunk by chunk and never held whole
(:class:`MixtureStream`): 10 classes in d = 50, each class a mixture of 3
Gaussian clusters whose centres lie on a sphere of radius 3 (unit
variance), with 5 % of the labels replaced by a uniformly random class.
The clusters of different classes overlap, so a linear model stops well
below a kernel model, and the label noise keeps every rule updating to the
end of the stream (the rules that only update on mistakes would otherwise
go quiet, which flatters their speed).  Chunk ``i`` is drawn from its own
generator, seeded from (seed, i): the stream is the same whatever else
runs, and any prefix of it can be regenerated.  The held-out set is
100 000 rows drawn from another seed.

Models (each in a process of its own, so that its peak resident memory is
its own), streamed by ``partial_fit`` over chunks of 10 000 rows:

* ``Forgetron(budget=200)``, one-vs-rest (2 000 vectors in all);
* ``BudgetedSGDClassifier(budget=200, maintenance='merging')``, its shared
  multi-class model (200 vectors in all);
* ``FourierOGDClassifier(n_components=400)``;
* ``NystromOGDClassifier(budget=200)``;
* ``AdaptiveMultiHyperplaneClassifier()`` (its defaults: 50 weights per
  class) and ``LowRankLinearizedSVC(budget=200)`` (each call a proximal
  step; its landmarks from the first call's rows);
* the baseline a user would pick instead: ``Nystroem(n_components=200)``
  fitted on the first chunk, then ``SGDClassifier(loss='hinge')
  .partial_fit`` on each chunk's features.

``gamma = 0.02`` for every kernel (about the inverse of the data's
variance times d); every other parameter is the estimator's default.  For
each model and input dtype (float64, float32) the script reports the rows
per second of the whole stream (generation excluded), the resident memory
(``/proc``) and its peak at 0.1, 0.3, 1, 3 and 10 million rows, the
model's size there (the bytes of its pickle: what "equal memory"
compares) and the held-out accuracy there (where it stops growing); the
target is a peak at 10 million rows of at most 1.1 times the peak at 1
million.

Usage::

    python benchmarks/bench_large.py                    # 10 million rows, every model
    python benchmarks/bench_large.py --rows 1000000     # a shorter stream (checkpoints scaled)
    python benchmarks/bench_large.py --only Forgetron --dtype float64
    python benchmarks/bench_large.py --jobs 2           # two models at a time
    python benchmarks/bench_large.py --table            # the doc page's table

Writes ``benchmarks/results/large[_<rows>].json`` (a run of some models
updates their entries, the others' kept) and, once the full run holds
every model in both dtypes, the figure ``doc/images/large_streams.png``.
With ``--jobs 2`` two models share the machine's cores: their rows per
second are those of a loaded machine.
"""

import argparse
import json
import os
import pickle
import resource
import subprocess
import sys
import time
import warnings
from concurrent.futures import ThreadPoolExecutor

from _common import RESULTS, ROOT, use_one_blas_thread, write_json  # noqa: E402

use_one_blas_thread()

import numpy as np  # noqa: E402

N_CLASSES, N_FEATURES, CLUSTERS_PER_CLASS, RADIUS = 10, 50, 3, 3.0
LABEL_NOISE = 0.05
CHUNK = 10_000
HELD_OUT = 100_000
GAMMA = 0.02
# where the held-out accuracy and the memory are read (the memory target
# compares the last with 1 million rows)
CHECKPOINTS = (100_000, 300_000, 1_000_000, 3_000_000, 10_000_000)
MEMORY_REFERENCE = 1_000_000


class MixtureStream:
    """The stream: ``chunk(i)`` is rows ``i * CHUNK`` to ``(i + 1) * CHUNK``,
    drawn from a generator of its own (seeded from ``seed`` and ``i``)."""

    def __init__(self, seed):
        centres = np.random.default_rng(12345).normal(
            size=(N_CLASSES * CLUSTERS_PER_CLASS, N_FEATURES))
        self.centres = RADIUS * centres / np.linalg.norm(centres, axis=1, keepdims=True)
        self.seed = seed

    def chunk(self, i, rows=CHUNK, dtype=np.float64):
        rng = np.random.default_rng([self.seed, i])
        cluster = rng.integers(len(self.centres), size=rows)
        X = self.centres[cluster] + rng.normal(size=(rows, N_FEATURES))
        y = cluster // CLUSTERS_PER_CLASS
        noisy = rng.random(rows) < LABEL_NOISE
        y[noisy] = rng.integers(N_CLASSES, size=int(noisy.sum()))
        return X.astype(dtype, copy=False), y


class NystroemSGD:
    """The baseline: ``Nystroem`` fitted on the first chunk, then
    ``SGDClassifier.partial_fit`` on each chunk's features."""

    def __init__(self):
        from sklearn.kernel_approximation import Nystroem
        from sklearn.linear_model import SGDClassifier

        self.map = Nystroem(gamma=GAMMA, n_components=200, random_state=0)
        self.linear = SGDClassifier(loss="hinge", random_state=0)
        self.started = False

    def partial_fit(self, X, y, classes=None):
        if not self.started:
            self.map.fit(X)
            self.started = True
        self.linear.partial_fit(self.map.transform(X), y, classes=classes)
        return self

    def score(self, X, y):
        return self.linear.score(self.map.transform(X), y)


def make_model(name):
    import skbudget

    return {
        "Forgetron": lambda: skbudget.Forgetron(budget=200, gamma=GAMMA),
        "BSGD shared merging": lambda: skbudget.BudgetedSGDClassifier(
            budget=200, gamma=GAMMA, random_state=0),
        "FourierOGDClassifier": lambda: skbudget.FourierOGDClassifier(
            n_components=400, gamma=GAMMA, random_state=0),
        "NystromOGDClassifier": lambda: skbudget.NystromOGDClassifier(
            budget=200, gamma=GAMMA, random_state=0),
        "AdaptiveMultiHyperplaneClassifier": lambda: skbudget.AdaptiveMultiHyperplaneClassifier(
            random_state=0),
        "LowRankLinearizedSVC": lambda: skbudget.LowRankLinearizedSVC(
            budget=200, gamma=GAMMA, random_state=0),
        "Nystroem + SGDClassifier": NystroemSGD,
    }[name]()


MODELS = ("Forgetron", "BSGD shared merging", "FourierOGDClassifier", "NystromOGDClassifier",
          "AdaptiveMultiHyperplaneClassifier", "LowRankLinearizedSVC",
          "Nystroem + SGDClassifier")


def resident_mb():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def model_bytes(model):
    """The model's size: the bytes of its pickle (its stored vectors,
    landmarks or features and coefficients: what "equal memory" compares)."""
    return len(pickle.dumps(model, protocol=pickle.HIGHEST_PROTOCOL))


def run_one(name, dtype, rows):
    """Stream ``rows`` rows through one model (in this process); a dict of
    its checkpoints."""
    dtype = np.dtype(dtype)
    stream, held_out = MixtureStream(seed=0), MixtureStream(seed=1)
    X_test, y_test = held_out.chunk(0, rows=HELD_OUT, dtype=dtype)
    checkpoints = [c * rows // CHECKPOINTS[-1] for c in CHECKPOINTS]
    model = make_model(name)
    classes = np.arange(N_CLASSES)
    train_seconds, out = 0.0, []
    for i in range(rows // CHUNK):
        X, y = stream.chunk(i, dtype=dtype)
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.partial_fit(X, y, classes=classes)
        train_seconds += time.perf_counter() - start
        seen = (i + 1) * CHUNK
        if seen in checkpoints:
            out.append({"rows": seen, "accuracy": 100 * float(model.score(X_test, y_test)),
                        "rows_per_second": seen / train_seconds,
                        "resident_mb": resident_mb(), "peak_mb": peak_mb(),
                        "model_bytes": model_bytes(model)})
            print(json.dumps({"model": name, "dtype": dtype.name, **out[-1]}), file=sys.stderr,
                  flush=True)
    reference = next(c for c in out if c["rows"] >= MEMORY_REFERENCE * rows // CHECKPOINTS[-1])
    return {"checkpoints": out, "rows_per_second": rows / train_seconds,
            "memory_ratio": out[-1]["peak_mb"] / reference["peak_mb"]}


def figure(results, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    colors = dict(zip(MODELS, plt.get_cmap("tab10").colors))
    for key, result in results.items():
        name, dtype = key.rsplit(", ", 1)
        rows = [c["rows"] / 1e6 for c in result["checkpoints"]]
        style = dict(color=colors[name], marker="o" if dtype == "float64" else "x",
                     linestyle="-" if dtype == "float64" else "--")
        left.plot(rows, [c["accuracy"] for c in result["checkpoints"]],
                  label=name if dtype == "float64" else None, **style)
        right.plot(rows, [c["peak_mb"] for c in result["checkpoints"]], **style)
    left.set(xlabel="rows seen (millions)", ylabel="held-out accuracy (%)", xscale="log")
    right.set(xlabel="rows seen (millions)", ylabel="peak resident memory (MB)", xscale="log")
    fig.legend(loc="upper center", ncol=4, fontsize=8, frameon=False,
               title="solid, o: float64; dashed, x: float32", title_fontsize=8)
    fig.tight_layout(rect=(0, 0, 1, 0.86))
    fig.savefig(path, dpi=100)
    print(f"wrote {path}")


def rst_table(results):
    """The results as the reStructuredText table of the "Large streams"
    page (``--table``): one row per model and dtype."""
    lines = [".. list-table::", "   :header-rows: 1", "",
             "   * - model", "     - dtype", "     - rows / s", "     - model size",
             "     - accuracy at 0.1 / 1 / 10 M rows", "     - peak memory, 10 M / 1 M rows"]
    for key, result in results.items():
        name, dtype = key.rsplit(", ", 1)
        by_rows = {c["rows"]: c for c in result["checkpoints"]}
        last = result["checkpoints"][-1]
        accuracy = " / ".join(f"{by_rows[r]['accuracy']:.1f}" for r in
                              (100_000, 1_000_000, 10_000_000) if r in by_rows)
        lines += [f"   * - {name}", f"     - {dtype}",
                  f"     - {result['rows_per_second']:,.0f}",
                  f"     - {last['model_bytes'] / 1e3:,.0f} kB",
                  f"     - {accuracy} %",
                  f"     - {last['peak_mb']:.0f} MB, {result['memory_ratio']:.3f}x"]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=CHECKPOINTS[-1])
    parser.add_argument("--only", nargs="+", choices=MODELS, default=list(MODELS))
    parser.add_argument("--dtype", nargs="+", choices=("float64", "float32"),
                        default=["float64", "float32"])
    parser.add_argument("--jobs", type=int, default=1,
                        help="models run side by side (each its own process; the default "
                             "1 keeps the rows per second those of a quiet core)")
    parser.add_argument("--table", action="store_true",
                        help="print the full run's results as the doc page's table, and stop")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.table:
        print(rst_table(json.loads((RESULTS / "large.json").read_text())["results"]))
        return
    if args.rows % (CHUNK * 10) or args.rows < CHUNK * 10:
        parser.error(f"--rows must be a multiple of {CHUNK * 10}")
    if args.child:                      # one model in this process
        print(json.dumps(run_one(*args.child, args.rows)))
        return
    def run_child(name, dtype):
        child = subprocess.run(
            [sys.executable, __file__, "--rows", str(args.rows), "--child", name, dtype],
            check=True, capture_output=True, text=True, cwd=ROOT)
        result = json.loads(child.stdout.strip().splitlines()[-1])
        last = result["checkpoints"][-1]
        print(f"{name:<36} {dtype:<8} {result['rows_per_second']:9.0f} rows/s, "
              f"accuracy {last['accuracy']:.2f} %, peak {last['peak_mb']:.0f} MB "
              f"({result['memory_ratio']:.3f}x at {MEMORY_REFERENCE * args.rows // CHECKPOINTS[-1]:,} "
              f"rows), model {last['model_bytes'] / 1e3:.0f} kB", flush=True)
        return f"{name}, {dtype}", result

    runs = [(name, dtype) for name in args.only for dtype in args.dtype]
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        done = list(pool.map(lambda run: run_child(*run), runs))
    full = args.rows == CHECKPOINTS[-1]
    path = RESULTS / ("large.json" if full else f"large_{args.rows}.json")
    # a run of some models updates theirs in the results of the others
    results = json.loads(path.read_text())["results"] if path.exists() else {}
    results.update(dict(done))
    payload = {"rows": args.rows, "chunk": CHUNK, "gamma": GAMMA, "results": results}
    write_json(path, payload)
    if full and all(f"{name}, {dtype}" in results for name in MODELS
                    for dtype in ("float64", "float32")):
        figure(results, ROOT / "doc" / "images" / "large_streams.png")


if __name__ == "__main__":
    main()
