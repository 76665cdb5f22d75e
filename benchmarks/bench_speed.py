"""Speed: examples per second of one training epoch, for every estimator.

For each estimator exported in ``skbudget.__all__`` (every subclass of
``BaseOnlineKernelClassifier``; new ones are picked up with no edit), RBF
kernel (``gamma='scale'``), budget B = 100 and 500 where the estimator has
a ``budget`` parameter (unbounded estimators, e.g. KernelPerceptron, run
once, with their defaults), on streams of 20 000 examples:

* d = 2: ``skbudget.datasets.make_noisy_gaussians`` (the Forgetron /
  Projectron problem);
* d = 54: ``sklearn.datasets.make_classification`` (10 informative
  features, 10% label noise), standardized;
* d = 784: the 5 000 MNIST rows of ``../shared/data/mnist5k`` (pixels / 255,
  label = digit is odd) tiled 4 times, each copy jittered with N(0, 0.05)
  pixel noise, then shuffled.

Reported per run: training examples/s of one epoch (``fit`` with
``max_iter=1, shuffle=False``), against
(a) the same estimator's ``decision_function`` over the 20 000 examples
    with its final model (target for budget algorithms: training time
    <= 2x this), and
(b) the plain NumPy per-example loop of the same algorithm, the
    ``Plain<EstimatorName>`` oracle class found in ``tests/oracles/``,
    timed on the first 2 000 examples (target: training >= 10x faster
    for d <= 54).

``--quick``: streams of 5 000, plain loop on 500 examples, B = 100 only.
Everything timed runs with BLAS on ``--blas-threads`` threads (default 1,
as the training loop itself does): on a shared 2-core machine threaded BLAS
makes prediction slow and erratic.
Writes ``benchmarks/results/speed.json``.  Timings share the machine with
whatever else runs: the ratios (same process, back to back) are the
meaningful numbers.
"""

import argparse
import importlib
import inspect
import pkgutil
import platform
import time

import numpy as np
from sklearn.datasets import make_classification
from sklearn.metrics.pairwise import pairwise_kernels
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from _common import DATA, RESULTS, write_json  # noqa: E402  (puts the repo on sys.path)
from skbudget._base import BaseOnlineKernelClassifier  # noqa: E402
from skbudget.datasets import make_noisy_gaussians  # noqa: E402
from skbudget.discovery import all_estimators  # noqa: E402

BASE_PARAMS = set(inspect.signature(BaseOnlineKernelClassifier.__init__).parameters) - {"self"}


def estimators():
    return dict(all_estimators())


def oracles():
    """``Plain*`` classes of every module of ``tests/oracles``, by name."""
    found = {}
    import tests.oracles as package
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"tests.oracles.{info.name}")
        for name, obj in vars(module).items():
            if name.startswith("Plain") and inspect.isclass(obj):
                found[name] = obj
    return found


def load_mnist_stream(n, rng):
    path = DATA / "mnist5k"
    files = sorted(p for p in path.glob("*") if p.is_file() and p.suffix != ".md") if path.is_dir() else []
    if not files:
        raise FileNotFoundError(
            f"MNIST subset not found in {path}: the d=784 stream needs ../shared/data/mnist5k "
            "(see ../shared/data/README.md); run with --dims 2 54 to skip it")
    data = np.loadtxt(files[0], delimiter=",")
    X, digit = data[:, :784] / 255.0, data[:, 784]
    reps = int(np.ceil(n / len(X)))
    X = np.concatenate([X + rng.normal(0, 0.05, X.shape) for _ in range(reps)])
    y = np.tile(np.where(digit % 2 == 1, 1, -1), reps)
    order = rng.permutation(len(y))[:n]
    return X[order], y[order]


def make_stream(d, n):
    rng = np.random.RandomState(0)
    if d == 2:
        return make_noisy_gaussians(n, random_state=0)
    if d == 54:
        X, y = make_classification(n, n_features=54, n_informative=10, flip_y=0.1, random_state=0)
        return StandardScaler().fit_transform(X), np.where(y == 1, 1, -1)
    if d == 784:
        return load_mnist_stream(n, rng)
    raise ValueError(f"no stream for d={d}")


def plain_loop_speed(Plain, est, X, y, n_plain):
    """Examples/s of the oracle on the first ``n_plain`` examples."""
    gamma = est._gamma
    kernel = lambda A, B: pairwise_kernels(A, B, metric="rbf", gamma=gamma)  # noqa: E731
    accepted = inspect.signature(Plain.__init__).parameters
    skip = BASE_PARAMS - {"random_state"}     # the kernel is passed as a callable
    params = {k: v for k, v in est.get_params().items() if k in accepted and k not in skip}
    plain = Plain(kernel, **params)
    start = time.perf_counter()
    plain.partial_fit(X[:n_plain], y[:n_plain])
    return n_plain / (time.perf_counter() - start)


def run_one(Est, params, X, y, Plain, n_plain, repeats):
    est = Est(**params)
    train = []
    for _ in range(repeats):
        est = Est(**params)
        start = time.perf_counter()
        est.fit(X, y)
        train.append(time.perf_counter() - start)
    predict = []
    for _ in range(repeats):
        start = time.perf_counter()
        est.decision_function(X)
        predict.append(time.perf_counter() - start)
    n = len(y)
    row = {
        "train_eps": n / min(train), "predict_eps": n / min(predict),
        "train_over_predict": min(train) / min(predict),
        "n_support": int(est.n_support_.sum()), "n_mistakes": int(est.n_mistakes_),
    }
    if Plain is not None:
        row["plain_eps"] = plain_loop_speed(Plain, est, X, y, n_plain)
        row["speedup_vs_plain"] = row["train_eps"] / row["plain_eps"]
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="5 000 examples, B = 100")
    parser.add_argument("--dims", type=int, nargs="+", default=[2, 54, 784])
    parser.add_argument("--only", nargs="+", help="estimator names to run")
    parser.add_argument("--repeats", type=int, default=2, help="best of this many timings")
    parser.add_argument("--blas-threads", type=int, default=1,
                        help="BLAS threads for everything timed (training already uses 1)")
    parser.add_argument("--out", default=str(RESULTS / "speed.json"))
    args = parser.parse_args()
    n = 5000 if args.quick else 20000
    n_plain = 500 if args.quick else 2000
    budgets = [100] if args.quick else [100, 500]
    ests = estimators()
    if args.only:
        ests = {k: v for k, v in ests.items() if k in args.only}
    plains = oracles()

    with threadpool_limits(args.blas_threads, user_api="blas"):
        rows = run_all(args, n, n_plain, budgets, ests, plains)
    write_json(args.out, {"benchmark": "one training epoch, RBF, examples per second",
                          "n_examples": n, "n_plain": n_plain, "budgets": budgets,
                          "blas_threads": args.blas_threads,
                          "machine": platform.platform(), "rows": rows})


def run_all(args, n, n_plain, budgets, ests, plains):
    rows = []
    print(f"{'estimator':22s} {'d':>4s} {'B':>5s} {'train ex/s':>11s} {'predict ex/s':>13s} "
          f"{'train/pred':>10s} {'plain ex/s':>10s} {'vs plain':>9s} {'n_SV':>6s}")
    for d in args.dims:
        X, y = make_stream(d, n)
        for name, Est in ests.items():
            accepted = inspect.signature(Est.__init__).parameters
            base = {"kernel": "rbf", "gamma": "scale"}
            if "max_iter" in accepted:
                base.update(max_iter=1, shuffle=False)
            if "random_state" in accepted:
                base["random_state"] = 0
            for B in (budgets if "budget" in accepted else [None]):
                params = dict(base, **({"budget": B} if B is not None else {}))
                row = run_one(Est, params, X, y, plains.get(f"Plain{name}"), n_plain,
                              args.repeats)
                row.update(estimator=name, d=d, budget=B, n_examples=n)
                rows.append(row)
                ok = ""
                if B is not None:
                    ok = " ok" if row["train_over_predict"] <= 2 else " SLOW"
                    if d <= 54 and "speedup_vs_plain" in row:
                        ok += "" if row["speedup_vs_plain"] >= 10 else " (<10x plain)"
                print(f"{name:22s} {d:4d} {str(B or '-'):>5s} {row['train_eps']:11.0f} "
                      f"{row['predict_eps']:13.0f} {row['train_over_predict']:10.2f} "
                      f"{row.get('plain_eps', float('nan')):10.0f} "
                      f"{row.get('speedup_vs_plain', float('nan')):8.1f}x {row['n_support']:6d}{ok}",
                      flush=True)
    return rows


if __name__ == "__main__":
    main()
