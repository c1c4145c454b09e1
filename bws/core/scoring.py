"""Best-worst scores from judgment arrays: counting, Bradley-Terry and Plackett-Luce (MaxDiff).

Every method returns one score per item index plus best, worst and appearance counts.
The model fits are penalised maximum likelihood (penalty ``alpha * sum(u**2)``, the
regularisation of choix's ``opt_pairwise``) solved by Newton's method, its steps by
conjugate gradients preconditioned by the Hessian's diagonal, on a vectorised objective
with its analytic gradient and matrix-free Hessian-vector products. The same models give
per-judgment gradients and a sparse Hessian for the bootstrap's one-step Newton resamples.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import sparse
from scipy.sparse.linalg import LinearOperator, cg
from scipy.special import expit, log_expit

from bws.core.judgments import Judgments
from bws.core.scoring_options import (
    DEFAULT_ALPHA,
    DEFAULT_MAX_ITER,
    DEFAULT_TOLERANCE,
    METHODS,
)
from bws.core.scoring_options import METHOD_NAMES as METHOD_NAMES

# A fit has converged when its remaining Newton step (the gradient at the solution scaled
# by the inverse Hessian: the first-order error of every utility, log-odds scale) is at
# most CONVERGENCE_FACTOR * tolerance in every item. The fit itself runs until the step is
# at most tolerance; unfinished fits are orders of magnitude off.
CONVERGENCE_FACTOR = 10.0
# Counting scores are exact ratios: only floating-point noise ties them.
COUNTING_TIE_TOLERANCE = 1e-12


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


def fit_counting(judgments: Judgments, *, weights: np.ndarray | None = None) -> Scores:
    """Best-minus-worst counting: (times best - times worst) / appearances, in [-1, 1]."""
    best, worst, appearances = item_counts(judgments, weights)
    return Scores("counting", counting_scores(best, worst, appearances), best, worst, appearances)


# --------------------------------------------------------------------------- models


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
    keys, inverse = np.unique(low.astype(np.int64) * n_items + high, return_inverse=True)
    return keys // n_items, keys % n_items, inverse.reshape(-1)


MODELS = {"bradley_terry": PairwiseModel, "plackett_luce": MaxDiffModel}


def model_for(method: str, judgments: Judgments) -> PairwiseModel | MaxDiffModel:
    try:
        return MODELS[method](judgments)
    except KeyError:
        raise ValueError(f"unknown model {method!r}; choose from {', '.join(MODELS)}") from None


def penalised_objective(u, model, alpha, weights=None) -> tuple[float, np.ndarray]:
    """Minus the log-likelihood plus alpha * sum(u**2), and its gradient."""
    value, grad = model.negative_log_likelihood(u, weights)
    return value + alpha * float(u @ u), grad + 2.0 * alpha * u


class _HessianProduct:
    """Hessian-vector products for Newton steps, reusing the curvature while u stays put."""

    def __init__(self, model, alpha: float, weights: np.ndarray | None):
        self.model, self.alpha, self.weights = model, alpha, weights
        self.at: np.ndarray | None = None
        self.curvature = None

    def curvature_at(self, u: np.ndarray):
        if self.at is None or not np.array_equal(self.at, u):
            self.at = u.copy()
            self.curvature = self.model.curvature(u, self.weights)
        return self.curvature

    def __call__(self, u: np.ndarray, v: np.ndarray, *args) -> np.ndarray:
        return self.model.hessian_vector(self.curvature_at(u), v) + 2.0 * self.alpha * v


def fit_model(
    model: PairwiseModel | MaxDiffModel,
    counts: tuple[np.ndarray, np.ndarray, np.ndarray],
    *,
    alpha: float = DEFAULT_ALPHA,
    max_iter: int = DEFAULT_MAX_ITER,
    tolerance: float = DEFAULT_TOLERANCE,
    weights: np.ndarray | None = None,
    initial: np.ndarray | None = None,
) -> Scores:
    """Penalised maximum likelihood of ``model``, utilities centred.

    Newton's method with a backtracking line search; each Newton step H^-1 g is solved by
    conjugate gradients preconditioned by the Hessian's diagonal, matrix-free
    (``newton_direction``). The fit stops at the first point whose Newton step (the
    gradient there scaled by the inverse Hessian: the first-order error of every utility,
    log-odds scale) is at most ``tolerance`` in every item, or after ``max_iter`` steps.
    ``converged`` is judged from that step: at most CONVERGENCE_FACTOR * tolerance.
    """
    if alpha <= 0:
        raise ValueError("alpha must be positive: items that always win would have no finite fit")
    best, worst, appearances = counts
    if initial is None:
        # Doubled counting scores are a start near the answer on the log-odds scale.
        initial = 2.0 * counting_scores(best, worst, appearances)
    u, step, iterations = _newton(
        model, np.array(initial, dtype=float), alpha, weights, tolerance, max_iter
    )
    options = {"alpha": alpha, "max_iter": max_iter, "tolerance": tolerance}
    return Scores(
        model.method,
        u - u.mean(),
        best,
        worst,
        appearances,
        iterations=iterations,
        converged=bool(step <= CONVERGENCE_FACTOR * tolerance),
        options=options,
        step=step,
    )


# Armijo's sufficient decrease for the line search, and its shortest step.
ARMIJO = 1e-4
SHORTEST_STEP = 1e-10
# Conjugate gradients solve a Newton step to RTOL (relative residual), or to ROUGH_RTOL
# while the fit is more than ROUGH_STEP from the optimum.
RTOL = 1e-3
ROUGH_RTOL = 0.1
ROUGH_STEP = 0.01


def _newton(model, u: np.ndarray, alpha: float, weights, tolerance: float, max_iter: int):
    """Newton's method from u: (the last point, its largest Newton step, steps taken).

    A step is taken in full when that lowers the objective enough (Armijo), else halved
    until it does. Near the optimum the objective of many judgments cannot resolve the
    decrease any more (it is below its rounding), so a full step that leaves the
    objective unchanged to rounding and shrinks the gradient is taken too. The search
    ends where no step helps; the step at the last point says how far off it is.
    """
    value, grad = penalised_objective(u, model, alpha, weights)
    iterations, step = 0, float("inf")
    while True:
        # Far from the optimum (the last step above ROUGH_STEP) a step solved to 10% does
        # as well; the step that ends the fit is always solved to 0.1%.
        rough = step > ROUGH_STEP
        direction = newton_direction(
            model, u, alpha, weights, grad=grad, rtol=ROUGH_RTOL if rough else RTOL
        )
        step = _largest(direction)
        if rough and step <= max(ROUGH_STEP, tolerance):
            direction = newton_direction(model, u, alpha, weights, grad=grad, start=direction)
            step = _largest(direction)
        if step <= tolerance or iterations >= max_iter or direction is None:
            return u, step, iterations
        slope = float(grad @ direction)
        if not slope > 0:  # not a descent direction: the solve failed
            return u, step, iterations
        length = 1.0
        while length >= SHORTEST_STEP:
            candidate = u - length * direction
            new_value, new_grad = penalised_objective(candidate, model, alpha, weights)
            if new_value <= value - ARMIJO * length * slope:
                break
            rounding = 1e-13 * max(1.0, abs(value))
            if (
                length == 1.0
                and abs(new_value - value) <= rounding
                and np.linalg.norm(new_grad) < np.linalg.norm(grad)
            ):
                break
            length /= 2.0
        else:
            return u, step, iterations
        u, value, grad = candidate, new_value, new_grad
        iterations += 1


def _largest(direction: np.ndarray | None) -> float:
    if direction is None:
        return float("inf")
    return float(np.abs(direction - direction.mean()).max())


def newton_step(model, u: np.ndarray, alpha: float, weights: np.ndarray | None = None) -> float:
    """Largest item of the (centred) Newton step at u: how far u is from the optimum, to
    first order, on the log-odds scale; inf when u or its gradient is not finite."""
    return _largest(newton_direction(model, u, alpha, weights))


def newton_direction(
    model,
    u: np.ndarray,
    alpha: float,
    weights: np.ndarray | None = None,
    *,
    grad: np.ndarray | None = None,
    rtol: float = RTOL,
    start: np.ndarray | None = None,
) -> np.ndarray | None:
    """The Newton step H^-1 g at u (None when u or its gradient is not finite).

    The gradient at a fit's solution is exact to rounding even where the objective can no
    longer tell two points apart, so it says whether the fit converged. ``grad``: the
    penalised gradient at u when the caller has it; ``start``: a first guess at the step.

    The likelihood does not change when every utility moves by the same amount, so the
    constant vector is an eigenvector of H with eigenvalue 2 alpha (the penalty's alone)
    and H keeps centred vectors centred. The step's mean is therefore mean(g) / (2 alpha)
    exactly, and its centred part is solved among centred vectors by conjugate gradients
    preconditioned by the Hessian's diagonal (centred), to ``rtol`` (0.1%): a weak
    penalty's small eigenvalue no longer slows the solve.
    """
    if not np.all(np.isfinite(u)):
        return None
    if grad is None:
        _, grad = penalised_objective(u, model, alpha, weights)
    if not np.all(np.isfinite(grad)):
        return None
    if not grad.any():
        return np.zeros_like(u)
    mean = float(grad.mean())
    centred = grad - mean
    direction = np.zeros_like(u)
    if centred.any():
        product = _HessianProduct(model, alpha, weights)
        inverse = 1.0 / (model.hessian_diagonal(product.curvature_at(u)) + 2.0 * alpha)

        def precondition(v: np.ndarray) -> np.ndarray:
            w = v * inverse
            return w - w.mean()

        n = u.shape[0]
        hessian = LinearOperator((n, n), matvec=lambda v: product(u, v), dtype=float)
        preconditioner = LinearOperator((n, n), matvec=precondition, dtype=float)
        guess = None if start is None else start - start.mean()
        direction, _ = cg(hessian, centred, guess, rtol=rtol, maxiter=max(100, n), M=preconditioner)
    direction += mean / (2.0 * alpha)
    return direction if np.all(np.isfinite(direction)) else None


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


def sample_maxdiff(
    tuples: np.ndarray, utilities: np.ndarray, seed: int | np.random.Generator | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Draw (best, worst) column positions for each tuple row from the MaxDiff model.

    Best from softmax(u) over the tuple, worst from softmax(-u) over the rest (Gumbel-max).
    """
    rng = np.random.default_rng(seed)
    utility = np.asarray(utilities, dtype=float)[np.asarray(tuples)]
    best = np.argmax(utility + rng.gumbel(size=utility.shape), axis=1)
    rest = -utility + rng.gumbel(size=utility.shape)
    rest[np.arange(utility.shape[0]), best] = -np.inf
    worst = np.argmax(rest, axis=1)
    return best, worst
