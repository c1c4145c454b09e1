"""The prior's variance integrated out, for studies of few items.

With a handful of items the empirical-Bayes point estimate of the prior variance tau^2
(bws/core/intervals.py, ``estimate_shrinkage``) is often near its floor: in a simulation of
10 items at 4 appearances, 28% of the studies had it at under a quarter of the truth's, and
their intervals, shrunk to almost nothing, held 0-60% of the items. Plugging in that
estimate ignores how little the items say about it. Here tau^2 gets a prior of its own
(uniform on tau, the weakly informative choice for a hierarchical scale with few groups)
and is integrated out on a grid: at each tau^2 the penalised fit and its Laplace
approximation give the marginal likelihood and the posterior mean and variance of every
centred utility, and the scores and variances reported are those of the mixture over the
grid, weighted by tau^2's posterior. The measured coverage is in benchmarks/RESULTS.md
("Interval coverage", small studies).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from bws.core.newton import fit_model
from bws.core.scores import Scores

# Below this many shown items the prior's variance is integrated out (from this many up the
# point estimate covered in the band: benchmarks/coverage.py --small).
INTEGRATE_BELOW_ITEMS = 40
# The grid of tau^2 (log-odds scale): from the floor of the point estimate to a spread of
# utilities no choice data shows (sd 6), evenly in log tau^2.
GRID = np.geomspace(0.01, 36.0, 36)


@dataclass(frozen=True)
class Integrated:
    """The mixture over tau^2: the scores' fit at the posterior's mean utilities, their
    variances, and tau^2's posterior mean and weights over GRID."""

    scores: Scores
    variance: np.ndarray
    prior_variance: float
    weights: np.ndarray


def integrate_prior(model, counts, *, temper: float, start: Scores) -> Integrated:
    """Scores and centred-utility variances with tau^2 integrated out (``temper``: as in
    ``estimate_shrinkage``; the fit at each tau^2 counts each judgment once)."""
    n = start.scores.size
    scores = start
    means, variances, logs = [], [], []
    # From the widest prior down: each fit starts from the last, the least shrunk first.
    for tau2 in GRID[::-1]:
        alpha = temper / (2.0 * tau2)
        scores = fit_model(model, counts, alpha=alpha, initial=scores.scores)
        u = scores.scores
        precision = model.hessian(u).toarray()
        precision[np.diag_indices(n)] += 2.0 * alpha
        precision /= temper
        covariance = np.linalg.inv(precision)
        # The common shift is the prior's alone (variance tau^2 / n): not in centred utilities.
        variances.append(np.maximum(np.diag(covariance) - tau2 / n, 0.0))
        means.append(u)
        log_det = np.linalg.slogdet(precision)[1]
        log_likelihood = -model.negative_log_likelihood(u)[0] / temper
        logs.append(
            log_likelihood
            - float(u @ u) / (2.0 * tau2)
            - 0.5 * n * np.log(tau2)
            - 0.5 * log_det
            + 0.5 * np.log(tau2)  # uniform on tau: d tau is tau / 2 d log tau^2
        )
    logs_array = np.array(logs[::-1])
    weights = np.exp(logs_array - logs_array.max())
    weights /= weights.sum()
    mean_stack, variance_stack = np.array(means[::-1]), np.array(variances[::-1])
    mean = weights @ mean_stack
    variance = weights @ (variance_stack + mean_stack**2) - mean**2
    integrated = replace(scores, scores=mean - mean.mean())
    return Integrated(integrated, np.maximum(variance, 0.0), float(weights @ GRID), weights)
