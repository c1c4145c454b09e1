"""Convergence of scores as judgments accumulate: fits on growing prefixes in time order."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import spearmanr

from bws.core.judgments import Judgments
from bws.core.scoring import fit

DEFAULT_FRACTIONS = tuple(round(0.1 * k, 1) for k in range(1, 11))


@dataclass(frozen=True)
class ConvergencePoint:
    """Scores from the first ``fraction`` of the judgments (time order) against the full data.

    spearman: rank correlation with the full-data scores over the items scored so far.
    mean_abs_change: mean |score change| since the previous point, over items scored in
    both (NaN at the first point), on the method's score scale.
    """

    fraction: float
    judgments: int
    items: int
    spearman: float
    mean_abs_change: float


def convergence(
    judgments: Judgments,
    method: str = "counting",
    *,
    fractions: tuple[float, ...] = DEFAULT_FRACTIONS,
    **fit_options,
) -> list[ConvergencePoint]:
    """Spearman with the full-data scores and mean absolute change on time-ordered prefixes."""
    if any(not 0 < f <= 1 for f in fractions):
        raise ValueError("fractions must lie in (0, 1]")
    m = judgments.n_judgments
    full = fit(method, judgments, **fit_options)
    points = []
    previous = previous_shown = None
    initial = None
    for fraction in sorted(fractions):
        count = int(np.ceil(fraction * m))
        prefix = judgments.subset(judgments.order < count)
        options = dict(fit_options)
        if method != "counting" and initial is not None:
            options.setdefault("initial", initial)
        result = full if count == m else fit(method, prefix, **options)
        shown = result.appearances > 0
        rho = _spearman(result.scores[shown], full.scores[shown])
        change = float("nan")
        if previous is not None:
            both = shown & previous_shown
            if both.any():
                change = float(np.abs(result.scores[both] - previous[both]).mean())
        points.append(ConvergencePoint(fraction, count, int(shown.sum()), rho, change))
        previous, previous_shown = result.scores, shown
        initial = result.scores
    return points


def _spearman(a: np.ndarray, b: np.ndarray) -> float:
    if a.size < 3 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return float("nan")
    return float(spearmanr(a, b)[0])
