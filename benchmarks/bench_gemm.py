"""The training loop's GEMM: which operand layout OpenBLAS multiplies fastest.

Each chunk of ``c`` examples (rows of ``d`` features) is multiplied by the
``n`` stored rows, ``chunk_k = rows @ store.T``.  The same product can be
asked of BLAS with the chunk as it is (``"T", "N"`` on the column-major
transposes) or with the chunk transposed first (``"T", "T"``).  OpenBLAS's
x86-64 builds multiply products of at most 10^6 ``m n k`` terms with
"small-matrix" kernels that skip packing the operands, but not every layout
may use them: this script times both layouts at the engine's chunk shapes,
best of ``--repeats`` runs of ``--calls`` calls each, and subtracts the
Python call's own cost (a 1 x 1 x 1 product).  The transposition itself
(``c d`` copies, done where the engine computes the rows' norms) is timed
too.

    python benchmarks/bench_gemm.py            # writes results/gemm.json
"""

import argparse
import time

from _common import RESULTS, use_one_blas_thread, write_json

use_one_blas_thread()

import numpy as np  # noqa: E402
from scipy.linalg.blas import dgemm  # noqa: E402

# (stored rows n, chunk c, features d): the engine's chunks at B = 100 and
# 500 for d = 2, 54 and 784 (``skbudget._engine.chunk_length``), and the
# chunks of the previous rule (c = n / 4 in [32, 256]) for comparison
SHAPES = [(100, 32, 2), (100, 32, 54), (100, 32, 123), (500, 32, 2), (500, 32, 54),
          (500, 125, 54), (100, 8, 784), (100, 32, 784), (500, 125, 784)]


def per_call(function, calls, repeats):
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            function()
        best = min(best, (time.perf_counter() - start) / calls)
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    rng = np.random.RandomState(0)
    one = np.ones((1, 1), order="F")
    overhead = per_call(lambda: dgemm(1.0, one, one, trans_a=1, trans_b=1), args.calls,
                        args.repeats)
    print(f"Python call overhead {overhead * 1e6:.2f} us (subtracted)")
    print(f"{'n':>5} {'c':>4} {'d':>4} {'m n k':>9}  {'rows as they are':>17}  "
          f"{'rows transposed':>16}  {'transposing':>11}  speed-up")
    rows_out = []
    for n, c, d in SHAPES:
        store = rng.rand(n, d)          # C-contiguous, as the engine's store
        rows = rng.rand(c, d)           # the chunk, C-contiguous
        rows_t = np.asfortranarray(rows)    # its transpose's memory (d x c, C order)
        out = np.empty((n, c), order="F")   # chunk_k's memory (c x n, C order)
        calls = max(20, min(args.calls, int(5e8 / (n * c * max(d, 8)))))
        as_is = per_call(lambda: dgemm(1.0, store.T, rows.T, trans_a=1, trans_b=0, c=out,
                                       overwrite_c=1), calls, args.repeats) - overhead
        transposed = per_call(lambda: dgemm(1.0, store.T, rows_t, trans_a=1, trans_b=1, c=out,
                                            overwrite_c=1), calls, args.repeats) - overhead
        copy = per_call(lambda: rows_t.__setitem__(Ellipsis, rows), calls, args.repeats)
        row = {"n": n, "c": c, "d": d, "products": n * c * d, "as_is_us": as_is * 1e6,
               "transposed_us": transposed * 1e6, "transposing_us": copy * 1e6,
               "speedup": as_is / (transposed + copy)}
        rows_out.append(row)
        print(f"{n:5d} {c:4d} {d:4d} {n * c * d:9d}  {as_is * 1e6:14.2f} us  "
              f"{transposed * 1e6:13.2f} us  {copy * 1e6:8.2f} us  {row['speedup']:6.2f}x")
    write_json(RESULTS / "gemm.json", {"overhead_us": overhead * 1e6, "shapes": rows_out})


if __name__ == "__main__":
    main()
