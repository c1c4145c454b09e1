"""Each annotator's reliability, estimated jointly with the item scores.

Annotator a's choices follow the shared utilities times a sensitivity beta_a >= 0
(``bws.core.scaled_models``): 1 for the typical attentive annotator, 0 for someone who
clicks at random, in between for a noisier one. The fit alternates two steps: the item
utilities given the sensitivities (the penalised Newton fit with its empirical-Bayes prior,
each judgment's utilities scaled by its annotator's beta), and every annotator's beta given
the utilities (a one-dimensional concave Newton step each, vectorised). A normal prior
N(1, tau^2) on beta, tau estimated from the spread of the annotators' estimates, shrinks
annotators with few judgments towards 1.

The product beta_a u does not change when u is multiplied by c and every beta divided by
it, so the scale is fixed by making the beta-weighted mean of the betas 1 (weights n_a
beta_a, n_a the annotator's judgments): the utilities are those of the annotators who carry
the information, whatever share answers at random (a plain mean would count the clickers'
zeros and flatten the utilities again).

The joint fit is used only when annotators differ in reliability: a likelihood-ratio test
of one common beta against one per annotator, at the pooled fit, rejects at GATE_ALPHA.
Otherwise the pooled fit stands and the betas are reported beside it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from bws.core.judgments import Judgments
from bws.core.newton import fit_model
from bws.core.scaled_models import scaled_model_for
from bws.core.scores import Scores, item_counts

# The likelihood-ratio test's level: annotators who agree open the joint fit in about one
# study in a thousand.
GATE_ALPHA = 1e-3
# tau, the prior sd of the betas, is kept within these bounds: above the floor an annotator
# with hundreds of judgments speaks for themselves; the ceiling keeps a prior at all.
MIN_PRIOR_SD = 0.1
MAX_PRIOR_SD = 2.0
# Annotators with fewer judgments do not enter tau's estimate (their sampling spread is
# not normal yet); they are still fitted, shrunk by it.
MIN_JUDGMENTS_FOR_SPREAD = 10
ROUNDS = 30
TOLERANCE = 1e-3  # largest change of a beta between rounds at convergence
NEWTON_STEPS = 50
MAX_BETA_STEP = 1.0


@dataclass(frozen=True, eq=False)
class Reliability:
    """Per annotator index (0..A-1, as ``Judgments.annotators``): the estimated sensitivity
    beta (1 typical, 0 random clicking), its sd and interval, and the judgments it rests on;
    with the test that decided whether the scores use them."""

    sensitivity: np.ndarray
    std: np.ndarray
    low: np.ndarray
    high: np.ndarray
    judgments: np.ndarray
    level: float
    prior_sd: float
    statistic: float  # the likelihood-ratio statistic, common beta against one each
    degrees_of_freedom: int
    p_value: float
    joint: bool  # whether the scores were fitted with these sensitivities
    rounds: int = 0


@dataclass(frozen=True, eq=False)
class JointFit:
    """The joint fit's scores, posterior variances and shrinkage, the model with the final
    sensitivities (for the caller's further terms), and the reliabilities."""

    scores: Scores
    variance: np.ndarray
    shrinkage: object  # bws.core.intervals.Shrinkage
    model: object
    reliability: Reliability


def fit_sensitivities(
    probe,
    u: np.ndarray,
    annotators: np.ndarray,
    n_annotators: int,
    *,
    prior_sd: float | None,
    start: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Each annotator's beta maximising their judgments' log-likelihood at utilities u
    (plus the N(1, prior_sd^2) prior when given), beta >= 0, by Newton steps on all
    annotators at once; with minus the second derivative there (the information)."""
    beta = np.ones(n_annotators) if start is None else np.array(start, dtype=float)
    precision = 0.0 if prior_sd is None else 1.0 / prior_sd**2
    information = np.zeros(n_annotators)
    for _ in range(NEWTON_STEPS):
        first, second = probe.sensitivity_terms(u, beta[annotators])
        gradient = np.bincount(annotators, first, n_annotators) - precision * (beta - 1.0)
        information = precision - np.bincount(annotators, second, n_annotators)
        step = np.where(information > 0, gradient / np.maximum(information, 1e-12), 0.0)
        step = np.clip(step, -MAX_BETA_STEP, MAX_BETA_STEP)
        new = np.maximum(beta + step, 0.0)
        # at the bound with the gradient pointing below it, the step is 0 and so done
        change = float(np.max(np.abs(new - beta), initial=0.0))
        beta = new
        if change < 1e-8:
            break
    return beta, information


def _log_likelihood(probe, u, scale) -> float:
    return float(np.sum(probe.log_likelihood_rows(u, scale)))


def heterogeneity_test(
    probe, u: np.ndarray, annotators: np.ndarray, n_annotators: int
) -> tuple[float, int, float]:
    """The likelihood-ratio statistic of one beta per annotator against one for all at
    utilities u, its degrees of freedom (annotators with judgments, less one) and its
    chi-squared p-value."""
    common, _ = fit_sensitivities(probe, u, np.zeros_like(annotators), 1, prior_sd=None)
    own, _ = fit_sensitivities(probe, u, annotators, n_annotators, prior_sd=None)
    statistic = 2.0 * (
        _log_likelihood(probe, u, own[annotators])
        - _log_likelihood(probe, u, np.full(annotators.size, common[0]))
    )
    statistic = max(statistic, 0.0)
    df = int(np.sum(np.bincount(annotators, minlength=n_annotators) > 0)) - 1
    p_value = float(stats.chi2.sf(statistic, df)) if df > 0 else 1.0
    return statistic, df, p_value


def prior_sd(beta: np.ndarray, information: np.ndarray, counts: np.ndarray) -> float:
    """tau by the method of moments: the spread of the measured annotators' betas about 1
    less their mean sampling variance, within MIN_PRIOR_SD..MAX_PRIOR_SD."""
    measured = (counts >= MIN_JUDGMENTS_FOR_SPREAD) & (information > 0)
    if np.sum(measured) < 2:
        return MIN_PRIOR_SD
    spread = float(np.mean((beta[measured] - 1.0) ** 2))
    sampling = float(np.mean(1.0 / information[measured]))
    return float(np.clip(np.sqrt(max(spread - sampling, 0.0)), MIN_PRIOR_SD, MAX_PRIOR_SD))


def normaliser(beta: np.ndarray, counts: np.ndarray) -> float:
    """The beta-weighted mean of the betas (weights n_a beta_a): what the betas are divided
    by and the utilities multiplied by, so that it becomes 1."""
    weight = counts * beta
    total = float(np.sum(weight))
    return float(np.sum(weight * beta) / total) if total > 0 else 1.0


def annotator_reliability(
    judgments: Judgments,
    method: str,
    u: np.ndarray,
    *,
    level: float = 0.95,
    test: tuple[float, int, float] | None = None,
    joint: bool = False,
    rounds: int = 0,
) -> Reliability:
    """The betas at utilities u (the prior estimated as in the joint fit, the scale fixed
    by ``normaliser``), with intervals beta +- z sd, cut at 0."""
    annotators = judgments.annotators
    count = int(annotators.max()) + 1 if annotators.size else 0
    counts = np.bincount(annotators, minlength=count).astype(float)
    probe = scaled_model_for(method, judgments, np.ones(judgments.n_judgments))
    plain, information = fit_sensitivities(probe, u, annotators, count, prior_sd=None)
    tau = prior_sd(plain, information, counts)
    beta, information = fit_sensitivities(probe, u, annotators, count, prior_sd=tau, start=plain)
    c = normaliser(beta, counts)
    if test is None:
        test = heterogeneity_test(probe, u, annotators, count)
    z = float(stats.norm.ppf(0.5 + level / 2.0))
    std = np.where(information > 0, 1.0 / np.sqrt(np.maximum(information, 1e-300)), np.inf) / c
    beta = beta / c
    return Reliability(
        beta,
        std,
        np.maximum(beta - z * std, 0.0),
        beta + z * std,
        counts.astype(np.int64),
        level,
        tau / c,
        *test,
        joint=joint,
        rounds=rounds,
    )


def joint_fit(
    judgments: Judgments,
    method: str,
    *,
    temper: float = 1.0,
    weak: Scores,
    estimate,
    level: float = 0.95,
    force: bool = False,
) -> JointFit | Reliability:
    """The scores fitted jointly with every annotator's sensitivity, when the test says
    annotators differ (or ``force``); else the reliabilities at the pooled weak fit alone
    (a ``Reliability`` with joint False), the caller keeping its pooled fit.

    ``weak``: the method's pooled fit at the weak penalty (the test's utilities and the
    first round's start); ``temper``: the method's dependence (``intervals.dependence``);
    ``estimate``: the empirical-Bayes fit, ``intervals.estimate_shrinkage`` (passed in, as
    intervals calls this module).
    """
    annotators = judgments.annotators
    count = int(annotators.max()) + 1 if annotators.size else 0
    counts = np.bincount(annotators, minlength=count).astype(float)
    probe = scaled_model_for(method, judgments, np.ones(judgments.n_judgments))
    test = heterogeneity_test(probe, weak.scores, annotators, count)
    if not force and not test[2] < GATE_ALPHA:
        return annotator_reliability(judgments, method, weak.scores, level=level, test=test)
    beta = np.ones(count)
    shrinkage, scores, _ = estimate(
        judgments,
        method,
        temper=temper,
        model=scaled_model_for(method, judgments, beta[annotators]),
    )
    prior = shrinkage.prior_variance
    u = scores.scores
    rounds = 0
    while rounds < ROUNDS:
        rounds += 1
        plain, information = fit_sensitivities(
            probe, u, annotators, count, prior_sd=None, start=beta
        )
        tau = prior_sd(plain, information, counts)
        new, _ = fit_sensitivities(probe, u, annotators, count, prior_sd=tau, start=plain)
        c = normaliser(new, counts)
        new, prior = new / c, prior * c * c
        model = scaled_model_for(method, judgments, new[annotators])
        u = fit_model(
            model, item_counts(judgments), alpha=temper / (2.0 * prior), initial=u * c
        ).scores
        change = float(np.max(np.abs(new - beta), initial=0.0))
        beta = new
        if change < TOLERANCE:
            break
    model = scaled_model_for(method, judgments, beta[annotators])
    shrinkage, scores, variance = estimate(judgments, method, temper=temper, model=model)
    reliability = annotator_reliability(
        judgments, method, scores.scores, level=level, test=test, joint=True, rounds=rounds
    )
    return JointFit(scores, variance, shrinkage, model, reliability)
