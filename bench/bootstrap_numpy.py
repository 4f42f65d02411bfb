"""Vectorized NumPy twin of IMEP's task-stratified paired bootstrap of theta-bar.

Reads JSON on stdin: {"A": [...], "S": [...], "T": [...], "task": [...], "replicates": R, "seed": s,
"runs": k}. Times k runs of the same resampling as src/stats/bootstrap.ts (per task, R x n_t index
draws with rng.integers, fancy-indexing, mean; equal task weights; sort; linear = type-7 percentiles)
and prints one JSON line with the best time. Run by bench/bootstrap-vs-numpy.ts with /usr/bin/python3.
"""

import json
import sys
import time

try:
    import numpy as np
except ImportError:  # reported by the TS bench
    print(json.dumps({"error": "numpy-missing", "python": sys.version.split()[0]}))
    sys.exit(0)


def bootstrap(a, s, t, task, replicates, seed):
    d = (a ^ t).astype(np.int8) - (a ^ s).astype(np.int8)  # f_T - f_S per unit
    tasks = np.unique(task)
    rng = np.random.default_rng(seed)
    reps = np.zeros(replicates)
    w = 1.0 / len(tasks)
    for k in tasks:
        dt = d[task == k]
        idx = rng.integers(0, dt.size, size=(replicates, dt.size))
        reps += w * dt[idx].mean(axis=1)
    reps.sort()
    lo, hi = np.percentile(reps, [2.5, 97.5])
    return reps, lo, hi


def main():
    cfg = json.load(sys.stdin)
    a = np.asarray(cfg["A"], dtype=np.uint8)
    s = np.asarray(cfg["S"], dtype=np.uint8)
    t = np.asarray(cfg["T"], dtype=np.uint8)
    task = np.asarray(cfg["task"], dtype=np.int32)
    best = float("inf")
    for run in range(int(cfg["runs"])):
        t0 = time.perf_counter()
        reps, lo, hi = bootstrap(a, s, t, task, int(cfg["replicates"]), int(cfg["seed"]) + run)
        best = min(best, time.perf_counter() - t0)
    print(
        json.dumps(
            {
                "numpy_version": np.__version__,
                "best_ms": best * 1e3,
                "runs": int(cfg["runs"]),
                "mean": float(reps.mean()),
                "se": float(reps.std(ddof=1)),
                "interval95": [float(lo), float(hi)],
            }
        )
    )


if __name__ == "__main__":
    main()
