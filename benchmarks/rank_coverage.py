"""Rank-interval coverage: how often the rank intervals and top-k sets hold the true ranks.

    python benchmarks/rank_coverage.py [--items 20 100 250] [--reps 20] [--appearances 8]
        [--methods ...] [--utilities normal|t3] [--scale 1.0] [--draws 1000]

Simulated studies as in benchmarks/coverage.py (known utilities of sd ``--scale``, a
balanced design with T = 4 and r appearances per item, one MaxDiff judgment per tuple),
scored with the calibrated intervals, then bws.core.ranks.score_rank_intervals. The
true ranks are the ranks of the true utilities; "target" columns use the ranks of what
each method estimates instead (benchmarks/coverage.py: the design value for
Bradley-Terry and counting), which can differ where two items are close.

Per method and size: marginal coverage (share of items whose interval holds its rank),
simultaneous coverage (share of studies where every interval does; stated 0.95), top-k
(k = a tenth of the items): the share of studies where every item declared in the top k
is (confident) and where the possible set holds the whole true top k (possible), mean
widths and set sizes, seconds per study for the rank step. Figures, not assertions.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.coverage import SIZE, target  # noqa: E402
from bws.core import scoring  # noqa: E402
from bws.core.choice_models import sample_maxdiff  # noqa: E402
from bws.core.design import balanced_tuples  # noqa: E402
from bws.core.intervals import calibrated  # noqa: E402
from bws.core.judgments import Judgments  # noqa: E402
from bws.core.ranks import score_rank_intervals  # noqa: E402


def true_ranks(values: np.ndarray) -> np.ndarray:
    """1 for the highest value."""
    ranks = np.empty(values.size, dtype=np.int64)
    ranks[np.argsort(-values, kind="stable")] = np.arange(1, values.size + 1)
    return ranks


def cell(method, n_items, appearances, reps, draws, utilities, scale):
    keys = ("marginal", "simultaneous", "target_marginal", "target_simultaneous")
    keys += ("confident", "possible", "width", "sim_width", "n_confident", "n_possible", "sec")
    found = {key: [] for key in keys}
    k = max(1, n_items // 10)
    for rep in range(reps):
        seed = 7919 * rep + 1
        judgments, truth, tuples = simulate(n_items, appearances, seed, utilities, scale)
        own = None
        scores, intervals = calibrated(judgments, method)
        started = time.perf_counter()
        ranks = score_rank_intervals(judgments, scores, intervals, draws=draws, seed=rep)
        found["sec"].append(time.perf_counter() - started)
        for name, values in (("", truth), ("target_", target(method, truth, tuples, own))):
            rank = true_ranks(values)
            marginal = (ranks.low <= rank) & (rank <= ranks.high)
            joint = (ranks.simultaneous_low <= rank) & (rank <= ranks.simultaneous_high)
            found[name + "marginal"].append(marginal.mean())
            found[name + "simultaneous"].append(float(joint.all()))
        rank = true_ranks(truth)
        top = ranks.top_k(k)
        found["confident"].append(float(np.all(rank[top.confident] <= k)))
        found["possible"].append(float(np.all(np.isin(np.flatnonzero(rank <= k), top.possible))))
        found["width"].append(np.mean(ranks.high - ranks.low + 1))
        found["sim_width"].append(np.mean(ranks.simultaneous_high - ranks.simultaneous_low + 1))
        found["n_confident"].append(top.confident.size)
        found["n_possible"].append(top.possible.size)
    return {key: float(np.mean(values)) for key, values in found.items()}, k, ranks.procedure


def simulate(n_items, appearances, seed, utilities="normal", scale=1.0):
    """One study: judgments, true utilities (normal, or t with 3 degrees of freedom scaled
    to the same sd, ``scale``) and the design (one MaxDiff judgment per tuple)."""
    rng = np.random.default_rng(seed)
    if utilities == "t3":
        truth = rng.standard_t(3, size=n_items) / np.sqrt(3.0)
    else:
        truth = rng.normal(size=n_items)
    truth = scale * (truth - truth.mean())
    tuples = balanced_tuples(n_items, SIZE, appearances, seed=seed)
    best, worst = sample_maxdiff(tuples, truth, rng)
    m = tuples.shape[0]
    zeros = np.zeros(m, dtype=np.int64)
    judgments = Judgments(tuples, best, worst, np.arange(m), zeros, np.arange(m), n_items)
    return judgments, truth, tuples


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", nargs="+", type=int, default=[20, 100, 250])
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--appearances", type=int, default=8)
    parser.add_argument("--methods", nargs="+", default=list(scoring.METHODS))
    parser.add_argument("--utilities", choices=("normal", "t3"), default="normal")
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--scale", type=float, default=1.0, help="sd of the true utilities")
    args = parser.parse_args(argv)
    print(
        f"{args.reps} studies per cell, T = 4, r = {args.appearances}, one judgment per "
        f"tuple, {args.utilities} utilities of sd {args.scale}, 95% rank intervals, "
        f"{args.draws} draws"
    )
    header = (
        "| method | items | procedure | marginal | simultaneous | target marginal "
        "| target simultaneous | top-k confident | top-k possible | k | mean width "
        "| mean simultaneous width | confident size | possible size | s per study |"
    )
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    for method in args.methods:
        for n in args.items:
            f, k, procedure = cell(
                method, n, args.appearances, args.reps, args.draws, args.utilities, args.scale
            )
            row = [method, n, procedure]
            row += [f"{f[key]:.3f}" for key in ("marginal", "simultaneous")]
            row += [f"{f[key]:.3f}" for key in ("target_marginal", "target_simultaneous")]
            row += [f"{f['confident']:.3f}", f"{f['possible']:.3f}", k]
            row += [f"{f[key]:.1f}" for key in ("width", "sim_width")]
            row += [f"{f[key]:.1f}" for key in ("n_confident", "n_possible")]
            row += [f"{f['sec']:.2f}"]
            print("| " + " | ".join(str(x) for x in row) + " |", flush=True)


if __name__ == "__main__":
    main()
