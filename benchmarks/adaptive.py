"""Adaptive, iterative and balanced BWS designs compared as judgments are spent.

    python benchmarks/adaptive.py [--quick] [--sizes 1000 10000] [--seeds 2]
                                  [--plot benchmarks/adaptive.svg]

Simulated studies: n items with known utilities, normal (sd 1) or heavy-tailed (t with 3
degrees of freedom, scaled to sd 1), tuples of T = 4, one judgment per tuple drawn from the
MaxDiff model (``choice_models.sample_maxdiff``). Every study is scored the way the platform
scores by default: Plackett-Luce with its calibrated intervals (``intervals.calibrated``).

Strategies, all measured in appearances-equivalents (judgments * T / n):

* balanced: a fresh ``balanced_tuples`` design of r = 2, 4, 6, 8 appearances per item;
* iterative (Potato's bucketed rounds): a balanced first R0 appearances, then rounds in
  which every item appears once in tuples drawn inside 2, 4, 8, ... score buckets of the
  current fit;
* adaptive: the same balanced first R0, then batches of n / (2T) tuples from
  ``adaptive.adaptive_batch`` on the current fit (up to MAX_APPEARANCES per item).

Metrics per checkpoint: Spearman with the true utilities, precision of the top 10%,
split-half reliability (counting, Spearman-Brown), the model split-half
(``model_reliability.model_split_half``) and the fit's posterior reliability beside the
squared Spearman they estimate, and the coverage of the 95% intervals of the true
(centred) utilities. ``--allocation density`` draws adaptive batches by score density
instead of squared rank uncertainty; ``--oracle F`` designs them from the true utilities
(the fit's sd times F for the draws), a bound on what designs of this family can reach
with perfect knowledge of where the items lie. The goal line: the share of the balanced design's
judgments at r = 8 that the adaptive design needs to reach the same Spearman (mean over
seeds; interpolated between checkpoints). Figures, not assertions; benchmarks/RESULTS.md
keeps a run.
"""

from __future__ import annotations

import os

# One BLAS thread: the machine is shared, and the address-space limit below must not be
# eaten by idle thread arenas.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from scipy.stats import spearmanr  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bws.core.adaptive import DesignState, adaptive_batch, iterative_round  # noqa: E402
from bws.core.choice_models import sample_maxdiff  # noqa: E402
from bws.core.design import balanced_tuples  # noqa: E402
from bws.core.intervals import calibrated  # noqa: E402
from bws.core.judgments import Judgments  # noqa: E402
from bws.core.model_reliability import model_split_half, posterior_reliability  # noqa: E402
from bws.core.reliability import split_half  # noqa: E402

SIZE = 4
R0 = 2
FINAL = 8
# The whole ranking's goal: the balanced design's Spearman at FINAL from at most this share of
# its judgments.
GOAL_SHARE = 0.90
MAX_APPEARANCES = 16
ANNOTATORS = 20
METHOD = "plackett_luce"
MEMORY_LIMIT = 4 * 1024**3
STRATEGIES = ("balanced", "iterative", "adaptive")
DISTRIBUTIONS = ("normal", "t3")


def true_utilities(n: int, distribution: str, rng: np.random.Generator) -> np.ndarray:
    if distribution == "normal":
        u = rng.normal(size=n)
    else:
        u = rng.standard_t(3, size=n) / np.sqrt(3.0)  # t3 has variance 3
    return u - u.mean()


class Study:
    """The tuples shown so far and their judgments, drawn from the MaxDiff model."""

    def __init__(self, truth: np.ndarray, rng: np.random.Generator):
        self.truth, self.rng = truth, rng
        self.tuples = np.empty((0, SIZE), dtype=np.int64)
        self.best = np.empty(0, dtype=np.int64)
        self.worst = np.empty(0, dtype=np.int64)

    def judge(self, tuples: np.ndarray) -> None:
        best, worst = sample_maxdiff(tuples, self.truth, self.rng)
        self.tuples = np.vstack([self.tuples, tuples])
        self.best = np.concatenate([self.best, best])
        self.worst = np.concatenate([self.worst, worst])

    def judgments(self) -> Judgments:
        m = self.tuples.shape[0]
        annotators = np.random.default_rng(m).integers(0, ANNOTATORS, size=m)
        return Judgments(
            self.tuples, self.best, self.worst, np.arange(m), annotators, np.arange(m),
            self.truth.size,
        )  # fmt: skip

    @property
    def spent(self) -> float:
        """Judgments so far in appearances per item (judgments * T / n)."""
        return self.tuples.shape[0] * SIZE / self.truth.size


def measure(study: Study, adaptive: bool = True) -> tuple[dict, np.ndarray, np.ndarray]:
    """The metrics of a study's current fit, and the fit's scores and sd (``adaptive``:
    scored as the platform scores a design whose batches follow the fit; False for the
    balanced design)."""
    judgments = study.judgments()
    scores, intervals = calibrated(judgments, METHOD, adaptive=adaptive)
    truth = study.truth
    n = truth.size
    top = max(1, n // 10)
    estimate = scores.scores
    inside = (intervals.low <= truth) & (truth <= intervals.high)
    reliability = split_half(judgments, trials=20, seed=1)
    model = model_split_half(judgments, seed=1)
    row = {
        "spent": study.spent,
        "spearman": float(spearmanr(estimate, truth)[0]),
        "top10": len(set(np.argsort(-estimate)[:top]) & set(np.argsort(-truth)[:top])) / top,
        "split_half": reliability.spearman_brown or float("nan"),
        "model_split_half": model.spearman_brown or float("nan"),
        "posterior_reliability": posterior_reliability(estimate, intervals.std) or float("nan"),
        "coverage": float(np.nanmean(inside)),
        "width": float(np.nanmean(intervals.high - intervals.low)),
    }
    return row, estimate, intervals.std


def run_balanced(truth, seed):
    rows = []
    for r in range(2, FINAL + 1, 2):
        study = Study(truth, np.random.default_rng([seed, r]))
        study.judge(balanced_tuples(truth.size, SIZE, r, seed=seed + r))
        rows.append(measure(study, adaptive=False)[0])
    return rows


def run_iterative(truth, seed):
    n = truth.size
    study = Study(truth, np.random.default_rng([seed, 1]))
    study.judge(balanced_tuples(n, SIZE, R0, seed=seed))
    state = DesignState.from_tuples(study.tuples, n)
    rows = []
    row, scores, _ = measure(study)
    rows.append(row)
    buckets = 2
    while study.spent < FINAL - 1e-9:
        batch = iterative_round(
            scores, state, n_buckets=buckets, max_appearances=MAX_APPEARANCES, seed=seed + buckets
        )
        study.judge(batch)
        state = state.extended(batch)
        row, scores, _ = measure(study)
        rows.append(row)
        buckets *= 2
    return rows


def run_adaptive(
    truth,
    seed,
    *,
    sharpness=1.0,
    batch_share=0.5,
    jitter=1.0,
    allocation="uncertainty",
    oracle=None,
):
    """Balanced first R0 appearances, then adaptive batches designed from the current fit;
    with ``oracle`` (an sd), designed from the true utilities instead, as if the fit knew
    them to within that sd: an upper bound for designs of this family."""
    n = truth.size
    study = Study(truth, np.random.default_rng([seed, 2]))
    study.judge(balanced_tuples(n, SIZE, R0, seed=seed))
    state = DesignState.from_tuples(study.tuples, n)
    rows = []
    row, scores, sd = measure(study)
    rows.append(row)
    batch_tuples = max(1, round(batch_share * n / SIZE))
    step = 0
    while study.spent < FINAL - 1e-9:
        batch = adaptive_batch(
            scores if oracle is None else truth,
            sd if oracle is None else sd * oracle,
            state,
            batch_tuples=min(batch_tuples, round((FINAL - study.spent) * n / SIZE)),
            max_appearances=MAX_APPEARANCES,
            seed=seed * 1000 + step,
            sharpness=sharpness,
            jitter=jitter,
            allocation=allocation,
        )
        if batch.shape[0] == 0:
            break
        study.judge(batch)
        state = state.extended(batch)
        row, scores, sd = measure(study)
        rows.append(row)
        step += 1
    return rows


RUNNERS = {"balanced": run_balanced, "iterative": run_iterative, "adaptive": run_adaptive}


def mean_curve(curves: list[list[dict]]) -> list[dict]:
    """Mean of each metric over seeds, checkpoint by checkpoint (the shortest run's)."""
    length = min(len(c) for c in curves)
    return [
        {key: float(np.mean([c[i][key] for c in curves])) for key in curves[0][0]}
        for i in range(length)
    ]


def spent_to_reach(curve: list[dict], goal: float) -> float | None:
    """Appearances-equivalents at which the curve first reaches goal (interpolated)."""
    for before, after in zip([None, *curve[:-1]], curve, strict=True):
        if after["spearman"] >= goal:
            if before is None:
                return after["spent"]
            share = (goal - before["spearman"]) / (after["spearman"] - before["spearman"])
            return before["spent"] + share * (after["spent"] - before["spent"])
    return None


def print_per_seed(n: int, distribution: str, curves: dict, seeds_runs: dict) -> None:
    """Each seed's adaptive run: the share of the balanced design's judgments at r = FINAL
    it needs for that design's Spearman (the mean over seeds)."""
    if not {"balanced", "adaptive"} <= seeds_runs.keys():
        return
    goal = curves["balanced"][-1]["spearman"]
    shares = [spent_to_reach(run, goal) for run in seeds_runs["adaptive"]]
    said = ", ".join("-" if x is None else f"{x / FINAL:.0%}" for x in shares)
    print(f"# {n} {distribution} adaptive per seed: {said}", flush=True)


def print_spread(sizes, distributions, seeds: int) -> None:
    """How much one seed's share of the judgments varies for a given design: the sd of the
    balanced design's Spearman at r = FINAL between seeds (truth and judgments drawn anew)
    over the mean curve's climb per appearance from r = FINAL - 2 to FINAL."""
    for n in sizes:
        for distribution in distributions:
            ends = []
            for seed in range(seeds):
                truth = true_utilities(n, distribution, np.random.default_rng([n, seed]))
                rows = {round(r["spent"]): r["spearman"] for r in run_balanced(truth, seed)}
                ends.append((rows[FINAL - 2], rows[FINAL]))
            before, final = np.array(ends).T
            climb = (final.mean() - before.mean()) / 2.0
            spread = final.std(ddof=1) / climb
            print(
                f"{n:,} {distribution}: Spearman at r = {FINAL} {final.mean():.4f} (sd "
                f"{final.std(ddof=1):.4f} over {seeds} seeds), climbing {climb:.4f} per "
                f"appearance: one seed's share spreads by sd {spread / FINAL:.1%}",
                flush=True,
            )


def print_table(results: dict) -> list[str]:
    lines = [
        "| items | utilities | strategy | judgments (app./item) | Spearman | top-10% precision"
        " | split-half (S-B) | model split-half (S-B) | posterior reliability | Spearman^2"
        " | 95% coverage | mean width |",
        "|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for (n, distribution), by_strategy in results.items():
        for strategy, curve in by_strategy.items():
            for checkpoint in range(2, FINAL + 1, 2):
                # The checkpoint nearest each even number of appearances per item.
                row = min(curve, key=lambda r, c=checkpoint: abs(r["spent"] - c))
                if abs(row["spent"] - checkpoint) > 0.3:
                    continue
                lines.append(
                    f"| {n:,} | {distribution} | {strategy} | {row['spent']:.1f}"
                    f" | {row['spearman']:.4f} | {row['top10']:.3f} | {row['split_half']:.3f}"
                    f" | {row.get('model_split_half', float('nan')):.3f}"
                    f" | {row.get('posterior_reliability', float('nan')):.3f}"
                    f" | {row['spearman'] ** 2:.3f} | {row['coverage']:.3f} | {row['width']:.2f} |"
                )
    return lines


def goal_lines(results: dict) -> list[str]:
    lines = [
        "| items | utilities | balanced Spearman at r = 8 | adaptive reaches it at"
        " | share of judgments | goal (<= 90%) | iterative reaches it at |",
        "|---:|---|---:|---:|---:|---|---:|",
    ]
    for (n, distribution), curves in results.items():
        goal = curves["balanced"][-1]["spearman"]
        reach = spent_to_reach(curves["adaptive"], goal)
        iterative = spent_to_reach(curves["iterative"], goal) if "iterative" in curves else None
        share = None if reach is None else reach / FINAL
        lines.append(
            f"| {n:,} | {distribution} | {goal:.4f}"
            f" | {'not reached' if reach is None else f'{reach:.2f} app./item'}"
            f" | {'-' if share is None else f'{share:.0%}'}"
            f" | {'met' if share is not None and share <= GOAL_SHARE else 'missed'}"
            f" | {'not reached' if iterative is None else f'{iterative:.2f} app./item'} |"
        )
    return lines


def write_svg(results: dict, path: Path) -> None:
    """Spearman against judgments spent, one panel per (size, distribution)."""
    colours = {"balanced": "#555555", "iterative": "#d08020", "adaptive": "#2060c0"}
    panels = list(results.items())
    width, height, pad = 330, 240, 45
    total_w = width * len(panels)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{total_w}" height="{height + 40}"'
        ' font-family="sans-serif" font-size="11">',
        f'<rect width="{total_w}" height="{height + 40}" fill="white"/>',
    ]
    for index, ((n, distribution), curves) in enumerate(panels):
        x0 = index * width
        values = [row["spearman"] for c in curves.values() for row in c]
        low, high = min(values) - 0.01, max(values) + 0.01

        def sx(spent, x0=x0):
            return x0 + pad + (spent - 1.5) / (FINAL + 0.5 - 1.5) * (width - pad - 15)

        def sy(value, low=low, high=high):
            return 20 + (high - value) / (high - low) * (height - 50)

        out.append(f'<text x="{x0 + pad}" y="14">{n:,} items, {distribution} utilities</text>')
        out.append(
            f'<rect x="{sx(1.5):.1f}" y="20" width="{sx(FINAL + 0.5) - sx(1.5):.1f}"'
            f' height="{height - 50}" fill="none" stroke="#999"/>'
        )
        for r in range(2, FINAL + 1, 2):
            out.append(f'<text x="{sx(r) - 3:.1f}" y="{height - 16}">{r}</text>')
        for k in range(5):
            v = low + (high - low) * k / 4
            out.append(f'<text x="{x0 + 4}" y="{sy(v) + 4:.1f}">{v:.3f}</text>')
        goal = curves["balanced"][-1]["spearman"]
        out.append(
            f'<line x1="{sx(1.5):.1f}" x2="{sx(FINAL + 0.5):.1f}" y1="{sy(goal):.1f}"'
            f' y2="{sy(goal):.1f}" stroke="#999" stroke-dasharray="4 3"/>'
        )
        out.append(
            f'<line x1="{sx(GOAL_SHARE * FINAL):.1f}" x2="{sx(GOAL_SHARE * FINAL):.1f}" y1="20"'
            f' y2="{height - 30}" stroke="#c33" stroke-dasharray="2 3"/>'
        )
        for strategy, curve in curves.items():
            shown = [r for r in curve if r["spent"] <= FINAL + 0.5]
            points = " ".join(f"{sx(r['spent']):.1f},{sy(r['spearman']):.1f}" for r in shown)
            out.append(
                f'<polyline points="{points}" fill="none" stroke="{colours[strategy]}"'
                ' stroke-width="2"/>'
            )
        out.append(
            f'<text x="{x0 + pad + 60}" y="{height + 2}">judgments (appearances per item)</text>'
        )
    legend_x = 10
    for strategy, colour in colours.items():
        out.append(
            f'<line x1="{legend_x}" x2="{legend_x + 20}" y1="{height + 25}" y2="{height + 25}"'
            f' stroke="{colour}" stroke-width="2"/>'
        )
        out.append(f'<text x="{legend_x + 24}" y="{height + 29}">{strategy}</text>')
        legend_x += 100
    out.append(
        f'<text x="{legend_x}" y="{height + 29}">dashed: balanced at r = 8;'
        f" red: {GOAL_SHARE:.0%} of its judgments (Spearman with the truth, mean over seeds)</text>"
    )
    out.append("</svg>")
    path.write_text("\n".join(out) + "\n")


def load_runs(args) -> dict:
    """The curves of saved runs (``--load``), their settings put into ``args``."""
    global MAX_APPEARANCES
    results: dict = {}
    for path in args.load or []:
        saved = json.loads(path.read_text())
        for key in ("strategies", "seeds", "sharpness", "jitter", "batch_share"):
            setattr(args, key, saved[key])
        args.allocation = saved.get("allocation", "uncertainty")
        args.oracle = saved.get("oracle")
        MAX_APPEARANCES = saved.get("max_appearances", MAX_APPEARANCES)
        for entry in saved["results"]:
            results[(entry["items"], entry["distribution"])] = entry["curves"]
    return results


def main(argv=None) -> None:
    global MAX_APPEARANCES, R0
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="1,000 items, normal, one seed")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--distributions", nargs="+", default=list(DISTRIBUTIONS))
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--strategies", nargs="+", default=list(STRATEGIES))
    parser.add_argument("--sharpness", type=float, default=1.0)
    parser.add_argument("--batch-share", type=float, default=0.5)
    parser.add_argument("--jitter", type=float, default=1.0)
    parser.add_argument(
        "--allocation", choices=("uncertainty", "density"), default="uncertainty",
        help="how adaptive batches draw items (bws.core.adaptive.adaptive_batch)",
    )  # fmt: skip
    parser.add_argument(
        "--oracle", type=float, default=None, metavar="SD",
        help="design adaptive batches from the true utilities known to within SD (a bound)",
    )  # fmt: skip
    parser.add_argument("--max-appearances", type=int, default=MAX_APPEARANCES)
    parser.add_argument("--start", type=int, default=R0, help="balanced appearances first")
    parser.add_argument(
        "--spread", action="store_true",
        help="only the seed-to-seed spread of one study's share of the judgments",
    )  # fmt: skip
    parser.add_argument("--curves", action="store_true", help="print every checkpoint")
    parser.add_argument("--save", type=Path, help="also write the curves to this JSON file")
    parser.add_argument(
        "--load", type=Path, nargs="+", help="report saved runs (e.g. one per size) together"
    )
    parser.add_argument("--plot", type=Path, default=None, help="write an SVG plot here")
    args = parser.parse_args(argv)
    MAX_APPEARANCES = args.max_appearances
    R0 = args.start
    if args.quick:
        args.sizes, args.distributions, args.seeds = [1000], ["normal"], 1
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    if args.spread:
        print_spread(args.sizes, args.distributions, args.seeds)
        return
    started = time.time()
    results = load_runs(args)
    for n in [] if args.load else args.sizes:
        for distribution in args.distributions:
            curves, seeds_runs = {}, {}
            for strategy in args.strategies:
                runs = []
                for seed in range(args.seeds):
                    truth = true_utilities(n, distribution, np.random.default_rng([n, seed]))
                    if strategy == "adaptive":
                        runs.append(
                            run_adaptive(
                                truth,
                                seed,
                                sharpness=args.sharpness,
                                batch_share=args.batch_share,
                                jitter=args.jitter,
                                allocation=args.allocation,
                                oracle=args.oracle,
                            )
                        )
                    else:
                        runs.append(RUNNERS[strategy](truth, seed))
                curves[strategy] = mean_curve(runs)
                seeds_runs[strategy] = runs
                print(
                    f"# {n} {distribution} {strategy}: {time.time() - started:.0f} s",
                    file=sys.stderr,
                    flush=True,
                )
            results[(n, distribution)] = curves
            print_per_seed(n, distribution, curves, seeds_runs)
    if args.save:
        entries = [
            {"items": n, "distribution": d, "curves": curves} for (n, d), curves in results.items()
        ]
        saved = {
            key: getattr(args, key)
            for key in (
                "strategies",
                "seeds",
                "sharpness",
                "jitter",
                "batch_share",
                "allocation",
                "oracle",
            )
        }
        saved["max_appearances"] = MAX_APPEARANCES
        saved["results"] = entries
        args.save.write_text(json.dumps(saved))
    print(f"T = {SIZE}, first {R0} appearances balanced, {METHOD} with calibrated intervals,")
    print(f"mean over {args.seeds} seed(s); adaptive batches of {args.batch_share} app./item,")
    print(
        f"at most {MAX_APPEARANCES} appearances per item, sharpness {args.sharpness},"
        f" jitter {args.jitter}, allocation by {args.allocation}"
        + ("" if args.oracle is None else f", designed from the truth within sd {args.oracle}")
        + ".\n"
    )
    print("\n".join(print_table(results)))
    if {"balanced", "adaptive"} <= set(args.strategies):
        print()
        print("\n".join(goal_lines(results)))
        if args.plot and set(STRATEGIES) <= set(args.strategies):
            write_svg(results, args.plot)
            print(f"\nplot: {args.plot}")
    if args.curves:
        for key, curves in results.items():
            for strategy, curve in curves.items():
                spearman = " ".join(f"{r['spent']:.2f}:{r['spearman']:.4f}" for r in curve)
                print(f"{key} {strategy} {spearman}")
    print(f"\n{time.time() - started:.0f} s")


if __name__ == "__main__":
    main()
