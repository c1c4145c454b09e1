"""Scores per item and the best, worst and appearance counts behind them.

``Scores`` is what every scoring method returns; the counts and the counting formula are
shared by the counting method, the models' starting points and the intervals.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from bws.core.judgments import Judgments


@dataclass(frozen=True, eq=False)
class Scores:
    """Scores per item index (``scores[i]`` for item i) and the counts behind them.

    Counting scores are (best - worst) / appearances in [-1, 1]; model scores are
    utilities on the log-odds scale, centred to mean 0. Items never shown score 0.
    """

    method: str
    scores: np.ndarray
    best_counts: np.ndarray
    worst_counts: np.ndarray
    appearances: np.ndarray
    iterations: int = 0
    converged: bool = True
    options: dict = field(default_factory=dict)
    # Largest remaining Newton step of a model fit (its error estimate, log-odds scale).
    step: float = 0.0

    @property
    def n_items(self) -> int:
        return self.scores.shape[0]


def item_counts(
    judgments: Judgments, weights: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Times best, times worst and appearances per item (weighted when weights are given)."""
    n, size = judgments.n_items, judgments.tuple_size
    best = np.bincount(judgments.best_items, weights=weights, minlength=n)
    worst = np.bincount(judgments.worst_items, weights=weights, minlength=n)
    shown = None if weights is None else np.repeat(weights, size)
    appearances = np.bincount(judgments.items.ravel(), weights=shown, minlength=n)
    if weights is None:
        return best.astype(np.int64), worst.astype(np.int64), appearances.astype(np.int64)
    return best, worst, appearances


def counting_scores(best: np.ndarray, worst: np.ndarray, appearances: np.ndarray) -> np.ndarray:
    """(best - worst) / appearances per item, in [-1, 1]; 0 where an item never appears."""
    with np.errstate(invalid="ignore", divide="ignore"):
        scores = (best - worst) / appearances
    return np.where(appearances > 0, scores, 0.0)
