"""Benchmark of the balanced tuple design: time and balance at 10^4, 10^5 and 10^6 items.

    python benchmarks/tuple_design.py [--sizes 10000 100000 1000000] [--tuple-size 4]
        [--appearances 8] [--seed 42] [--repeats 3]

Prints one row per size: wall and CPU seconds of ``balanced_tuples`` (best of --repeats),
appearances min/max, repeated pairs, tuples with an item twice, per item per position
counts (min/max and the largest spread within an item), and the algebraic connectivity
(second-smallest Laplacian eigenvalue) of the co-occurrence graph at the smallest size.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np
import scipy
import scipy.sparse as sp
from scipy.sparse.linalg import lobpcg

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bws.core.design import balanced_tuples, design_summary  # noqa: E402


def algebraic_connectivity(tuples: np.ndarray, n: int) -> float:
    """Second-smallest eigenvalue of the co-occurrence graph's Laplacian (pair counts)."""
    size = tuples.shape[1]
    i, j = np.triu_indices(size, 1)
    rows = np.concatenate([tuples[:, i].ravel(), tuples[:, j].ravel()])
    cols = np.concatenate([tuples[:, j].ravel(), tuples[:, i].ravel()])
    adjacency = sp.coo_matrix((np.ones(rows.size), (rows, cols)), shape=(n, n)).tocsr()
    laplacian = sp.diags(np.asarray(adjacency.sum(axis=1)).ravel()) - adjacency
    # The constant vector spans the null space; LOBPCG orthogonal to it finds the next
    # eigenvalue (a sparse LU for shift-invert fills in on a random graph).
    rng = np.random.default_rng(0)
    constant = np.ones((n, 1)) / np.sqrt(n)
    start = rng.standard_normal((n, 4))
    values, _ = lobpcg(laplacian, start, Y=constant, largest=False, tol=1e-6, maxiter=1000)
    return float(np.min(values))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--tuple-size", type=int, default=4)
    parser.add_argument("--appearances", type=int, default=8)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    size, r = args.tuple_size, args.appearances
    print(
        f"Python {platform.python_version()}, numpy {np.__version__}, scipy {scipy.__version__},"
        f" {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}"
    )
    print(f"T = {size}, r = {r}, seed {args.seed}, best of {args.repeats}")
    header = (
        f"{'items':>10} {'tuples':>10} {'wall s':>7} {'CPU s':>7} {'app min/max':>11}"
        f" {'repeated':>8} {'twice':>5} {'pos min/max':>11} {'pos spread':>10}"
        f" {'alg. conn.':>10}"
    )
    print(header)
    print("-" * len(header))
    for k, n in enumerate(args.sizes):
        best_wall = best_cpu = float("inf")
        for _ in range(args.repeats):
            wall, cpu = time.perf_counter(), time.process_time()
            tuples = balanced_tuples(n, size, r, seed=args.seed)
            best_wall = min(best_wall, time.perf_counter() - wall)
            best_cpu = min(best_cpu, time.process_time() - cpu)
        summary = design_summary(tuples, n)
        connectivity = f"{algebraic_connectivity(tuples, n):10.2f}" if k == 0 else f"{'':>10}"
        print(
            f"{n:>10,} {summary.n_tuples:>10,} {best_wall:>7.2f} {best_cpu:>7.2f}"
            f" {f'{summary.appearances_min}/{summary.appearances_max}':>11}"
            f" {summary.repeated_pairs:>8,} {summary.duplicate_items:>5}"
            f" {f'{summary.position_min}/{summary.position_max}':>11}"
            f" {summary.position_spread:>10} {connectivity}",
            flush=True,
        )


if __name__ == "__main__":
    main()
