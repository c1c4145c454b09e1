"""Coverage of every method's calibrated 95% intervals under adaptive and iterative designs.

    python benchmarks/adaptive_coverage.py [--sizes 1000] [--seeds 2] [--starts 2 4]
                                           [--checkpoints 6 8 12] [--compact]
                                           [--prior-variances V [V ...]]

Simulated studies as in benchmarks/adaptive.py (``Study``, ``true_utilities``: n items,
normal or t3 utilities, tuples of T = 4, one MaxDiff judgment per tuple). A balanced start
of R0 appearances per item (``--starts``), then the platform's two designs from the
current Plackett-Luce fit, as ``run_iterative`` and ``run_adaptive`` do them: iterative
rounds (``adaptive.iterative_round``, every item once per round, in 2, 4, 8, ... score
buckets) and adaptive batches (``adaptive.adaptive_batch``, n / (2T) tuples each); and,
for reference, a fresh balanced design of each checkpoint's appearances.

At the first step within 0.3 of each of ``--checkpoints`` appearances per item
(judgments * T / n; a checkpoint stepped over is skipped, with a note), every method's
calibrated intervals (``intervals.calibrated``) are checked against the target of
benchmarks/coverage.py (``coverage.target``, the one ``scoring.py --coverage`` uses):
Plackett-Luce the true (centred) utilities, Bradley-Terry its value for the
design, counting its expected value for the design. Prints coverage (mean over seeds, with
the seeds' range) and mean width per cell (``--compact``: one row per cell, the methods
side by side), then per (strategy, method) the range over all cells and over single
runs, beside the band 0.93-0.97 and ``DESIGN_COVERAGE`` (bws/core/diagnostics.py).

``--prior-variances``: for Plackett-Luce also the empirical-Bayes prior variance the
calibrated fit chose at each checkpoint, and the coverage (same target) of intervals with
the prior variance fixed at each V (``model_intervals(..., prior_variance=V)``).
Figures, not assertions; benchmarks/RESULTS.md keeps a run
("Intervals under iterative rounds").
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import coverage  # noqa: E402  (benchmarks/coverage.py: the targets)
from adaptive import (  # noqa: E402
    DISTRIBUTIONS,
    MAX_APPEARANCES,
    MEMORY_LIMIT,
    SIZE,
    Study,
    true_utilities,
)

from bws.core.adaptive import DesignState, adaptive_batch, iterative_round  # noqa: E402
from bws.core.design import balanced_tuples  # noqa: E402
from bws.core.diagnostics import DESIGN_COVERAGE  # noqa: E402
from bws.core.intervals import calibrated, model_intervals  # noqa: E402

METHODS = ("plackett_luce", "bradley_terry", "counting")
STRATEGIES = ("iterative", "adaptive", "balanced")
BAND = (0.93, 0.97)
SHORT = {"plackett_luce": "PL", "bradley_terry": "BT", "counting": "counting"}
NEAR = 0.3  # a checkpoint counts within this many appearances of its target


def check(study: Study, methods, priors=()) -> dict:
    """Coverage and mean width of each method's intervals on the study's judgments; with
    ``priors``, Plackett-Luce's chosen prior variance and coverage at each fixed one."""
    judgments = study.judgments()
    out = {"spent": study.spent}
    for method in methods:
        _, intervals = calibrated(judgments, method, adaptive=True)
        goal = coverage.target(method, study.truth, study.tuples)
        inside = (intervals.low <= goal) & (goal <= intervals.high)
        out[method] = (float(np.mean(inside)), float(np.nanmean(intervals.high - intervals.low)))
        if method == "plackett_luce" and priors:
            out["prior"] = intervals.prior_variance
            for v in priors:
                _, fixed = model_intervals(judgments, "plackett_luce", prior_variance=v)
                low, high = fixed.low, fixed.high
                out[("fixed", v)] = float(np.mean((low <= goal) & (goal <= high)))
    return out


def designed(truth, seed, start, strategy, checkpoints, methods, priors=()) -> dict[int, dict]:
    """A balanced start of ``start`` appearances, then iterative rounds or adaptive batches
    on the current Plackett-Luce fit (the loops of adaptive.py's run_iterative and
    run_adaptive), checked at the first step within NEAR of each checkpoint (a
    checkpoint passed by more than NEAR is skipped)."""
    n = truth.size
    study = Study(truth, np.random.default_rng([seed, 1 if strategy == "iterative" else 2]))
    study.judge(balanced_tuples(n, SIZE, start, seed=seed))
    state = DesignState.from_tuples(study.tuples, n)
    batch_tuples = max(1, round(0.5 * n / SIZE))
    waiting, rows, step = sorted(checkpoints), {}, 0
    while waiting:
        reached = [c for c in waiting if study.spent >= c - NEAR]
        if any(abs(study.spent - c) <= NEAR for c in reached):
            row = check(study, methods, priors)
            rows.update({c: row for c in reached if abs(study.spent - c) <= NEAR})
        for c in reached:
            if c not in rows:
                print(f"# checkpoint {c} passed at {study.spent:.2f}", file=sys.stderr)
        waiting = [c for c in waiting if c not in reached]
        if not waiting:
            break
        scores, intervals = calibrated(study.judgments(), "plackett_luce", adaptive=True)
        if strategy == "iterative":
            batch = iterative_round(
                scores.scores,
                state,
                n_buckets=2 ** (step + 1),
                max_appearances=MAX_APPEARANCES,
                seed=seed + 2 ** (step + 1),
            )
        else:
            batch = adaptive_batch(
                scores.scores,
                intervals.std,
                state,
                batch_tuples=min(batch_tuples, round((max(waiting) - study.spent) * n / SIZE)),
                max_appearances=MAX_APPEARANCES,
                seed=seed * 1000 + step,
            )
        if batch.shape[0] == 0:
            break
        study.judge(batch)
        state = state.extended(batch)
        step += 1
    for c in waiting:
        print(f"# checkpoint {c} not reached (at {study.spent:.2f})", file=sys.stderr)
    return rows


def balanced(truth, seed, checkpoints, methods, priors=()) -> dict[int, dict]:
    rows = {}
    for r in sorted(checkpoints):
        study = Study(truth, np.random.default_rng([seed, r]))
        study.judge(balanced_tuples(truth.size, SIZE, r, seed=seed + r))
        rows[r] = check(study, methods, priors)
    return rows


def print_priors(cells, priors) -> None:
    """Plackett-Luce per cell: the chosen prior variance, coverage at each fixed one."""
    print("\nPlackett-Luce with the prior variance fixed (mean (seeds' range)):\n")
    heads = " | ".join(f"V = {v:g}" for v in priors)
    print(f"| items | utilities | start | strategy | app./item | EB prior | {heads} |")
    print("|---:|---|---:|---|---:|---|" + "---|" * len(priors))
    singles: dict = {}
    for (n, distribution, start, strategy, _), rows in cells.items():
        found = []
        for key in ["prior"] + [("fixed", v) for v in priors]:
            values = [r[key] for r in rows]
            singles.setdefault((strategy, key), []).extend(values)
            found.append(f"{np.mean(values):.3f} ({min(values):.3f}-{max(values):.3f})")
        spent = np.mean([r["spent"] for r in rows])
        print(
            f"| {n:,} | {distribution} | {start} | {strategy} | {spent:.1f} | {' | '.join(found)} |"
        )
    for strategy in dict.fromkeys(key[0] for key in singles):
        chosen = singles[(strategy, "prior")]
        print(f"{strategy}: EB prior {min(chosen):.2f}-{max(chosen):.2f}; single runs", end="")
        print(
            ",".join(
                f" {v:g}: {min(c):.3f}-{max(c):.3f}"
                for v in priors
                for c in [singles[(strategy, ("fixed", v))]]
            )
        )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000])
    parser.add_argument("--distributions", nargs="+", default=list(DISTRIBUTIONS))
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--starts", type=int, nargs="+", default=[2, 4])
    parser.add_argument("--checkpoints", type=int, nargs="+", default=[6, 8, 12])
    parser.add_argument("--strategies", nargs="+", default=list(STRATEGIES))
    parser.add_argument("--methods", nargs="+", default=list(METHODS))
    parser.add_argument(
        "--compact", action="store_true", help="one row per cell, the methods side by side"
    )
    parser.add_argument(
        "--prior-variances",
        type=float,
        nargs="+",
        default=[],
        metavar="V",
        help="Plackett-Luce: coverage with each fixed prior variance, and the chosen one",
    )
    args = parser.parse_args(argv)
    priors = args.prior_variances if "plackett_luce" in args.methods else []
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    started, cpu = time.time(), time.process_time()
    cells: dict = {}  # (n, distribution, start, strategy, checkpoint) -> per-seed rows
    for n in args.sizes:
        for distribution in args.distributions:
            for seed in range(args.seeds):
                truth = true_utilities(n, distribution, np.random.default_rng([n, seed]))
                for strategy in args.strategies:
                    starts = ["-"] if strategy == "balanced" else args.starts
                    for start in starts:
                        if strategy == "balanced":
                            rows = balanced(truth, seed, args.checkpoints, args.methods, priors)
                        else:
                            rows = designed(
                                truth,
                                seed,
                                start,
                                strategy,
                                args.checkpoints,
                                args.methods,
                                priors,
                            )
                        for checkpoint, row in rows.items():
                            key = (n, distribution, start, strategy, checkpoint)
                            cells.setdefault(key, []).append(row)
                        print(
                            f"# {n} {distribution} seed {seed} {strategy} start {start}:"
                            f" {time.time() - started:.0f} s",
                            file=sys.stderr,
                            flush=True,
                        )
    print(
        f"T = {SIZE}, one judgment per tuple, {args.seeds} seed(s) per cell (coverage: mean,"
        f" seeds' range); designs from the Plackett-Luce fit, at most {MAX_APPEARANCES}"
        " appearances per item.\n"
    )
    if args.compact:
        names = " | ".join(SHORT.get(m, m) for m in args.methods)
        print(f"| items | utilities | start | strategy | app./item | {names} | widths |")
        print("|---:|---|---:|---|---:|" + "---|" * len(args.methods) + "---|")
    else:
        print("| items | utilities | start | strategy | appearances | method | coverage", end="")
        print(" | mean width |")
        print("|---:|---|---:|---|---:|---|---|---:|")
    spans: dict = {}
    for (n, distribution, start, strategy, _), rows in cells.items():
        label = f"| {n:,} | {distribution} | {start} | {strategy}"
        label += f" | {np.mean([r['spent'] for r in rows]):.1f}"
        found, widths = [], []
        for method in args.methods:
            covers = [r[method][0] for r in rows]
            widths.append(np.mean([r[method][1] for r in rows]))
            span = spans.setdefault((strategy, method), ([], []))
            span[0].append(np.mean(covers))
            span[1].extend(covers)
            found.append(f"{np.mean(covers):.3f} ({min(covers):.3f}-{max(covers):.3f})")
            if not args.compact:
                print(f"{label} | {method} | {found[-1]} | {widths[-1]:.2f} |")
        if args.compact:
            print(f"{label} | {' | '.join(found)} | {' / '.join(f'{w:.2f}' for w in widths)} |")
    print(f"\nRange per (strategy, method), band {BAND[0]:.2f}-{BAND[1]:.2f}:")
    for (strategy, method), (means, singles) in spans.items():
        below = sum(c < BAND[0] for c in singles)
        above = sum(c > BAND[1] for c in singles)
        stated = DESIGN_COVERAGE.get((strategy, method), "not flagged")
        print(
            f"{strategy} {method}: cells {min(means):.3f}-{max(means):.3f},"
            f" single runs {min(singles):.3f}-{max(singles):.3f} ({below} of {len(singles)}"
            f" below the band, {above} above; DESIGN_COVERAGE: {stated})"
        )
    if priors:
        print_priors(cells, priors)
    print(f"\n{time.time() - started:.0f} s wall, {time.process_time() - cpu:.0f} s CPU")


if __name__ == "__main__":
    main()
