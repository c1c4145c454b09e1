"""Adaptive batches aimed at what a study wants to know, and what the fit says about it.

Pure numpy. ``bws.core.adaptive`` spends judgments where the whole ranking is least sure;
a study often asks something narrower, and then most items need few judgments:

* ``top_k``: which k items are the best. An item's value is the posterior probability that
  it lies on the other side of the boundary between the k-th and the (k+1)-th score than
  its score puts it (``side_error``), so the judgments go to the items near the boundary.
* ``threshold``: which items lie above a score, or above a reference item's score. Given
  as a score, an item's value is what one more appearance is expected to take off its
  doubt (``threshold_gain``). Given as an item, the reference's own uncertainty counts for
  every item, and it sits in every tuple of a batch where it meets only new items
  (``anchored``).
* ``comparisons``: the order of chosen pairs of items. An item's value is the summed
  probability that the fit orders its pairs wrongly; the other items are drawn only to
  fill tuples, the nearest in score first, since tuples hold items close in a posterior
  draw and the pair's two items may meet only once (no pair twice). So each compared
  item's tuple-mates are then, where the rules allow, items its partner has met
  (``linked``): shared comparators, whose error cancels out of the pair's difference. The
  compared items, like a reference item, are not held to ``max_appearances``
  (``exempt_items``).
* ``ranking``: the whole order (``adaptive.adaptive_batch``, today's behaviour).

Every target lays its batch out with ``adaptive.batch_by_value``, so the design rules of
``bws.core.adaptive`` hold for all of them: at most ``max_appearances`` per item and once
a batch (``exempt_items`` excepted from the first, a threshold's reference item from the
second), no pair twice, positions balanced, the same batch from the same inputs and seed.

Value is divided by (appearances + 1) (a threshold's: ``threshold_gain`` instead) and raised
to ``sharpness`` (TARGET_SHARPNESS; for the top k, TOP_K_SHARPNESS): an item's variance falls
about as one over its appearances, so what one more appearance takes off its error falls
too, and a sharp draw keeps the batch on the items in doubt. Measured in
``benchmarks/adaptive_targets.py``.

What the fit says (``target_report``): per item the posterior probability of belonging to
the answer (in the top k, above the threshold), the expected share of the reported answer
that is right, the probability that the whole answer is right, and the same projected for
a number of further judgments spent the same way (each item's sd shrunk by the square root
of its appearances before and after). The top-k answer is the k items likeliest to belong,
which gives it the highest expected precision. Probabilities come from independent normal
posteriors (the scores' covariance is dropped, as in the intervals): exact per item for a
threshold and per pair for comparisons, drawn ``draws`` times for the top k and for the
chance that the whole answer is right. A threshold given as a score gets none while the fit
cannot place the items on its scale (``placed``).

Chosen pairs: a pair's probability of being ordered right comes from its difference under
a prior fitted to the chosen pairs (``pair_posterior``), not the fit's prior of two items
drawn at random. Pairs asked about are mostly close, and under the random pair's prior a
close pair was said right with probability 0.9 or more when 0.71 of such pairs were
(benchmarks/adaptive_targets.py, pairs 0.3 sd apart); the same doubt steers the batches,
so a close pair whose first meetings went the wrong way is not left alone as settled.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import minimize_scalar
from scipy.special import ndtr

from bws.core.adaptive import DesignState, adaptive_batch, batch_by_value

__all__ = ["Target", "exempt_items", "target_batch", "target_report", "target_values"]

KINDS = ("ranking", "top_k", "threshold", "comparisons")
# Items of no value to a narrow target still get this share of the largest value, so that a
# batch can be filled and no item's estimate is left to its first appearances alone.
VALUE_FLOOR = 1e-3
# Doubt below this counts as none: when no item's doubt reaches it (a threshold score far
# from every score of a fit whose prior is still at its floor, after a single balanced
# appearance), every item is worth the same and the batch goes to the least seen. Without
# it, doubts of 1e-12 against 1e-20 sent every batch to the same few items, the prior never
# left its floor and the answer stayed "none above" (2 of 6 seeded studies in
# bws/tests/test_targets.py).
NO_DOUBT = 1e-3
# A batch has at most as many tuples as it takes to seat the items worth at least this share
# of the most valuable one once.
USEFUL_SHARE = 0.05
# Narrow targets draw items with probability proportional to value ** this: at 1,000 items
# the top 10% was reached with a median of 49-59% of the balanced design's judgments at 1,
# 46-51% at 2 and 44-46% at 3 (benchmarks/adaptive_targets.py, 10 seeds, normal and t3).
# For a threshold, 2 and 4 did no better than 3 (normal 64% and 54% against 54%, t3 59% and
# 50% against 54%, worst seed 71-84% against 64-81%); pairs were measured at 3 only.
TARGET_SHARPNESS = 3.0
# The top k draws sharper: at 4 every crowd met half the judgments (normal, t3 and 4 of 20
# annotators clicking at random: medians 45%, 49%, 48% at 1,000 items, worst 62-68%; 44%,
# 46%, 50% at 10,000, worst 47-52%), where 3 left the clickers at 51% (10 seeds each).
TOP_K_SHARPNESS = 4.0
DRAWS = 400
DRAW_CHUNK = 25
# After batches aimed at a narrow target the fit's sd reads too small for the items in doubt
# (their errors spread 1.15-1.19 times their sd at 1,000 items): the answer's expected
# precision said 0.66-0.68 where 0.60 was found, against 0.56 where 0.60 was found with
# the sd widened by 1.25 (benchmarks/adaptive_targets.py, top 10%, normal and t3, 10
# seeds). After a balanced design it read right (0.56-0.59 against 0.59), so only
# targeted designs are widened, by the factor between.
TARGETED_SD_FACTOR = 1.15
UNSEEN_SD = 2.0
# A threshold given as a score values each item by what one more appearance is expected to
# take off its doubt (``threshold_gain``, "gain"), not by its doubt over its appearances
# ("doubt"): its balanced design's accuracy was reached with a median / worst of 53% / 62%
# (normal), 48% / 65% (t3) and 53% / 62% (clickers) of the judgments at 1,000 items,
# against 54% / 64%, 54% / 81% and 60% / 76%, and with 51% / 53%, 41% / 47% and 54% / 58%
# at 10,000, against 53% / 55%, 50% / 50% and 59% / 61% (benchmarks/adaptive_targets.py,
# 10 seeds, batches of n / 32 tuples). Above a reference item (its sd blurring the
# boundary), scored by F1: 42% / 54% (normal), 41% / 51% (t3), 54% / 60% (clickers) against
# 48% / 57%, 47% / 67%, 54% / 67%.
THRESHOLD_RULE = "gain"
GAIN_NODES = 24
# A threshold given as a reference item: the reference sits in this share of each batch's
# tuples (as new pairs allow), since its own error moves the boundary for every item.
REFERENCE_SHARE = 1.0
# Chosen pairs' batches seat each compared item with items its partner has met (``linked``).
LINK_PAIRS = True
# Chosen pairs get a prior of their own (``pair_posterior``) from this many pairs on; its
# variance is at least this share of a random pair's. A pair's likelihood precision is at
# least PAIR_MIN_PRECISION / (a random pair's variance) (a pair the data hardly touch).
PAIR_PRIOR_MIN = 5
PAIR_PRIOR_FLOOR = 1e-3
PAIR_MIN_PRECISION = 1e-3
# Of chosen pairs said right with probability 0.9 or more, the share that was, in simulated
# posteriors (benchmarks/pair_calibration.py, 400 studies of 20 pairs a regime): where the
# pairs lay far apart or were measured well (true differences of sd or gap 0.5-1 of the
# utilities' sd with item sd 0.3-0.6, or 1 with item sd 0.6-1.2), and where they lay close
# (0.2-0.3, item sd 0.3-0.6 or 0.6-1.2; also 0.5 with item sd 0.6-1.2: 0.83-0.84). Weakly
# measured close pairs are the low end (0.65-0.73). The pairs' prior cannot be told from 20
# such pairs, and in the studies where it reads wide, the pairs whose noise ran largest are
# said sure; no rule tried was better (benchmarks/RESULTS.md, "Chosen pairs").
SURE_PAIRS_RIGHT = {"apart": (0.92, 1.00), "close": (0.65, 0.90)}
# The same with fewer than PAIR_PRIOR_MIN pairs (4 a study, 2,000 studies, ``--pairs 4``),
# each pair read under the fit's prior of two items drawn at random: too sure of close pairs
# (and their expected share in the right order said 0.71-0.75 where 0.55-0.68 was).
SURE_PAIRS_RIGHT_FEW = {"apart": (0.88, 1.00), "close": (0.61, 0.85)}
# A threshold score's answer: the expected share of it that is right, said and found over
# the first half of simulated designs (benchmarks/adaptive_targets.py --early, 1,000 items,
# normal, t3 and clickers, 88-96 placed reports each). With the prior stretched early in
# the design (bws.core.intervals.fixed_point_stretch) the fit's scale near the threshold is
# about right (slope of truth on score 1.02-1.03, was 1.23-1.33), and the figure with it:
# 0.70 / 0.74 said / found (normal), 0.70 / 0.73 (clickers); heavy-tailed utilities are
# read too sure, 0.68 / 0.61 (benchmarks/RESULTS.md, "Adaptive designs").
THRESHOLD_PRECISION = {"said": (0.68, 0.70), "found": (0.61, 0.74)}
# Below this spread of the utilities (var(u) + mean(sd^2)) a threshold score is not placed
# (``placed``); at the prior's floor it is 0.015-0.020, once the prior leaves it 0.3 or more.
UNPLACED_SPREAD = 0.04


@dataclass(frozen=True)
class Target:
    """What the design aims at: ``kind`` one of KINDS; ``k`` for top_k; ``score`` or
    ``reference`` (an item index) for threshold; ``pairs`` ((a, b) item indices) for
    comparisons."""

    kind: str = "ranking"
    k: int | None = None
    score: float | None = None
    reference: int | None = None
    pairs: tuple[tuple[int, int], ...] = field(default_factory=tuple)

    def check(self, n_items: int) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"target must be one of {', '.join(KINDS)}, got {self.kind!r}")
        if self.kind == "top_k" and not (self.k is not None and 1 <= self.k < n_items):
            raise ValueError(f"top_k needs k from 1 to {n_items - 1}, got {self.k}")
        if self.kind == "threshold" and (self.score is None) == (self.reference is None):
            raise ValueError("threshold needs either a score or a reference item")
        if self.reference is not None and not 0 <= self.reference < n_items:
            raise ValueError(f"reference item {self.reference} is not one of the {n_items}")
        if self.kind == "comparisons":
            if not self.pairs:
                raise ValueError("comparisons needs at least one pair of items")
            for a, b in self.pairs:
                if a == b or not (0 <= a < n_items and 0 <= b < n_items):
                    raise ValueError(f"pair ({a}, {b}) must name two different items")


def _fit(scores, sd) -> tuple[np.ndarray, np.ndarray]:
    u = np.asarray(scores, dtype=float).copy()
    s = np.asarray(sd, dtype=float).copy()
    if u.ndim != 1 or s.shape != u.shape:
        raise ValueError("scores and sd must be 1-d arrays of the same length")
    u[~np.isfinite(u)] = 0.0
    s[~np.isfinite(s)] = UNSEEN_SD
    return u, np.maximum(s, 1e-9)


def boundary(u: np.ndarray, target: Target) -> float:
    """The score that separates the answer from the rest under the current fit."""
    if target.kind == "top_k":
        ordered = np.sort(u)[::-1]
        return 0.5 * float(ordered[target.k - 1] + ordered[target.k])
    if target.reference is not None:
        return float(u[target.reference])
    return float(target.score)


def side_error(u: np.ndarray, s: np.ndarray, target: Target) -> np.ndarray:
    """Per item, the posterior probability that it lies on the other side of the boundary
    than its score puts it."""
    c = boundary(u, target)
    spread = s if target.reference is None else np.sqrt(s**2 + s[target.reference] ** 2)
    p = ndtr(-np.abs(u - c) / spread)
    if target.reference is not None:
        p[target.reference] = 0.5
    return p


def pair_posterior(u: np.ndarray, s: np.ndarray, pairs) -> tuple[np.ndarray, np.ndarray]:
    """Per pair (a, b), the posterior mean and sd of u_a - u_b under a prior of the chosen
    pairs' own (the module docstring, "Chosen pairs").

    The fit's prior treats a pair as two items drawn at random, whose difference has the
    variance 2 tau2 (tau2 = var(u) + mean(s^2), the utilities' variance the fit implies).
    Pairs a study asks about are seldom that: two systems compared are close. Their
    differences get a prior N(0, tau_p2) instead, tau_p2 the marginal likelihood's maximum
    over the pairs (at most 2 tau2, and 2 tau2 itself with fewer than PAIR_PRIOR_MIN pairs):
    each pair's likelihood alone (its posterior with the fit's prior taken out) is pooled
    with it. The two items' covariance is left out (it is positive in a model fit, so the
    sd errs wide)."""
    a, b = np.asarray(pairs, dtype=np.int64).T
    d = u[a] - u[b]
    v = s[a] ** 2 + s[b] ** 2
    random_pair = 2.0 * (float(np.var(u)) + float(np.mean(s**2)))
    # the likelihood's precision and mean, the fit's prior N(0, random_pair) taken out
    precision = np.maximum(1.0 / v - 1.0 / random_pair, PAIR_MIN_PRECISION / random_pair)
    seen = d / v / precision
    prior = random_pair
    if d.size >= PAIR_PRIOR_MIN:

        def deviance(log_tau2: float) -> float:
            total = np.exp(log_tau2) + 1.0 / precision
            return float(np.sum(np.log(total) + seen**2 / total))

        low = np.log(PAIR_PRIOR_FLOOR * random_pair)
        prior = float(
            np.exp(minimize_scalar(deviance, bounds=(low, np.log(random_pair)), method="bounded").x)
        )
    after = precision + 1.0 / prior
    return precision * seen / after, 1.0 / np.sqrt(after)


def pair_error(u: np.ndarray, s: np.ndarray, pairs) -> np.ndarray:
    """Per pair, the posterior probability that the fit orders it wrongly (under the pairs'
    own prior, ``pair_posterior``)."""
    mean, sd = pair_posterior(u, s, pairs)
    return ndtr(-np.abs(mean) / sd)


def target_values(scores, sd, target: Target) -> np.ndarray:
    """Per item, what a further appearance is worth to the target before dividing by the
    appearances (the module docstring); ranking's is ``adaptive.rank_uncertainty``'s."""
    u, s = _fit(scores, sd)
    target.check(u.size)
    if target.kind in ("top_k", "threshold"):
        value = side_error(u, s, target)
    elif target.kind == "comparisons":
        a, b = np.asarray(target.pairs, dtype=np.int64).T
        wrong = pair_error(u, s, target.pairs)
        value = np.bincount(a, wrong, u.size) + np.bincount(b, wrong, u.size)
        # the items nearest in score to a pair's items inform its order most
        near = np.zeros(u.size)
        for item in np.union1d(a, b):
            near = np.maximum(near, value[item] * ndtr(-np.abs(u - u[item]) / s[item] - 1.0))
        value = np.maximum(value, near)
    else:
        raise ValueError("the ranking target's values are adaptive.rank_uncertainty's")
    top = float(value.max()) if value.size else 0.0
    return np.maximum(value, max(VALUE_FLOOR * top, NO_DOUBT))


def target_batch(
    scores,
    sd,
    state: DesignState,
    target: Target,
    *,
    batch_tuples: int,
    max_appearances: int,
    seed: int,
    sharpness: float | None = None,
    jitter: float = 1.0,
    useful_share: float = USEFUL_SHARE,
    reference_share: float = REFERENCE_SHARE,
    rule: str = THRESHOLD_RULE,
) -> np.ndarray:
    """The next batch of at most ``batch_tuples`` tuples for ``target`` (k, T int64 item
    indices in position order), under the rules of ``bws.core.adaptive``; ``sharpness``
    defaults to 1 for the ranking, TOP_K_SHARPNESS for the top k and TARGET_SHARPNESS for
    the other narrow targets. ``rule``: how a threshold given as a score values its items,
    "gain" (``threshold_gain``) or "doubt" (its side_error over appearances + 1, as the
    other targets)."""
    if rule not in ("gain", "doubt"):
        raise ValueError(f"rule must be gain or doubt, got {rule!r}")
    if target.kind == "ranking":
        return adaptive_batch(
            scores, sd, state, batch_tuples=batch_tuples, max_appearances=max_appearances,
            seed=seed, sharpness=1.0 if sharpness is None else sharpness, jitter=jitter,
        )  # fmt: skip
    if sharpness is None:
        sharpness = TOP_K_SHARPNESS if target.kind == "top_k" else TARGET_SHARPNESS
    u, s = _fit(scores, sd)
    if state.n_items != u.size:
        raise ValueError(f"the design has {state.n_items} items, the fit {u.size}")
    worth = target_values(u, s, target)
    eligible = state.appearances < max_appearances
    eligible[exempt_items(target)] = True
    # a narrow target's batch holds the items that matter to it, not fillers of no value
    useful = int(np.sum(eligible & (worth >= useful_share * worth[eligible].max(initial=0.0))))
    batch_tuples = min(int(batch_tuples), max(1, -(-useful // state.tuple_size)))
    value = worth / (state.appearances + 1.0)
    if target.kind == "threshold" and rule == "gain":
        if worth[eligible].max(initial=0.0) > NO_DOUBT:  # else every item is worth the same
            # a reference item's own sd blurs the boundary; it is drawn first (and anchored)
            ref_sd = 0.0 if target.reference is None else float(s[target.reference])
            gain = threshold_gain(u, s, state.appearances, boundary(u, target), ref_sd)
            if target.reference is not None:
                gain[target.reference] = gain.max()
            value = np.maximum(gain, VALUE_FLOOR * gain.max())
    rng = np.random.default_rng(seed)
    rows = batch_by_value(value, u, s, state, eligible, batch_tuples, rng, sharpness, jitter)
    if target.reference is not None:
        rows = anchored(rows, target.reference, state, worth, share=reference_share)
    if target.kind == "comparisons" and LINK_PAIRS:
        rows = linked(rows, target.pairs, state, worth, s, eligible)
    return rows


def met_by(item: int, state: DesignState) -> np.ndarray:
    """The items ``item`` has met in a tuple, sorted."""
    codes, n = state.pair_codes, state.n_items
    low, high = codes // n, codes % n
    return np.union1d(high[low == item], low[high == item])


def linked(rows, pairs, state: DesignState, worth, sd, eligible) -> np.ndarray:
    """The batch with each compared item's tuple-mates replaced, where the rules allow, by
    items its partner has met and it has not, the best known (smallest sd) first: a and b
    meet once, but a shared comparator c puts a - b on the path a - c - b, whose c
    cancels out of the difference, where items near a in score but never met by b carry
    their own uncertainty into it. A comparator takes the place of the least valuable
    item of the tuple, in that item's position and only where that keeps its own position
    counts within the design's spread; it must be eligible, not yet in the batch, and new
    to the tuple's other items, so every rule of ``bws.core.adaptive`` still holds."""
    rows = np.array(rows, dtype=np.int64, copy=True)
    if rows.size == 0:
        return rows
    n = state.n_items
    worth = np.asarray(worth, dtype=float)
    compared = np.unique(np.asarray(pairs, dtype=np.int64))
    used = np.zeros(n, dtype=bool)
    used[rows.ravel()] = True
    partners: dict[int, list[int]] = {}
    for a, b in pairs:
        partners.setdefault(int(a), []).append(int(b))
        partners.setdefault(int(b), []).append(int(a))
    where = {int(x): j for j, row in enumerate(rows) for x in row if int(x) in partners}
    for item, j in where.items():
        own = met_by(item, state)
        offered = np.concatenate([met_by(other, state) for other in partners[item]])
        offered = np.setdiff1d(offered, own)
        offered = offered[eligible[offered] & ~used[offered] & ~np.isin(offered, compared)]
        if offered.size == 0:
            continue
        offered = offered[np.argsort(sd[offered], kind="stable")]
        row = rows[j]
        slots = [p for p in np.argsort(worth[row], kind="stable") if row[p] not in compared]
        for p in slots:
            for c in offered:
                if used[c]:
                    continue
                others = np.delete(row, p)
                codes = np.minimum(others, c) * n + np.maximum(others, c)
                if state.seen(codes).any():
                    continue
                after = state.positions[c].copy()
                after[p] += 1
                if np.ptp(after) > max(np.ptp(state.positions[c]), 1):
                    continue
                used[row[p]] = False
                row[p] = c
                used[c] = True
                break
        rows[j] = row
    return rows


def exempt_items(target: Target) -> np.ndarray:
    """The items not held to ``max_appearances``, since they are the question: a threshold's
    reference item (``anchored``) and the items of chosen comparisons. An item's pairs still
    meet once, so it has at most (n - 1) / (tuple size - 1) tuples. With the bound, a pair
    whose one direct meeting went the wrong way could be set right only through other
    items' scores: at 10,000 items one seed of ten needed 69% (normal) and one 89% (t3) of
    the balanced design's judgments (benchmarks/adaptive_targets.py)."""
    if target.reference is not None:
        return np.array([target.reference], dtype=np.int64)
    if target.kind == "comparisons":
        return np.unique(np.asarray(target.pairs, dtype=np.int64))
    return np.zeros(0, dtype=np.int64)


def threshold_gain(u, s, appearances, score: float, boundary_sd: float = 0.0) -> np.ndarray:
    """Per item, how much one more appearance is expected to lower the probability that
    the answer puts it on the wrong side of ``score``: now Phi(-|u - score| / s); after
    it, the sd falls to s sqrt(a / (a + 1)) (a its appearances, at least 1) and the score
    moves by the rest of the variance, N(0, s^2 - s'^2), so the doubt then is averaged over
    that move (Gauss-Hermite, GAIN_NODES nodes). An item in doubt but seen often gains
    less than one seen once; one far from the score gains nothing."""
    u, s = np.asarray(u, dtype=float), np.asarray(s, dtype=float)
    seen = np.maximum(np.asarray(appearances, dtype=float), 1.0)
    later = s * np.sqrt(seen / (seen + 1.0))
    moves = np.sqrt(np.maximum(s**2 - later**2, 0.0))
    now = ndtr(-np.abs(u - score) / np.sqrt(s**2 + boundary_sd**2))
    nodes, weights = np.polynomial.hermite_e.hermegauss(GAIN_NODES)
    weights = weights / weights.sum()
    after = np.zeros_like(u)
    for z, w in zip(nodes, weights, strict=True):
        after += w * ndtr(-np.abs(u + moves * z - score) / np.sqrt(later**2 + boundary_sd**2))
    return np.maximum(now - after, 0.0)


def anchored(rows, reference: int, state: DesignState, worth, *, share: float) -> np.ndarray:
    """The batch with ``reference`` seated in up to ``share`` of its tuples, those whose
    items are worth most first: in each, it takes the place of the least valuable item
    among the positions where it has sat least so far (counting this batch), and only
    where it has never met the other three items. So the pairs stay new, its positions
    stay within 1 of each other, and each item still appears at most once (the reference
    excepted: it is exempt from once a batch and from ``max_appearances``)."""
    rows = np.array(rows, dtype=np.int64, copy=True)
    if rows.size == 0 or share <= 0:
        return rows
    size, n = state.tuple_size, state.n_items
    worth = np.asarray(worth, dtype=float)
    places = state.positions[reference].copy()
    holds = (rows == reference).any(axis=1)
    for p in np.flatnonzero(rows[holds] == reference) % size:
        places[p] += 1
    wanted = int(np.ceil(share * rows.shape[0])) - int(holds.sum())
    order = np.argsort(-worth[rows].sum(axis=1), kind="stable")
    for j in order:
        if wanted <= 0:
            break
        if holds[j]:
            continue
        row = rows[j]
        codes = np.minimum(row, reference) * n + np.maximum(row, reference)
        met = state.seen(codes)
        least = np.flatnonzero(places == places.min())
        # the reference may take position p only if it has met none of the others
        fits = [p for p in least if not np.delete(met, p).any()]
        if not fits:
            continue
        p = min(fits, key=lambda q: worth[row[q]])
        rows[j, p] = reference
        places[p] += 1
        holds[j] = True
        wanted -= 1
    return rows


def placed(u: np.ndarray, s: np.ndarray, target: Target) -> bool:
    """Whether the fit can place the items on a threshold score's scale: False for a
    threshold given as a score while the fit's spread of the utilities (var(u) + mean(s^2))
    is under UNPLACED_SPREAD. Early in a design the prior's variance can sit at its floor
    (0.01): every score is then near 0 with an sd near 0.13, and every item reads as surely
    below a threshold at the 80th percentile, 20% of them wrongly (items said right with
    probability 0.99 or more were right 0.80-0.83 of the time over a design's first half,
    benchmarks/adaptive_targets.py's threshold at 1,000 items). Relative targets (top k,
    a reference item, pairs) do not read the absolute scale."""
    if target.kind != "threshold" or target.reference is not None:
        return True
    return float(np.var(u) + np.mean(s**2)) >= UNPLACED_SPREAD


@dataclass(frozen=True)
class TargetReport:
    """What the fit says about the target's answer (the module docstring). ``answer``: the
    items of the answer (top_k, threshold) or, per pair, whether the first is ahead;
    ``membership``: per item (per pair for comparisons) the posterior probability that the
    answer is right about it."""

    kind: str
    answer: np.ndarray
    membership: np.ndarray
    expected_precision: float
    all_right: float
    projected_precision: float | None = None
    projected_all_right: float | None = None
    extra_judgments: int = 0
    # False: the fit cannot place the items on a threshold score's scale yet (``placed``);
    # the answer is the fit's, every probability 1/2 and the expectations NaN.
    placed: bool = True


def _draws(u, s, target: Target, rng, draws: int):
    """Per draw, the answer under the draw: (draws, n) membership of the top k or of the
    items above the threshold. Drawn DRAW_CHUNK rows at a time (the same stream of random
    numbers), so that the floats never take more than a chunk: at 100,000 items all 400
    draws at once peaked near 600 MB a report."""
    out = np.empty((draws, u.size), dtype=bool)
    for start in range(0, draws, DRAW_CHUNK):
        rows = min(DRAW_CHUNK, draws - start)
        z = u + s * rng.standard_normal((rows, u.size))
        if target.kind == "top_k":
            kth = np.partition(z, -target.k, axis=1)[:, -target.k]
            out[start : start + rows] = z >= kth[:, None]
        else:
            cut = z[:, target.reference] if target.reference is not None else target.score
            out[start : start + rows] = z > np.reshape(cut, (-1, 1))
    return out


def _summary(u, s, target: Target, draws: int, seed: int):
    rng = np.random.default_rng(seed)
    if target.kind == "comparisons":
        # exact per pair (no draw makes a pair shown in its likelier order less than 1/2);
        # the whole answer's chance drawn from each pair's difference
        mean, sd = pair_posterior(u, s, target.pairs)
        answer = mean > 0
        membership = ndtr(np.abs(mean) / sd)
        sampled = mean + sd * rng.standard_normal((draws, mean.size)) > 0
        all_right = float(np.mean(np.all(sampled == answer[None, :], axis=1)))
        return answer, membership, float(membership.mean()), all_right
    sampled = _draws(u, s, target, rng, draws)
    if target.kind == "top_k":
        # the k items likeliest to be in the top k: the answer of the highest expected
        # precision (the share right is the sum of its items' probabilities over k)
        inside = sampled.mean(axis=0)
        answer = np.zeros(u.size, dtype=bool)
        answer[np.lexsort((-u, -inside))[: target.k]] = True
        membership = np.where(answer, inside, 1.0 - inside)
    else:  # exact: each item's side of the threshold is a normal's sign
        answer = u > boundary(u, target)
        membership = 1.0 - side_error(u, s, target)
        if target.reference is not None:
            answer[target.reference] = False
            membership[target.reference] = 1.0
            sampled[:, target.reference] = False
    precision = float(np.mean(membership[answer])) if answer.any() else 1.0
    all_right = float(np.mean(np.all(sampled == answer[None, :], axis=1)))
    return answer, membership, precision, all_right


def target_report(
    scores,
    sd,
    target: Target,
    *,
    appearances: np.ndarray | None = None,
    extra_judgments: int = 0,
    tuple_size: int = 4,
    draws: int = DRAWS,
    seed: int = 0,
    targeted: bool = False,
) -> TargetReport:
    """The answer the fit gives, how likely it is right, and (with ``appearances`` and
    ``extra_judgments``) how likely after that many further judgments spent by the
    target's rule: the appearances they add go to the items in proportion to their value,
    and each item's sd shrinks by sqrt(appearances / (appearances + added)).
    ``targeted``: the judgments were spent by ``target_batch`` (beyond a balanced start),
    and each sd is widened by TARGETED_SD_FACTOR. A threshold score the fit cannot place
    yet (``placed``) gets the fit's answer with no probabilities."""
    u, s = _fit(scores, sd)
    if targeted:
        s = s * TARGETED_SD_FACTOR
    target.check(u.size)
    if not placed(u, s, target):
        answer = u > boundary(u, target)
        half = np.full(u.size, 0.5)
        return TargetReport(target.kind, answer, half, np.nan, np.nan, placed=False)
    answer, membership, precision, all_right = _summary(u, s, target, draws, seed)
    report = TargetReport(target.kind, answer, membership, precision, all_right)
    if appearances is None or extra_judgments <= 0:
        return report
    seen = np.maximum(np.asarray(appearances, dtype=float), 1.0)
    if target.kind == "ranking":
        raise ValueError("projections are for the narrow targets")
    value = target_values(u, s, target) / (seen + 1.0)
    added = extra_judgments * tuple_size * value / value.sum()
    later = s * np.sqrt(seen / (seen + added))
    _, _, p_later, all_later = _summary(u, later, target, draws, seed)
    return TargetReport(
        target.kind, answer, membership, precision, all_right, p_later, all_later,
        int(extra_judgments),
    )  # fmt: skip
