"""Interval coverage: how often each method's 95% intervals hold the value they estimate.

    python benchmarks/coverage.py [--items 250 ...] [--reps 20] [--methods ...] [--old]
    python benchmarks/coverage.py --small [--reps 20]   (6, 10, 20, 40, 100 items)
    python benchmarks/coverage.py --deciles [--utilities normal t3] [--reps 20]

Simulated studies with known utilities (normal, sd 1), a balanced design with T = 4 and
r appearances per item (4, 8, 16, 24), one or three judgments per tuple, drawn from the
MaxDiff model by annotators who agree or who differ (each of 20 annotators has their own
utilities, the true ones plus normal noise of sd 0.5 per item). Targets: Plackett-Luce
against the true utilities (centred); Bradley-Terry against its value for the design (the
fit to the exact expected outcomes of every tuple); counting against its expected value
for the design (the mean over an item's tuples of P(best) - P(worst)).

Prints per method and cell: coverage (with its standard error over replicates), mean
interval width, and for the model fits the slope of estimate on truth, the slope of
truth on estimate, RMSE and Spearman with the truth. ``--old`` adds the percentile
bootstrap (by tuple, 1000 resamples) the platform used before. ``--small``: studies of 6 to
100 items, r = 4, 8, 16, annotators who agree, with at least SMALL_INTERVALS intervals per
cell (more studies where the items are few), and the share of items whose interval the
platform marks approximate. ``--deciles [--utilities normal t3]``: coverage of the lowest
and the highest tenth of the items by true utility (t3: Student's t, 3 degrees of freedom,
scaled to sd 1) and of the middle eight, with the calibration slope, and the coverage of
the lowest and highest tenth of the estimates (the items the dashboard marks).
``--no-tails``: the plain posterior intervals, outer ends not moved out
(bws/core/tail_intervals.py). Figures, not
assertions; benchmarks/RESULTS.md keeps a run.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bws.core import scoring  # noqa: E402
from bws.core.bootstrap import bootstrap_intervals  # noqa: E402
from bws.core.design import balanced_tuples  # noqa: E402
from bws.core.diagnostics import diagnose_report  # noqa: E402
from bws.core.intervals import calibrated  # noqa: E402
from bws.core.judgments import Judgments  # noqa: E402

ANNOTATORS = 20
SIZE = 4
SMALL_ITEMS = (6, 10, 20, 40, 100)
SMALL_INTERVALS = 2500


def draw_utilities(rng, n_items, utilities="normal"):
    """True utilities of sd 1: normal, or Student's t with 3 degrees of freedom scaled to
    sd 1 (its variance is 3) for heavy tails."""
    if utilities == "t3":
        return rng.standard_t(3, size=n_items) / np.sqrt(3.0)
    return rng.normal(size=n_items)


def simulate(n_items, appearances, per_tuple, spread, seed, utilities="normal"):
    """Judgments and the true utilities and design of one simulated study."""
    rng = np.random.default_rng(seed)
    truth = draw_utilities(rng, n_items, utilities)
    truth -= truth.mean()
    tuples = balanced_tuples(n_items, SIZE, appearances, seed=seed)
    m = tuples.shape[0]
    rows = np.repeat(tuples, per_tuple, axis=0)
    tuple_ids = np.repeat(np.arange(m), per_tuple)
    # the annotators of one tuple are different people
    first = rng.integers(0, ANNOTATORS, size=m).repeat(per_tuple)
    annotators = (first + np.tile(np.arange(per_tuple), m)) % ANNOTATORS
    own = rng.normal(scale=spread, size=(ANNOTATORS, n_items)) if spread else 0.0
    utility = truth[rows] + (own[annotators[:, None], rows] if spread else 0.0)
    best = np.argmax(utility + rng.gumbel(size=utility.shape), axis=1)
    rest = -utility + rng.gumbel(size=utility.shape)
    rest[np.arange(rows.shape[0]), best] = -np.inf
    worst = np.argmax(rest, axis=1)
    order = np.arange(rows.shape[0])
    judgments = Judgments(rows, best, worst, tuple_ids, annotators, order, n_items)
    return judgments, truth, tuples, (own if spread else None)


def outcome_probabilities(truth, tuples, own=None):
    """P(best = a, worst = b) for every tuple: (m, T, T) under the MaxDiff model; with
    ``own`` (each annotator's utilities), averaged over the annotators."""
    if own is not None:
        return np.mean([outcome_probabilities(u, tuples) for u in truth + own], axis=0)
    utility = truth[tuples]
    p_best = np.exp(utility - utility.max(axis=1, keepdims=True))
    p_best /= p_best.sum(axis=1, keepdims=True)
    joint = np.zeros((tuples.shape[0], SIZE, SIZE))
    for b in range(SIZE):
        others = np.arange(SIZE) != b
        e = np.exp(-utility[:, others])
        joint[:, b, others] = p_best[:, [b]] * e / e.sum(axis=1, keepdims=True)
    return joint


def expected_counting(truth, tuples, own=None):
    joint = outcome_probabilities(truth, tuples, own)
    net = joint.sum(axis=2) - joint.sum(axis=1)
    n = truth.size
    return np.bincount(tuples.ravel(), net.ravel(), n) / np.bincount(tuples.ravel(), minlength=n)


def design_value(method, truth, tuples, own=None):
    """A model's value for the design: its fit to every outcome of every tuple, weighted by
    its probability (a weak penalty only fixes the scale's origin)."""
    joint = outcome_probabilities(truth, tuples, own)
    m = tuples.shape[0]
    best, worst = np.nonzero(~np.eye(SIZE, dtype=bool))
    items = np.tile(tuples, (best.size, 1))
    weights = joint[:, best, worst].T.ravel()
    rows = items.shape[0]
    judgments = Judgments(
        items,
        np.repeat(best, m),
        np.repeat(worst, m),
        np.arange(rows),
        np.zeros(rows, dtype=np.int64),
        np.arange(rows),
        truth.size,
    )
    fitted = scoring.fit(method, judgments, alpha=1e-6, weights=weights * 1000.0)
    return fitted.scores - fitted.scores.mean()


def target(method, truth, tuples, own=None):
    """What each method's intervals should hold: Plackett-Luce the true utilities, the
    others their expected value for the design (over the annotators' own utilities)."""
    if method == "plackett_luce":
        return truth
    if method == "bradley_terry":
        return design_value(method, truth, tuples, own)
    return expected_counting(truth, tuples, own)


def cell(method, n_items, appearances, per_tuple, spread, reps, old, tails=True):
    figures = {key: [] for key in ("cover", "width", "slope", "calibration", "rmse", "rho")}
    figures.update({"old_cover": [], "old_width": [], "population_cover": []})
    figures.update({"approximate": [], "plain_inside": []})
    for rep in range(reps):
        judgments, truth, tuples, own = simulate(
            n_items, appearances, per_tuple, spread, 7919 * rep + 1
        )
        goal = target(method, truth, tuples, own)
        scores, intervals = calibrated(judgments, method, tails=tails)
        inside = (intervals.low <= goal) & (goal <= intervals.high)
        figures["cover"].append(inside.mean())
        # The items whose interval the platform shows as approximate, and the others.
        marked = diagnose_report(judgments, scores, intervals).approximate
        figures["approximate"].append(marked.mean())
        figures["plain_inside"].extend(inside[~marked])
        if method == "plackett_luce" and own is not None:
            # What the judgments can tell: the utilities the annotators' pooled choices
            # follow, flatter than the true ones when annotators differ.
            pooled = design_value(method, truth, tuples, own)
            held = (intervals.low <= pooled) & (pooled <= intervals.high)
            figures["population_cover"].append(held.mean())
        figures["width"].append(np.nanmean(intervals.high - intervals.low))
        estimate = scores.scores
        figures["slope"].append(np.polyfit(goal, estimate, 1)[0])
        figures["calibration"].append(np.polyfit(estimate, goal, 1)[0])
        figures["rmse"].append(np.sqrt(np.mean((estimate - goal) ** 2)))
        figures["rho"].append(spearmanr(estimate, truth)[0])
        if old:
            plain = scoring.fit(method, judgments)
            boot = bootstrap_intervals(judgments, method, scores=plain, resamples=1000, seed=rep)
            figures["old_cover"].append(((boot.low <= goal) & (goal <= boot.high)).mean())
            figures["old_width"].append(np.nanmean(boot.high - boot.low))
    result = {key: float(np.mean(values)) for key, values in figures.items() if values}
    result["cover_se"] = float(np.std(figures["cover"]) / np.sqrt(reps))
    plain = figures["plain_inside"]
    result["plain_cover"] = float(np.mean(plain)) if plain else float("nan")
    return result


def decile_cell(method, n_items, appearances, utilities, reps, tails=True):
    """Coverage per decile of the true utility, pooled over ``reps`` studies (one judgment
    per tuple, annotators who agree), and the calibration slope (truth on estimate, the
    mean of the studies' slopes). Deciles by rank within each study: the lowest and the
    highest tenth of the items, and the middle eight pooled."""
    inside_by_decile = [[] for _ in range(10)]
    by_estimate = {"low": [], "high": []}  # the outer tenths of the estimates
    cover, calibration = [], []
    for rep in range(reps):
        judgments, truth, tuples, own = simulate(
            n_items, appearances, 1, 0.0, 7919 * rep + 1, utilities
        )
        goal = target(method, truth, tuples, own)
        scores, intervals = calibrated(judgments, method, tails=tails)
        inside = (intervals.low <= goal) & (goal <= intervals.high)
        decile = np.argsort(np.argsort(truth)) * 10 // n_items
        for d in range(10):
            inside_by_decile[d].extend(inside[decile == d])
        shown = np.argsort(np.argsort(scores.scores)) * 10 // n_items
        by_estimate["low"].extend(inside[shown == 0])
        by_estimate["high"].extend(inside[shown == 9])
        cover.append(inside.mean())
        calibration.append(np.polyfit(scores.scores, goal, 1)[0])
    middle = np.concatenate([inside_by_decile[d] for d in range(1, 9)])
    low, high = np.asarray(inside_by_decile[0]), np.asarray(inside_by_decile[9])

    def share(x):
        x = np.asarray(x, dtype=float)
        return float(x.mean()), float(np.sqrt(x.mean() * (1 - x.mean()) / x.size))

    return {
        "cover": float(np.mean(cover)),
        "cover_se": float(np.std(cover) / np.sqrt(reps)),
        "low": share(low),
        "high": share(high),
        "middle": share(middle),
        "low_estimate": share(by_estimate["low"]),
        "high_estimate": share(by_estimate["high"]),
        "calibration": float(np.mean(calibration)),
        "calibration_se": float(np.std(calibration) / np.sqrt(reps)),
    }


def decile_table(methods, n_items, appearances, utilities, reps: int, tails=True) -> None:
    """The decile table: coverage of the lowest and highest tenth of the items (by true
    utility), of the middle eight tenths, overall, and the calibration slope."""
    print(f"{n_items} items, {reps} studies per cell, T = {SIZE}, 1 judgment/tuple, agree")
    print(
        "| method | utilities | r | lowest decile | middle eight | highest decile "
        "| overall | slope truth~est | lowest tenth of estimates | highest tenth |"
    )
    print("|---|---|---:|---|---|---|---|---|---|---|")
    for method, kind, r in itertools.product(methods, utilities, appearances):
        started = time.perf_counter()
        f = decile_cell(method, n_items, r, kind, reps, tails)
        row = [method, kind, r]
        row += [f"{f[k][0]:.3f} ± {f[k][1]:.3f}" for k in ("low", "middle", "high")]
        row += [f"{f['cover']:.3f} ± {f['cover_se']:.3f}"]
        row += [f"{f['calibration']:.3f} ± {f['calibration_se']:.3f}"]
        row += [f"{f[k][0]:.3f} ± {f[k][1]:.3f}" for k in ("low_estimate", "high_estimate")]
        print("| " + " | ".join(str(x) for x in row) + " |", flush=True)
        print(f"  ({time.perf_counter() - started:.0f} s)", file=sys.stderr)


def small_table(methods, items, appearances, reps: int) -> None:
    """Coverage on small studies (annotators who agree): per cell at least SMALL_INTERVALS
    intervals, the share of items marked approximate and the coverage of the others."""
    print(f"T = {SIZE}, annotators agree, 95% intervals, >= {SMALL_INTERVALS} per cell")
    print("| method | items | r | judgments/tuple | studies | coverage | marked approximate |")
    print("|---|---:|---:|---:|---:|---|---|")
    for method, n, r, per in itertools.product(methods, items, appearances, (1, 3)):
        started = time.perf_counter()
        studies = max(reps, -(-SMALL_INTERVALS // n))
        f = cell(method, n, r, per, 0.0, studies, False)
        marked = f"{f['approximate']:.3f}"
        if f["approximate"] > 0:
            marked += f" (others cover {f['plain_cover']:.3f})"
        row = [method, n, r, per, studies, f"{f['cover']:.3f} ± {f['cover_se']:.3f}", marked]
        print("| " + " | ".join(str(x) for x in row) + " |", flush=True)
        print(f"  ({time.perf_counter() - started:.0f} s)", file=sys.stderr)


def shrinkage_table(n_items: int, reps: int) -> None:
    """The empirical-Bayes fit against the fixed penalty (alpha 0.01) and against the fit
    that knows the truth's prior (sd 1) on the same studies:
    slope of estimate on truth, slope of truth on estimate, RMSE and Spearman."""
    print("| method | r | fit | slope est~truth | slope truth~est | RMSE | Spearman |")
    print("|---|---|---|---|---|---|---|")
    for method in ("plackett_luce", "bradley_terry"):
        for r in (4, 8, 16):
            found = {"empirical Bayes": [], "alpha 0.01": [], "prior sd 1 (alpha 0.5)": []}
            for rep in range(reps):
                judgments, truth, tuples, _ = simulate(n_items, r, 1, 0.0, 7919 * rep + 1)
                goal = target(method, truth, tuples)
                shrunk, _ = calibrated(judgments, method)
                fixed = scoring.fit(method, judgments, alpha=0.01)
                # The truth's own prior, N(0, 1): penalty alpha * sum(u**2) with alpha = 1/2.
                known = scoring.fit(method, judgments, alpha=0.5)
                fits = (
                    ("empirical Bayes", shrunk),
                    ("alpha 0.01", fixed),
                    ("prior sd 1 (alpha 0.5)", known),
                )
                for name, fitted in fits:
                    u = fitted.scores
                    found[name].append(
                        (
                            np.polyfit(goal, u, 1)[0],
                            np.polyfit(u, goal, 1)[0],
                            np.sqrt(np.mean((u - goal) ** 2)),
                            spearmanr(u, truth)[0],
                        )
                    )
            for name, rows in found.items():
                a, b, c, d = np.mean(rows, axis=0)
                print(f"| {method} | {r} | {name} | {a:.2f} | {b:.2f} | {c:.3f} | {d:.3f} |")


def threshold_table(n_items: int, reps: int) -> None:
    """Where the percentile bootstrap's intervals stop being usable (bws/core/diagnostics.py
    marks them approximate below MIN_APPEARANCES): counting scores, tuples resampled,
    coverage of the expected score and the share of zero-width intervals per appearances."""
    print("| appearances per item | coverage (95% stated) | zero-width intervals |")
    print("|---|---|---|")
    for r in (3, 4, 5, 6, 8, 12):
        cover, zero = [], []
        for rep in range(reps):
            judgments, truth, tuples, _ = simulate(n_items, r, 1, 0.0, 7919 * rep + 1)
            goal = expected_counting(truth, tuples)
            plain = scoring.fit("counting", judgments)
            boot = bootstrap_intervals(
                judgments, "counting", scores=plain, resamples=1000, seed=rep
            )
            cover.append(((boot.low <= goal) & (goal <= boot.high)).mean())
            zero.append((boot.high - boot.low <= 1e-9).mean())
        print(f"| {r} | {np.mean(cover):.3f} | {np.mean(zero):.3f} |", flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", nargs="+", type=int, help="default 250 (--small: 6 to 100)")
    parser.add_argument(
        "--small", action="store_true", help=f"only small studies ({SMALL_ITEMS} items)"
    )
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--methods", nargs="+", default=list(scoring.METHODS))
    parser.add_argument("--appearances", nargs="+", type=int, help="default 4 8 16 24")
    parser.add_argument("--old", action="store_true", help="also the percentile bootstrap")
    parser.add_argument(
        "--shrinkage", action="store_true", help="only the shrinkage table (against alpha 0.01)"
    )
    parser.add_argument(
        "--thresholds", action="store_true", help="only the bootstrap's small-sample table"
    )
    parser.add_argument(
        "--deciles",
        action="store_true",
        help="only coverage per decile of the truth and the calibration slope",
    )
    parser.add_argument(
        "--utilities",
        nargs="+",
        choices=("normal", "t3"),
        default=["normal"],
        help="the true utilities' distribution (--deciles; t3 scaled to sd 1)",
    )
    parser.add_argument(
        "--no-tails",
        dest="tails",
        action="store_false",
        help="the model fits' plain posterior intervals (outer ends not moved out)",
    )
    args = parser.parse_args(argv)
    if args.small:
        small_table(
            args.methods, args.items or SMALL_ITEMS, args.appearances or (4, 8, 16), args.reps
        )
        return
    args.items = args.items or [250]
    args.appearances = args.appearances or [4, 8, 16, 24]
    if args.thresholds:
        threshold_table(args.items[0], args.reps)
        return
    if args.deciles:
        decile_table(
            args.methods, args.items[0], args.appearances, args.utilities, args.reps, args.tails
        )
        return
    if args.shrinkage:
        shrinkage_table(args.items[0], args.reps)
        return
    for n_items in args.items:
        coverage_table(n_items, args)


def coverage_table(n_items: int, args) -> None:
    print(f"{n_items} items, {args.reps} studies per cell, T = {SIZE}, 95% intervals")
    header = "| method | r | judgments/tuple | annotator sd | coverage | pooled coverage | width |"
    header += " slope est~truth | slope truth~est | RMSE | Spearman |"
    if args.old:
        header += " old coverage | old width |"
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    for method in args.methods:
        for r, per, spread in itertools.product(args.appearances, (1, 3), (0.0, 0.5)):
            started = time.perf_counter()
            f = cell(method, n_items, r, per, spread, args.reps, args.old, args.tails)
            row = [method, r, per, spread, f"{f['cover']:.3f} ± {f['cover_se']:.3f}"]
            pooled = f.get("population_cover")
            row += ["" if pooled is None else f"{pooled:.3f}", f"{f['width']:.3f}"]
            if method == "counting":
                row += ["", "", "", f"{f['rho']:.3f}"]
            else:
                row += [f"{f['slope']:.2f}", f"{f['calibration']:.2f}", f"{f['rmse']:.3f}"]
                row += [f"{f['rho']:.3f}"]
            if args.old:
                row += [f"{f['old_cover']:.3f}", f"{f['old_width']:.3f}"]
            print("| " + " | ".join(str(x) for x in row) + " |", flush=True)
            print(f"  ({time.perf_counter() - started:.0f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
