"""Parameter mixing (skbudget.parallel): accuracy against the number of
workers, and the wall time of a LocalCluster against one process.

Accuracy (``--part accuracy``): mnist5k (``../shared/data/mnist5k``, pixels
/ 255, the stratified 4 000 / 1 000 split of ``bench_bsgd_multiclass.py``),
shared multi-class BSGD with merging, ``B = 200``, ``gamma = 0.02``,
``alpha = 1e-4``, one pass in each of 3 orders of the training rows.  For
K = 1, 2, 4, 8, 16 workers at the same 4 000 rows (each worker streams its
contiguous K-th of the order; simulated in one process, on threads), with
``mix_every = 500`` (and 100 for the figure); against one process on every
row (K = 1 is that model, up to rounding) and one process on one worker's
share alone.  The figure ``doc/images/parallel_mnist.png`` plots them.

Speed (``--part speed``, issue 36's target: the cluster at most 0.7x one
process): a 400 000-row, 10-class stream (d = 20, ``make_classification``)
on a ``LocalCluster`` of 2 single-threaded worker processes, shared BSGD
merging, ``B = 100``, ``mix_every = 20 000`` (10 mixing rounds), against
one process's ``partial_fit`` over the same rows.  The cluster is started,
and skbudget imported on its workers, before the clock.  Each repeat times,
in turn:

- ``single``: ``BudgetedSGDClassifier.partial_fit(X, y)`` in this process
  (validation included);
- ``cluster``: ``ParameterMixingClassifier(...).fit(X, y)`` on the NumPy
  arrays: validation, the classes, the workers' set-up, the data's travel
  to the workers (piece by piece from the start, overlapped with the
  rounds), the 10 rounds and their mixings (among the workers); the fitted
  meta-estimator at the end;
- ``cluster_dask``: the same fit on the data already on the cluster (a dask
  array of 8 partitions persisted before the clock, wherever ``persist``
  put them; the fit balances them, moving a partition when one worker
  holds 5): what a dask user has; nothing but models travels.

Paired: the three are timed in turn, ``--repeats`` times; each one's best,
the paired ratios' min / median / max and the CPU seconds of this process
(with a ``LocalCluster`` also the scheduler's and the nannies') and of each
worker process over each fit are kept; the load average is recorded beside
them, how many cores two processes of ours get at once (a fixed loop
alone against two at a time: 2.0 on two free cores, 1.0 when other jobs
leave one core's worth), and the CPU seconds other processes used during
each run (the machine's busy time from /proc/stat less ours); a repeat
where they used at most 30 ms during the one process's run and the fit is
*quiet*, and the ratios over the quiet repeats are kept apart.  ``--direct-to-workers`` passes
``Client(direct_to_workers=True)``; without it the client has dask's
default (None), with which ``ParameterMixingClassifier`` still calls the
workers directly when it can reach them.  ``--no-worker-profile`` starts
the workers without dask's statistical profiler (a dask setting a user may
choose: it samples every computing thread 100 times a second), the results
under ``speed_noprofile`` (``speed_direct_noprofile``).  ``--in-process``
starts the LocalCluster with ``processes=False`` (two single-threaded
workers as threads of this process: no nannies, in-process messages; the
compiled loops release the GIL), the results under a key ending in
``_in_process``; ``--mix-every N`` mixes every N rows per worker instead
of 20 000 (key ending in ``_mixN``).  Test accuracy on 20 000 held-out
rows of the same stream.  ``--profile`` keeps each worker's timeline of
the fits (``skbudget.parallel._dask._TRACE``) and prints, per cluster fit,
where its wall time went (:func:`breakdown`): the set-up before the
workers start, each worker's streaming (and its thread's CPU), the gaps
between rounds with their parts on the worker that starts the next round
last (the last model's pickling, its message, its loading, the mixing),
and the final model's return; kept under ``breakdown_cluster`` and
``breakdown_cluster_dask``.

Large (``--part large``, issue 47): a lazily generated dask array
(:func:`lazy_mixture`: blocks of 100 000 rows of a 10-class, d = 20
Gaussian mixture with 5 % of the labels uniform, each block made by its own
seeded task, X and y together) of 1, 3 and 10 million rows
(``--large-rows``) trained by ``ParameterMixingClassifier`` (shared BSGD
merging, ``B = 100``, ``mix_every = 50 000``) on a new ``LocalCluster`` of
2 single-threaded worker processes for each size: nothing is computed on
the client or persisted, each worker computes a block when its rounds
read it and drops it after.  Per size: the fit's time and rows per second,
the accuracy on 100 000 held-out rows of the mixture, and each worker's
resident memory before the fit and its peak (``ru_maxrss``) over it.

Refits (``--part refits``, issue 43): ``ParameterMixingClassifier.fit``
called 20 times back to back on one dask collection (a dask array of 8
partitions, 4 000 rows of the speed part's stream, shared BSGD merging,
``B = 50``, ``mix_every = 250``), on a ``LocalCluster`` of 2
single-threaded workers, worker processes then threads: the array as built
(each fit computes its partitions on the workers, while the scheduler may
still be releasing the previous fit's), then persisted.  Per fit, whether
it succeeded (the exception otherwise), its wall time, and whether its
model is the first fit's bit for bit.  (At ``ae3fe45``, 5 of 12 such fits
failed with ``TypeError: 'NoneType' object is not iterable``.)

Writes ``benchmarks/results/parallel[_quick].json`` (the large part with
other sizes under ``large_smoke``).
"""

import argparse
import json
import os
import time

from _common import DATA, RESULTS, ROOT, use_one_blas_thread, write_json

use_one_blas_thread()

import numpy as np  # noqa: E402
from sklearn.datasets import make_classification  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402

from skbudget import BudgetedSGDClassifier  # noqa: E402
from skbudget.parallel import ParameterMixingClassifier  # noqa: E402

WORKERS = (1, 2, 4, 8, 16)
MNIST = dict(budget=200, gamma=0.02, alpha=1e-4, maintenance="merging", shuffle=False)
SPEED = dict(budget=100, alpha=1e-4, maintenance="merging", shuffle=False)
SPEED_ROWS, SPEED_TEST, SPEED_MIX = 400_000, 20_000, 20_000


def load_mnist():
    data = np.loadtxt(DATA / "mnist5k" / "mnist_5k.csv.gz", delimiter=",")
    X, y = data[:, :-1] / 255.0, data[:, -1].astype(int)
    return train_test_split(X, y, stratify=y, random_state=0, train_size=4000, test_size=1000)


def accuracy_part(orders):
    X, X_test, y, y_test = load_mnist()
    est = BudgetedSGDClassifier(**MNIST)
    runs = []
    for rep in range(orders):
        order = np.random.RandomState(rep).permutation(len(y))
        Xo, yo = X[order], y[order]
        single = est.fit(Xo, yo).score(X_test, y_test)
        run = {"order": rep, "single": single, "mixed": {}, "share": {}}
        for K in WORKERS:
            share = len(y) // K
            run["share"][K] = BudgetedSGDClassifier(**MNIST).fit(
                Xo[:share], yo[:share]).score(X_test, y_test)
            for mix_every in (100, 500):
                start = time.perf_counter()
                clf = ParameterMixingClassifier(est, mix_every=mix_every, n_workers=K).fit(Xo, yo)
                run["mixed"][f"{K}/{mix_every}"] = {
                    "accuracy": clf.score(X_test, y_test), "rounds": clf.n_mixing_rounds_,
                    "seconds": time.perf_counter() - start}
                print(f"order {rep}  K={K:2d}  mix_every={mix_every}: "
                      f"{100 * clf.score(X_test, y_test):.1f} %  (one process "
                      f"{100 * single:.1f}, one share alone {100 * run['share'][K]:.1f})",
                      flush=True)
        runs.append(run)
    summary = {}
    for K in WORKERS:
        for mix_every in (100, 500):
            acc = [r["mixed"][f"{K}/{mix_every}"]["accuracy"] for r in runs]
            summary[f"{K}/{mix_every}"] = [float(np.mean(acc)), float(np.std(acc))]
        summary[f"share/{K}"] = [float(np.mean([r["share"][K] for r in runs])),
                                 float(np.std([r["share"][K] for r in runs]))]
    summary["single"] = [float(np.mean([r["single"] for r in runs])),
                         float(np.std([r["single"] for r in runs]))]
    return {"runs": runs, "summary": summary}


def plot(summary, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6, 3.6))
    single = 100 * summary["single"][0]
    ax.axhline(single, color="k", lw=1, ls="--", label="one process, every row")
    for mix_every, marker in ((100, "o"), (500, "s")):
        mean = [100 * summary[f"{K}/{mix_every}"][0] for K in WORKERS]
        ax.plot(WORKERS, mean, marker=marker, label=f"K workers, mix_every={mix_every}")
    ax.plot(WORKERS, [100 * summary[f"share/{K}"][0] for K in WORKERS], marker="x", ls=":",
            label="one worker's share alone")
    ax.set_xscale("log", base=2)
    ax.set_xticks(WORKERS, [str(K) for K in WORKERS])
    ax.set_xlabel("workers K (4 000 rows in all)")
    ax.set_ylabel("test accuracy (%)")
    ax.set_title("mnist5k, shared BSGD merging, B = 200, one pass (3 orders)")
    ax.legend(fontsize=8, loc="lower left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"wrote {path}")


def _burn(n=10_000_000):
    """Seconds of a fixed pure-Python loop (one core's work)."""
    start = time.perf_counter()
    total = 0
    for i in range(n):
        total += i
    return time.perf_counter() - start


def cores_available():
    """How many cores two processes of ours get at once: the time of a fixed
    loop alone over its time when two processes run it together, times 2
    (2.0: two free cores; 1.0: one core's worth between them, e.g. on a
    machine shared with other jobs)."""
    from concurrent.futures import ProcessPoolExecutor
    with ProcessPoolExecutor(2) as pool:
        alone = pool.submit(_burn).result()
        together = [f.result() for f in [pool.submit(_burn) for _ in range(2)]]
    return 2 * alone / max(together)


def _cpu_seconds(processes):
    """The CPU seconds (user + system) each process has used so far."""
    return {name: sum(proc.cpu_times()[:2]) for name, proc in processes.items()}


def _machine_cpu():
    """CPU seconds the whole machine has been busy (every process), from
    /proc/stat (None where there is none)."""
    try:
        with open("/proc/stat") as fh:
            fields = [int(v) for v in fh.readline().split()[1:9]]
    except OSError:
        return None
    return (sum(fields) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")


def _others_cpu(machine_before, machine_after, ours):
    """CPU seconds other processes than ours used meanwhile (None: not
    known): 0 on a quiet machine, the wall time on one busy core."""
    if machine_before is None:
        return None
    return round(max(machine_after - machine_before - ours, 0.0), 3)


def _spread(values):
    """min, median and max."""
    return [float(np.min(values)), float(np.median(values)), float(np.max(values))]


def _start_trace():
    """Keep this worker's timeline of the fits (skbudget.parallel._dask._TRACE)."""
    from skbudget.parallel import _dask
    _dask._TRACE = []


def _taken_trace():
    """This worker's timeline since the last call, emptied."""
    from skbudget.parallel import _dask
    trace, _dask._TRACE = _dask._TRACE, []
    return trace


def breakdown(traces, start, end):
    """Where the wall time of one fit went, from the workers' timelines
    (``traces``: per worker, (seconds, thread CPU seconds, event, round);
    ``start``, ``end``: the fit's call and return on this process's clock,
    the same monotonic clock on one machine), in milliseconds:

    - ``setup``: the call to the first worker's start of the fit
      (validation, the classes, the actors, the fit's calls);
    - ``streaming``: per worker, the wall time of its rounds' ``partial_fit``
      (and its thread's CPU time in them);
    - ``gaps``: per round, the last worker's end of streaming to the last
      worker's start of the next round; and on the worker that started the
      next round last, its parts: ``pickle`` (the last model pickled),
      ``message`` (that to its arrival on this worker's event loop: the
      sender's hand-over to its own event loop, dask's message, the
      receipt), ``load`` (arrival to loaded), ``mix`` (the last model
      loaded to the mixed model);
    - ``final``: the first worker's end of the fit to the fit's return
      (the model's travel to the client, the actors' release);
    - ``thread_cpu`` per worker: its thread's CPU over the fit, beside its
      streaming's."""
    events = [{(event, i): (t, cpu) for t, cpu, event, i in trace} for trace in traces]
    rounds = sorted({i for trace in traces for _, _, event, i in trace if event == "streamed"})
    out = {"setup": 1e3 * (min(e[("start", -1)][0] for e in events) - start),
           "final": 1e3 * (end - events[0][("end", -1)][0]),
           "streaming": [1e3 * sum(e[("streamed", i)][0] - e[("ready", i)][0]
                                   for i in rounds if ("streamed", i) in e) for e in events],
           "streaming_cpu": [1e3 * sum(e[("streamed", i)][1] - e[("ready", i)][1]
                                       for i in rounds if ("streamed", i) in e) for e in events],
           "thread_cpu": [1e3 * (e[("end", -1)][1] - e[("start", -1)][1]) for e in events],
           "gaps": [], "pickle": [], "message": [], "load": [], "mix": []}
    for i in rounds[:-1]:
        ends = [(e[("streamed", i)][0], w) for w, e in enumerate(events) if ("streamed", i) in e]
        starts = [(e[("ready", i + 1)][0], w) for w, e in enumerate(events)
                  if ("ready", i + 1) in e]
        if not ends or not starts:
            continue
        (last_end, last), (next_start, late) = max(ends), max(starts)
        out["gaps"].append(1e3 * (next_start - last_end))
        e, sender = events[late], events[last]
        out["mix"].append(1e3 * (e[("mixed", i)][0] - e[(f"took {last}", i)][0]))
        if late != last:
            out["pickle"].append(1e3 * (sender[("pickled", i)][0] - last_end))
            out["message"].append(1e3 * (e[(f"arrived {last}", i)][0]
                                         - sender[("pickled", i)][0]))
            out["load"].append(1e3 * (e[(f"took {last}", i)][0] - max(
                e[(f"arrived {last}", i)][0],
                e[("pickled", i)][0] if ("pickled", i) in e else 0)))
    return {name: [round(v, 2) for v in value] if isinstance(value, list) else round(value, 2)
            for name, value in out.items()}


def _print_breakdown(name, b):
    def median(values):
        return float(np.median(values)) if values else float("nan")
    print(f"  {name}: set-up {b['setup']:.1f} ms; streaming per worker "
          f"{' / '.join(f'{v:.0f}' for v in b['streaming'])} ms (thread CPU "
          f"{' / '.join(f'{v:.0f}' for v in b['streaming_cpu'])} in it, "
          f"{' / '.join(f'{v:.0f}' for v in b['thread_cpu'])} over the fit); "
          f"{len(b['gaps'])} gaps between rounds, {sum(b['gaps']):.1f} ms in all, median "
          f"{median(b['gaps']):.2f} ms: pickle {median(b['pickle']):.2f}, message "
          f"{median(b['message']):.2f}, load {median(b['load']):.2f}, mix "
          f"{median(b['mix']):.2f}; final {b['final']:.1f} ms", flush=True)


def speed_part(repeats, direct=False, profile=True, in_process=False, mix_every=SPEED_MIX,
               trace=False):
    import dask
    import dask.array as da
    import distributed
    X, y = make_classification(SPEED_ROWS + SPEED_TEST, n_features=20, n_informative=15,
                               n_redundant=0, n_classes=10, n_clusters_per_class=1,
                               class_sep=2.0, random_state=0)
    X_test, y_test, X, y = X[SPEED_ROWS:], y[SPEED_ROWS:], X[:SPEED_ROWS], y[:SPEED_ROWS]
    gamma = 1.0 / (X.shape[1] * X.var())
    est = BudgetedSGDClassifier(gamma=gamma, **SPEED)
    result = {"rows": SPEED_ROWS, "mix_every": mix_every, "single": [], "cluster": [],
              "cluster_dask": [], "direct_to_workers": direct, "in_process": in_process,
              "worker_profile": profile, "load_before": os.getloadavg()}
    # (the nannies pass this process's dask configuration to the workers)
    with dask.config.set({"distributed.worker.profile.enabled": profile}), \
            distributed.LocalCluster(n_workers=2, threads_per_worker=1,
                                     processes=not in_process,
                                     dashboard_address=None) as cluster, \
            distributed.Client(cluster, direct_to_workers=direct or None) as client:
        result["worker_profile_seen"] = sorted(set(client.run(
            lambda: dask.config.get("distributed.worker.profile.enabled")).values()))
        client.run(lambda: __import__("skbudget.parallel"))       # imports before the clock
        if trace:
            client.run(_start_trace)
        result["worker_skbudget"] = sorted(set(client.run(
            lambda: __import__("skbudget").__file__).values()))
        import psutil
        # this process (the client, and with a LocalCluster the scheduler and
        # the nannies too) and the two worker processes
        processes = {"client": psutil.Process()}
        for address, pid in sorted(client.run(os.getpid).items()):
            if pid != os.getpid():      # (in_process: the workers are threads of this one)
                processes[f"worker {len(processes)}"] = psutil.Process(pid)
        # the data already on the cluster: 8 partitions, persisted (4 on each worker)
        Xd = da.from_array(X, chunks=(SPEED_ROWS // 8, -1)).persist()
        yd = da.from_array(y, chunks=SPEED_ROWS // 8).persist()
        distributed.wait([Xd, yd])
        for rep in range(repeats):
            before, machine = _cpu_seconds(processes), _machine_cpu()
            start = time.perf_counter()
            single = BudgetedSGDClassifier(gamma=gamma, **SPEED).partial_fit(
                X, y, classes=np.arange(10))
            result["single"].append(time.perf_counter() - start)
            after = _cpu_seconds(processes)
            result.setdefault("others_cpu_single", []).append(_others_cpu(
                machine, _machine_cpu(), sum(after.values()) - sum(before.values())))
            for name, data in (("cluster", (X, y)), ("cluster_dask", (Xd, yd))):
                before, machine = _cpu_seconds(processes), _machine_cpu()
                start = time.perf_counter()
                fitted = ParameterMixingClassifier(est, mix_every=mix_every,
                                                   client=client).fit(*data)
                result[name].append(time.perf_counter() - start)
                if trace:
                    traces = client.run(_taken_trace)
                    result.setdefault(f"breakdown_{name}", []).append(breakdown(
                        [traces[a] for a in sorted(traces)], start, start + result[name][-1]))
                after = _cpu_seconds(processes)
                result.setdefault(f"cpu_{name}", []).append(
                    {p: round(after[p] - before[p], 3) for p in processes})
                result.setdefault(f"others_cpu_{name}", []).append(_others_cpu(
                    machine, _machine_cpu(), sum(after.values()) - sum(before.values())))
                if name == "cluster":
                    clf = fitted
                else:
                    clf_dask = fitted
            result.setdefault("load", []).append(os.getloadavg())
            result.setdefault("cores_available", []).append(cores_available())
            print(f"repeat {rep}: one process {result['single'][-1]:.2f} s, cluster "
                  f"{result['cluster'][-1]:.2f} s from NumPy (ratio "
                  f"{result['cluster'][-1] / result['single'][-1]:.2f}), "
                  f"{result['cluster_dask'][-1]:.2f} s from a persisted dask array (ratio "
                  f"{result['cluster_dask'][-1] / result['single'][-1]:.2f}), load "
                  f"{os.getloadavg()[0]:.1f}, cores available to two processes "
                  f"{result['cores_available'][-1]:.2f}; CPU s NumPy "
                  f"{result['cpu_cluster'][-1]}, dask {result['cpu_cluster_dask'][-1]}; "
                  f"other processes' CPU s during the three "
                  f"{result['others_cpu_single'][-1]}, {result['others_cpu_cluster'][-1]}, "
                  f"{result['others_cpu_cluster_dask'][-1]}", flush=True)
            for name in ("cluster", "cluster_dask") if trace else ():
                _print_breakdown("NumPy" if name == "cluster" else "dask array",
                                 result[f"breakdown_{name}"][-1])
        result["accuracy_single"] = single.score(X_test, y_test)
        result["accuracy_cluster"] = clf.score(X_test, y_test)
        result["accuracy_cluster_dask"] = clf_dask.score(X_test, y_test)
        result["workers_dask"] = clf_dask.n_workers_
    for name in ("cluster", "cluster_dask"):
        ratios = np.array(result[name]) / np.array(result["single"])
        result[f"ratio_best{name[7:]}"] = float(min(result[name]) / min(result["single"]))
        result[f"ratio_median_paired{name[7:]}"] = float(np.median(ratios))
        result[f"ratio_spread{name[7:]}"] = _spread(ratios)       # min, median, max
        # the repeats no other process disturbed (at most 30 ms of others' CPU
        # during the single process's run and during this fit)
        quiet = [i for i in range(len(ratios))
                 if all(result[f"others_cpu_{n}"][i] is not None
                        and result[f"others_cpu_{n}"][i] <= 0.03 for n in ("single", name))]
        result[f"quiet_repeats{name[7:]}"] = quiet
        if quiet:
            result[f"ratio_spread_quiet{name[7:]}"] = _spread(ratios[quiet])
            print(f"{'NumPy' if name == 'cluster' else 'dask array'}, the {len(quiet)} quiet "
                  f"repeats: paired ratios {np.min(ratios[quiet]):.2f} / "
                  f"{np.median(ratios[quiet]):.2f} / {np.max(ratios[quiet]):.2f} "
                  f"(min / median / max)")
        print(f"{'NumPy' if name == 'cluster' else 'dask array'}: best "
              f"{min(result[name]):.2f} / {min(result['single']):.2f} s = "
              f"{result[f'ratio_best{name[7:]}']:.2f}x, median paired ratio "
              f"{result[f'ratio_median_paired{name[7:]}']:.2f} (paired ratios "
              f"{min(ratios):.2f} - {max(ratios):.2f}); accuracy "
              f"{100 * result['accuracy_' + name]:.2f} % against "
              f"{100 * result['accuracy_single']:.2f} %")
    return result


REFITS, REFIT_ROWS = 20, 4_000
REFIT = dict(budget=50, alpha=1e-4, gamma=0.05, maintenance="merging", shuffle=False)


def refits_part(n_fits=REFITS):
    import dask.array as da
    import distributed
    X, y = make_classification(REFIT_ROWS, n_features=20, n_informative=15, n_redundant=0,
                               n_classes=10, n_clusters_per_class=1, class_sep=2.0,
                               random_state=0)
    est = BudgetedSGDClassifier(**REFIT)
    result = {"rows": REFIT_ROWS, "partitions": 8, "fits": n_fits}
    for workers in ("processes", "threads"):
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1,
                                      processes=workers == "processes",
                                      dashboard_address=None) as cluster, \
                distributed.Client(cluster) as client:
            for collection in ("computed", "persisted"):
                Xd = da.from_array(X, chunks=(REFIT_ROWS // 8, -1))
                yd = da.from_array(y, chunks=REFIT_ROWS // 8)
                if collection == "persisted":
                    Xd, yd = client.persist([Xd, yd])
                fits, first = [], None
                for _ in range(n_fits):
                    start = time.perf_counter()
                    try:
                        clf = ParameterMixingClassifier(est, mix_every=250).fit(Xd, yd)
                    except Exception as exc:
                        fits.append({"ok": False, "error": f"{type(exc).__name__}: {exc}"})
                        continue
                    scores = clf.decision_function(X)
                    first = scores if first is None else first
                    fits.append({"ok": True, "seconds": round(time.perf_counter() - start, 3),
                                 "same_model": bool(np.array_equal(scores, first))})
                ok = sum(fit["ok"] for fit in fits)
                same = sum(fit.get("same_model", False) for fit in fits)
                result[f"{workers}_{collection}"] = {"succeeded": ok, "same_model": same,
                                                     "fits": fits}
                errors = sorted({fit["error"] for fit in fits if not fit["ok"]})
                print(f"worker {workers}, {collection} dask array: {ok} of {n_fits} fits "
                      f"succeeded, {same} the first's model bit for bit, "
                      f"{np.median([f['seconds'] for f in fits if f['ok']] or [np.nan]):.2f} s "
                      f"median{'; ' + '; '.join(errors) if errors else ''}", flush=True)
    return result


LARGE_ROWS = (1_000_000, 3_000_000, 10_000_000)
LARGE_BLOCK, LARGE_D, LARGE_TEST, LARGE_MIX = 100_000, 20, 100_000, 50_000
LARGE = dict(budget=100, alpha=1e-4, gamma=0.02, maintenance="merging", shuffle=False)


def mixture_block(block, seed=0, rows=LARGE_BLOCK, d=LARGE_D, noise=0.05):
    """Block ``block`` (``rows`` rows) of a reproducible stream: a 10-class
    mixture in ``d`` dimensions, each class a unit Gaussian around its own
    centre (the centres drawn once from ``seed``, N(0, 0.8^2) per
    coordinate: about 5 apart at d = 20), with a ``noise`` share of the
    labels replaced by uniform ones (the best accuracy is then about 95.5 %
    of the clean one); each block from its own seed, so any block is made
    alone, anywhere."""
    centres = np.random.default_rng(seed).normal(scale=0.8, size=(10, d))
    rng = np.random.default_rng([seed, block])
    y = rng.integers(10, size=rows)
    X = centres[y] + rng.normal(size=(rows, d))
    flip = rng.random(rows) < noise
    y[flip] = rng.integers(10, size=int(flip.sum()))
    return X, y


def lazy_mixture(n_rows, seed=0):
    """The first ``n_rows`` rows of :func:`mixture_block`'s stream as dask
    arrays generated lazily: one delayed block each (X and y from one
    task), nothing computed."""
    import dask
    import dask.array as da
    blocks = [dask.delayed(mixture_block, pure=True)(b, seed) for b in
              range(n_rows // LARGE_BLOCK)]
    X = da.concatenate([da.from_delayed(b[0], (LARGE_BLOCK, LARGE_D), np.float64)
                        for b in blocks])
    y = da.concatenate([da.from_delayed(b[1], (LARGE_BLOCK,), np.int64) for b in blocks])
    return X, y


def _memory():
    """This process's resident memory now and its peak, in MB."""
    import resource
    import psutil
    return {"rss": psutil.Process().memory_info().rss / 2**20,
            "peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**10}


def large_part(sizes=LARGE_ROWS):
    """``ParameterMixingClassifier`` on lazily generated dask arrays of each
    of ``sizes`` rows, each on a new LocalCluster of 2 single-threaded
    worker processes: each worker's resident memory
    before the fit and its peak over the fit, the fit's time, rows per
    second and the accuracy on 100 000 held-out rows (blocks of the same
    mixture far beyond the training ones)."""
    import distributed
    test = [mixture_block(10**6 + b) for b in range(LARGE_TEST // LARGE_BLOCK)]
    X_test, y_test = np.concatenate([t[0] for t in test]), np.concatenate([t[1] for t in test])
    est = BudgetedSGDClassifier(**LARGE)
    result = {"block_rows": LARGE_BLOCK, "d": LARGE_D, "mix_every": LARGE_MIX,
              "estimator": repr(est), "sizes": {}}
    for n_rows in sizes:
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                      dashboard_address=None) as cluster, \
                distributed.Client(cluster) as client:
            client.run(lambda: __import__("skbudget.parallel"))
            before = client.run(_memory)
            X, y = lazy_mixture(n_rows)
            start = time.perf_counter()
            clf = ParameterMixingClassifier(est, mix_every=LARGE_MIX, client=client).fit(X, y)
            seconds = time.perf_counter() - start
            after = client.run(_memory)
            run = {"seconds": round(seconds, 2), "rows_per_second": round(n_rows / seconds),
                   "accuracy": clf.score(X_test, y_test), "rounds": clf.n_mixing_rounds_,
                   "workers": {a[-5:]: {"rss_before_mb": round(before[a]["rss"], 1),
                                        "peak_mb": round(after[a]["peak"], 1)}
                               for a in sorted(after)}}
            result["sizes"][str(n_rows)] = run
            print(f"{n_rows:>10,} rows: {seconds:.1f} s ({run['rows_per_second']:,} rows/s), "
                  f"accuracy {100 * run['accuracy']:.2f} %, per worker resident before / "
                  f"peak over the fit: " + ", ".join(
                      f"{w['rss_before_mb']:.0f} / {w['peak_mb']:.0f} MB"
                      for w in run["workers"].values()), flush=True)
    peaks = {n: max(w["peak_mb"] for w in r["workers"].values())
             for n, r in result["sizes"].items()}
    first = peaks[str(sizes[0])]
    result["peak_ratio_to_first"] = {n: round(p / first, 3) for n, p in peaks.items()}
    print(f"the workers' peak memory against {sizes[0]:,} rows: " + ", ".join(
        f"{int(n):,}: {r:.3f}x" for n, r in result["peak_ratio_to_first"].items()))
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="one order, two timing repeats")
    parser.add_argument("--repeats", type=int, default=5, help="paired timings")
    parser.add_argument("--part", choices=("all", "accuracy", "speed", "refits", "large"),
                        default="all")
    parser.add_argument("--direct-to-workers", action="store_true",
                        help="the client calls the workers directly, not through the scheduler")
    parser.add_argument("--no-worker-profile", action="store_true",
                        help="the workers without dask's statistical profiler "
                             "(distributed.worker.profile.enabled: False)")
    parser.add_argument("--in-process", action="store_true",
                        help="a LocalCluster of threads in this process (processes=False), "
                             "not of worker processes")
    parser.add_argument("--large-rows", type=int, nargs="+", default=list(LARGE_ROWS),
                        help="the large part's sizes, in rows (multiples of "
                             f"{LARGE_BLOCK:,}; default 1, 3 and 10 million)")
    parser.add_argument("--profile", action="store_true",
                        help="the speed part's breakdown of each cluster fit from the workers' "
                             "timelines: set-up, streaming, the gaps between rounds (pickle, "
                             "message, load, mix), the final model's return")
    parser.add_argument("--mix-every", type=int, default=SPEED_MIX,
                        help=f"rows per worker between mixes in the speed part "
                             f"(default {SPEED_MIX})")
    args = parser.parse_args()
    out = RESULTS / f"parallel{'_quick' if args.quick else ''}.json"
    results = json.loads(out.read_text()) if out.exists() else {}
    if args.part in ("all", "accuracy"):
        results["accuracy"] = accuracy_part(1 if args.quick else 3)
        plot(results["accuracy"]["summary"], ROOT / "doc" / "images" / "parallel_mnist.png")
    if args.part in ("all", "speed"):
        key = ("speed_direct" if args.direct_to_workers else "speed") + (
            "_noprofile" if args.no_worker_profile else "") + (
            "_in_process" if args.in_process else "") + (
            f"_mix{args.mix_every}" if args.mix_every != SPEED_MIX else "")
        results[key] = speed_part(2 if args.quick else args.repeats, args.direct_to_workers,
                                  not args.no_worker_profile, args.in_process, args.mix_every,
                                  args.profile)
    if args.part in ("all", "refits"):
        results["refits"] = refits_part()
    if args.part in ("all", "large"):
        results["large" if args.large_rows == list(LARGE_ROWS) else "large_smoke"] = (
            large_part(args.large_rows))
    write_json(out, results)


if __name__ == "__main__":
    main()
