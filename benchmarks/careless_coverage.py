"""Careless annotators: interval coverage and ranking with random clickers among MaxDiff
annotators, the joint annotator model against the pooled fit and hand exclusion.

    python benchmarks/careless_coverage.py [--items 250] [--reps 10] [--methods ...]
    python benchmarks/careless_coverage.py --recovery [--reps 10]

Simulated studies: utilities ~ N(0, 1), a balanced design with T = 4 and 8 appearances per
item, one or three judgments per tuple by different annotators, 20 or 50 annotators of
whom 10%, 20% or 30% click at random (best and worst two distinct items drawn uniformly);
the others follow the MaxDiff model. Per cell: coverage of the calibrated 95% intervals
(``calibrated``, which opens the joint fit when the annotators' likelihood-ratio test says
they differ) and Spearman with the truth; the same for the pooled fit (the joint fit
switched off) and for the pooled fit after leaving out the annotators ``looks_random``
flags (hand exclusion); how often the joint fit was used; and the estimated sensitivity
of the clickers and of the others. Targets: Plackett-Luce the true utilities,
Bradley-Terry its value for the design under the attentive annotators' choices.

``--recovery``: annotators with sensitivities lognormal around 1 (sd 0.5 on the log
scale), 100 judgments each: Spearman of the estimated sensitivity with the simulated one,
and how often its 95% interval holds it. ``--agree``: the gate's false alarms, the share of
studies of annotators who agree in which the joint fit opens. Figures, not assertions.
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import sys
import time
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bws.core import annotator_model  # noqa: E402
from bws.core.design import balanced_tuples  # noqa: E402
from bws.core.intervals import calibrated  # noqa: E402
from bws.core.judgments import Judgments  # noqa: E402
from bws.core.quality import consensus_agreement, looks_random, typical_agreement  # noqa: E402

SIZE = 4
APPEARANCES = 8
_spec = importlib.util.spec_from_file_location(
    "coverage_benchmark", Path(__file__).resolve().parent / "coverage.py"
)
coverage_benchmark = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(coverage_benchmark)


def simulate(n_items, per_tuple, n_annotators, sensitivity, seed, appearances=APPEARANCES):
    """Judgments of one study whose annotator a follows utilities sensitivity[a] * truth
    (0: random clicking), with the truth and the design."""
    rng = np.random.default_rng(seed)
    truth = rng.normal(size=n_items)
    truth -= truth.mean()
    tuples = balanced_tuples(n_items, SIZE, appearances, seed=seed)
    m = tuples.shape[0]
    rows = np.repeat(tuples, per_tuple, axis=0)
    tuple_ids = np.repeat(np.arange(m), per_tuple)
    first = rng.integers(0, n_annotators, size=m).repeat(per_tuple)
    annotators = (first + np.tile(np.arange(per_tuple), m)) % n_annotators
    utility = sensitivity[annotators][:, None] * truth[rows]
    best = np.argmax(utility + rng.gumbel(size=utility.shape), axis=1)
    rest = -utility + rng.gumbel(size=utility.shape)
    rest[np.arange(rows.shape[0]), best] = -np.inf
    worst = np.argmax(rest, axis=1)
    order = np.arange(rows.shape[0])
    return Judgments(rows, best, worst, tuple_ids, annotators, order, n_items), truth, tuples


def flagged_clickers(judgments: Judgments) -> np.ndarray:
    """Who ``looks_random`` flags, per annotator index (the quality page's flag)."""
    agreement = consensus_agreement(
        judgments.items,
        judgments.best,
        judgments.worst,
        judgments.annotators,
        judgments.n_items,
    )
    typical = typical_agreement(agreement)
    return np.array(
        [
            looks_random(k, n, typical)
            for k, n in zip(agreement.agreeing, agreement.judgments, strict=True)
        ]
    )


def pooled(judgments, method):
    """calibrated() with the joint fit switched off (the intervals of before)."""
    saved = annotator_model.GATE_ALPHA
    annotator_model.GATE_ALPHA = 0.0
    try:
        return calibrated(judgments, method)
    finally:
        annotator_model.GATE_ALPHA = saved


def _cover(intervals, goal):
    return float(np.mean((intervals.low <= goal) & (goal <= intervals.high)))


def cell(method, n_items, per_tuple, n_annotators, share, reps):
    figures = {key: [] for key in ("joint", "rho", "pool", "pool_rho", "excl", "excl_rho")}
    figures.update({"used": [], "beta_random": [], "beta_attentive": [], "recall": []})
    n_random = round(share * n_annotators)
    for rep in range(reps):
        seed = 7919 * rep + 13
        sensitivity = np.ones(n_annotators)
        sensitivity[np.random.default_rng(seed + 1).permutation(n_annotators)[:n_random]] = 0.0
        judgments, truth, tuples = simulate(n_items, per_tuple, n_annotators, sensitivity, seed)
        goal = coverage_benchmark.target(method, truth, tuples)
        scores, intervals = calibrated(judgments, method)
        figures["joint"].append(_cover(intervals, goal))
        figures["rho"].append(spearmanr(scores.scores, truth)[0])
        reliability = intervals.reliability
        figures["used"].append(float(reliability.joint))
        figures["beta_random"].append(float(np.mean(reliability.sensitivity[sensitivity == 0])))
        figures["beta_attentive"].append(float(np.mean(reliability.sensitivity[sensitivity > 0])))
        plain_scores, plain = pooled(judgments, method)
        figures["pool"].append(_cover(plain, goal))
        figures["pool_rho"].append(spearmanr(plain_scores.scores, truth)[0])
        flags = flagged_clickers(judgments)
        figures["recall"].append(float(np.mean(flags[sensitivity == 0])) if n_random else 1.0)
        kept = judgments.subset(~flags[judgments.annotators])
        excl_scores, excl = pooled(kept, method)
        shown = excl_scores.appearances > 0
        figures["excl"].append(
            _cover(excl, goal)
            if shown.all()
            else np.mean(((excl.low <= goal) & (goal <= excl.high))[shown])
        )
        figures["excl_rho"].append(spearmanr(excl_scores.scores, truth)[0])
    result = {key: float(np.mean(values)) for key, values in figures.items()}
    result["se"] = float(np.std(figures["joint"]) / np.sqrt(reps))
    return result


def clicker_table(args) -> None:
    print(
        f"{args.items} items, T = {SIZE}, {APPEARANCES} appearances, {args.reps} studies per "
        "cell, 95% intervals"
    )
    print(
        "| method | judgments/tuple | annotators | clickers | joint used | coverage | "
        "Spearman | pooled coverage | pooled Spearman | excluded coverage | excluded Spearman "
        "| flag recall | beta clickers | beta others |"
    )
    print("|" + "---|" * 14)
    for method, per, n_annotators, share in itertools.product(
        args.methods, (1, 3), args.annotators, args.shares
    ):
        started = time.perf_counter()
        f = cell(method, args.items, per, n_annotators, share, args.reps)
        row = [method, per, n_annotators, f"{share:.0%}", f"{f['used']:.2f}"]
        row += [f"{f['joint']:.3f} ± {f['se']:.3f}", f"{f['rho']:.3f}"]
        row += [f"{f['pool']:.3f}", f"{f['pool_rho']:.3f}", f"{f['excl']:.3f}"]
        row += [f"{f['excl_rho']:.3f}", f"{f['recall']:.2f}"]
        row += [f"{f['beta_random']:.2f}", f"{f['beta_attentive']:.2f}"]
        print("| " + " | ".join(str(x) for x in row) + " |", flush=True)
        print(f"  ({time.perf_counter() - started:.0f} s)", file=sys.stderr)


def recovery_table(args) -> None:
    """Sensitivity recovery: lognormal sensitivities, 100 judgments per annotator."""
    print("| annotators | clickers | judgments each | Spearman (beta, truth) | interval coverage |")
    print("|---|---|---|---|---|")
    for n_annotators, share in itertools.product((20, 40), (0.0, 0.2)):
        rhos, cover = [], []
        for rep in range(args.reps):
            seed = 104729 * rep + 7
            rng = np.random.default_rng(seed + 1)
            sensitivity = np.exp(rng.normal(0.0, 0.5, size=n_annotators))
            sensitivity[rng.permutation(n_annotators)[: round(share * n_annotators)]] = 0.0
            # per_tuple judgments of each tuple make 100 per annotator
            per_tuple = 100 * n_annotators * SIZE // (args.items * APPEARANCES)
            judgments, truth, _ = simulate(args.items, per_tuple, n_annotators, sensitivity, seed)
            _, intervals = calibrated(judgments, "plackett_luce")
            found = intervals.reliability
            # the model's scale is that of the annotators who carry the information
            scale = annotator_model.normaliser(sensitivity, found.judgments.astype(float))
            rhos.append(spearmanr(found.sensitivity, sensitivity)[0])
            held = (found.low <= sensitivity / scale) & (sensitivity / scale <= found.high)
            cover.append(float(np.mean(held)))
        each = 100
        print(
            f"| {n_annotators} | {share:.0%} | {each} | {np.mean(rhos):.3f} (min "
            f"{np.min(rhos):.3f}) | {np.mean(cover):.3f} |",
            flush=True,
        )


def agree_table(args) -> None:
    """How often the gate opens for annotators who agree (all sensitivities 1)."""
    print("| method | judgments/tuple | annotators | joint used | coverage | pooled coverage |")
    print("|---|---|---|---|---|---|")
    for method, per in itertools.product(args.methods, (1, 3)):
        used, joint, plain = [], [], []
        for rep in range(args.reps):
            seed = 7919 * rep + 1
            judgments, truth, tuples = simulate(args.items, per, 20, np.ones(20), seed)
            goal = coverage_benchmark.target(method, truth, tuples)
            _, intervals = calibrated(judgments, method)
            used.append(float(intervals.reliability.joint))
            joint.append(_cover(intervals, goal))
            plain.append(_cover(pooled(judgments, method)[1], goal))
        print(
            f"| {method} | {per} | 20 | {np.mean(used):.3f} | {np.mean(joint):.3f} | "
            f"{np.mean(plain):.3f} |",
            flush=True,
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=250)
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--methods", nargs="+", default=["plackett_luce", "bradley_terry"])
    parser.add_argument("--annotators", nargs="+", type=int, default=[20, 50])
    parser.add_argument("--shares", nargs="+", type=float, default=[0.1, 0.2, 0.3])
    parser.add_argument("--recovery", action="store_true", help="only sensitivity recovery")
    parser.add_argument("--agree", action="store_true", help="only the gate's false alarms")
    args = parser.parse_args(argv)
    if args.recovery:
        recovery_table(args)
    elif args.agree:
        agree_table(args)
    else:
        clicker_table(args)


if __name__ == "__main__":
    main()
