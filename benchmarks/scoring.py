"""Scoring benchmark: fits, bootstrap intervals and split-half on simulated MaxDiff data.

    python benchmarks/scoring.py [--sizes 1000 10000 100000] [--resamples 1000]
    python benchmarks/scoring.py --coverage [coverage.py's options, e.g. --reps 10 --old]

For each size N: a balanced design with T = 4 and r = 8 (2N tuples), one judgment per
tuple drawn from the MaxDiff model with utilities ~ N(0, 1). Prints seconds per fit,
seconds for the bootstrap intervals of each method and split-half seconds (wall, with
CPU seconds in brackets; fits are the best of three runs), Spearman with the true
utilities, and how often the Plackett-Luce 95% intervals cover the true (centred)
utility. Figures, not assertions.

``--coverage`` prints instead the full coverage table of every method's calibrated 95%
intervals (coverage and mean width per method x appearances x judgments per tuple x
annotator spread, beside the old percentile bootstrap with ``--old``): the simulation of
benchmarks/coverage.py, whose options follow it.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bws.core import scoring  # noqa: E402
from bws.core.bootstrap import bootstrap_intervals  # noqa: E402
from bws.core.choice_models import sample_maxdiff
from bws.core.design import balanced_tuples  # noqa: E402
from bws.core.judgments import Judgments  # noqa: E402
from bws.core.reliability import split_half  # noqa: E402


def simulate(n_items: int, seed: int) -> tuple[Judgments, np.ndarray]:
    rng = np.random.default_rng(seed)
    truth = rng.normal(size=n_items)
    truth -= truth.mean()
    tuples = balanced_tuples(n_items, 4, 8, seed=seed)
    best, worst = sample_maxdiff(tuples, truth, rng)
    m = tuples.shape[0]
    judgments = Judgments(
        tuples, best, worst, np.arange(m), np.zeros(m, dtype=np.int64), np.arange(m), n_items
    )
    return judgments, truth


def timed(function, *args, repeat: int = 1, **kwargs):
    """The result and the shortest (wall, CPU) seconds of ``repeat`` runs.

    The shortest run is the one least disturbed by other processes on a shared machine;
    CPU time beside it shows how much of the wall time was waiting for a core.
    """
    best = (float("inf"), float("inf"))
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        result = function(*args, **kwargs)
        best = min(best, (time.perf_counter() - wall, time.process_time() - cpu))
    return result, best


def run(n_items: int, resamples: int, trials: int, seed: int) -> dict:
    judgments, truth = simulate(n_items, seed)
    row = {"items": n_items, "judgments": judgments.n_judgments}
    for method in scoring.METHODS:
        fitted, seconds = timed(scoring.fit, method, judgments, repeat=3)
        row[f"{method}_fit"] = seconds
        row[f"{method}_rho"] = float(spearmanr(fitted.scores, truth)[0])
        row[f"{method}_iterations"] = fitted.iterations
        if resamples:
            intervals, seconds = timed(
                bootstrap_intervals,
                judgments,
                method,
                scores=fitted,
                resamples=resamples,
                seed=seed,
            )
            row[f"{method}_bootstrap"] = seconds
            if method == "plackett_luce":
                inside = (intervals.low <= truth) & (truth <= intervals.high)
                row["coverage"] = float(inside.mean())
        print(f"  {n_items} {method}: done", file=sys.stderr, flush=True)
    reliability, seconds = timed(split_half, judgments, trials=trials, seed=seed)
    row["split_half"] = seconds
    row["split_half_r"] = reliability.mean
    row["split_half_sb"] = reliability.spearman_brown
    return row


def _seconds(pair, digits: int) -> str:
    """Wall seconds with CPU seconds in brackets."""
    if pair is None:
        return "-"
    wall, cpu = pair
    return f"{wall:.{digits}f} ({cpu:.{digits}f})"


def markdown(rows: list[dict], resamples: int, trials: int) -> str:
    names = {"counting": "counting", "bradley_terry": "Bradley-Terry", "plackett_luce": "PL"}
    lines = [
        "| items | judgments | "
        + " | ".join(f"{names[m]} fit s" for m in scoring.METHODS)
        + " | "
        + " | ".join(f"{names[m]} {resamples}-resample s" for m in scoring.METHODS)
        + f" | split-half ({trials}) s | "
        + " | ".join(f"rho {names[m]}" for m in scoring.METHODS)
        + " | PL 95% coverage | split-half r (S-B) |",
        "|" + "---|" * 14,
    ]
    for row in rows:
        cells = [f"{row['items']:,}", f"{row['judgments']:,}"]
        cells += [_seconds(row[f"{m}_fit"], 3) for m in scoring.METHODS]
        cells += [_seconds(row.get(f"{m}_bootstrap"), 2) for m in scoring.METHODS]
        cells.append(_seconds(row["split_half"], 2))
        cells += [f"{row[f'{m}_rho']:.3f}" for m in scoring.METHODS]
        cells.append(f"{row.get('coverage', float('nan')):.3f}")
        sb = row["split_half_sb"]
        cells.append(f"{row['split_half_r']:.2f} ({'undefined' if sb is None else f'{sb:.2f}'})")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--coverage"]:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import coverage

        coverage.main(argv[1:])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--coverage", action="store_true", help="the coverage table (first; see above)"
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000, 100_000])
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    print(
        f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"numpy {np.__version__}, python {platform.python_version()}"
    )
    rows = []
    for n_items in args.sizes:
        rows.append(run(n_items, args.resamples, args.trials, args.seed))
    print(markdown(rows, args.resamples, args.trials))


if __name__ == "__main__":
    main()
