"""Split-half reliability of best-worst counting scores.

As in the BWS literature (Kiritchenko and Mohammad's split-half script): per tuple, its
judgments are shuffled into two halves (an odd one goes to a random half); each half is
scored by counting; the two score lists are correlated (Spearman, over items scored in
both halves); this is repeated and the mean correlation reported, with the
Spearman-Brown value 2r / (1 + r) beside it (the reliability at the full data size),
defined only for r >= 0 (None with a reason otherwise).
With one judgment per tuple there is nothing to split within a tuple, so the tuples
themselves are split in two.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from bws.core.judgments import Judgments
from bws.core.scores import counting_scores

SPLIT_WITHIN_TUPLES = "judgments within tuples"
SPLIT_TUPLES = "tuples (one judgment per tuple)"


@dataclass(frozen=True, eq=False)
class SplitHalf:
    """Mean and standard deviation of split-half Spearman correlations, and Spearman-Brown."""

    mean: float
    std: float
    spearman_brown: float | None
    trials: int
    split: str
    correlations: np.ndarray
    # Why spearman_brown is None (undefined), else None.
    spearman_brown_reason: str | None = None

    @property
    def splits_tuples(self) -> bool:
        return self.split == SPLIT_TUPLES


def spearman_brown(r: float) -> float | None:
    """Reliability of the full data from the correlation r of its two halves: 2r / (1 + r).

    Defined for 0 <= r <= 1 only (two halves measuring the same thing correlate
    positively); None otherwise, ``spearman_brown_reason`` says why.
    """
    return 2.0 * r / (1.0 + r) if spearman_brown_reason(r) is None else None


def spearman_brown_reason(r: float) -> str | None:
    """Why Spearman-Brown is undefined for the split-half correlation r (None if defined)."""
    if r is None or not math.isfinite(r):
        return "undefined: no split-half correlation"
    if r < 0:
        return (
            f"undefined: the halves correlate negatively (r = {r:.3f}), so they do not "
            "measure one thing that more data would measure better"
        )
    if r > 1:
        return f"undefined: r = {r} exceeds 1"
    return None


def split_half(judgments: Judgments, *, trials: int = 100, seed=0) -> SplitHalf:
    """Split-half reliability of counting scores over ``trials`` random splits (seeded)."""
    n, size = judgments.n_items, judgments.tuple_size
    best, worst, items = judgments.best_items, judgments.worst_items, judgments.items.ravel()

    def counted(weights: np.ndarray) -> np.ndarray:
        shown = np.bincount(items, np.repeat(weights, size), n)
        scores = counting_scores(
            np.bincount(best, weights, n), np.bincount(worst, weights, n), shown
        )
        scores[shown == 0] = np.nan
        return scores

    return split_half_of(judgments, counted, trials=trials, seed=seed)


def split_half_of(
    judgments: Judgments, half_scores: Callable[[np.ndarray], np.ndarray], *, trials: int, seed=0
) -> SplitHalf:
    """Split-half reliability of the scores ``half_scores`` gives for one half (its argument:
    the judgments' weights, 1 in the half and 0 outside; its result: a score per item, NaN
    for an item the half does not score), over ``trials`` splits by ``half_masks``."""
    if trials < 1:
        raise ValueError("trials must be at least 1")
    correlations = np.full(trials, np.nan)
    split, masks = half_masks(judgments, trials=trials, seed=seed)
    for trial, first in enumerate(masks):
        halves = [half_scores(mask.astype(float)) for mask in (first, ~first)]
        both = np.isfinite(halves[0]) & np.isfinite(halves[1])
        if both.sum() >= 3:
            correlations[trial] = _spearman(halves[0][both], halves[1][both])
    if np.isfinite(correlations).any():
        mean, std = float(np.nanmean(correlations)), float(np.nanstd(correlations))
    else:
        mean = std = float("nan")
    return SplitHalf(
        mean,
        std,
        spearman_brown(mean),
        trials,
        split,
        correlations,
        spearman_brown_reason(mean),
    )


def half_masks(judgments: Judgments, *, trials: int, seed=0) -> tuple[str, Iterator[np.ndarray]]:
    """How the judgments are split, and per trial a boolean mask of the first half.

    Each tuple's judgments are shuffled and cut in two; an odd one out goes to a random
    half. With one judgment per tuple all tuples form one group, so the tuples are split.
    """
    m = judgments.n_judgments
    groups = np.unique(judgments.tuple_ids, return_inverse=True)[1].reshape(-1)
    sizes = np.bincount(groups)
    if m and sizes.max() == 1:
        groups = np.zeros(m, dtype=np.int64)
        sizes = np.array([m])
        split = SPLIT_TUPLES
    else:
        split = SPLIT_WITHIN_TUPLES
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])

    def masks() -> Iterator[np.ndarray]:
        rng = np.random.default_rng(seed)
        for _ in range(trials):
            order = np.lexsort((rng.random(m), groups))
            group = groups[order]
            position = np.arange(m) - starts[group]
            size = sizes[group]
            middle = (size % 2 == 1) & (position == size // 2)
            first = np.empty(m, dtype=bool)
            first[order] = (position < size // 2) | (middle & (rng.random(m) < 0.5))
            yield first

    return split, masks()


def _average_ranks(x: np.ndarray) -> np.ndarray:
    """Ranks 1..n, ties sharing their mean rank (scipy.stats.rankdata's default, without
    the import of scipy.stats, which costs the command line most of a second)."""
    _, inverse, counts = np.unique(x, return_inverse=True, return_counts=True)
    return (np.cumsum(counts) - (counts - 1) / 2.0)[inverse.reshape(-1)]


def _spearman(a: np.ndarray, b: np.ndarray) -> float:
    ra, rb = _average_ranks(a), _average_ranks(b)
    ra -= ra.mean()
    rb -= rb.mean()
    denominator = np.sqrt((ra @ ra) * (rb @ rb))
    return float(ra @ rb / denominator) if denominator > 0 else float("nan")
