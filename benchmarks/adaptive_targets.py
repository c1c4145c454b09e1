"""Adaptive designs aimed at a target, against the balanced design, from the same start.

    python benchmarks/adaptive_targets.py [--items 1000] [--seeds 10]
        [--targets top_k threshold reference comparisons] [--utilities normal t3 careless]
        [--measure accuracy|f1] [--reference-share 1.0] [--early]

Simulated studies as in ``benchmarks/adaptive.py`` (tuples of 4, one MaxDiff judgment per
tuple, Plackett-Luce with calibrated intervals), with a third kind of crowd: ``careless``,
normal utilities and 4 of 20 annotators clicking at random. Per seed: the balanced design
at 8 appearances per item (its answer's accuracy is the reference, averaged over the
seeds), and the target's design: a balanced start of ``--start`` appearances, then batches
of ``--batch-share`` appearances per item from ``targets.target_batch`` on the current fit,
until its accuracy reaches the reference (or 8 appearances are spent). Accuracy: for top_k
(the top 10%), precision of the reported set; for threshold (above the 80th percentile of
the truth, as a score) and reference (above the item at that percentile), the share of
items on the right side (with ``--measure f1``, the F1 of the items reported above, which
"none above" cannot pass as it passes 80% accuracy); for comparisons (20 pairs of items
0.3 sd apart in truth), the share of pairs in the right order. Printed: per target and
crowd, the share of the balanced design's judgments each seed needed (median, worst), the
calibration of the reported probability that the answer is right about an item and of the
answer's expected precision (for a threshold, the share of the items reported above it
that are), and how much of the truth the last fit's 95% intervals cover. The fit is the
platform's: a threshold (a score or a reference item) with the Laplace fixed point as the
prior's variance, corrected in the fit's order (bws/core/intervals.py); the balanced
design scored as a balanced study.
``--early`` prints instead how often the reports are right by band of the probability they
said, over the first half of the judgments (a report every fourth batch), where a design is
still young. Figures, not assertions.
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

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import coverage  # noqa: E402
from adaptive import SIZE, Study, true_utilities  # noqa: E402

from bws.core.adaptive import DesignState  # noqa: E402
from bws.core.design import balanced_tuples  # noqa: E402
from bws.core.intervals import calibrated  # noqa: E402
from bws.core.judgments import Judgments  # noqa: E402
from bws.core.targets import (  # noqa: E402
    REFERENCE_SHARE,
    THRESHOLD_RULE,
    USEFUL_SHARE,
    Target,
    target_batch,
    target_report,
)
from bws.filemode import design_fit  # noqa: E402

FINAL = 8
MAX_APPEARANCES = 32
ANNOTATORS = 20
CLICKERS = 4
METHOD = "plackett_luce"
METHODS = ("plackett_luce", "bradley_terry", "counting")  # whose coverage is reported
PAIRS = 20
PAIR_GAP = 0.3  # the true difference of a chosen pair, in sd of the utilities
MEMORY_LIMIT = 4 * 1024**3


class CrowdStudy(Study):
    """A study whose tuples go to ANNOTATORS annotators in turn, the first CLICKERS of
    them clicking at random when ``careless``."""

    def __init__(self, truth, rng, careless: bool):
        super().__init__(truth, rng)
        self.careless = careless
        self.who = np.empty(0, dtype=np.int64)

    def judge(self, tuples):
        m = tuples.shape[0]
        who = self.rng.integers(0, ANNOTATORS, size=m)
        utility = np.where((who < CLICKERS)[:, None] & self.careless, 0.0, self.truth[tuples])
        best = np.argmax(utility + self.rng.gumbel(size=utility.shape), axis=1)
        rest = -utility + self.rng.gumbel(size=utility.shape)
        rest[np.arange(m), best] = -np.inf
        worst = np.argmax(rest, axis=1)
        self.tuples = np.vstack([self.tuples, tuples])
        self.best = np.concatenate([self.best, tuples[np.arange(m), best]])
        self.worst = np.concatenate([self.worst, tuples[np.arange(m), worst]])
        self.who = np.concatenate([self.who, who])

    def judgments(self):
        m = self.tuples.shape[0]
        best = np.argmax(self.tuples == self.best[:, None], axis=1)
        worst = np.argmax(self.tuples == self.worst[:, None], axis=1)
        return Judgments(
            self.tuples, best, worst, np.arange(m), self.who, np.arange(m), self.truth.size
        )


def make_target(kind: str, truth: np.ndarray, rng) -> Target:
    n = truth.size
    if kind == "top_k":
        return Target("top_k", k=max(1, n // 10))
    if kind == "threshold":
        return Target("threshold", score=float(np.quantile(truth, 0.8)))
    if kind == "reference":  # the item at the truth's 80th percentile
        return Target("threshold", reference=int(np.argsort(truth)[int(0.8 * n)]))
    pairs = []
    for a in rng.choice(n, size=PAIRS, replace=False):
        gap = np.abs(truth - truth[a] - PAIR_GAP * rng.choice([-1, 1]))
        gap[a] = np.inf
        pairs.append((int(a), int(np.argmin(gap))))
    return Target("comparisons", pairs=tuple(pairs))


def above(target: Target, truth) -> np.ndarray:
    """Which items truly lie above the threshold (never the reference item itself)."""
    if target.reference is None:
        return truth > target.score
    result = truth > truth[target.reference]
    result[target.reference] = False
    return result


def accuracy(target: Target, report, truth, measure: str = "accuracy") -> float:
    """The answer's accuracy (the module docstring); with ``measure="f1"`` a threshold's
    answer is scored by the F1 of the items it puts above (the harmonic mean of its
    precision and recall), which an answer of almost no items cannot pass: with the
    threshold at the 80th percentile "none above" is 80% accurate."""
    if target.kind == "threshold" and measure == "f1":
        truly = above(target, truth)
        hits = float(np.sum(truly & report.answer))
        return 2.0 * hits / max(float(truly.sum() + report.answer.sum()), 1.0)
    if target.kind == "top_k":
        true_top = np.zeros(truth.size, dtype=bool)
        true_top[np.argsort(-truth)[: target.k]] = True
        return float(np.mean(true_top[report.answer]))
    if target.kind == "threshold":
        return float(np.mean(report.answer == above(target, truth)))
    a, b = np.asarray(target.pairs).T
    return float(np.mean(report.answer == (truth[a] > truth[b])))


def precision(target: Target, report, truth) -> float:
    """The share of the reported answer that is right: for a threshold, of the items
    reported above it (the figure ``expected_precision`` predicts); else the accuracy."""
    if target.kind != "threshold":
        return accuracy(target, report, truth)
    inside = report.answer.sum()
    return float(np.mean(above(target, truth)[report.answer])) if inside else 1.0


def design(target: Target) -> str:
    """The platform's name for the design aimed at ``target`` (bws.filemode.design_kind)."""
    return "reference" if target.reference is not None else target.kind


def fit(study: Study, target: Target, targeted: bool = False, adaptive: bool = True):
    """The platform's fit and the target's report (``adaptive``: as the platform scores a
    study whose batches aim at ``target``, bws.filemode.design_fit; False for the balanced
    design)."""
    keywords = design_fit(design(target) if adaptive else None)
    scores, intervals = calibrated(study.judgments(), METHOD, **keywords)
    report = target_report(scores.scores, intervals.std, target, draws=200, targeted=targeted)
    return scores.scores, intervals.std, report


def balanced(truth, seed, careless, target, measure):
    study = CrowdStudy(truth, np.random.default_rng([seed, 8]), careless)
    study.judge(balanced_tuples(truth.size, SIZE, FINAL, seed=seed + 8))
    _, _, report = fit(study, target, adaptive=False)
    return accuracy(target, report, truth, measure), report


def covered(study: Study, target: Target) -> dict[str, float]:
    """Per method, the share of what its 95% intervals should hold (coverage.target) that
    they hold, fitted as the platform fits the design."""
    judgments = study.judgments()
    out = {}
    for method in METHODS:
        _, intervals = calibrated(judgments, method, **design_fit(design(target)))
        goal = coverage.target(method, study.truth, study.tuples)
        out[method] = float(np.mean((intervals.low <= goal) & (goal <= intervals.high)))
    return out


def designed(truth, seed, careless, target, args):
    """The target's design as it goes: a balanced start of ``args.start`` appearances, then
    batches from ``targets.target_batch`` on the current fit until FINAL appearances are
    spent or no batch can be added; yields (study, report, scores) after the start and each
    batch."""
    n = truth.size
    study = CrowdStudy(truth, np.random.default_rng([seed, 2]), careless)
    study.judge(balanced_tuples(n, SIZE, args.start, seed=seed))
    state = DesignState.from_tuples(study.tuples, n)
    scores, sd, report = fit(study, target)
    yield study, report, scores
    step, batch = 0, max(1, round(n * args.batch_share / SIZE))
    while study.spent < FINAL - 1e-9:
        rows = target_batch(
            scores, sd, state, target, batch_tuples=batch,
            max_appearances=MAX_APPEARANCES, seed=seed * 1000 + step, sharpness=args.sharpness,
            useful_share=args.useful_share, reference_share=args.reference_share,
            rule=args.threshold_rule,
        )  # fmt: skip
        if rows.shape[0] == 0:
            return
        study.judge(rows)
        state = state.extended(rows)
        scores, sd, report = fit(study, target, targeted=True)
        step += 1
        yield study, report, scores


def targeted(truth, seed, careless, target, goal, args):
    """Appearances per item spent until the accuracy reaches ``goal`` (None: not within
    FINAL), with the last report and the share of the truth its intervals cover."""
    for study, report, _ in designed(truth, seed, careless, target, args):
        if accuracy(target, report, truth, args.measure) >= goal:
            return study.spent, report, covered(study, target)
    return None, report, covered(study, target)


def early_calibration(truth, seed, careless, target, args):
    """Over the first half of the judgments (``--early``): after every fourth batch, each
    item's (pair's) reported probability that the answer is right about it, and whether it
    is; the design runs on whatever the answer's accuracy (unplaced reports say 1/2). Also,
    per report that gives one (a placed one), the answer's expected precision, the share of
    the answer that is right and, for a threshold score, the slope of the truth on the fit's
    scores over the items within 0.5 of it (above 1: the fit's scale is pulled in there)."""
    said, right, precisions = [], [], []
    sides = {True: ([], []), False: ([], [])}  # placed reports: said, right by side
    for step, (study, report, scores) in enumerate(designed(truth, seed, careless, target, args)):
        if step and step % 4 == 0:
            ok = correctness(report, truth, target)
            said.append(report.membership)
            right.append(ok)
            if np.isfinite(report.expected_precision):
                found = precision(target, report, truth)
                slope = np.nan
                near = np.abs(scores - (target.score or 0.0)) < 0.5
                if target.score is not None and near.sum() > 2:
                    slope = np.polyfit(scores[near], truth[near], 1)[0]
                precisions.append((report.expected_precision, found, slope))
                if target.kind != "comparisons":
                    for side in (True, False):
                        held = report.answer == side
                        sides[side][0].append(report.membership[held])
                        sides[side][1].append(ok[held])
        if study.spent >= FINAL / 2:
            break
    return np.concatenate(said), np.concatenate(right), precisions, sides


def correctness(report, truth, target) -> np.ndarray:
    """Per item (per pair for comparisons), whether the report's answer is right about it."""
    if target.kind == "comparisons":
        a, b = np.asarray(target.pairs).T
        return report.answer == (truth[a] > truth[b])
    if target.kind == "top_k":
        true_top = np.zeros(truth.size, dtype=bool)
        true_top[np.argsort(-truth)[: target.k]] = True
        return report.answer == true_top
    return report.answer == above(target, truth)


def print_early(args) -> None:
    """``--early``: the reports' calibration by band of the said probability."""
    for kind in args.targets:
        for utilities in args.utilities:
            careless = utilities == "careless"
            dist = "normal" if careless else utilities
            said, right, precisions = [], [], []
            sides = {True: ([], []), False: ([], [])}
            for s in range(args.seeds):
                truth = true_utilities(args.items, dist, np.random.default_rng(s))
                target = make_target(kind, truth, np.random.default_rng(s + 100))
                p, ok, answers, by_side = early_calibration(truth, s, careless, target, args)
                said.append(p)
                right.append(ok)
                precisions.extend(answers)
                for side, (held_said, held_right) in by_side.items():
                    sides[side][0].extend(held_said)
                    sides[side][1].extend(held_right)
            said, right = np.concatenate(said), np.concatenate(right)
            bands = []
            for low, high in ((0.5, 0.7), (0.7, 0.9), (0.9, 0.99), (0.99, 1.01)):
                inside = (said >= low) & (said < high)
                if inside.any():
                    bands.append(
                        f"{low}-{min(high, 1.0)}: {np.mean(right[inside]):.3f} of "
                        f"{int(inside.sum())} (said {np.mean(said[inside]):.3f})"
                    )
            overall = f"{np.mean(right):.3f} of {right.size} (said {np.mean(said):.3f})"
            expected, found, slope = np.array(precisions).reshape(-1, 3).T
            answer = f"{expected.mean():.3f} / {found.mean():.3f} ({expected.size} reports)"
            if np.isfinite(slope).any():
                low, mid, high = np.nanpercentile(slope, [10, 50, 90])
                answer += f"; slope near the threshold {mid:.2f} ({low:.2f}-{high:.2f})"
            for side, name in ((True, "in the answer"), (False, "outside it")):
                held_said, held_right = sides[side]
                if held_said:
                    p, ok = np.concatenate(held_said), np.concatenate(held_right)
                    near = p < 0.7
                    answer += (
                        f"; {name} said below 0.7: right {np.mean(ok[near]):.3f} of "
                        f"{int(near.sum())} (said {np.mean(p[near]):.3f})"
                    )
            print(
                f"| {kind} | {utilities} | {args.items:,} | {'; '.join(bands)} | {overall} "
                f"| {answer} |",
                flush=True,
            )


def calibration(reports, truths, targets) -> str:
    """Of the answers' items reported right with probability at least 0.9, the share right."""
    said, right = [], []
    for report, truth, target in zip(reports, truths, targets, strict=True):
        said.append(report.membership)
        right.append(correctness(report, truth, target))
    said, right = np.concatenate(said), np.concatenate(right)
    sure = said >= 0.9
    if not sure.any():
        return "none said"
    return f"{np.mean(right[sure]):.3f} of {int(sure.sum())} (said {np.mean(said[sure]):.3f})"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--start", type=int, default=1, help="balanced appearances first")
    parser.add_argument("--batch-share", type=float, default=0.125, help="appearances a batch")
    parser.add_argument("--sharpness", type=float, default=None, help="default: the platform's")
    parser.add_argument("--useful-share", type=float, default=USEFUL_SHARE)
    parser.add_argument("--reference-share", type=float, default=REFERENCE_SHARE)
    parser.add_argument(
        "--threshold-rule", choices=("gain", "doubt"), default=THRESHOLD_RULE,
        help="how a threshold score values its items (bws/core/targets.py)",
    )  # fmt: skip
    parser.add_argument(
        "--measure", choices=("accuracy", "f1"), default="accuracy",
        help="what a threshold's answer is scored by (f1: of the items put above it)",
    )  # fmt: skip
    parser.add_argument(
        "--targets", nargs="+", default=["top_k", "threshold", "reference", "comparisons"]
    )
    parser.add_argument("--utilities", nargs="+", default=["normal", "t3", "careless"])
    parser.add_argument(
        "--early", action="store_true",
        help="only the reports' calibration over the first half of the judgments",
    )  # fmt: skip
    args = parser.parse_args(argv)
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    if args.early:
        print(
            "| target | utilities | items | right of those said (band: share right of n, said) "
            "| every item (pair): share right of n (said) | answer's precision said / found "
            "(placed reports) |"
        )
        print("|---|---|---:|---|---|---|")
        print_early(args)
        return
    print("| target | utilities | items | balanced accuracy at r = 8 | share of its judgments per "
          "seed | median | worst | reached | right when said >= 0.9 | answer's precision said / "
          "was | 95% intervals cover: PL, BT, counting (min-max of the seeds) |")  # fmt: skip
    print("|---|---|---:|---:|---|---:|---:|---|---|---|---|")
    for kind in args.targets:
        for utilities in args.utilities:
            started = time.process_time()
            careless = utilities == "careless"
            dist = "normal" if careless else utilities
            seeds = range(args.seeds)
            truths = [true_utilities(args.items, dist, np.random.default_rng(s)) for s in seeds]
            goals = [make_target(kind, truths[s], np.random.default_rng(s + 100)) for s in seeds]
            reference = [balanced(truths[s], s, careless, goals[s], args.measure) for s in seeds]
            goal = float(np.mean([r[0] for r in reference]))
            spent, reports, cover = [], [], []
            for s in seeds:
                used, report, inside = targeted(truths[s], s, careless, goals[s], goal, args)
                cover.append(inside)
                spent.append(np.inf if used is None else used / FINAL)
                reports.append(report)
            shares = np.array(spent)
            said_balanced = np.nanmean([r[1].expected_precision for r in reference])
            said = np.nanmean([r.expected_precision for r in reports])  # NaN: not placed
            was = np.mean([precision(goals[s], reports[s], truths[s]) for s in seeds])
            was_balanced = np.mean(
                [precision(goals[s], r[1], truths[s]) for s, r in enumerate(reference)]
            )
            print(
                f"| {kind} | {utilities} | {args.items:,} | {goal:.3f} | "
                + ", ".join("-" if not np.isfinite(x) else f"{x:.0%}" for x in shares)
                + f" | {np.median(shares):.0%} | {np.max(shares):.0%} | "
                f"{int(np.isfinite(shares).sum())} of {args.seeds} | "
                f"{calibration(reports, truths, goals)} | "
                f"{said:.3f} / {was:.3f} (balanced {said_balanced:.3f} / {was_balanced:.3f}) | "
                + "; ".join(
                    f"{min(c[m] for c in cover):.3f}-{max(c[m] for c in cover):.3f}"
                    for m in METHODS
                )
                + " |",
                flush=True,
            )
            print(f"<!-- {time.process_time() - started:.0f} s CPU -->", flush=True)


if __name__ == "__main__":
    main()
