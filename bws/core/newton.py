"""Penalised maximum likelihood of a choice model by Newton's method.

The penalty is ``alpha * sum(u**2)`` (the regularisation of choix's ``opt_pairwise``);
each Newton step is solved by conjugate gradients preconditioned by the Hessian's
diagonal, on the model's vectorised objective with its analytic gradient and matrix-free
Hessian-vector products.
"""

from __future__ import annotations

import numpy as np
from scipy.sparse.linalg import LinearOperator, cg

from bws.core.choice_models import MaxDiffModel, PairwiseModel
from bws.core.scores import Scores, counting_scores
from bws.core.scoring_options import DEFAULT_ALPHA, DEFAULT_MAX_ITER, DEFAULT_TOLERANCE

# A fit has converged when its remaining Newton step (the gradient at the solution scaled
# by the inverse Hessian: the first-order error of every utility, log-odds scale) is at
# most CONVERGENCE_FACTOR * tolerance in every item. The fit itself runs until the step is
# at most tolerance; unfinished fits are orders of magnitude off.
CONVERGENCE_FACTOR = 10.0


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
