"""How many judgments could any BWS design save? An information bound for the adaptive goal.

    python benchmarks/adaptive_bound.py [--items 1000] [--ideal-items 1000 10000]
                                        [--distributions normal t3] [--draws 40] [--fits]
                                        [--fit-limited]

The adaptive goal asks for the balanced design's Spearman at 8 appearances per item with
at most 70% of its judgments (5.6 appearances per item). This script asks what the
judgments themselves allow, whatever the design, with the true utilities known to the
designer. Judgments come from the MaxDiff model of ``choice_models.sample_maxdiff`` (best from
softmax(u) over the tuple, worst from softmax(-u) over the rest); a tuple's Fisher
information about the utilities is computed exactly (``tuple_information``).

Four parts, each printed as a table:

1. **Check of the predictors on the balanced design** (r = 2..8): the Spearman predicted by
   (a) the Cramer-Rao model, estimates = truth + N(0, F^-1) with F the design's Fisher
   information (errors correlated as the design makes them), and (b) the independent
   model, each item's error of variance 1 / (appearances x the mean information per
   appearance of random tuples). Compare with the measured fits in RESULTS.md.
2. **The ideal design** (independent model): every appearance carries the most information
   a judgment can give (about that of a tuple of equal items, 3/16 + 1/6), appearances
   are shared in proportion to density^alpha of the true utilities, alpha from 0 to 1.5.
   Printed: the appearances per item this impossible design needs to reach the balanced
   design's predicted Spearman at r = 8, and their share of 8.
3. **Designs chosen with the truth** (Cramer-Rao model, correlations kept) at 5.6
   appearances per item: a balanced start of r0 = 0 or 2 appearances, then rounds in which
   every item appears once, in tuples of neighbours after the true ranks are perturbed by
   N(0, h) (h small: tuples of nearly equal items; h large: random tuples). With
   ``--fits``, each design is also judged (2 seeds) and scored as the platform scores
   (Plackett-Luce, calibrated intervals), the Spearman of those fits beside.
4. **Designs that know only the judgments so far** (``--fit-limited``; independent model).
   Part 2's ideal puts equal items together; a real design sees estimates, and items of
   equal estimates still differ in truth by what the judgments leave unknown. Here every
   appearance after a balanced start of r0 sits in a tuple of its neighbours in the
   estimates that the information so far allows (sorted truth + noise of variance one
   over it, the truth's own distribution around them: ``standing_information``), worth
   what such a tuple gives an item at its standing. Printed: the appearances per item
   at which the items' information reaches the balanced design's Spearman at r = 8
   (``fit_limited_appearances``) and their share of 8, with appearances alike for every
   item or shared in proportion to density^alpha after the start.

Figures, not assertions; benchmarks/RESULTS.md keeps a run.
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
from scipy.interpolate import interp1d  # noqa: E402
from scipy.optimize import brentq, minimize  # noqa: E402
from scipy.stats import norm, spearmanr  # noqa: E402
from scipy.stats import t as student_t  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from adaptive import FINAL, SIZE, Study, true_utilities  # noqa: E402

from bws.core.choice_models import softmax_covariance  # noqa: E402
from bws.core.design import balanced_tuples  # noqa: E402
from bws.core.intervals import calibrated  # noqa: E402

GOAL_SHARE = 0.70
MEMORY_LIMIT = 4 * 1024**3
ALPHAS = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5)
SPREADS = (3, 10, 30, 100, 300, 3000)
# part 4: (balanced start, alpha of the allocation after it)
FIT_LIMITED = ((0, 0.0), (2, 0.0), (2, -0.25), (2, 0.25), (2, 0.5))


def _softmax(values: np.ndarray) -> np.ndarray:
    shifted = np.exp(values - values.max(axis=1, keepdims=True))
    return shifted / shifted.sum(axis=1, keepdims=True)


def tuple_information(utilities: np.ndarray, tuples: np.ndarray) -> np.ndarray:
    """The Fisher information (m, T, T) of one MaxDiff judgment per tuple at the utilities.

    The best choice contributes the covariance of softmax(u); the worst choice, given best
    b, the covariance of softmax(-u) over the rest, weighted by the probability of b.
    """
    x = np.asarray(utilities, dtype=float)[tuples]
    best = _softmax(x)
    information = softmax_covariance(best)
    for b in range(x.shape[1]):
        rest = -x.copy()
        rest[:, b] = -np.inf
        information += best[:, b, None, None] * softmax_covariance(_softmax(rest))
    return information


def information_matrix(utilities: np.ndarray, tuples: np.ndarray) -> np.ndarray:
    """The design's Fisher information (n, n): the sum of its tuples' blocks."""
    n, size = utilities.size, tuples.shape[1]
    matrix = np.zeros((n, n))
    rows = np.repeat(tuples[:, :, None], size, axis=2)
    cols = np.repeat(tuples[:, None, :], size, axis=1)
    np.add.at(matrix, (rows.ravel(), cols.ravel()), tuple_information(utilities, tuples).ravel())
    return matrix


def cramer_rao_spearman(utilities, tuples, rng, draws) -> float:
    """Mean Spearman of truth + N(0, F^-1) with the truth (F: the design's information).

    A tiny ridge stands in for the free common shift of the utilities; a shift of every
    item leaves the ranks alone.
    """
    n = utilities.size
    covariance = np.linalg.inv(information_matrix(utilities, tuples) + 1e-3 * np.eye(n))
    root = np.linalg.cholesky(covariance)
    return float(
        np.mean(
            [spearmanr(utilities + root @ rng.normal(size=n), utilities)[0] for _ in range(draws)]
        )
    )


def independent_spearman(utilities, variance, rng, draws) -> float:
    """Mean Spearman of truth + independent N(0, variance) errors with the truth."""
    spread = np.sqrt(variance)
    return float(
        np.mean(
            [
                spearmanr(utilities + spread * rng.normal(size=utilities.size), utilities)[0]
                for _ in range(draws)
            ]
        )
    )


def most_information() -> float:
    """The most information one judgment gives about one item of its tuple.

    A tuple of equal utilities gives 3/16 (best) + 3/4 x 2/9 (worst) = 0.35417 per item;
    the maximum over the other items' offsets lies a hair above (0.35425, the others
    0.05 above the item), found here numerically from several starts.
    """

    def negative(offsets):
        utilities = np.concatenate([[0.0], offsets])
        return -tuple_information(utilities, np.arange(SIZE)[None])[0, 0, 0]

    starts = np.random.default_rng(0).normal(0, 1, size=(20, SIZE - 1))
    return float(-min(minimize(negative, start).fun for start in starts))


def random_tuple_information(utilities, rng, tuples=20000) -> float:
    """Mean information per appearance of an item in random tuples of these utilities."""
    # tuples of distinct items: draws with a repeated item are dropped (memory O(tuples),
    # where a shuffle of every item per tuple would take tuples x items)
    picks = np.empty((0, SIZE), dtype=np.int64)
    while len(picks) < tuples:
        draws = rng.integers(utilities.size, size=(2 * tuples, SIZE))
        ordered = np.sort(draws, axis=1)
        picks = np.vstack([picks, draws[(np.diff(ordered, axis=1) > 0).all(axis=1)]])
    picks = picks[:tuples]
    information = tuple_information(utilities, picks)
    return float(np.mean(np.diagonal(information, axis1=1, axis2=2)))


def density(utilities, distribution) -> np.ndarray:
    """The true utilities' density at each item (t3 is scaled to sd 1)."""
    if distribution == "normal":
        return norm.pdf(utilities)
    return student_t.pdf(utilities * np.sqrt(3.0), 3) * np.sqrt(3.0)


def ideal_appearances(utilities, weights, target, most, rng, draws) -> float | None:
    """Appearances per item at which the ideal design reaches target (None: not by 2 x FINAL)."""
    shares = weights / weights.mean()

    def gap(appearances):
        variance = 1.0 / (most * appearances * shares)
        return independent_spearman(utilities, variance, rng, draws) - target

    if gap(2.0 * FINAL) < 0:
        return None
    return float(brentq(gap, 0.5, 2.0 * FINAL, xtol=0.02))


def standing_information(
    population: np.ndarray, noise_sd: float | None, rng: np.random.Generator, bins: int = 40
) -> tuple[np.ndarray, np.ndarray]:
    """Information per appearance by standing: (bin centres in utility, mean information of
    an appearance of an item there). Every item of ``population`` appears once, in a tuple
    of the items next to it in the order of utility + N(0, noise_sd), what a design sees of
    them after judgments worth 1 / noise_sd^2 (None: random tuples). Sorted estimates are
    what puts the most alike items together, whatever the prior the design reads them by."""
    n = population.size - population.size % SIZE
    if noise_sd is None:
        order = rng.permutation(population.size)[:n]
    else:
        seen = population + noise_sd * rng.standard_normal(population.size)
        order = np.argsort(seen)[:n]
    tuples = order.reshape(-1, SIZE)
    per_item = np.diagonal(tuple_information(population, tuples), axis1=1, axis2=2).ravel()
    standing = population[tuples.ravel()]
    edges = np.quantile(standing, np.linspace(0, 1, bins + 1))
    which = np.clip(np.searchsorted(edges, standing, side="right") - 1, 0, bins - 1)
    centres = np.array([standing[which == b].mean() for b in range(bins)])
    worth = np.array([per_item[which == b].mean() for b in range(bins)])
    return centres, worth


def fit_limited_appearances(
    utilities: np.ndarray,
    distribution: str,
    start: int,
    rng: np.random.Generator,
    draws: int,
    alpha: float = 0.0,
) -> tuple[float | None, float, float]:
    """Appearances per item at which a design that knows only the judgments so far reaches
    the balanced design's Spearman at FINAL (independent model; None: not by 2 x FINAL),
    with the balanced design's and this design's mean information per item at FINAL.

    Each item's information (the inverse variance of its estimate) grows per appearance by
    what an appearance at its standing is worth: in random tuples for the ``start``
    balanced appearances and the balanced design, then in tuples of its neighbours in the
    estimates the information so far allows (``standing_information`` at every 0.25 of
    information; interpolated between). After the start, items appear in proportion to
    density^alpha of the truth (0: every item alike)."""
    population = true_utilities(80_000, distribution, rng)
    centres, random_worth = standing_information(population, None, rng)
    balanced = FINAL * np.interp(utilities, centres, random_worth)
    grid = np.arange(0.0, 4.01, 0.25)
    table = [random_worth] + [
        np.interp(centres, *standing_information(population, 1 / np.sqrt(p), rng)) for p in grid[1:]
    ]
    # the worth at every standing for the items' mean information, between grid points
    worth_at = interp1d(
        grid, np.array(table), axis=0, bounds_error=False, fill_value=(table[0], table[-1])
    )
    step = 0.05
    information = start * np.interp(utilities, centres, random_worth)
    noise = rng.standard_normal((draws, utilities.size))  # the same draws for every Spearman

    def spearman(variance):
        return float(
            np.mean([spearmanr(utilities + np.sqrt(variance) * z, utilities)[0] for z in noise])
        )

    goal = spearman(1.0 / balanced)
    shares = density(utilities, distribution) ** alpha
    shares = shares / shares.mean()
    r, previous, need, at_final = float(start), None, None, None
    while r < 2 * FINAL - 1e-9 and (need is None or at_final is None):
        mean = float(information.mean())
        now = worth_at(mean)
        information = information + step * shares * np.interp(utilities, centres, now)
        r += step
        if at_final is None and r >= FINAL - 1e-9:
            at_final = float(information.mean())
        # the Spearman every 0.1 appearance from 2 before the goal, until it is reached
        if need is None and r >= FINAL - 2 and round(r / step) % 2 == 0:
            reached = spearman(1.0 / information)
            if reached >= goal:
                need = r
                if previous is not None:
                    low, below = previous
                    need = low + (r - low) * (goal - below) / (reached - below)
            previous = (r, reached)
    return need, float(balanced.mean()), float(at_final)


def sorted_rounds(utilities, start, spread, appearances, rng) -> np.ndarray:
    """A balanced start, then rounds of tuples of neighbours in perturbed true ranks."""
    n = utilities.size
    rank = np.empty(n)
    rank[np.argsort(utilities)] = np.arange(n)
    parts = [balanced_tuples(n, SIZE, start, seed=rng)] if start else []
    for _ in range(int(np.ceil(appearances - start))):
        shuffled = np.argsort(rank + rng.normal(0, spread, size=n))
        parts.append(shuffled[: n - n % SIZE].reshape(-1, SIZE))
    return np.vstack(parts)[: round(appearances * n / SIZE)]


def fitted_spearman(utilities, tuples, seeds=2) -> list[float]:
    """Spearman of the platform's default fit on judgments of the design (one per seed)."""
    out = []
    for seed in range(seeds):
        study = Study(utilities, np.random.default_rng([11, seed]))
        study.judge(tuples)
        scores, _ = calibrated(study.judgments(), "plackett_luce", adaptive=True)
        out.append(float(spearmanr(scores.scores, utilities)[0]))
    return out


def check_rows(utilities, rng, draws, fits) -> tuple[list[str], float]:
    per_appearance = random_tuple_information(utilities, rng)
    rows = []
    for r in range(2, FINAL + 1, 2):
        tuples = balanced_tuples(utilities.size, SIZE, r, seed=rng)
        independent = independent_spearman(
            utilities, np.full(utilities.size, 1.0 / (per_appearance * r)), rng, draws
        )
        fitted = " / ".join(f"{s:.3f}" for s in fitted_spearman(utilities, tuples)) if fits else ""
        rows.append(
            f"| {r} | {cramer_rao_spearman(utilities, tuples, rng, draws):.3f}"
            f" | {independent:.3f} | {fitted or '-'} |"
        )
    return rows, per_appearance


def print_fit_limited(sizes, distributions, draws) -> None:
    print("4. Designs that know only the judgments so far (independent model): appearances")
    print("to reach the balanced design's Spearman at r = 8\n")
    print(
        "| items | utilities | start r0 | alpha | needs | share"
        " | mean information per item at r = 8: balanced / this design |"
    )
    print("|---:|---|---:|---:|---:|---:|---|")
    for n in sizes:
        for distribution in distributions:
            for start, alpha in FIT_LIMITED:
                rng = np.random.default_rng([n, start, 4])
                utilities = true_utilities(n, distribution, rng)
                need, balanced, at_final = fit_limited_appearances(
                    utilities, distribution, start, rng, draws, alpha
                )
                print(
                    f"| {n:,} | {distribution} | {start} | {alpha}"
                    f" | {'not reached' if need is None else f'{need:.2f}'}"
                    f" | {'-' if need is None else f'{need / FINAL:.0%}'}"
                    f" | {balanced:.3f} / {at_final:.3f} |",
                    flush=True,
                )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=1000, help="items for parts 1 and 3")
    parser.add_argument("--ideal-items", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--distributions", nargs="+", default=["normal", "t3"])
    parser.add_argument("--draws", type=int, default=40, help="error draws per prediction")
    parser.add_argument("--fits", action="store_true", help="also judge and fit each design")
    parser.add_argument(
        "--fit-limited", action="store_true", help="only part 4: designs that know only the fit"
    )
    args = parser.parse_args(argv)
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    started = time.time()
    if args.fit_limited:
        print_fit_limited(args.ideal_items, args.distributions, args.draws)
        print(f"\n{time.time() - started:.0f} s")
        return
    most = most_information()
    budget = GOAL_SHARE * FINAL
    for distribution in args.distributions:
        rng = np.random.default_rng(0)
        truth = true_utilities(args.items, distribution, rng)
        print(f"\n## {distribution} utilities\n")
        print(f"1. Balanced designs, {args.items:,} items: predicted and fitted Spearman\n")
        print("| r | Cramer-Rao model | independent model | fitted (PL, 2 seeds) |")
        print("|---:|---:|---:|---|")
        rows, per_appearance = check_rows(truth, rng, args.draws, args.fits)
        print("\n".join(rows))
        print(
            f"\nmean information per appearance in random tuples {per_appearance:.4f};"
            f" most a judgment gives {most:.5f} (x {most / per_appearance:.2f})\n"
        )
        print("2. The ideal design (independent model): appearances to reach balanced r = 8\n")
        print("| items | alpha | balanced r = 8 (predicted) | ideal needs | share |")
        print("|---:|---:|---:|---:|---:|")
        for n in args.ideal_items:
            utilities = true_utilities(n, distribution, np.random.default_rng([n, 0]))
            per_item = random_tuple_information(utilities, rng)
            target = independent_spearman(
                utilities, np.full(n, 1.0 / (per_item * FINAL)), rng, 2 * args.draws
            )
            weights = density(utilities, distribution)
            for alpha in ALPHAS:
                need = ideal_appearances(utilities, weights**alpha, target, most, rng, args.draws)
                print(
                    f"| {n:,} | {alpha} | {target:.3f}"
                    f" | {'not reached' if need is None else f'{need:.2f}'}"
                    f" | {'-' if need is None else f'{need / FINAL:.0%}'} |",
                    flush=True,
                )
        goal = cramer_rao_spearman(
            truth, balanced_tuples(args.items, SIZE, FINAL, seed=rng), rng, args.draws
        )
        print(
            f"\n3. Designs chosen with the truth at {budget:.1f} app./item"
            f" (goal: balanced r = 8, Cramer-Rao {goal:.3f})\n"
        )
        print("| start r0 | spread h (ranks) | Cramer-Rao model | fitted (PL, 2 seeds) |")
        print("|---:|---:|---:|---|")
        balanced = balanced_tuples(args.items, SIZE, 6, seed=rng)[
            : round(budget * args.items / SIZE)
        ]
        designs = [("balanced", "-", balanced)]
        for start in (0, 2):
            for spread in SPREADS:
                tuples = sorted_rounds(truth, start, spread, budget, rng)
                designs.append((start, spread, tuples))
        for start, spread, tuples in designs:
            fitted = (
                " / ".join(f"{s:.3f}" for s in fitted_spearman(truth, tuples)) if args.fits else "-"
            )
            predicted = cramer_rao_spearman(truth, tuples, rng, args.draws)
            print(f"| {start} | {spread} | {predicted:.3f} | {fitted} |", flush=True)
    print(f"\n{time.time() - started:.0f} s")


if __name__ == "__main__":
    main()
