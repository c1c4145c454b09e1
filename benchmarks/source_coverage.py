"""Coverage of the systems' intervals (bws.core.sources) when items come in groups.

    python benchmarks/source_coverage.py [--groups 40] [--reps 200] [--noise 0.5]

Simulated studies like the MT demo: groups of 5 items, one from each of 5 sources (systems)
with true effects -0.6, -0.3, 0, 0.3, 0.6, each item's utility its source's effect plus
normal item noise (sd ``--noise``) plus a group level (sd 1, which no score can see);
tuples of 4 drawn within each group (8 appearances per item), two judgments per tuple by
the MaxDiff model. Each study is scored the platform's way (bws.filemode.score_judgments,
empirical-Bayes fits, calibrated intervals) and its sources table computed from the item
scores. The target is what the source effects estimate over the population of groups:

- Plackett-Luce: the true effects, centred (its utilities are the items' utilities);
- counting: the population mean of a source's within-group centred expected counting
  score (the mean over tuples of P(best) - P(worst)), over 200,000 simulated groups.

The platform's table (``sources_table``) takes a model's effects from its fit with the weak
fixed penalty; the rows "shown (shrunk) scores" take them from the empirical-Bayes item
scores instead, to show why. Prints per method: coverage of the 95% intervals (with its
standard error over the replicates and sources), mean width, the slope of estimate on
target (the shrinkage), the mean Spearman of the sources' ranking with the truth and how
often it is exactly right.
``naive`` is a deliberately wrong interval for comparison: the items' own intervals
averaged, which leaves out the item noise between groups. Figures, not assertions.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bws.core.design import balanced_tuples  # noqa: E402
from bws.core.judgments import Judgments  # noqa: E402
from bws.core.sources import source_effects  # noqa: E402
from bws.filemode import score_judgments  # noqa: E402
from bws.source_scores import ItemLabels, sources_table  # noqa: E402

SOURCES = 5
SIZE, APPEARANCES, PER_TUPLE = 4, 8, 2
EFFECTS = np.linspace(-0.6, 0.6, SOURCES)
ANNOTATORS = 20


def simulate(groups: int, noise: float, seed: int):
    """Judgments of one study and its items' groups and sources."""
    rng = np.random.default_rng(seed)
    group = np.repeat(np.arange(groups), SOURCES)
    source = np.tile(np.arange(SOURCES), groups)
    utility = EFFECTS[source] + rng.normal(scale=noise, size=group.size)
    utility += rng.normal(size=groups)[group]
    local = balanced_tuples(SOURCES, SIZE, APPEARANCES, seed=seed)
    tuples = (np.arange(groups)[:, None, None] * SOURCES + local[None]).reshape(-1, SIZE)
    m = tuples.shape[0]
    rows = np.repeat(tuples, PER_TUPLE, axis=0)
    u = utility[rows]
    best = np.argmax(u + rng.gumbel(size=u.shape), axis=1)
    rest = -u + rng.gumbel(size=u.shape)
    rest[np.arange(rows.shape[0]), best] = -np.inf
    worst = np.argmax(rest, axis=1)
    first = rng.integers(0, ANNOTATORS, size=m).repeat(PER_TUPLE)
    annotators = (first + np.tile(np.arange(PER_TUPLE), m)) % ANNOTATORS
    judgments = Judgments(
        rows,
        best,
        worst,
        np.repeat(np.arange(m), PER_TUPLE),
        annotators,
        np.arange(rows.shape[0]),
        group.size,
    )
    return judgments, group, source


def counting_target(noise: float, n_groups: int = 200_000, seed: int = 12345) -> np.ndarray:
    """Population mean per source of the within-group centred expected counting score."""
    rng = np.random.default_rng(seed)
    utility = EFFECTS[None, :] + rng.normal(scale=noise, size=(n_groups, SOURCES))
    local = balanced_tuples(SOURCES, SIZE, APPEARANCES, seed=0)
    net = np.zeros((n_groups, SOURCES))
    for row in local:
        u = utility[:, row]
        p_best = np.exp(u - u.max(axis=1, keepdims=True))
        p_best /= p_best.sum(axis=1, keepdims=True)
        p_worst = np.zeros_like(u)
        for b in range(SIZE):
            others = np.arange(SIZE) != b
            e = np.exp(-u[:, others] - (-u[:, others]).max(axis=1, keepdims=True))
            p_worst[:, others] += p_best[:, [b]] * e / e.sum(axis=1, keepdims=True)
        net[:, row] += p_best - p_worst
    expected = net / np.bincount(local.ravel(), minlength=SOURCES)
    centred = expected - expected.mean(axis=1, keepdims=True)
    return centred.mean(axis=0)


def naive_interval(scores, intervals, group, source):
    """The wrong interval: the sources' mean centred score with the items' own errors only."""
    se = (intervals.high - intervals.low) / (2 * 1.96)
    values = scores.scores.reshape(-1, SOURCES)
    centred = values - values.mean(axis=1, keepdims=True)
    effect = centred.mean(axis=0)
    half = 1.96 * np.sqrt((se.reshape(-1, SOURCES) ** 2).mean(axis=0) / values.shape[0])
    return effect - half, effect + half


def run(method: str, shown_scores: bool, groups: int, noise: float, reps: int, target) -> dict:
    """Figures of one method over ``reps`` studies: the sources table the platform computes
    (bws.source_scores.sources_table), or with ``shown_scores`` one computed from the
    empirical-Bayes item scores the dashboard shows (for comparison)."""
    cover, naive, width, ratio, rho, exact = [], [], [], [], [], []
    truth_rank = EFFECTS - EFFECTS.mean()
    for rep in range(reps):
        judgments, group, source = simulate(groups, noise, 7919 * rep + 3)
        report = score_judgments(judgments, method, bootstrap=1, seed=rep)
        if shown_scores:
            shown = report.scores.appearances > 0
            names = [f"s{k}" for k in range(SOURCES)]
            table = source_effects(report.scores.scores, shown, source, names, group)
        else:
            labels = ItemLabels(groups=[f"g{g}" for g in group], sources=[f"s{s}" for s in source])
            table = sources_table(report.scores, labels, judgments)
        cover.append((table.low <= target) & (target <= table.high))
        width.append(np.mean(table.high - table.low))
        ratio.append(np.polyfit(target, table.effect, 1)[0])
        rho.append(spearmanr(table.effect, truth_rank)[0])
        exact.append(bool(np.all(np.argsort(table.effect) == np.argsort(truth_rank))))
        if method == "counting":
            low, high = naive_interval(report.scores, report.intervals, group, source)
            naive.append((low <= target) & (target <= high))
    cover = np.asarray(cover, dtype=float)
    result = {
        "cover": cover.mean(),
        "cover_se": cover.std() / np.sqrt(cover.size),
        "width": float(np.mean(width)),
        "ratio": float(np.mean(ratio)),
        "rho": float(np.mean(rho)),
        "exact": float(np.mean(exact)),
    }
    if naive:
        result["naive"] = float(np.mean(naive))
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--groups", type=int, default=40)
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--noise", type=float, default=0.5)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    truth = EFFECTS - EFFECTS.mean()
    cells = [
        ("counting", False, counting_target(args.noise), "population counting"),
        ("plackett_luce", False, truth, "true effects"),
        ("bradley_terry", False, truth, "true effects"),
        ("plackett_luce", True, truth, "true effects"),
        ("bradley_terry", True, truth, "true effects"),
    ]
    print(
        f"{args.groups} groups of {SOURCES} items (one per source), item noise sd "
        f"{args.noise}, T = {SIZE}, r = {APPEARANCES}, {PER_TUPLE} judgments per tuple, "
        f"{args.reps} studies"
    )
    print()
    print(
        "| method | from | target | coverage | width | estimate/target | Spearman | exact order |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for method, shown_scores, target, name in cells:
        r = run(method, shown_scores, args.groups, args.noise, args.reps, target)
        fit_name = "shown (shrunk) scores" if shown_scores else "sources_table"
        print(
            f"| {method} | {fit_name} | {name} | {r['cover']:.3f} ± {r['cover_se']:.3f} | "
            f"{r['width']:.3f} | {r['ratio']:.2f} | {r['rho']:.3f} | {r['exact']:.2f} |"
        )
        if "naive" in r:
            print(f"| counting, naive | items' own errors | {name} | {r['naive']:.3f} | | | | |")
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
