"""The two choice models behind model scores: Bradley-Terry on implied pairs and MaxDiff.

Each model gives minus the log-likelihood of the judgments and its gradient, matrix-free
Hessian-vector products and the Hessian's diagonal for Newton's method, per-judgment
gradients and a sparse Hessian for the bootstrap's one-step Newton resamples, and
``sample_maxdiff`` draws judgments from the MaxDiff model.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse
from scipy.special import expit, log_expit

from bws.core.judgments import Judgments


class PairwiseModel:
    """Bradley-Terry on the 2T - 3 pairs each judgment implies.

    The best item beats each of the T - 1 others; each item other than best and worst
    beats the worst (T - 2 pairs). P(a beats b) = expit(u_a - u_b).
    """

    method = "bradley_terry"

    def __init__(self, judgments: Judgments):
        items, best, worst = judgments.items, judgments.best, judgments.worst
        m, size = items.shape
        rows = np.arange(m)
        columns = np.arange(size)
        beaten_by_best = columns != best[:, None]
        beat_worst = beaten_by_best & (columns != worst[:, None])
        self.winners = np.concatenate([np.repeat(items[rows, best], size - 1), items[beat_worst]])
        self.losers = np.concatenate(
            [items[beaten_by_best], np.repeat(items[rows, worst], size - 2)]
        )
        self.judgment = np.concatenate([np.repeat(rows, size - 1), np.nonzero(beat_worst)[0]])
        self.n_items = judgments.n_items
        self.n_judgments = m
        self._pairs: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    def pairs(self) -> np.ndarray:
        """The implied pairs as a (p, 2) array of (winner, loser) item indices."""
        return np.column_stack([self.winners, self.losers])

    def _pair_weights(self, weights: np.ndarray | None) -> np.ndarray | None:
        return None if weights is None else weights[self.judgment]

    def negative_log_likelihood(
        self, u: np.ndarray, weights: np.ndarray | None = None
    ) -> tuple[float, np.ndarray]:
        """Minus the log-likelihood of the pairs and its gradient in u."""
        w = self._pair_weights(weights)
        margin = u[self.winners] - u[self.losers]
        losses = -log_expit(margin)
        value = float(losses.sum() if w is None else losses @ w)
        slope = expit(-margin)
        if w is not None:
            slope = slope * w
        n = self.n_items
        grad = np.bincount(self.losers, slope, n) - np.bincount(self.winners, slope, n)
        return value, grad

    def gradient_matrix(self, u: np.ndarray) -> sparse.csr_matrix:
        """(n_items, m) sparse matrix: column j is judgment j's gradient of minus log-likelihood."""
        slope = expit(-(u[self.winners] - u[self.losers]))
        rows = np.concatenate([self.winners, self.losers])
        columns = np.concatenate([self.judgment, self.judgment])
        values = np.concatenate([-slope, slope])
        shape = (self.n_items, self.n_judgments)
        return sparse.csr_matrix((values, (rows, columns)), shape=shape)

    def curvature(self, u: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
        """What Hessian-vector products at u need: each pair's p (1 - p), weighted."""
        p = expit(u[self.winners] - u[self.losers])
        w = self._pair_weights(weights)
        return p * (1.0 - p) if w is None else p * (1.0 - p) * w

    def hessian_vector(self, curvature: np.ndarray, v: np.ndarray) -> np.ndarray:
        """The Hessian of minus the log-likelihood (at the point of ``curvature``) times v."""
        d = curvature * (v[self.winners] - v[self.losers])
        n = self.n_items
        return np.bincount(self.winners, d, n) - np.bincount(self.losers, d, n)

    def hessian_diagonal(self, curvature: np.ndarray) -> np.ndarray:
        """The Hessian's diagonal (at the point of ``curvature``)."""
        n = self.n_items
        return np.bincount(self.winners, curvature, n) + np.bincount(self.losers, curvature, n)

    def off_diagonal_pairs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The Hessian's off-diagonal entries as unordered item pairs (see ``coalesce_pairs``)."""
        if self._pairs is None:
            self._pairs = coalesce_pairs(self.winners, self.losers, self.n_items)
        return self._pairs

    def off_diagonal_values(self, u: np.ndarray) -> np.ndarray:
        """Each implied pair's term of the Hessian's (symmetric) off-diagonal entry at u."""
        return -self.curvature(u)

    def hessian(self, u: np.ndarray) -> sparse.csr_matrix:
        """Sparse Hessian of minus the log-likelihood (a weighted graph Laplacian)."""
        p = expit(u[self.winners] - u[self.losers])
        curvature = p * (1.0 - p)
        a, b = self.winners, self.losers
        rows = np.concatenate([a, b, a, b])
        columns = np.concatenate([a, b, b, a])
        values = np.concatenate([curvature, curvature, -curvature, -curvature])
        shape = (self.n_items, self.n_items)
        return sparse.csr_matrix((values, (rows, columns)), shape=shape)


class MaxDiffModel:
    """The MaxDiff sequential model (Plackett-Luce for best then worst).

    Best is drawn from the tuple with probability softmax(u); worst from the remaining
    items with probability softmax(-u).
    """

    method = "plackett_luce"

    def __init__(self, judgments: Judgments):
        self.items = judgments.items
        m, size = self.items.shape
        self.rows = np.arange(m)
        self.best = judgments.best
        self.worst = judgments.worst
        self.is_best = np.arange(size) == self.best[:, None]
        self.is_worst = np.arange(size) == self.worst[:, None]
        self.not_best = (~self.is_best).astype(float)
        self.n_items = judgments.n_items
        self.n_judgments = m
        # The fit's hot path works position-major: (T, m) arrays whose rows are contiguous,
        # so a judgment's sum or maximum over its T items is T - 1 elementwise passes
        # (numpy's reductions along a short last axis are several times slower).
        self.columns = np.ascontiguousarray(self.items.T)
        self.flat_columns = self.columns.ravel()
        self.best_infinity = np.where(self.is_best.T, np.inf, 0.0)
        self.best_items = self.items[self.rows, self.best]
        self.worst_items = self.items[self.rows, self.worst]
        n = self.n_items
        self.chosen = np.bincount(self.worst_items, minlength=n) - np.bincount(
            self.best_items, minlength=n
        )
        # The softmax rows of the last point evaluated (kept in place, see _scratch), the
        # point, and how many points have been evaluated: Newton's curvature at the point
        # of the last objective reuses them, and a curvature taken before the rows were
        # overwritten is refused (``hessian_vector``).
        self._rows: tuple[np.ndarray, np.ndarray] | None = None
        self._at: np.ndarray | None = None
        self._evaluations = 0
        self._pairs: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._work: tuple[np.ndarray, np.ndarray] | None = None

    def _probabilities(self, u: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        utility = u.take(self.items)
        # log-sum-exp by hand, shifted by the row maximum (scipy's adds overhead per call)
        high = utility.max(axis=1)
        e_best = np.exp(utility - high[:, None])
        sum_best = e_best.sum(axis=1)
        low = np.where(self.is_best, np.inf, utility).min(axis=1)
        e_worst = np.exp(low[:, None] - utility) * self.not_best
        sum_worst = e_worst.sum(axis=1)
        log_lik = (
            utility[self.rows, self.best]
            - high
            - np.log(sum_best)
            - utility[self.rows, self.worst]
            + low
            - np.log(sum_worst)
        )
        return log_lik, e_best / sum_best[:, None], e_worst / sum_worst[:, None]

    def row_log_likelihood(self, u: np.ndarray) -> np.ndarray:
        """Log-probability of each judgment's (best, worst) under utilities u."""
        return self._probabilities(u)[0]

    def _row_gradient(self, p_best: np.ndarray, p_worst: np.ndarray) -> np.ndarray:
        # d(-log-lik)/du per tuple position: softmax(u) - [best] - softmax(-u over rest) + [worst]
        return p_best - self.is_best - p_worst + self.is_worst

    def _scratch(self) -> tuple[np.ndarray, np.ndarray]:
        """Two (T, m) work arrays kept between calls: at a million judgments a fresh array
        of that size costs more in page faults than the arithmetic done in it."""
        if self._work is None:
            self._work = (np.empty(self.columns.shape), np.empty(self.columns.shape))
            self._rows = (np.empty(self.columns.shape), np.empty(self.columns.shape))
        return self._work

    def _column_probabilities(self, u: np.ndarray):
        """Each judgment's log-likelihood (m,) and its best and worst softmax rows (T, m)."""
        utility, work = self._scratch()
        p_best, p_worst = self._rows
        if self._at is None or not np.array_equal(self._at, u):
            self._evaluations += 1  # rows at the same point again are the same rows
            self._at = u.copy()
        np.take(u, self.columns, out=utility, mode="clip")  # "raise" buffers
        high = utility.max(axis=0)
        np.subtract(utility, high, out=p_best)
        np.exp(p_best, out=p_best)
        sum_best = np.einsum("ij->j", p_best)
        low = np.add(utility, self.best_infinity, out=work).min(axis=0)
        np.subtract(low, utility, out=p_worst)
        p_worst -= self.best_infinity  # the best item is not among the worst's candidates
        np.exp(p_worst, out=p_worst)
        sum_worst = np.einsum("ij->j", p_worst)
        log_lik = u.take(self.best_items) - high - np.log(sum_best)
        log_lik -= u.take(self.worst_items) - low + np.log(sum_worst)
        p_best /= sum_best
        p_worst /= sum_worst
        return log_lik, p_best, p_worst

    def _softmax_rows(self, u: np.ndarray):
        if self._at is None or not np.array_equal(self._at, u):
            self._column_probabilities(u)
        return self._rows

    def negative_log_likelihood(
        self, u: np.ndarray, weights: np.ndarray | None = None
    ) -> tuple[float, np.ndarray]:
        """Minus the log-likelihood of the judgments and its gradient in u."""
        log_lik, p_best, p_worst = self._column_probabilities(u)
        # d(-log-lik)/du per position: softmax(u) - [best] - softmax(-u over rest) + [worst]
        slope = np.subtract(p_best, p_worst, out=self._scratch()[0])
        n = self.n_items
        if weights is None:
            value = -float(log_lik.sum())
            chosen = self.chosen
        else:
            value = -float(log_lik @ weights)
            slope *= weights
            chosen = np.bincount(self.worst_items, weights, n) - np.bincount(
                self.best_items, weights, n
            )
        return value, np.bincount(self.flat_columns, slope.ravel(), n) + chosen

    def gradient_matrix(self, u: np.ndarray) -> sparse.csr_matrix:
        """(n_items, m) sparse matrix: column j is judgment j's gradient of minus log-likelihood."""
        _, p_best, p_worst = self._probabilities(u)
        values = self._row_gradient(p_best, p_worst)
        columns = np.repeat(self.rows, self.items.shape[1])
        shape = (self.n_items, self.n_judgments)
        return sparse.csr_matrix((values.ravel(), (self.items.ravel(), columns)), shape=shape)

    def position_terms(self, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per judgment and tuple position (m, T): the gradient of minus the log-likelihood
        in that item's utility, and the Hessian's diagonal term."""
        _, p_best, p_worst = self._probabilities(u)
        curvature = p_best * (1.0 - p_best) + p_worst * (1.0 - p_worst)
        return self._row_gradient(p_best, p_worst), curvature

    def curvature(
        self, u: np.ndarray, weights: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """What Hessian-vector products at u need: the two softmax rows (position-major,
        (T, m)), the weights, and a stamp; valid until the model evaluates another point."""
        p_best, p_worst = self._softmax_rows(u)
        return p_best, p_worst, weights, self._evaluations

    def _current(self, curvature):
        p_best, p_worst, weights, stamp = curvature
        if stamp != self._evaluations:
            raise RuntimeError("stale curvature: the model has evaluated another point since")
        return p_best, p_worst, weights

    def hessian_vector(self, curvature, v: np.ndarray) -> np.ndarray:
        """The Hessian of minus the log-likelihood (at the point of ``curvature``) times v."""
        p_best, p_worst, weights = self._current(curvature)
        values, rows = self._scratch()
        np.take(v, self.columns, out=values, mode="clip")
        mean_best = np.einsum("ij,ij->j", p_best, values)
        mean_worst = np.einsum("ij,ij->j", p_worst, values)
        np.subtract(values, mean_best, out=rows)
        rows *= p_best
        values -= mean_worst
        values *= p_worst
        rows += values
        if weights is not None:
            rows *= weights
        return np.bincount(self.flat_columns, rows.ravel(), self.n_items)

    def hessian_diagonal(self, curvature) -> np.ndarray:
        """The Hessian's diagonal (at the point of ``curvature``)."""
        p_best, p_worst, weights = self._current(curvature)
        rows = p_best * (1.0 - p_best) + p_worst * (1.0 - p_worst)
        if weights is not None:
            rows *= weights
        return np.bincount(self.flat_columns, rows.ravel(), self.n_items)

    def _position_pairs(self) -> list[tuple[int, int]]:
        size = self.columns.shape[0]
        return [(a, b) for a in range(size) for b in range(a + 1, size)]

    def off_diagonal_pairs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The Hessian's off-diagonal entries as unordered item pairs (see ``coalesce_pairs``)."""
        if self._pairs is None:
            positions = self._position_pairs()
            first = np.concatenate([self.columns[a] for a, _ in positions])
            second = np.concatenate([self.columns[b] for _, b in positions])
            self._pairs = coalesce_pairs(first, second, self.n_items)
        return self._pairs

    def off_diagonal_values(self, u: np.ndarray) -> np.ndarray:
        """Each judgment's term of the Hessian's (symmetric) off-diagonal entry of each pair
        of its items at u, -(p_a p_b) for best plus the same for worst, pairs in the order
        of ``off_diagonal_pairs``."""
        p_best, p_worst = self._softmax_rows(u)
        return np.concatenate(
            [-(p_best[a] * p_best[b] + p_worst[a] * p_worst[b]) for a, b in self._position_pairs()]
        )

    def hessian(self, u: np.ndarray) -> sparse.csr_matrix:
        """Sparse Hessian of minus the log-likelihood: two softmax covariances per judgment."""
        _, p_best, p_worst = self._probabilities(u)
        blocks = softmax_covariance(p_best) + softmax_covariance(p_worst)  # (m, T, T)
        size = self.items.shape[1]
        rows = np.repeat(self.items, size, axis=1).ravel()
        columns = np.tile(self.items, (1, size)).ravel()
        shape = (self.n_items, self.n_items)
        return sparse.csr_matrix((blocks.ravel(), (rows, columns)), shape=shape)


def softmax_covariance(p: np.ndarray) -> np.ndarray:
    """diag(p) - p p^T per row: the Hessian of log-sum-exp at the point giving softmax p."""
    blocks = -p[:, :, None] * p[:, None, :]
    index = np.arange(p.shape[1])
    blocks[:, index, index] += p
    return blocks


def coalesce_pairs(
    first: np.ndarray, second: np.ndarray, n_items: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct unordered item pairs among occurrences (first[k], second[k]): their
    smaller and larger items, and each occurrence's pair index (to sum occurrences with
    ``np.bincount(inverse, values)``)."""
    low, high = np.minimum(first, second), np.maximum(first, second)
    keys, inverse = factorize(low.astype(np.int64) * n_items + high, n_items * n_items)
    return keys // n_items, keys % n_items, inverse


# Keys below this many (or four times their count) are grouped by a table, not a sort.
DENSE_KEYS = 1 << 22


def factorize(keys: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(keys, return_inverse=True)`` for non-negative integer keys below ``size``:
    through a table of every possible key where that is small (no sort: at 1,000,000 items
    and one annotator, the annotators' grouping took 2.7 s of a 30 s fit by sorting), else
    by one sort (np.unique's, without its copies: 2.9 s where it took 4.0 s for 12,000,000
    pairs)."""
    keys = np.asarray(keys, dtype=np.int64).ravel()
    if keys.size == 0:
        return keys.copy(), np.zeros(0, dtype=np.int64)
    if size <= max(DENSE_KEYS, 4 * keys.size):
        present = np.bincount(keys, minlength=size) > 0
        index = np.cumsum(present) - 1
        return np.flatnonzero(present).astype(np.int64), index[keys]
    order = np.argsort(keys)
    ordered = keys[order]
    new = np.empty(keys.size, dtype=bool)
    new[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
    inverse = np.empty(keys.size, dtype=np.int64)
    inverse[order] = np.cumsum(new) - 1
    return ordered[new], inverse


MODELS = {"bradley_terry": PairwiseModel, "plackett_luce": MaxDiffModel}


def model_for(method: str, judgments: Judgments) -> PairwiseModel | MaxDiffModel:
    try:
        return MODELS[method](judgments)
    except KeyError:
        raise ValueError(f"unknown model {method!r}; choose from {', '.join(MODELS)}") from None


def sample_maxdiff(
    tuples: np.ndarray,
    utilities: np.ndarray,
    seed: int | np.random.Generator | None = None,
    *,
    scale: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Draw (best, worst) column positions for each tuple row from the MaxDiff model.

    Best from softmax(u) over the tuple, worst from softmax(-u) over the rest (Gumbel-max).
    ``scale``: per row, a factor on its utilities (an annotator's sensitivity; 0 clicks at
    random).
    """
    rng = np.random.default_rng(seed)
    utility = np.asarray(utilities, dtype=float)[np.asarray(tuples)]
    if scale is not None:
        utility = utility * np.asarray(scale, dtype=float)[:, None]
    best = np.argmax(utility + rng.gumbel(size=utility.shape), axis=1)
    rest = -utility + rng.gumbel(size=utility.shape)
    rest[np.arange(utility.shape[0]), best] = -np.inf
    worst = np.argmax(rest, axis=1)
    return best, worst
