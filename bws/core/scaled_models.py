"""The choice models with a scale per judgment: an annotator's sensitivity multiplies the
utilities their choices follow.

Judgment j follows the utilities s_j u: s_j = 1 is the plain model, s_j = 0 a random
choice (best uniform over the tuple, worst uniform over the rest), s_j between them a
noisier annotator and above 1 a sharper one. The classes have the interface Newton's
method and the posterior variances use (``bws.core.newton``, ``bws.core.intervals``), and
``sensitivity_terms`` gives each judgment's first and second derivatives in its scale.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse
from scipy.special import expit, log_expit

from bws.core.choice_models import PairwiseModel, coalesce_pairs, softmax_covariance
from bws.core.judgments import Judgments


class ScaledPairwise(PairwiseModel):
    """Bradley-Terry on the implied pairs, P(a beats b) = expit(s_j (u_a - u_b))."""

    def __init__(self, judgments: Judgments, scale: np.ndarray):
        super().__init__(judgments)
        self.items = judgments.items
        self._columns: tuple[np.ndarray, np.ndarray] | None = None
        self.scale = np.asarray(scale, dtype=float)
        self.pair_scale = self.scale[self.judgment]

    def negative_log_likelihood(
        self, u: np.ndarray, weights: np.ndarray | None = None
    ) -> tuple[float, np.ndarray]:
        """Minus the log-likelihood of the pairs and its gradient in u."""
        w = self._pair_weights(weights)
        margin = self.pair_scale * (u[self.winners] - u[self.losers])
        losses = -log_expit(margin)
        value = float(losses.sum() if w is None else losses @ w)
        slope = self.pair_scale * expit(-margin)
        if w is not None:
            slope = slope * w
        n = self.n_items
        grad = np.bincount(self.losers, slope, n) - np.bincount(self.winners, slope, n)
        return value, grad

    def curvature(self, u: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
        """Each pair's s^2 p (1 - p), weighted: the parent's Hessian products take it as is."""
        p = expit(self.pair_scale * (u[self.winners] - u[self.losers]))
        value = self.pair_scale**2 * p * (1.0 - p)
        w = self._pair_weights(weights)
        return value if w is None else value * w

    def hessian(self, u: np.ndarray) -> sparse.csr_matrix:
        """Sparse Hessian of minus the log-likelihood (a weighted graph Laplacian)."""
        curvature = self.curvature(u)
        a, b = self.winners, self.losers
        rows = np.concatenate([a, b, a, b])
        columns = np.concatenate([a, b, b, a])
        values = np.concatenate([curvature, curvature, -curvature, -curvature])
        return sparse.csr_matrix((values, (rows, columns)), shape=(self.n_items, self.n_items))

    def _positions(self) -> tuple[np.ndarray, np.ndarray]:
        """Each pair's winner and loser as column positions of its judgment's row."""
        if self._columns is None:
            rows = self.items[self.judgment]
            self._columns = (
                np.argmax(rows == self.winners[:, None], axis=1),
                np.argmax(rows == self.losers[:, None], axis=1),
            )
        return self._columns

    def position_terms(self, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per judgment and position (m, T): the gradient of minus the log-likelihood in
        that item's utility, and the Hessian's diagonal term."""
        winner, loser = self._positions()
        slope = self.pair_scale * expit(-self.pair_scale * (u[self.winners] - u[self.losers]))
        curvature = self.curvature(u)
        size = self.items.shape[1]
        cells = self.n_judgments * size
        at_winner, at_loser = self.judgment * size + winner, self.judgment * size + loser
        gradient = np.bincount(at_loser, slope, cells) - np.bincount(at_winner, slope, cells)
        diagonal = np.bincount(at_loser, curvature, cells) + np.bincount(
            at_winner, curvature, cells
        )
        return gradient.reshape(-1, size), diagonal.reshape(-1, size)

    def _margins(self, x: np.ndarray) -> np.ndarray:
        winner, loser = self._positions()
        return x[self.judgment, winner] - x[self.judgment, loser]

    def sensitivity_terms(self, x: np.ndarray, scale: np.ndarray):
        """Per judgment: d log-lik / d s and d^2 log-lik / d s^2 at scale s (m,), the
        judgments' items having utilities x (m, T)."""
        d = self._margins(x)
        s = np.asarray(scale, dtype=float)[self.judgment]
        p = expit(s * d)
        m = self.n_judgments
        first = np.bincount(self.judgment, d * (1.0 - p), m)
        second = np.bincount(self.judgment, -(d * d) * p * (1.0 - p), m)
        return first, second

    def log_likelihood_rows(self, x: np.ndarray, scale: np.ndarray) -> np.ndarray:
        """Each judgment's log-likelihood at scale s (m,), its items having utilities x."""
        s = np.asarray(scale, dtype=float)[self.judgment]
        return np.bincount(self.judgment, log_expit(s * self._margins(x)), self.n_judgments)


class ScaledMaxDiff:
    """MaxDiff (best from softmax(s_j u) over the tuple, worst from softmax(-s_j u) over
    the rest), judgments as (m, T) arrays."""

    method = "plackett_luce"

    def __init__(self, judgments: Judgments, scale: np.ndarray):
        self.items = judgments.items
        m, size = self.items.shape
        self.rows = np.arange(m)
        self.best, self.worst = judgments.best, judgments.worst
        self.is_best = np.arange(size) == self.best[:, None]
        self.is_worst = np.arange(size) == self.worst[:, None]
        self.flat = self.items.ravel()
        self.scale = np.asarray(scale, dtype=float)
        self.n_items = judgments.n_items
        self.n_judgments = m
        self._pairs: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    def _choices(self, utility: np.ndarray):
        """Log-likelihood (m,) and the best and worst softmax rows (m, T) of utilities x."""
        high = utility.max(axis=1)
        e_best = np.exp(utility - high[:, None])
        sum_best = e_best.sum(axis=1)
        rest = np.where(self.is_best, -np.inf, -utility)
        low = rest.max(axis=1)
        e_worst = np.exp(rest - low[:, None])
        sum_worst = e_worst.sum(axis=1)
        log_lik = utility[self.rows, self.best] - high - np.log(sum_best)
        log_lik += -utility[self.rows, self.worst] - low - np.log(sum_worst)
        return log_lik, e_best / sum_best[:, None], e_worst / sum_worst[:, None]

    def _probabilities(self, u: np.ndarray):
        return self._choices(u[self.items] * self.scale[:, None])

    def negative_log_likelihood(
        self, u: np.ndarray, weights: np.ndarray | None = None
    ) -> tuple[float, np.ndarray]:
        """Minus the log-likelihood of the judgments and its gradient in u."""
        log_lik, p_best, p_worst = self._probabilities(u)
        slope = (p_best - self.is_best - p_worst + self.is_worst) * self.scale[:, None]
        if weights is not None:
            log_lik = log_lik * weights
            slope = slope * weights[:, None]
        return -float(log_lik.sum()), np.bincount(self.flat, slope.ravel(), self.n_items)

    def position_terms(self, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per judgment and position (m, T): the gradient of minus the log-likelihood in
        that item's utility, and the Hessian's diagonal term."""
        _, p_best, p_worst = self._probabilities(u)
        s = self.scale[:, None]
        gradient = (p_best - self.is_best - p_worst + self.is_worst) * s
        curvature = (p_best * (1.0 - p_best) + p_worst * (1.0 - p_worst)) * s * s
        return gradient, curvature

    def curvature(self, u: np.ndarray, weights: np.ndarray | None = None):
        """What Hessian-vector products at u need: the softmax rows and s^2 (weighted)."""
        _, p_best, p_worst = self._probabilities(u)
        factor = self.scale**2 if weights is None else self.scale**2 * weights
        return p_best, p_worst, factor

    def hessian_vector(self, curvature, v: np.ndarray) -> np.ndarray:
        """The Hessian of minus the log-likelihood (at the point of ``curvature``) times v."""
        p_best, p_worst, factor = curvature
        values = v[self.items]
        rows = p_best * (values - np.sum(p_best * values, axis=1, keepdims=True))
        rows += p_worst * (values - np.sum(p_worst * values, axis=1, keepdims=True))
        return np.bincount(self.flat, (rows * factor[:, None]).ravel(), self.n_items)

    def hessian_diagonal(self, curvature) -> np.ndarray:
        """The Hessian's diagonal (at the point of ``curvature``)."""
        p_best, p_worst, factor = curvature
        rows = (p_best * (1.0 - p_best) + p_worst * (1.0 - p_worst)) * factor[:, None]
        return np.bincount(self.flat, rows.ravel(), self.n_items)

    def _position_pairs(self) -> list[tuple[int, int]]:
        size = self.items.shape[1]
        return [(a, b) for a in range(size) for b in range(a + 1, size)]

    def off_diagonal_pairs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The Hessian's off-diagonal entries as unordered item pairs (see ``coalesce_pairs``)."""
        if self._pairs is None:
            positions = self._position_pairs()
            first = np.concatenate([self.items[:, a] for a, _ in positions])
            second = np.concatenate([self.items[:, b] for _, b in positions])
            self._pairs = coalesce_pairs(first, second, self.n_items)
        return self._pairs

    def off_diagonal_values(self, u: np.ndarray) -> np.ndarray:
        """Each judgment's term of each pair's off-diagonal Hessian entry, in the order of
        ``off_diagonal_pairs``."""
        _, p_best, p_worst = self._probabilities(u)
        s2 = self.scale**2
        return np.concatenate(
            [
                -(p_best[:, a] * p_best[:, b] + p_worst[:, a] * p_worst[:, b]) * s2
                for a, b in self._position_pairs()
            ]
        )

    def hessian(self, u: np.ndarray) -> sparse.csr_matrix:
        """Sparse Hessian of minus the log-likelihood: two softmax covariances per judgment."""
        _, p_best, p_worst = self._probabilities(u)
        blocks = softmax_covariance(p_best) + softmax_covariance(p_worst)
        blocks *= (self.scale**2)[:, None, None]
        size = self.items.shape[1]
        rows = np.repeat(self.items, size, axis=1).ravel()
        columns = np.tile(self.items, (1, size)).ravel()
        shape = (self.n_items, self.n_items)
        return sparse.csr_matrix((blocks.ravel(), (rows, columns)), shape=shape)

    def sensitivity_terms(self, x: np.ndarray, scale: np.ndarray):
        """Per judgment: d log-lik / d s and d^2 log-lik / d s^2 at scale s (m,), the
        judgments' items having utilities x (m, T): the chosen items' utilities against
        their softmax means, and minus the two variances."""
        _, p_best, p_worst = self._choices(x * np.asarray(scale, dtype=float)[:, None])
        mean_best = np.sum(p_best * x, axis=1)
        mean_worst = np.sum(p_worst * x, axis=1)
        first = x[self.rows, self.best] - mean_best - x[self.rows, self.worst] + mean_worst
        second = -(np.sum(p_best * x * x, axis=1) - mean_best**2)
        second -= np.sum(p_worst * x * x, axis=1) - mean_worst**2
        return first, second

    def log_likelihood_rows(self, x: np.ndarray, scale: np.ndarray) -> np.ndarray:
        """Each judgment's log-likelihood at scale s (m,), its items having utilities x."""
        return self._choices(x * np.asarray(scale, dtype=float)[:, None])[0]


SCALED_MODELS = {"bradley_terry": ScaledPairwise, "plackett_luce": ScaledMaxDiff}


def scaled_model_for(method: str, judgments: Judgments, scale: np.ndarray):
    """The method's model of these judgments with judgment j's utilities times scale[j]."""
    try:
        return SCALED_MODELS[method](judgments, scale)
    except KeyError:
        raise ValueError(f"no scaled model for {method!r}") from None
