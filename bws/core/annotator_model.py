"""Each annotator's reliability, estimated jointly with the item scores.

Annotator a's choices follow the shared utilities times a sensitivity beta_a >= 0
(``bws.core.scaled_models``): 1 for the typical attentive annotator, 0 for someone who
clicks at random, in between for a noisier one. The fit alternates two steps: the item
utilities given the sensitivities (the penalised Newton fit with its empirical-Bayes prior,
each judgment's utilities scaled by its annotator's beta), and every annotator's beta given
the utilities (a one-dimensional concave Newton step each, vectorised). An annotator's
beta is measured against the utilities their own judgments did not shape: one diagonal
Newton step takes each annotator's judgments out of the fit (``held_out_utilities``);
without it a random clicker's judgments, which pull the utilities of the few items they
saw, look like choices the utilities explain (beta 0.74 instead of about 0 with 25
judgments each at 8 appearances per item). The prior on beta is
a point mass at 0 (random clicking, share pi) plus N(1, tau^2), pi and tau estimated from
all the annotators by EM: annotators with few judgments are shrunk towards 1 or towards 0,
whichever their judgments favour.

The product beta_a u does not change when u is multiplied by c and every beta divided by
it, so the scale is fixed by making the beta-weighted mean of the betas 1 (weights n_a
beta_a, n_a the annotator's judgments): the utilities are those of the annotators who carry
the information, whatever share answers at random (a plain mean would count the clickers'
zeros and flatten the utilities again).

The joint fit is used only when annotators differ in reliability: likelihood-ratio tests
of one common beta against one per annotator, or against a share of random clickers, at
the pooled empirical-Bayes fit (``heterogeneity_test``), reject at GATE_ALPHA. Otherwise
the pooled fit stands and the betas are reported beside it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

from bws.core.judgments import Judgments
from bws.core.newton import fit_model
from bws.core.scaled_models import scaled_model_for
from bws.core.scores import Scores, item_counts

# The likelihood-ratio test's level. With 50 annotators of 10 judgments each and 20% random
# clickers the test has little power (p 0.01-0.25 in 8 of 20 studies), and the pooled fit it
# then leaves covers 0.80-0.88; the joint fit covers in the band there, and annotators who
# agree get the same coverage and ranking from it within noise (forced open on 5 such
# studies: coverage 0.942 both, Spearman 0.826 against 0.828). So the gate is wide open:
# at 0.01 those cells covered 0.918 and 0.925 (benchmarks/careless_coverage.py). The cost
# is the joint fit in about one study in ten of annotators who agree (0.35 s CPU more at
# 2,000 items and 8,000 judgments).
GATE_ALPHA = 0.1
# tau, the prior sd of the betas, is kept within these bounds: above the floor an annotator
# with hundreds of judgments speaks for themselves; the ceiling keeps a prior at all.
MIN_PRIOR_SD = 0.1
MAX_PRIOR_SD = 2.0
# Annotators with fewer judgments do not enter tau's estimate (their sampling spread is
# not normal yet); they are still fitted, shrunk by it.
MIN_JUDGMENTS_FOR_SPREAD = 10
ROUNDS = 30
# The prior's share of random clickers is estimated up to this (the scale is that of the
# annotators who answer by the model, so they must be the majority), in EM_ROUNDS steps.
MAX_RANDOM_SHARE = 0.5
START_RANDOM_SHARE = 0.1
EM_ROUNDS = 50
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
    statistic: float  # the deciding likelihood-ratio statistic (heterogeneity_test)
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


def held_out_utilities(model, u: np.ndarray, alpha: float, annotators: np.ndarray) -> np.ndarray:
    """(m, T): the utilities of each judgment's items had its annotator's judgments been
    left out of the fit at u (penalty alpha * sum(u**2)), by one Newton step with the
    Hessian's diagonal: u_i + g_ai / (H_ii - h_ai), g_ai and h_ai the annotator's share of
    item i's gradient (of minus the log-likelihood) and curvature."""
    gradient, curvature = model.position_terms(u)
    items = model.items
    n = u.size
    item = items.ravel()
    who = np.repeat(annotators, items.shape[1]).astype(np.int64)
    keys, group = np.unique(who * np.int64(n) + item, return_inverse=True)
    group = group.reshape(-1)
    g = np.bincount(group, gradient.ravel(), keys.size)
    h = np.bincount(group, curvature.ravel(), keys.size)
    total = np.bincount(item, curvature.ravel(), n) + 2.0 * alpha
    shift = g / np.maximum(total[keys % n] - h, 2.0 * alpha)
    return u[items] + shift[group].reshape(items.shape)


def fit_sensitivities(
    probe,
    x: np.ndarray,
    annotators: np.ndarray,
    n_annotators: int,
    *,
    prior_sd: float | None,
    start: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Each annotator's beta maximising their judgments' log-likelihood, the judgments'
    items having utilities x (m, T) (plus the N(1, prior_sd^2) prior when given), beta >= 0,
    by Newton steps on all annotators at once; with minus the second derivative there."""
    beta = np.ones(n_annotators) if start is None else np.array(start, dtype=float)
    precision = 0.0 if prior_sd is None else 1.0 / prior_sd**2
    information = np.zeros(n_annotators)
    for _ in range(NEWTON_STEPS):
        first, second = probe.sensitivity_terms(x, beta[annotators])
        gradient = np.bincount(annotators, first, n_annotators) - precision * (beta - 1.0)
        information = precision - np.bincount(annotators, second, n_annotators)
        step = np.where(information > 0, gradient / np.maximum(information, 1e-12), 0.0)
        new = np.maximum(beta + np.clip(step, -MAX_BETA_STEP, MAX_BETA_STEP), 0.0)
        change = float(np.max(np.abs(new - beta), initial=0.0))
        beta = new
        if change < 1e-8:
            break
    return beta, information


def _largest_mixture(zero: np.ndarray, one: np.ndarray) -> float:
    """max over the share s in (0, 1) of sum log(s e^zero + (1 - s) e^one), the mixture's
    log-likelihood. It is concave in s, so a grid and two finer grids about its best point
    find the share to within 1e-6; vectorised, it costs less than scipy.optimize's import
    (the score command's start-up, benchmarks/cli_score_time.py)."""
    low, high = 1e-9, 1.0 - 1e-9
    for _ in range(3):
        shares = np.linspace(low, high, 201)
        values = np.logaddexp(
            np.log(shares)[:, None] + zero[None, :], np.log1p(-shares)[:, None] + one[None, :]
        ).sum(axis=1)
        best = int(np.argmax(values))
        low, high = shares[max(best - 1, 0)], shares[min(best + 1, shares.size - 1)]
    return float(values[best])


def heterogeneity_test(
    probe, x: np.ndarray, annotators: np.ndarray, n_annotators: int, *, temper: float = 1.0
) -> tuple[float, int, float]:
    """Whether annotators differ in sensitivity, items at utilities x: two likelihood-ratio
    tests against one beta for all, their p-values combined by Bonferroni. (1) One beta per
    annotator, chi-squared with (annotators with judgments - 1) degrees of freedom. (2) A
    share pi of the annotators clicking at random (beta 0) and the others at the common beta,
    one parameter on its boundary (half a chi-squared with 1): far more power against a few
    clickers with few judgments each, which the first spreads over many degrees of freedom.
    ``temper`` (Bradley-Terry's dependence) divides the statistics, its pairs counting each
    judgment that many times. Returns the larger statistic's figures: (statistic, degrees of
    freedom, combined p-value)."""
    everyone = np.zeros_like(annotators)
    common, _ = fit_sensitivities(probe, x, everyone, 1, prior_sd=None)
    own, _ = fit_sensitivities(probe, x, annotators, n_annotators, prior_sd=None)
    at_common = probe.log_likelihood_rows(x, common[everyone])
    free = np.sum(probe.log_likelihood_rows(x, own[annotators])) - np.sum(at_common)
    spread = max(2.0 * float(free) / temper, 0.0)
    df = int(np.sum(np.bincount(annotators, minlength=n_annotators) > 0)) - 1
    p_spread = float(special.chdtrc(df, spread)) if df > 0 else 1.0
    # per annotator: log-likelihood at the common beta and at random clicking
    one = np.bincount(annotators, at_common, n_annotators) / temper
    zero = (
        np.bincount(
            annotators, probe.log_likelihood_rows(x, np.zeros(annotators.size)), n_annotators
        )
        / temper
    )

    at_none = float(np.sum(np.logaddexp(np.log(1e-12) + zero, np.log1p(-1e-12) + one)))
    mixture = max(2.0 * (_largest_mixture(zero, one) - at_none), 0.0)
    p_mixture = 0.5 * float(special.chdtrc(1, mixture))
    p_value = min(1.0, 2.0 * min(p_spread, p_mixture))
    if p_mixture < p_spread:
        return mixture, 1, p_value
    return spread, df, p_value


def prior_sd(
    beta: np.ndarray,
    information: np.ndarray,
    counts: np.ndarray,
    weights: np.ndarray | None = None,
) -> float:
    """tau by the method of moments: the spread of the measured annotators' betas about 1
    less their mean sampling variance (weighted by ``weights``, the chance that each
    answers by the model), within MIN_PRIOR_SD..MAX_PRIOR_SD."""
    measured = (counts >= MIN_JUDGMENTS_FOR_SPREAD) & (information > 0)
    weight = np.ones(beta.size) if weights is None else np.asarray(weights, dtype=float)
    weight = np.where(measured, weight, 0.0)
    if np.sum(measured) < 2 or weight.sum() <= 0:
        return MIN_PRIOR_SD
    spread = float(np.sum(weight * (beta - 1.0) ** 2) / weight.sum())
    sampling = float(np.sum(weight / np.maximum(information, 1e-12)) / weight.sum())
    return float(np.clip(np.sqrt(max(spread - sampling, 0.0)), MIN_PRIOR_SD, MAX_PRIOR_SD))


def normaliser(beta: np.ndarray, counts: np.ndarray) -> float:
    """The beta-weighted mean of the betas (weights n_a beta_a): what the betas are divided
    by and the utilities multiplied by, so that it becomes 1."""
    weight = counts * beta
    total = float(np.sum(weight))
    return float(np.sum(weight * beta) / total) if total > 0 else 1.0


def _per_annotator(probe, x, annotators, count, beta) -> np.ndarray:
    return np.bincount(annotators, probe.log_likelihood_rows(x, beta[annotators]), count)


def _shrunk(probe, x, annotators, count, counts, start=None):
    """Each annotator's posterior mean beta and its information, and tau, under the prior
    pi (a point mass at 0: random clicking) + (1 - pi) N(1, tau^2), pi and tau estimated
    from all the annotators by EM (pi at most MAX_RANDOM_SHARE). A normal prior alone pulls
    a clicker with few judgments halfway to 1 (0.44 at 10 judgments each); the point mass
    lets the evidence pull them to 0 instead."""
    plain, information = fit_sensitivities(probe, x, annotators, count, prior_sd=None, start=start)
    at_zero = _per_annotator(probe, x, annotators, count, np.zeros(count))
    attentive = np.ones(count)
    share, beta, tau = START_RANDOM_SHARE, plain, MIN_PRIOR_SD
    for _ in range(EM_ROUNDS):
        tau = prior_sd(plain, information, counts, attentive)
        beta, information = fit_sensitivities(probe, x, annotators, count, prior_sd=tau, start=beta)
        likelihood = information - 1.0 / tau**2  # the likelihood's curvature alone
        # the Laplace marginal log-likelihood of answering by the model, and of clicking
        model = _per_annotator(probe, x, annotators, count, beta) - (beta - 1.0) ** 2 / (
            2.0 * tau**2
        )
        model -= 0.5 * np.log1p(np.maximum(likelihood, 0.0) * tau**2)
        with np.errstate(divide="ignore"):
            log_share, log_rest = np.log(share), np.log1p(-share)
        updated = np.exp(log_rest + model - np.logaddexp(log_share + at_zero, log_rest + model))
        attentive = np.where(counts > 0, updated, 1.0)
        new_share = min(float(1.0 - np.mean(attentive)), MAX_RANDOM_SHARE)
        done = abs(new_share - share) < 1e-4
        share = max(new_share, 1e-9)
        if done:
            break
    mean = attentive * beta
    variance = attentive * (1.0 / information + beta**2) - mean**2
    return mean, 1.0 / np.maximum(variance, 1e-12), tau


def annotator_reliability(
    judgments: Judgments,
    method: str,
    u: np.ndarray,
    alpha: float,
    model,
    *,
    level: float = 0.95,
    test: tuple[float, int, float] | None = None,
    joint: bool = False,
    rounds: int = 0,
) -> Reliability:
    """The betas against the fit u (penalty alpha) of ``model`` (a scaled model), each
    annotator's own
    judgments taken out, the prior estimated, the scale fixed by ``normaliser``; with
    intervals beta +- z sd, cut at 0."""
    annotators = judgments.annotators
    count = int(annotators.max()) + 1 if annotators.size else 0
    counts = np.bincount(annotators, minlength=count).astype(float)
    probe = scaled_model_for(method, judgments, np.ones(judgments.n_judgments))
    x = held_out_utilities(model, u, alpha, annotators)
    beta, information, tau = _shrunk(probe, x, annotators, count, counts)
    if test is None:
        test = heterogeneity_test(probe, x, annotators, count)
    c = normaliser(beta, counts)
    z = float(special.ndtri(0.5 + level / 2.0))
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
    pooled: Scores,
    shrinkage,
    estimate,
    temper: float = 1.0,
    level: float = 0.95,
    force: bool = False,
) -> JointFit | Reliability:
    """The scores fitted jointly with every annotator's sensitivity when the test says
    annotators differ (or ``force``); else the reliabilities beside the pooled fit (a
    ``Reliability`` with joint False), the caller keeping its pooled fit.

    ``pooled``, ``shrinkage``: the method's pooled empirical-Bayes fit and its Shrinkage;
    ``estimate``: the empirical-Bayes fit,
    ``intervals.estimate_shrinkage`` (passed in, as intervals calls this module);
    ``temper``: the method's dependence (``intervals.dependence``).
    """
    annotators = judgments.annotators
    count = int(annotators.max()) + 1 if annotators.size else 0
    counts = np.bincount(annotators, minlength=count).astype(float)
    probe = scaled_model_for(method, judgments, np.ones(judgments.n_judgments))
    alpha = shrinkage.alpha
    x = held_out_utilities(probe, pooled.scores, alpha, annotators)
    test = heterogeneity_test(probe, x, annotators, count, temper=temper)
    if not force and not test[2] < GATE_ALPHA:
        return annotator_reliability(
            judgments, method, pooled.scores, alpha, probe, level=level, test=test
        )
    beta, u, prior = np.ones(count), pooled.scores, shrinkage.prior_variance
    rounds = 0
    while rounds < ROUNDS:
        rounds += 1
        new, _, _ = _shrunk(probe, x, annotators, count, counts, start=beta)
        c = normaliser(new, counts)
        new, prior = new / c, prior * c * c
        alpha = temper / (2.0 * prior)
        model = scaled_model_for(method, judgments, new[annotators])
        u = fit_model(model, item_counts(judgments), alpha=alpha, initial=u * c).scores
        change = float(np.max(np.abs(new - beta), initial=0.0))
        beta = new
        if change < TOLERANCE:
            break
        x = held_out_utilities(model, u, alpha, annotators)
    shrinkage, scores, variance = estimate(judgments, method, temper=temper, model=model)
    reliability = annotator_reliability(
        judgments,
        method,
        scores.scores,
        shrinkage.alpha,
        model,
        level=level,
        test=test,
        joint=True,
        rounds=rounds,
    )
    return JointFit(scores, variance, shrinkage, model, reliability)
