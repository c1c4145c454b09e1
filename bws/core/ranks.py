"""Confidence sets for ranks, the top k, and pairwise comparisons from estimated scores.

The method of Mogstad, Romano, Shaikh and Wilhelm ("Inference for ranks", Review of
Economic Studies 2024): an item's rank lies between 1 + the number of items confidently
above it and n - the number of items confidently below it, where "a is above b" is the
rejection of the hypothesis theta_a <= theta_b by a one-sided test of
t_ab = (est_a - est_b) / sd(est_a - est_b). The tests of a family of ordered pairs share one
critical value, the (level) quantile of max over the family of (Z_a - Z_b) / sd_ab with
Z ~ N(0, Sigma) (a parametric bootstrap), and step down: the pairs decided are dropped
and the quantile is taken again over the rest until nothing new is decided.

- marginal: item j's family is every pair it is in (its interval covers its rank with
  the level's probability);
- simultaneous: every pair of the items ranked (all intervals hold at once);
- top k: the items whose simultaneous upper bound is at most k are among the top k, and
  the items whose lower bound is at most k hold the top k, both with the level's
  confidence (as csranks' ``cstaubest``).

Up to DENSE_ITEMS items the covariance is exact and the critical values come from
``draws`` normal draws. Above, the covariance of a difference is taken as the sum of the
variances (less counting's shared-judgment covariance, ``bws.core.rank_covariance``) and
the critical values from Bonferroni's bound stepped down as Holm's: valid whatever the
dependence, a little wider (for model fits the covariances of centred utilities left out
are about -var/(n - 1): under 0.5% of a difference's variance above 400 items). Above
PAIR_BUDGET comparisons, only the top items by score (or the items asked for) get intervals,
each against every item.

Ranks are 1 for the highest score; pairwise questions take Holm's correction.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

from bws.core.intervals import Intervals
from bws.core.judgments import Judgments
from bws.core.rank_covariance import cross_covariance, difference_sd, score_covariance
from bws.core.scores import Scores

DEFAULT_LEVEL = 0.95
DEFAULT_DRAWS = 1000
# Exact covariance and bootstrap critical values up to this many items: the inverse
# Hessian is dense, and a step of the simultaneous family costs draws x n^2.
DENSE_ITEMS = 400
# At most this many (ranked item, item) comparisons: larger studies rank only their top.
PAIR_BUDGET = 20_000_000
# Bootstrap arrays are built in chunks of about this many floats (32 MB).
CHUNK = 4_000_000
# Steps of the step-down at most (a few are the rule; stopping early only leaves the
# intervals wider).
MAX_STEPS = 50


@dataclass(frozen=True, eq=False)
class RankIntervals:
    """Rank confidence intervals per item index (1 the best; 0 where not computed).

    ``low``/``high``: marginal (each covers its item's rank with probability ``level``);
    ``simultaneous_low``/``simultaneous_high``: all at once. ``ranked``: the items that
    have intervals (every item shown, unless the study is too large: then its top).
    ``procedure``: "bootstrap" (max-t, exact covariance) or "bonferroni" (Holm).
    """

    low: np.ndarray
    high: np.ndarray
    simultaneous_low: np.ndarray
    simultaneous_high: np.ndarray
    ranked: np.ndarray
    n_ranked_among: int  # the items ranks are counted among (those shown)
    level: float
    procedure: str
    draws: int

    def top_k(self, k: int) -> TopK:
        """The top-k statements of the simultaneous intervals (item indices, best first)."""
        return top_k_sets(self.simultaneous_low, self.simultaneous_high, k, self.ranked)


@dataclass(frozen=True)
class TopK:
    """``confident``: items among the top k with the level's confidence; ``possible``: a
    set that holds all of the top k with that confidence (items not ranked excluded)."""

    k: int
    confident: np.ndarray
    possible: np.ndarray
    complete: bool  # False when some items have no interval (large studies)


def top_k_sets(low: np.ndarray, high: np.ndarray, k: int, ranked: np.ndarray) -> TopK:
    """Items whose simultaneous upper rank bound is at most k (surely in the top k) and whose
    lower bound is at most k (possibly), ordered by their bounds."""
    if k < 1:
        raise ValueError("k must be at least 1")
    low, high, ranked = np.asarray(low), np.asarray(high), np.asarray(ranked, dtype=bool)
    confident = np.flatnonzero(ranked & (high <= k))
    possible = np.flatnonzero(ranked & (low <= k))
    confident = confident[np.lexsort((low[confident], high[confident]))]
    possible = possible[np.lexsort((high[possible], low[possible]))]
    return TopK(k, confident, possible, bool(ranked.all()))


def rank_intervals(
    estimates: np.ndarray,
    covariance: np.ndarray,
    *,
    level: float = DEFAULT_LEVEL,
    draws: int = DEFAULT_DRAWS,
    seed: int = 0,
) -> RankIntervals:
    """Marginal and simultaneous rank intervals from estimates and their full covariance
    (max-t parametric bootstrap with step-down)."""
    estimates = np.asarray(estimates, dtype=float)
    covariance = np.asarray(covariance, dtype=float)
    _check(level, estimates)
    n = estimates.size
    sd = difference_sd(np.diag(covariance), np.diag(covariance), covariance)
    t = _ratios(estimates[:, None] - estimates[None, :], sd)
    z = _normal_draws(covariance, draws, seed)
    with np.errstate(divide="ignore"):
        inverse = np.where(sd > 0, 1.0 / sd, 0.0).astype(np.float32)
    off = ~np.eye(n, dtype=bool)
    none = np.zeros((n, n), dtype=bool)
    # simultaneous: one family of every ordered pair (a, b), "a above b"
    decided = np.zeros((n, n), dtype=bool)
    for _ in range(MAX_STEPS):
        remaining = off & ~decided
        maxima = _family_maxima(z, inverse, remaining, none).max(axis=0)
        new = remaining & (t > np.quantile(maxima, level))
        if not new.any():
            break
        decided |= new
    sim_low, sim_high = _bounds(decided, n)
    # marginal: item j's family is every open pair it is in, (j above k) and (k above j)
    above = np.zeros((n, n), dtype=bool)  # above[j, k]: j confidently above k
    below = np.zeros((n, n), dtype=bool)  # below[j, k]: k confidently above j
    for _ in range(MAX_STEPS):
        maxima = _family_maxima(z, inverse, off & ~above, off & ~below)
        critical = np.quantile(maxima, level, axis=1)
        new_above = off & ~above & (t > critical[:, None])
        new_below = off & ~below & (t.T > critical[:, None])
        if not (new_above.any() or new_below.any()):
            break
        above |= new_above
        below |= new_below
    low = 1 + below.sum(axis=1)
    high = n - above.sum(axis=1)
    ranked = np.ones(n, dtype=bool)
    return RankIntervals(low, high, sim_low, sim_high, ranked, n, level, "bootstrap", int(draws))


def bonferroni_rank_intervals(
    estimates: np.ndarray,
    variance: np.ndarray,
    rows: np.ndarray,
    *,
    covariance_rows=None,
    level: float = DEFAULT_LEVEL,
) -> RankIntervals:
    """Rank intervals of the items ``rows`` (indices) among all, from variances alone (and
    optionally each row's covariances with every item, ``covariance_rows(rows)`` giving a
    (len(rows), n) array): Bonferroni critical values stepped down as Holm's."""
    estimates = np.asarray(estimates, dtype=float)
    variance = np.asarray(variance, dtype=float)
    rows = np.asarray(rows, dtype=np.int64)
    _check(level, estimates)
    n, r = estimates.size, rows.size
    chunk = max(1, CHUNK // max(n, 1))
    t = np.empty((r, n))
    for start in range(0, r, chunk):
        part = rows[start : start + chunk]
        covariance = 0.0 if covariance_rows is None else covariance_rows(part)
        sd = difference_sd(variance[part], variance, covariance)
        t[start : start + chunk] = _ratios(estimates[part][:, None] - estimates[None, :], sd)
    t[np.arange(r), rows] = -np.inf  # an item is not compared with itself
    tail = 1.0 - level
    # simultaneous family: ordered pairs with at least one ranked item (each once)
    in_rows = np.zeros(n, dtype=bool)
    in_rows[rows] = True
    family = 2 * r * (n - 1) - r * (r - 1)
    reverse = np.where(in_rows[None, :], -np.inf, -t)  # (b, row) pairs not counted twice
    decided_above = np.zeros((r, n), dtype=bool)
    decided_below = np.zeros((r, n), dtype=bool)
    left = family
    for _ in range(MAX_STEPS):
        critical = -special.ndtri(tail / max(left, 1))
        new_above = ~decided_above & (t > critical)
        new_below = ~decided_below & (reverse > critical)
        count = int(new_above.sum() + new_below.sum())
        if count == 0:
            break
        decided_above |= new_above
        decided_below |= new_below
        left -= count
    # a ranked b confidently above a ranked row: the row's decided_above entry, seen from b
    above_ranked = decided_above[:, rows]  # (row, ranked b): row above b
    sim_below = decided_below.sum(axis=1) + above_ranked.sum(axis=0)
    sim_low = 1 + sim_below
    sim_high = n - decided_above.sum(axis=1)
    # marginal: each row's own family of 2 (n - 1) ordered pairs
    above = np.zeros((r, n), dtype=bool)
    below = np.zeros((r, n), dtype=bool)
    left_rows = np.full(r, 2 * (n - 1))
    for _ in range(MAX_STEPS):
        critical = -special.ndtri(tail / np.maximum(left_rows, 1))[:, None]
        new_above = ~above & (t > critical)
        new_below = ~below & (-t > critical)
        new_below[np.arange(r), rows] = False
        counts = new_above.sum(axis=1) + new_below.sum(axis=1)
        if not counts.any():
            break
        above |= new_above
        below |= new_below
        left_rows -= counts
    full = np.zeros(n, dtype=np.int64)
    result = [full.copy() for _ in range(4)]
    values = (1 + below.sum(axis=1), n - above.sum(axis=1), sim_low, sim_high)
    for target, value in zip(result, values, strict=True):
        target[rows] = value
    ranked = np.zeros(n, dtype=bool)
    ranked[rows] = True
    return RankIntervals(*result, ranked, n, level, "bonferroni", 0)


@dataclass(frozen=True)
class PairComparison:
    """Is item ``first`` above item ``second``? Indices into the estimates."""

    first: int
    second: int
    difference: float  # est_first - est_second
    sd: float
    p_value: float  # two-sided, unadjusted
    p_holm: float  # Holm-adjusted over the pairs asked about
    verdict: str  # "first", "second" (the one above, with the level's confidence) or "unsure"


def holm(p_values: np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p-values (the same order as given)."""
    p = np.asarray(p_values, dtype=float)
    m = p.size
    order = np.argsort(p, kind="stable")
    scaled = p[order] * (m - np.arange(m))
    adjusted = np.empty(m)
    adjusted[order] = np.minimum(1.0, np.maximum.accumulate(scaled))
    return adjusted


def pairwise(
    estimates: np.ndarray,
    sd: np.ndarray,
    items: np.ndarray,
    *,
    level: float = DEFAULT_LEVEL,
) -> list[PairComparison]:
    """Every pair of ``items`` (indices): the difference, its two-sided z-test, Holm's
    adjusted p-value over the pairs, and which item is above at the level (``sd[a, b]``:
    the standard deviation of est_a - est_b, indexed like the estimates' items)."""
    items = [int(i) for i in dict.fromkeys(np.asarray(items).tolist())]
    pairs = [(a, b) for x, a in enumerate(items) for b in items[x + 1 :]]
    if not pairs:
        return []
    first = np.array([a for a, _ in pairs])
    second = np.array([b for _, b in pairs])
    difference = np.asarray(estimates, dtype=float)[first] - np.asarray(estimates)[second]
    spread = np.asarray(sd, dtype=float)[first, second]
    with np.errstate(invalid="ignore", divide="ignore"):
        z = np.where(spread > 0, difference / spread, np.sign(difference) * np.inf)
    p = np.where(np.isnan(z), 1.0, 2.0 * special.ndtr(-np.abs(np.nan_to_num(z))))
    adjusted = holm(p)
    tail = 1.0 - level
    return [
        PairComparison(
            int(first[x]),
            int(second[x]),
            float(difference[x]),
            float(spread[x]),
            float(p[x]),
            float(adjusted[x]),
            ("first" if difference[x] > 0 else "second") if adjusted[x] <= tail else "unsure",
        )
        for x in range(len(pairs))
    ]


def score_rank_intervals(
    judgments: Judgments,
    scores: Scores,
    intervals: Intervals,
    *,
    level: float = DEFAULT_LEVEL,
    draws: int = DEFAULT_DRAWS,
    seed: int = 0,
    items: np.ndarray | None = None,
) -> RankIntervals:
    """Rank intervals of a fit's items among the items shown, from its calibrated
    intervals (``bws.core.intervals.calibrated``): exact up to DENSE_ITEMS shown items,
    else conservative; past PAIR_BUDGET comparisons only ``items`` (indices), or the top
    items by score, get intervals. Returned per item index of the study (0: none)."""
    shown = np.flatnonzero((scores.appearances > 0) & np.isfinite(intervals.std))
    n = judgments.n_items
    values = scores.scores[shown]
    if shown.size <= DENSE_ITEMS:
        covariance = score_covariance(judgments, scores, intervals, shown)
        found = rank_intervals(values, covariance, level=level, draws=draws, seed=seed)
    else:
        position = np.full(n, -1)
        position[shown] = np.arange(shown.size)
        if items is None:
            budget = max(1, PAIR_BUDGET // shown.size)
            rows = np.argsort(-values, kind="stable")[:budget]
        else:
            rows = position[np.asarray(items, dtype=np.int64)]
            rows = rows[rows >= 0]

        def covariance_rows(part: np.ndarray) -> np.ndarray:
            return cross_covariance(judgments, intervals, shown[part], shown)

        found = bonferroni_rank_intervals(
            values,
            intervals.std[shown] ** 2,
            np.sort(rows),
            covariance_rows=covariance_rows,
            level=level,
        )
    return _spread(found, shown, n)


def pairwise_sd(
    judgments: Judgments, scores: Scores, intervals: Intervals, items: np.ndarray
) -> np.ndarray:
    """The (n, n)-indexable standard deviations of differences among ``items``, as a dense
    array over the study's items (only the entries among ``items`` filled)."""
    items = np.asarray(items, dtype=np.int64)
    n = judgments.n_items
    sd = np.full((n, n), np.nan)
    if items.size <= DENSE_ITEMS:
        covariance = score_covariance(judgments, scores, intervals, items)
    else:
        covariance = cross_covariance(judgments, intervals, items, items)
        np.fill_diagonal(covariance, intervals.std[items] ** 2)
    variance = np.diag(covariance)
    sd[np.ix_(items, items)] = difference_sd(variance, variance, covariance)
    return sd


def _spread(found: RankIntervals, shown: np.ndarray, n: int) -> RankIntervals:
    """The intervals of the shown items placed at their study indices (0 elsewhere)."""
    arrays = []
    for values in (found.low, found.high, found.simultaneous_low, found.simultaneous_high):
        full = np.zeros(n, dtype=np.int64)
        full[shown] = values
        arrays.append(full)
    ranked = np.zeros(n, dtype=bool)
    ranked[shown] = found.ranked
    return RankIntervals(
        *arrays, ranked, found.n_ranked_among, found.level, found.procedure, found.draws
    )


def _ratios(difference: np.ndarray, sd: np.ndarray) -> np.ndarray:
    """difference / sd, +-inf where sd is 0 and the difference is not."""
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(sd > 0, difference / sd, np.sign(difference) * np.inf)
    return np.nan_to_num(ratio, nan=0.0, posinf=np.inf, neginf=-np.inf)


def _normal_draws(covariance: np.ndarray, draws: int, seed: int) -> np.ndarray:
    """(n, draws) draws of N(0, covariance), float32 (a symmetric square root, so singular
    covariances such as counting's are fine)."""
    values, vectors = np.linalg.eigh((covariance + covariance.T) / 2.0)
    root = vectors * np.sqrt(np.clip(values, 0.0, None))
    rng = np.random.default_rng(seed)
    normal = rng.standard_normal((covariance.shape[0], draws))
    return (root @ normal).astype(np.float32)


def _family_maxima(z, inverse, up, down) -> np.ndarray:
    """(n, draws): per item j and draw, the max over k of (Z_j - Z_k) / sd_jk where
    ``up[j, k]`` (j above k is open) and of (Z_k - Z_j) / sd_jk where ``down[j, k]``, and
    of 0 (which moves no quantile above 0; pairs of no spread count 0 too).

    ``z`` is (n, draws) float32, ``inverse`` 1 / sd (0 where sd is 0)."""
    n, draws = z.shape
    result = np.zeros((n, draws), dtype=np.float32)
    rows = np.flatnonzero(up.any(axis=1) | down.any(axis=1))
    chunk = max(1, CHUNK // max(n * draws, 1))
    for start in range(0, rows.size, chunk):
        part = rows[start : start + chunk]
        scaled = z[part, None, :] - z[None, :, :]
        scaled *= inverse[part][:, :, None]
        largest = np.zeros((part.size, draws), dtype=np.float32)
        if down[part].any():
            largest = (scaled * -down[part][:, :, None].astype(np.float32)).max(axis=1)
        scaled *= up[part][:, :, None].astype(np.float32)
        result[part] = np.maximum(np.maximum(largest, scaled.max(axis=1)), 0.0)
    return result


def _bounds(decided: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Rank bounds from decided ordered pairs (decided[a, b]: a above b)."""
    return 1 + decided.sum(axis=0), n - decided.sum(axis=1)


def _check(level: float, estimates: np.ndarray) -> None:
    if not 0 < level < 1:
        raise ValueError("level must lie between 0 and 1")
    if estimates.ndim != 1:
        raise ValueError("estimates must be one score per item")
