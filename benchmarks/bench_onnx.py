"""Deployment: the ONNX export run by onnxruntime against ``predict``.

For a few fitted models (binary, one-vs-rest and shared multi-class, rbf,
54 features as covtype), measures

* the latency of one row (``predict(X[:1])`` against one
  ``InferenceSession.run`` on one float32 row), per call;
* the throughput on a batch of 10 000 rows (rows per second);
* the size of the model file: ONNX, pickle and skops.

onnxruntime runs with one intra-op thread and ``predict`` with one BLAS
thread (the machine is shared; both could use more cores).  Both ONNX
precisions are measured: ``double`` (the default: the kernel expansion in
float64) and ``float`` (a float32 kernel block).  Timings are the minimum
over ``--repeats`` rounds that call every route in turn (a slow stretch of
the shared machine weighs on all alike).  Writes
``benchmarks/results/onnx.json``.
"""

import pickle

from _common import (  # noqa: E402
    RESULTS,
    best_times_alternating,
    quick_arguments,
    use_one_blas_thread,
    write_json,
)

use_one_blas_thread()

import numpy as np  # noqa: E402
import onnxruntime as ort  # noqa: E402
import skl2onnx  # noqa: E402
import skops.io as sio  # noqa: E402
from sklearn.datasets import make_classification  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

import skbudget.onnx  # noqa: E402, F401  (registers the converters)
from skbudget import BudgetMIRA, Forgetron  # noqa: E402


def models(quick):
    budget = 50 if quick else 200
    return [
        ("Forgetron binary", Forgetron(budget=budget, random_state=0), 2),
        ("Forgetron 5 classes (one-vs-rest)", Forgetron(budget=budget, random_state=0), 5),
        ("BudgetMIRA 5 classes (shared)", BudgetMIRA(budget=budget, random_state=0), 5),
    ]


def session(est, X, precision):
    onx = skl2onnx.to_onnx(est, X[:1].astype(np.float32),
                           options={id(est): {"precision": precision}})
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    sess = ort.InferenceSession(onx.SerializeToString(), options,
                                providers=["CPUExecutionProvider"])
    return sess, len(onx.SerializeToString())


def main():
    args, repeats = quick_arguments(__doc__, "smaller models, fewer repeats", 7)
    n_batch = 10_000
    single_calls = 50 if args.quick else 300
    rows = []
    for name, est, n_classes in models(args.quick):
        X, y = make_classification(4000 + n_batch, n_features=54, n_informative=20,
                                   n_classes=n_classes, random_state=0)
        X = StandardScaler().fit_transform(X)
        est.fit(X[:4000], y[:4000])
        batch = X[4000:]
        batch32 = batch.astype(np.float32)
        one, one32 = batch[:1], batch32[:1]
        sessions = {p: session(est, X, p) for p in ("double", "float")}
        feeds = {p: s.get_inputs()[0].name for p, (s, _) in sessions.items()}
        label, scores = sessions["double"][0].run(None, {feeds["double"]: batch32})
        agreement = float(np.mean(label == est.predict(batch)))
        max_error = float(np.max(np.abs(scores - est.decision_function(batch))))

        def single(function):
            def run():
                for _ in range(single_calls):
                    function()
            return run

        routes = {
            "predict": (lambda: est.predict(one), lambda: est.predict(batch)),
            "onnx double": (lambda: sessions["double"][0].run(None, {feeds["double"]: one32}),
                            lambda: sessions["double"][0].run(None, {feeds["double"]: batch32})),
            "onnx float": (lambda: sessions["float"][0].run(None, {feeds["float"]: one32}),
                           lambda: sessions["float"][0].run(None, {feeds["float"]: batch32})),
        }
        with threadpool_limits(limits=1, user_api="blas"):
            singles = best_times_alternating([single(r[0]) for r in routes.values()], repeats)
            batches = best_times_alternating([r[1] for r in routes.values()], repeats)
        sizes = {"onnx double": sessions["double"][1], "onnx float": sessions["float"][1],
                 "pickle": len(pickle.dumps(est)), "skops": len(sio.dumps(est))}
        row = {"model": name, "n_support": int(est.n_support_.sum()), "n_features": 54,
               "label_agreement": agreement, "max_score_error": max_error,
               "latency_us": {k: 1e6 * t / single_calls for k, t in zip(routes, singles)},
               "rows_per_s": {k: n_batch / t for k, t in zip(routes, batches)},
               "bytes": sizes}
        rows.append(row)
        print(f"\n{name}: {row['n_support']} support vectors, labels agree on "
              f"{100 * agreement:.2f} %, largest score difference {max_error:.2e}")
        print(f"  {'route':12} {'1 row (us)':>11} {'10k rows/s':>12}")
        for k in routes:
            print(f"  {k:12} {row['latency_us'][k]:11.1f} {row['rows_per_s'][k]:12.0f}")
        print("  file bytes: " + ", ".join(f"{k} {v}" for k, v in sizes.items()))
    write_json(RESULTS / ("onnx_quick.json" if args.quick else "onnx.json"),
               {"batch": n_batch, "repeats": repeats, "single_calls": single_calls,
                "onnxruntime": ort.__version__, "skl2onnx": skl2onnx.__version__,
                "rows": rows})


if __name__ == "__main__":
    main()
