"""Kernel MIRA and its budget caches: the Crammer-Kandola-Singer paper's Fig. 4.

Crammer, Kandola & Singer, "Online Classification on a Budget" (NIPS 2003),
Fig. 4: test error against the number of support patterns for MIRA
(unbounded), MIRA with a fixed cache of ``B`` patterns (Fig. 3) at many
``B``, MIRA with the adaptive DistillCache (Fig. 2), and a multi-class SVM.
Set-up as in the paper: one online pass, margin parameter beta = 0.01,
homogeneous polynomial kernel of degree 9 (``kernel="poly", degree=9,
gamma=1, coef0=0``), random orders (the paper: 5 for mnist); rows scaled to
unit norm (so ``k(x, x) = 1``).  Data:

* mnist: ``../shared/data/mnist5k`` (500 images per digit), a stratified
  4 000 / 1 000 train / test split;
* digits: scikit-learn's ``load_digits`` (8x8 images) as a small stand-in
  for usps, a stratified 1 297 / 500 split.

For each data set: ``KernelMIRA``; ``BudgetMIRA`` at 10 fixed budgets from
5 % to 100 % of MIRA's support-set size (geometric); the adaptive cache
(``budget=None``) over a grid of beta; the one-vs-rest CKS perceptron
(``BudgetPerceptron``, beta = 0.01) at the same total number of stored
vectors (``budget = B // n_classes`` per class), to show what sharing the
support set buys; ``SVC`` with the same kernel at C in {1, 10, 100} as the
gold standard.  Every online run is repeated over 5 random orders (the
estimator's own shuffling, ``random_state`` = order); the table gives means
(and the standard deviation of the test error) over the orders.

Usage::

    python benchmarks/bench_mira.py            # everything (~ 5 min on 2 cores)
    python benchmarks/bench_mira.py --quick    # 1 order, 5 budgets (< 1 min)

Prints the tables and the paper's claims, writes
``benchmarks/results/mira[_quick].json`` and one PNG per data set,
``mira_fig4_<data>[_quick].png`` (the full run writes them to
``doc/images/`` for ``doc/benchmarks.md``; ``--quick`` to
``benchmarks/results/``).
"""

import time

from _common import (  # noqa: E402
    DATA, RESULTS, ROOT, quick_and_parts_arguments, use_one_blas_thread, write_json)

use_one_blas_thread()

import numpy as np  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.preprocessing import normalize  # noqa: E402
from sklearn.svm import SVC  # noqa: E402

from skbudget import BudgetMIRA, BudgetPerceptron, KernelMIRA  # noqa: E402

KERNEL = dict(kernel="poly", degree=9, gamma=1.0, coef0=0.0)
BETA = 0.01
BETA_GRID = (0.001, 0.01, 0.1, 1.0, 2.0, 5.0)
SVC_C = (1.0, 10.0, 100.0)
DOC_IMAGES = ROOT / "doc" / "images"


def load(name):
    """(X_train, X_test, y_train, y_test), rows scaled to unit norm."""
    if name == "mnist":
        data = np.loadtxt(DATA / "mnist5k" / "mnist_5k.csv.gz", delimiter=",")
        X, y = data[:, :-1], data[:, -1].astype(int)
        sizes = dict(train_size=4000, test_size=1000)
    else:
        X, y = load_digits(return_X_y=True)
        sizes = dict(train_size=1297, test_size=500)
    return train_test_split(normalize(X), y, stratify=y, random_state=0, **sizes)


def one_run(est, data):
    X_train, X_test, y_train, y_test = data
    start = time.perf_counter()
    est.fit(X_train, y_train)
    seconds = time.perf_counter() - start
    return {
        "test_error_pct": 100 * (1 - est.score(X_test, y_test)),
        "n_support": int(np.sum(est.n_support_)),
        "online_error_pct": 100 * getattr(est, "n_mistakes_", np.nan) / len(y_train),
        "seconds": seconds,
    }


def summarize(algorithm, setting, runs, **extra):
    row = {"algorithm": algorithm, "setting": setting, **extra}
    for key in ("test_error_pct", "n_support", "online_error_pct", "seconds"):
        values = np.array([r[key] for r in runs], dtype=float)
        row[f"{key}_mean"] = float(values.mean())
        row[f"{key}_std"] = float(values.std())
    print(f"  {algorithm:<16} {setting:<12} test error {row['test_error_pct_mean']:5.2f} "
          f"+- {row['test_error_pct_std']:4.2f} %   patterns {row['n_support_mean']:7.1f}   "
          f"online error {row['online_error_pct_mean']:5.2f} %   "
          f"({row['seconds_mean']:.1f} s)", flush=True)
    return row


def experiment(name, quick):
    data = load(name)
    n_classes = len(np.unique(data[2]))
    orders = range(1 if quick else 5)
    print(f"\n== {name}: {len(data[2])} train / {len(data[3])} test, {n_classes} classes, "
          f"poly degree 9, beta = {BETA}, {len(orders)} random order(s) ==")

    def online(algorithm, setting, make, **extra):
        return summarize(algorithm, setting,
                         [one_run(make(order), data) for order in orders], **extra)

    rows = [online("MIRA", "", lambda o: KernelMIRA(beta=BETA, random_state=o, **KERNEL))]
    mira_size = rows[0]["n_support_mean"]
    fractions = np.geomspace(0.05, 1.0, 5 if quick else 10)
    budgets = sorted({max(int(round(f * mira_size)), n_classes) for f in fractions})
    for B in budgets:
        rows.append(online("MIRA fixed", f"B={B}",
                           lambda o: BudgetMIRA(budget=B, beta=BETA, random_state=o, **KERNEL),
                           budget=B))
    for beta in (BETA, 1.0, 5.0) if quick else BETA_GRID:
        rows.append(online("MIRA adaptive", f"beta={beta:g}",
                           lambda o: BudgetMIRA(budget=None, beta=beta, random_state=o,
                                                **KERNEL), beta=beta))
    for B in budgets:
        rows.append(online("OvR CKS", f"B={B}",
                           lambda o: BudgetPerceptron(budget=B // n_classes, beta=BETA,
                                                      random_state=o, **KERNEL),
                           budget=B))
    for C in SVC_C[:1] if quick else SVC_C:
        rows.append(summarize("SVM", f"C={C:g}", [one_run(SVC(C=C, **KERNEL), data)], C=C))
    return {"n_train": len(data[2]), "n_test": len(data[3]), "n_classes": n_classes,
            "n_orders": len(orders), "rows": rows, "claims": claims(rows)}


def claims(rows):
    """The paper's claims, checked on our numbers."""
    by = {}
    for row in rows:
        by.setdefault(row["algorithm"], []).append(row)
    mira = by["MIRA"][0]
    adaptive = next(r for r in by["MIRA adaptive"] if r["beta"] == BETA)
    fixed = sorted(by["MIRA fixed"], key=lambda r: r["budget"])
    svm = min(by["SVM"], key=lambda r: r["test_error_pct_mean"])
    quarter = min(fixed, key=lambda r: abs(r["budget"] - 0.25 * mira["n_support_mean"]))
    smallest = fixed[0]
    ovr = {r["budget"]: r for r in by["OvR CKS"]}
    shared_wins = sum(r["test_error_pct_mean"] < ovr[r["budget"]]["test_error_pct_mean"]
                      for r in fixed)
    out = [
        {"claim": "the adaptive cache reaches MIRA's error with far fewer patterns",
         "holds": bool(adaptive["test_error_pct_mean"] <= mira["test_error_pct_mean"] + 0.5
                       and adaptive["n_support_mean"] <= 0.5 * mira["n_support_mean"]),
         "detail": f"adaptive (beta = {BETA}) {adaptive['test_error_pct_mean']:.2f} % with "
                   f"{adaptive['n_support_mean']:.0f} patterns vs MIRA "
                   f"{mira['test_error_pct_mean']:.2f} % with {mira['n_support_mean']:.0f} "
                   f"({100 * adaptive['n_support_mean'] / mira['n_support_mean']:.0f} %)"},
        {"claim": "the fixed cache degrades gracefully as B shrinks",
         "holds": bool(quarter["test_error_pct_mean"] <= mira["test_error_pct_mean"] + 2.0),
         "detail": "test error at B = " + ", ".join(
             f"{r['budget']}: {r['test_error_pct_mean']:.1f} %" for r in fixed)
                   + f" (MIRA {mira['test_error_pct_mean']:.1f} %); at about 25 % of MIRA's "
                     f"size (B = {quarter['budget']}) {quarter['test_error_pct_mean']:.2f} %, at "
                     f"5 % (B = {smallest['budget']}) {smallest['test_error_pct_mean']:.2f} %"},
        {"claim": "single-epoch online learning is competitive with the SVM",
         "holds": bool(min(mira["test_error_pct_mean"], adaptive["test_error_pct_mean"])
                       <= svm["test_error_pct_mean"] + 1.0),
         "detail": f"MIRA {mira['test_error_pct_mean']:.2f} %, adaptive "
                   f"{adaptive['test_error_pct_mean']:.2f} %, best fixed "
                   f"{min(r['test_error_pct_mean'] for r in fixed):.2f} % vs SVM "
                   f"{svm['test_error_pct_mean']:.2f} % ({svm['setting']}, "
                   f"{svm['n_support_mean']:.0f} support vectors)"},
        {"claim": "(ours) a shared cache beats one-vs-rest at the same number of stored vectors",
         "holds": bool(shared_wins == len(fixed)),
         "detail": f"BudgetMIRA better at {shared_wins} of {len(fixed)} budgets"},
    ]
    print("\n  the paper's claims:")
    for c in out:
        print(f"  [{'holds' if c['holds'] else 'FAILS'}] {c['claim']}: {c['detail']}")
    return out


def plot(name, result, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter, ScalarFormatter

    rows = result["rows"]
    fig, ax = plt.subplots(figsize=(6.4, 4.6))
    styles = {"MIRA fixed": dict(marker="o", ls="-", color="C0"),
              "OvR CKS": dict(marker="s", ls="--", color="C2", ms=4),
              "MIRA adaptive": dict(marker="*", ls="none", color="C3", ms=11),
              "MIRA": dict(marker="D", ls="none", color="k", ms=7),
              "SVM": dict(marker="^", ls="none", color="C1", ms=8)}
    labels = {"MIRA fixed": "MIRA, fixed cache (Fig. 3)",
              "OvR CKS": "one-vs-rest CKS perceptron, same total vectors",
              "MIRA adaptive": "MIRA, adaptive cache (Fig. 2), beta grid",
              "MIRA": "MIRA (unbounded)", "SVM": "SVM (SVC, C = 1, 10, 100)"}
    for algorithm, style in styles.items():
        sel = sorted((r for r in rows if r["algorithm"] == algorithm),
                     key=lambda r: r["n_support_mean"])
        ax.errorbar([r["n_support_mean"] for r in sel], [r["test_error_pct_mean"] for r in sel],
                    yerr=[r["test_error_pct_std"] for r in sel], label=labels[algorithm],
                    capsize=2, lw=1.2, **style)
    points = {}     # several betas give the same model (beta only scales it)
    for r in rows:
        if r["algorithm"] == "MIRA adaptive":
            xy = (round(r["n_support_mean"]), round(r["test_error_pct_mean"], 1))
            points.setdefault(xy, []).append(r["setting"].removeprefix("beta="))
    for xy, betas in points.items():
        ax.annotate("beta=" + ", ".join(betas), xy, fontsize=6, xytext=(3, 4),
                    textcoords="offset points")
    ax.set_xscale("log")
    ax.set_yscale("log")
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_formatter(ScalarFormatter())
        axis.set_minor_formatter(NullFormatter())
    ax.set_xticks([t for t in (20, 50, 100, 200, 500, 1000, 2000, 5000)
                   if 0.5 * min(r["n_support_mean"] for r in rows) <= t
                   <= 2 * max(r["n_support_mean"] for r in rows)])
    ax.set_yticks([1, 2, 5, 10, 20, 50])
    ax.set_xlabel("number of support patterns (stored vectors)")
    ax.set_ylabel("test error (%)")
    ax.set_title(f"{name}: {result['n_train']} train, poly degree 9, one pass, "
                 f"{result['n_orders']} order(s)", fontsize=9)
    ax.legend(fontsize=7)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print(f"wrote {path}")


def main(argv=None):
    args = quick_and_parts_arguments(__doc__, "1 order, 5 budgets (< 1 min)", "--data",
                                     ["mnist", "digits"], argv)
    suffix = "_quick" if args.quick else ""
    results = {"quick": args.quick, "kernel": KERNEL, "beta": BETA}
    for name in args.data:
        results[name] = experiment(name, args.quick)
        folder = RESULTS if args.quick else DOC_IMAGES
        plot(name, results[name], folder / f"mira_fig4_{name}{suffix}.png")
    write_json(RESULTS / f"mira{suffix}.json", results)


if __name__ == "__main__":
    main()
