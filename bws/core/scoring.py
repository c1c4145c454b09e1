"""Best-worst scores from judgment arrays: counting, Bradley-Terry and Plackett-Luce (MaxDiff).

Every method returns one score per item index plus best, worst and appearance counts
(``bws.core.scores``). The model fits are penalised maximum likelihood of the models in
``bws.core.choice_models``, solved by Newton's method (``bws.core.newton``). Ranks come
from scores, with ties judged to the fit's precision.
"""

from __future__ import annotations

import numpy as np

from bws.core.choice_models import MaxDiffModel, PairwiseModel
from bws.core.judgments import Judgments
from bws.core.newton import CONVERGENCE_FACTOR, fit_model
from bws.core.scores import Scores, counting_scores, item_counts
from bws.core.scoring_options import (
    DEFAULT_ALPHA,
    DEFAULT_MAX_ITER,
    DEFAULT_TOLERANCE,
    METHODS,
)
from bws.core.scoring_options import METHOD_NAMES as METHOD_NAMES

# Counting scores are exact ratios: only floating-point noise ties them.
COUNTING_TIE_TOLERANCE = 1e-12


def fit_counting(judgments: Judgments, *, weights: np.ndarray | None = None) -> Scores:
    """Best-minus-worst counting: (times best - times worst) / appearances, in [-1, 1]."""
    best, worst, appearances = item_counts(judgments, weights)
    return Scores("counting", counting_scores(best, worst, appearances), best, worst, appearances)


def fit_bradley_terry(
    judgments: Judgments,
    *,
    alpha: float = DEFAULT_ALPHA,
    max_iter: int = DEFAULT_MAX_ITER,
    tolerance: float = DEFAULT_TOLERANCE,
    weights: np.ndarray | None = None,
    initial: np.ndarray | None = None,
) -> Scores:
    """Bradley-Terry utilities (log-odds scale, centred) from the 2T - 3 implied pairs."""
    return fit_model(
        PairwiseModel(judgments),
        item_counts(judgments, weights),
        alpha=alpha,
        max_iter=max_iter,
        tolerance=tolerance,
        weights=weights,
        initial=initial,
    )


def fit_plackett_luce(
    judgments: Judgments,
    *,
    alpha: float = DEFAULT_ALPHA,
    max_iter: int = DEFAULT_MAX_ITER,
    tolerance: float = DEFAULT_TOLERANCE,
    weights: np.ndarray | None = None,
    initial: np.ndarray | None = None,
) -> Scores:
    """MaxDiff (sequential best-then-worst) utilities on the log-odds scale, centred."""
    return fit_model(
        MaxDiffModel(judgments),
        item_counts(judgments, weights),
        alpha=alpha,
        max_iter=max_iter,
        tolerance=tolerance,
        weights=weights,
        initial=initial,
    )


def fit(method: str, judgments: Judgments, **options) -> Scores:
    """Scores by the named method ('counting', 'bradley_terry' or 'plackett_luce')."""
    if method == "counting":
        return fit_counting(judgments, weights=options.get("weights"))
    if method == "bradley_terry":
        return fit_bradley_terry(judgments, **options)
    if method == "plackett_luce":
        return fit_plackett_luce(judgments, **options)
    raise ValueError(f"unknown scoring method {method!r}; choose from {', '.join(METHODS)}")


def tie_tolerance(scores: Scores) -> float:
    """How close two scores must be to share a rank: the fit's precision, relative to the
    score scale (the largest absolute score, at least 1).

    Model utilities are accurate to about CONVERGENCE_FACTOR * tolerance (1e-5 by default,
    see ``fit_model``); counting scores are exact ratios, tied only up to rounding (1e-12).
    """
    shown = scores.appearances > 0
    scale = max(1.0, float(np.abs(scores.scores[shown]).max())) if shown.any() else 1.0
    if scores.method == "counting":
        return COUNTING_TIE_TOLERANCE * scale
    tolerance = float(scores.options.get("tolerance", DEFAULT_TOLERANCE))
    return CONVERGENCE_FACTOR * tolerance * scale


def score_ranks(scores: Scores) -> np.ndarray:
    """Rank per item, 1 for the highest score; 0 for items never shown.

    Scores within ``tie_tolerance`` of their neighbour in score order share the rank of the
    first of them (the next distinct score's rank skips the tied places, as in sports).
    """
    values = scores.scores
    ranks = np.zeros(values.shape[0], dtype=np.int64)
    shown = np.flatnonzero(scores.appearances > 0)
    if shown.size == 0:
        return ranks
    order = shown[np.argsort(-values[shown], kind="stable")]
    ordered = values[order]
    starts = np.concatenate([[True], ordered[:-1] - ordered[1:] > tie_tolerance(scores)])
    first = np.maximum.accumulate(np.where(starts, np.arange(order.size), 0))
    ranks[order] = first + 1
    return ranks
