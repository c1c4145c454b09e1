"""The covariance of best-worst scores that rank inference compares items with.

Model fits (Bradley-Terry, Plackett-Luce): the posterior covariance behind the calibrated
intervals, the tempered inverse of the penalised Hessian (``bws.core.intervals``), scaled
like the scores, with its diagonal set to the intervals' own variances (Plackett-Luce's
add what differing annotators contribute). Counting: a score is the mean of its
judgments' contributions (+1, -1, 0), and within one judgment the contributions sum to
zero, so two items judged together are negatively correlated: each shared judgment adds
-s_a s_b / (T - 1) to their covariance (s the per-judgment standard deviations, exact
when the tuple's items are alike), divided by both items' appearances.

The inverse Hessian of a model fit has no negative entry (the Hessian is an M-matrix:
positive diagonal, non-positive off-diagonal, rows summing to the penalty's 2 alpha), so
the variance of a difference is at most the sum of the two variances: leaving the
covariance out, as ``difference_sd`` does for large studies, errs on the safe side.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from bws.core.choice_models import model_for
from bws.core.intervals import Intervals
from bws.core.judgments import Judgments
from bws.core.scores import Scores


def score_covariance(
    judgments: Judgments, scores: Scores, intervals: Intervals, items: np.ndarray
) -> np.ndarray:
    """The (k, k) covariance of the scores of ``items`` (indices), on the scores' scale."""
    items = np.asarray(items, dtype=np.int64)
    variance = intervals.std[items] ** 2
    if intervals.method == "counting":
        covariance = -_counting_pairs(judgments, intervals, items)[:, items]
    else:
        model = model_for(intervals.method, judgments)
        u = scores.scores
        if intervals.stretch != 1.0:  # the fit's own utilities (bws/core/spread_bias.py)
            shown = scores.appearances > 0
            centre = u[shown].mean()
            u = np.where(shown, centre + (u - centre) / intervals.stretch, u)
        u = u / intervals.scale
        alpha = float(intervals.alpha)
        temper = alpha * 2.0 * float(intervals.prior_variance)  # alpha = temper / (2 tau2)
        hessian = model.hessian(u) + sparse.identity(u.size, format="csr") * (2.0 * alpha)
        # Centred as the intervals' variances are (the utilities' common shift is not
        # identified): the off-diagonals must leave it out too, or the differences' sd
        # comes out too small where the shift's share is large (few items).
        full = np.linalg.inv(hessian.toarray())
        full += full.mean() - full.mean(axis=0)[None, :] - full.mean(axis=1)[:, None]
        inverse = full[np.ix_(items, items)]
        covariance = temper * intervals.scale**2 * inverse
    np.fill_diagonal(covariance, variance)
    return covariance


def cross_covariance(
    judgments: Judgments, intervals: Intervals, rows: np.ndarray, items: np.ndarray
) -> np.ndarray:
    """Covariances between the scores of ``rows`` and of ``items`` (a (len(rows),
    len(items)) array) as large studies use them: counting's from the judgments the items
    shared, zero for model fits (see the module's note), the diagonal left at zero."""
    rows, items = np.asarray(rows, dtype=np.int64), np.asarray(items, dtype=np.int64)
    if intervals.method != "counting":
        return np.zeros((rows.size, items.size))
    covariance = -_counting_pairs(judgments, intervals, rows)[:, items]
    covariance[rows[:, None] == items[None, :]] = 0.0
    return covariance


def _counting_pairs(judgments: Judgments, intervals: Intervals, rows: np.ndarray) -> np.ndarray:
    """Minus counting's covariances of ``rows`` with every item (dense, (len(rows), n)):
    m_ab s_a s_b / ((T - 1) n_a n_b) with s = std sqrt(n) the per-judgment deviation."""
    n, size = judgments.n_items, judgments.tuple_size
    incidence = sparse.csr_matrix(
        (
            np.ones(judgments.items.size),
            (judgments.items.ravel(), np.repeat(np.arange(judgments.n_judgments), size)),
        ),
        shape=(n, judgments.n_judgments),
    )
    shared = (incidence[rows] @ incidence.T).toarray()  # judgments each pair shared
    appearances = np.asarray(incidence.sum(axis=1)).ravel()
    std = np.nan_to_num(intervals.std)
    with np.errstate(invalid="ignore", divide="ignore"):
        scale = np.where(appearances > 0, std / np.sqrt(appearances), 0.0)
    return shared * scale[rows][:, None] * scale[None, :] / max(size - 1, 1)


def difference_sd(variance_rows, variance_items, covariance) -> np.ndarray:
    """sqrt(v_a + v_b - 2 c_ab) for every row a and item b (broadcast), at least 0."""
    spread = np.asarray(variance_rows)[:, None] + np.asarray(variance_items)[None, :]
    return np.sqrt(np.maximum(spread - 2.0 * covariance, 0.0))
