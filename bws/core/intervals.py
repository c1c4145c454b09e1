"""Calibrated intervals and data-driven shrinkage for best-worst scores.

The model fits (Bradley-Terry, Plackett-Luce) take a normal prior on the utilities whose
variance is estimated from the data (empirical Bayes; below INTEGRATE_BELOW_ITEMS shown
items integrated out instead, bws/core/hyperprior.py), and report posterior intervals
(a Laplace approximation: the penalised fit plus or minus z times the square root of the
inverse Hessian's diagonal); Plackett-Luce's, whose target is the utilities annotators
share, also allow for annotators who differ from each other (``annotator_spread``).
Counting takes a moderated t interval: each item's variance,
measured over its tuples, is pooled with the variance of all items (as limma moderates
gene-wise variances), so an item whose few tuples happened to agree is not given an
interval of zero width.

Why not the percentile bootstrap: each item sits in only about r resampled clusters, so
the resampled spread underestimates the sampling spread at small r (coverage 0.79-0.82 at
4 appearances per item, measured in benchmarks/coverage.py). The model fits' intervals
have their outer ends moved out by the prior's pull (bws/core/tail_intervals.py), which
the most extreme items need. The coverage of the
intervals here, per method, appearances, judgments per tuple and annotator spread, is
recorded in benchmarks/RESULTS.md ("Interval coverage").
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial

import numpy as np
from scipy import sparse
from scipy.sparse.csgraph import connected_components
from scipy.special import expit, ndtri, stdtrit

from bws.core import annotator_model, prior_bias, spread_bias
from bws.core.choice_models import factorize, model_for
from bws.core.hyperprior import INTEGRATE_BELOW_ITEMS, integrate_prior
from bws.core.judgments import Judgments
from bws.core.newton import fit_model
from bws.core.scaled_models import scaled_model_for
from bws.core.scores import Scores, counting_scores, item_counts
from bws.core.scoring import fit
from bws.core.tail_intervals import INFORMED_JUDGMENTS, widen_tails

DEFAULT_LEVEL = 0.95
# Up to this many items the inverse Hessian's diagonal is exact (a dense inverse, a few ms
# at 400 items); above, a second-order expansion about the diagonal, within 0.2-0.6% of the
# exact values at the fitted prior and 1-6% (on the mean) at the weak penalty, on balanced
# designs of 2,000 items (benchmarks/coverage.py --diagonal measures it).
EXACT_DIAGONAL_ITEMS = 400
# The prior variance's fixed point is sought at most this many times (each a warm refit),
# to 1% (the intervals move by well under 1% with it).
PRIOR_ITERATIONS = 25
PRIOR_TOLERANCE = 1e-2
# The penalty of the weak fits the estimates start from (the fixed penalty of before).
WEAK_ALPHA = 0.01
# No prior narrower than this (utilities on the log-odds scale): a study whose items are
# all alike still gets a proper, not a degenerate, prior.
MIN_PRIOR_VARIANCE = 0.01
# Annotators who differ: an annotator's own utilities are the shared ones plus noise of
# variance sigma^2 per item. A choice then follows the shared utilities flattened by
# sqrt(1 + sigma^2 / (pi^2 / 6)) (the Gumbel noise of a choice has variance pi^2 / 6);
# the estimate of sigma^2 is capped at half that noise (a flattening of at most sqrt(3))
# so that a noisy estimate cannot blow the scale up.
CHOICE_NOISE_VARIANCE = float(np.pi**2 / 6.0)
MAX_ANNOTATOR_VARIANCE = CHOICE_NOISE_VARIANCE / 2.0
# After batches aimed at a threshold (a score or a reference item), the fixed point
# corrected by simulation (``model_intervals``) still reads low while items have few
# judgments: the simulations answer the design's tuples anew but cannot choose them from
# their own answers, as the real design was chosen. The truth's variance over the corrected
# estimate, in the median of the fits of threshold-score designs by judgments per item
# (1,000 items, 6 studies each, normal utilities; with random clickers the same from 2.5
# on): 1.75 at 1.5-2, 1.57-1.59 at 2-3, 1.26-1.30 at 3-4, 1.16 at 4-5, 1.07 at 5-6 and
# 0.95 at 6-8. The prior is stretched
# by 1 + (STRETCH_UNTIL - m) * STRETCH_SLOPE at m judgments per item, at most MAX_STRETCH
# and none from STRETCH_UNTIL on (heavy-tailed utilities read higher still, 1.3-2.0, but
# want a narrower normal prior than their variance, so they are not followed). With it the
# threshold's share of the balanced design's judgments with random clickers at 10,000
# items went under 50% (benchmarks/RESULTS.md, "Adaptive designs"). Above a reference
# item it left the answer's accuracy as it was and made its F1 reached sooner (with
# clickers 44% of the balanced design's judgments, 57% without, 1 seed of 10 not reached
# against 3).
STRETCH_UNTIL = 6.0
STRETCH_SLOPE = 1.0 / 8.0
MAX_STRETCH = 1.5
# Counting: the weight (degrees of freedom) of the pooled variance in each item's
# moderated variance. Four measured tuples' worth: enough that an item seen in four tuples
# that agreed is not certain, little enough that an item seen in 24 speaks for itself.
COUNTING_PRIOR_DF = 4.0


@dataclass(frozen=True, eq=False)
class Intervals:
    """An interval per item index on the scale of the method's scores (NaN: never shown)."""

    low: np.ndarray
    high: np.ndarray
    std: np.ndarray
    level: float
    method: str
    kind: str  # "posterior" (model fits) or "moderated-t" (counting)
    # The clusters an item's evidence comes in (its tuples): what "few clusters" counts.
    unit: str = "tuple"
    # The prior variance of the utilities and the penalty it sets (model fits only).
    prior_variance: float | None = None
    alpha: float | None = None
    # Plackett-Luce: the estimated variance of annotators' own utilities about the shared
    # ones, and the factor the pooled fit was scaled up by to undo their flattening.
    annotator_variance: float | None = None
    scale: float = 1.0
    # Each annotator's estimated sensitivity (bws.core.annotator_model; model fits only).
    reliability: annotator_model.Reliability | None = None
    # The factor the scores' deviations from their mean were stretched by, measured in
    # simulation (bws/core/spread_bias.py; 1: not stretched).
    stretch: float = 1.0

    @property
    def half_width(self) -> np.ndarray:
        return (self.high - self.low) / 2.0


@dataclass(frozen=True)
class Shrinkage:
    """The estimated prior variance of the utilities and the penalty it implies."""

    prior_variance: float
    alpha: float  # the penalty of the fit (temper / (2 prior_variance))
    marginal: float  # the Laplace marginal-likelihood estimate (low when items have few judgments)
    moments: float  # the method-of-moments estimate from a weakly penalised fit (high then)
    iterations: int
    temper: float = 1.0  # how many times the likelihood counts each judgment (dependence)
    # With few judgments per item: the estimate before its correction by simulation
    # (bws/core/prior_bias.py), and the simulated studies' mean estimate; None otherwise.
    uncorrected: float | None = None
    simulated: float | None = None


@dataclass(frozen=True, eq=False)
class AnnotatorSpread:
    """How much annotators' own utilities differ from the shared ones, from the judgments.

    ``variance``: sigma^2 (log-odds scale, capped at MAX_ANNOTATOR_VARIANCE); ``scale``:
    how much flatter than the shared utilities the pooled choices are; ``extra``: per
    item, the variance its estimate gains from the annotators it happened to be judged by
    (divide by nothing: already times ``variance``); ``repeated``: the (annotator, item)
    pairs seen more than once, which the estimate rests on (0: nothing to measure).
    """

    variance: float
    scale: float
    extra: np.ndarray
    repeated: int


def annotator_spread(
    judgments: Judgments, u: np.ndarray, alpha: float, *, model=None
) -> AnnotatorSpread:
    """sigma^2 from how much more alike one annotator's judgments of one item are than
    judgments of that item by different annotators (a random annotator-by-item effect).

    At the fit u, judgment j's gradient g_j in item i's utility has mean about h_j
    delta_{a,i} (h_j its Hessian term, delta the annotator's own deviation), so two
    judgments of item i by annotator a have E[g_j g_k] = c_i + sigma^2 h_j h_k, with
    c_i the covariance the fit itself leaves between any two judgments of i (their sum is
    the penalty's gradient, so c_i is known from the totals). Solving over all items
    gives sigma^2 by the method of moments; the estimate of u_i then gains
    sigma^2 sum_a [(sum_{j in a} h_j)^2 - sum_{j in a} h_j^2] / H_ii^2. ``model``: the
    MaxDiff model the fit used (the joint annotator model's; the plain one by default).
    """
    n = judgments.n_items
    model = model or model_for("plackett_luce", judgments)
    gradient, curvature = model.position_terms(u)
    g, h = gradient.ravel(), curvature.ravel()
    item = judgments.items.ravel()
    annotator = np.repeat(judgments.annotators, judgments.tuple_size)
    annotators = int(annotator.max()) + 1 if annotator.size else 1
    keys, group = factorize(annotator * np.int64(n) + item, annotators * n)
    group_item = keys % n
    count = np.bincount(group).astype(float)
    g_sum, g_squares = np.bincount(group, g), np.bincount(group, g * g)
    h_sum, h_squares = np.bincount(group, h), np.bincount(group, h * h)
    within = np.bincount(group_item, g_sum**2 - g_squares, n)  # sum over pairs, same annotator
    pairs = np.bincount(group_item, count * (count - 1.0), n)
    cross = np.bincount(group_item, h_sum**2 - h_squares, n)
    item_sum, item_squares = np.bincount(item, g, n), np.bincount(item, g * g, n)
    seen = np.bincount(item, minlength=n).astype(float)
    all_pairs = seen * (seen - 1.0)
    measured = all_pairs > 0
    share = np.where(measured, pairs / np.where(measured, all_pairs, 1.0), 0.0)
    numerator = float(np.sum((within - (item_sum**2 - item_squares) * share)[measured]))
    denominator = float(np.sum((cross * (1.0 - share))[measured]))
    variance = 0.0
    if denominator > 0:
        variance = min(max(numerator / denominator, 0.0), MAX_ANNOTATOR_VARIANCE)
    information = np.bincount(item, h, n) + 2.0 * alpha
    with np.errstate(invalid="ignore", divide="ignore"):
        extra = np.where(information > 0, variance * cross / information**2, 0.0)
    scale = float(1.0 / np.sqrt(1.0 - variance / CHOICE_NOISE_VARIANCE))
    return AnnotatorSpread(variance, scale, extra, int(np.sum(count > 1)))


def fixed_point_stretch(judgments_per_item: float) -> float:
    """How much the corrected fixed point of a design aimed at a threshold reads low, at
    this many judgments per item (STRETCH_UNTIL, STRETCH_SLOPE, MAX_STRETCH)."""
    stretch = 1.0 + (STRETCH_UNTIL - judgments_per_item) * STRETCH_SLOPE
    return float(np.clip(stretch, 1.0, MAX_STRETCH))


def penalty(prior_variance: float) -> float:
    """The fit's penalty alpha * sum(u**2) for a normal prior of this variance."""
    return 1.0 / (2.0 * prior_variance)


def posterior_variance(model, u: np.ndarray, alpha: float) -> np.ndarray:
    """The posterior variance of each centred utility u_i - mean(u): the diagonal of the
    inverse of the penalised Hessian at u, less the variance of the items' common shift.

    The likelihood leaves that shift to the penalty alone (the Hessian's rows sum to zero,
    so the constant vector is an eigenvector of eigenvalue 2 alpha) and every exact v_i
    holds its variance 1 / (2 alpha n); the scores, and what they estimate, are centred.
    Exact up to EXACT_DIAGONAL_ITEMS items; above, H = D - A (D its diagonal) is inverted
    to second order, diag(D^-1 + D^-1 A D^-1 A D^-1), the first-order term having a zero
    diagonal (a series that leaves the shift's slow mode out).
    """
    n = u.size
    if n <= EXACT_DIAGONAL_ITEMS:
        hessian = model.hessian(u).toarray()
        hessian[np.diag_indices(n)] += 2.0 * alpha
        exact = np.diag(np.linalg.inv(hessian))
        return np.maximum(exact - 1.0 / (2.0 * alpha * n), 0.0)
    # sum_k A_ik^2 / D_k over the distinct pairs (i, k), summed over the judgments first
    # (the pair structure is found once per model; the sparse matrix is never built).
    inverse = 1.0 / (model.hessian_diagonal(model.curvature(u)) + 2.0 * alpha)
    first, second, occurrence = model.off_diagonal_pairs()
    squared = np.bincount(occurrence, model.off_diagonal_values(u), first.size) ** 2
    spread = np.bincount(first, squared * inverse[second], n)
    spread += np.bincount(second, squared * inverse[first], n)
    return inverse + spread * inverse**2


def dependence(judgments: Judgments, method: str, *, weak: Scores | None = None) -> float:
    """How much more the method's likelihood counts each judgment than a judgment holds:
    1 for Plackett-Luce (one term per judgment); for Bradley-Terry, whose 2T - 3 pairs
    per judgment are counted as if independent, the ratio of its clustered to its model
    information relative to the same ratio under Plackett-Luce (which removes the part
    that fitting itself explains), at least 1. Diagonal approximations, so it costs one
    pass over the judgments at any size. ``weak`` is the method's fit at WEAK_ALPHA when
    the caller has it already.
    """
    if method != "bradley_terry":
        return 1.0
    pairwise = (weak or fit(method, judgments, alpha=WEAK_ALPHA)).scores
    sequential = fit("plackett_luce", judgments, alpha=WEAK_ALPHA).scores
    measured = _information_ratio(judgments, method, pairwise) / _information_ratio(
        judgments, "plackett_luce", sequential
    )
    return max(1.0, measured, _expected_information_ratio(judgments, pairwise, sequential))


def _expected_information_ratio(
    judgments: Judgments, pairwise: np.ndarray, sequential: np.ndarray
) -> float:
    """The same ratio for Bradley-Terry with the gradient's variance taken from the model
    instead of the residuals: every (best, worst) outcome of every judged tuple, weighted
    by its MaxDiff probability at ``sequential``. Residuals of few judgments per item are
    smaller than the noise they came from (the fit follows them), which understates the
    dependence below about 16 appearances (coverage 0.923 at 4, 0.955 with this)."""
    items = judgments.items
    m, size = items.shape
    pair_u, choice_u = pairwise[items], sequential[items]
    e = np.exp(choice_u - choice_u.max(axis=1, keepdims=True))
    p_best = e / e.sum(axis=1, keepdims=True)
    mean = np.zeros((m, size))
    square = np.zeros((m, size))
    curvature = np.zeros((m, size))
    for b in range(size):
        e = np.exp(choice_u.min(axis=1, keepdims=True) - choice_u)
        e[:, b] = 0.0
        p_worst = e / e.sum(axis=1, keepdims=True)
        for w in range(size):
            if w == b:
                continue
            p = (p_best[:, b] * p_worst[:, w])[:, None]
            gradient = np.zeros((m, size))
            hessian = np.zeros((m, size))
            others = [k for k in range(size) if k != b]
            pairs = [(b, k) for k in others] + [(k, w) for k in others if k != w]
            for winner, loser in pairs:
                slope = expit(pair_u[:, loser] - pair_u[:, winner])
                gradient[:, winner] -= slope
                gradient[:, loser] += slope
                hessian[:, [winner, loser]] += (slope * (1.0 - slope))[:, None]
            mean += p * gradient
            square += p * gradient * gradient
            curvature += p * hessian
    flat = items.ravel()
    spread = np.bincount(flat, (square - mean * mean).ravel(), judgments.n_items)
    diagonal = np.bincount(flat, curvature.ravel(), judgments.n_items)
    shown = diagonal > 0
    return float(np.sum(spread[shown] / diagonal[shown] ** 2) / np.sum(1.0 / diagonal[shown]))


def _information_ratio(judgments: Judgments, method: str, u: np.ndarray) -> float:
    """sum_i (clustered gradient variance)_i / D_i^2 over sum_i 1 / D_i (D: Hessian diagonal)."""
    model = model_for(method, judgments)
    labels = np.unique(judgments.tuple_ids, return_inverse=True)[1].reshape(-1)
    members = sparse.csr_matrix(
        (np.ones(labels.size), (np.arange(labels.size), labels)),
        shape=(labels.size, int(labels.max()) + 1 if labels.size else 0),
    )
    clustered = (model.gradient_matrix(u) @ members).tocsr()
    spread = np.asarray(clustered.multiply(clustered).sum(axis=1)).ravel()
    diagonal = model.hessian_diagonal(model.curvature(u))
    shown = diagonal > 0
    return float(np.sum(spread[shown] / diagonal[shown] ** 2) / np.sum(1.0 / diagonal[shown]))


def estimate_shrinkage(
    judgments: Judgments,
    method: str,
    *,
    temper: float = 1.0,
    weak: Scores | None = None,
    model=None,
    fixed_point: bool = False,
) -> tuple[Shrinkage, Scores, np.ndarray]:
    """The prior variance of the utilities, from the data; with the fit and its posterior
    variances at that prior.

    ``temper`` (``dependence``) divides the log-likelihood: a composite likelihood that
    counts each judgment ``temper`` times is brought back to one judgment's weight, which
    is a fit with penalty temper * alpha and posterior variances temper times larger.

    Two estimates of the prior variance are averaged. The Laplace marginal likelihood's
    fixed point, tau2 = sum(u_i**2 + v_i) / (n - 1), is biased low when items have few
    judgments (the approximation is poor there and over-shrinks); the method of moments,
    sum(u_i**2 - v_i) / (n - 1) from a weakly penalised fit, is biased high then (maximum
    likelihood spreads the utilities). The v_i are the centred utilities' variances
    (``posterior_variance``): the items' common shift, whose variance the weak penalty
    makes large (1 / (2 WEAK_ALPHA n): 1.25 at 40 items), is in neither. Their mean
    covers in 0.93-0.97 where either alone does not (benchmarks/coverage.py). ``model``:
    the method's model of these judgments when the caller has it (its refits share it).

    ``fixed_point``: the Laplace fixed point alone, for judgments from batches aimed at a
    threshold, a score or a reference item (bws/core/targets.py). Such batches leave most
    items with one or two appearances, whose weakly penalised utilities spread: the moments
    read three to five times the truth's variance after them, and a score is read on a
    scale that far off. The fixed point reads low instead (about half), and
    ``model_intervals`` corrects it by simulation (prior_bias.corrected_prior with the
    fit's order). Above a reference item the scale matters less, but with the mean the
    answer's expected precision said 0.71-0.73 where 0.47-0.58 was found, with the fixed
    point 0.67-0.70 where 0.68-0.71 was. Where the scale does not matter the mean stays:
    batches aimed at a top k did worse with the fixed point alone, and after batches over
    the whole ranking it covered 0.81-0.94
    (benchmarks/RESULTS.md, "Adaptive designs").
    """
    model = model or model_for(method, judgments)
    counts = item_counts(judgments)

    def fitted(alpha: float, start: Scores | None) -> tuple[Scores, np.ndarray]:
        scores = fit_model(
            model,
            counts,
            alpha=temper * alpha,
            initial=None if start is None else start.scores,
        )
        return scores, temper * posterior_variance(model, scores.scores, temper * alpha)

    if weak is None:  # the fit at WEAK_ALPHA, the same whatever the temper
        weak, weak_variance = fitted(WEAK_ALPHA / temper, None)
    else:
        weak_variance = temper * posterior_variance(model, weak.scores, WEAK_ALPHA)
    # Both estimates count n - 1 degrees of freedom: the centred utilities have lost one
    # to their mean (which neither the likelihood nor the scores identify).
    freedom = max(weak.scores.size - 1, 1)
    spread = float(np.sum(weak_variance))
    if weak.scores.size <= EXACT_DIAGONAL_ITEMS:
        # Items in separate groups (tuple_generation.group_key): each further group's mean
        # is left to the weak penalty too, and its variance, temper / (2 WEAK_ALPHA) summed
        # over the group, is no spread of the utilities. Left in, 40 groups of 5 items
        # brought the prior to its floor and the scores to a tenth of their scale
        # (benchmarks/source_coverage.py).
        extra = _linked_groups(judgments) - 1
        spread -= extra * temper / (2.0 * WEAK_ALPHA)
    moments = max(MIN_PRIOR_VARIANCE, (float(np.sum(weak.scores**2)) - spread) / freedom)
    # The fixed point of tau2 = sum(u_i**2 + v_i) / (n - 1), by secant steps on its
    # residual (a plain iteration converges slowly: 15 refits where the secant takes 4 or 5).
    scores = weak
    points: list[tuple[float, float]] = []  # (tau2, residual)
    marginal, iterations = moments, 0
    while iterations < PRIOR_ITERATIONS:
        iterations += 1
        scores, variance = fitted(penalty(marginal), scores)
        image = max(MIN_PRIOR_VARIANCE, float(np.sum(scores.scores**2 + variance)) / freedom)
        if abs(image - marginal) <= PRIOR_TOLERANCE * marginal:
            marginal = image
            break
        points.append((marginal, image - marginal))
        marginal = _next_prior(points, image)
    prior = marginal if fixed_point else (marginal + moments) / 2.0
    scores, variance = fitted(penalty(prior), scores)
    shrinkage = Shrinkage(prior, temper * penalty(prior), marginal, moments, iterations, temper)
    return shrinkage, scores, variance


def _linked_groups(judgments: Judgments) -> int:
    """How many groups of shown items the tuples link (1 for a connected design)."""
    items = judgments.items
    if items.shape[0] == 0:
        return 1
    shown = np.unique(items)
    index = np.searchsorted(shown, items)
    first = np.repeat(index[:, :1], items.shape[1] - 1, axis=1).ravel()
    edges = sparse.coo_matrix(
        (np.ones(first.size), (first, index[:, 1:].ravel())), shape=(shown.size, shown.size)
    )
    return int(connected_components(edges, directed=False)[0])


def _next_prior(points: list[tuple[float, float]], image: float) -> float:
    """A secant step from the last two (tau2, residual) points; the plain iteration's
    image when the secant is undefined or leaves the positive half-line."""
    if len(points) < 2:
        return image
    (x0, r0), (x1, r1) = points[-2], points[-1]
    if r1 == r0:
        return image
    step = x1 - r1 * (x1 - x0) / (r1 - r0)
    return step if MIN_PRIOR_VARIANCE <= step <= 100.0 * max(x1, image) else image


def model_intervals(
    judgments: Judgments,
    method: str,
    *,
    level: float = DEFAULT_LEVEL,
    prior_variance: float | None = None,
    tails: bool = True,
    adaptive: bool = False,
    fixed_point: bool = False,
    stretch: bool = False,
) -> tuple[Scores, Intervals]:
    """The empirical-Bayes fit and its posterior intervals (Bradley-Terry, Plackett-Luce).

    ``prior_variance``: the prior's variance given instead of estimated from the data (for
    simulations that ask what another prior would have covered); the rest as usual.
    ``tails``: each outer end moved out by the prior's pull (bws/core/tail_intervals.py);
    False for the plain posterior intervals. ``adaptive``: the judgments came from batches
    that follow the fit (adaptive or iterative designs): the prior's variance is not
    corrected for the bias of few judgments per item (bws/core/prior_bias.py), whose
    simulation assumes a balanced design. ``fixed_point``: the prior's variance as
    ``estimate_shrinkage(fixed_point=True)`` estimates it, corrected for its bias by
    simulation in the fit's order (implies ``adaptive``); with ``stretch``, then stretched
    by ``fixed_point_stretch`` (bws.filemode.design_fit asks for both together).
    """
    _check_level(level)
    # One weak fit serves both the dependence and the prior's starting point, and one
    # model all the fits.
    model = model_for(method, judgments)
    weak = fit_model(model, item_counts(judgments), alpha=WEAK_ALPHA)
    temper = dependence(judgments, method, weak=weak)
    reliability = None
    if prior_variance is None:
        estimate = partial(estimate_shrinkage, fixed_point=fixed_point)
        shrinkage, scores, variance = estimate(
            judgments, method, temper=temper, weak=weak, model=model
        )
        # Annotators who differ in reliability: refitted with each one's sensitivity. One
        # annotator has no one to differ from (and the test's fits cost most of the time
        # of a large one-annotator study: benchmarks/scale.py).
        joint = None
        if np.count_nonzero(np.bincount(judgments.annotators)) > 1:
            joint = annotator_model.joint_fit(
                judgments,
                method,
                pooled=scores,
                shrinkage=shrinkage,
                estimate=estimate,
                temper=temper,
                level=level,
            )
        reliability = getattr(joint, "reliability", joint)
        joined = isinstance(joint, annotator_model.JointFit)
        few = not joined and 2 < np.count_nonzero(scores.appearances) < INTEGRATE_BELOW_ITEMS
        found = None
        if joined:
            model, shrinkage, scores, variance = (
                joint.model,
                joint.shrinkage,
                joint.scores,
                joint.variance,
            )
        elif few:
            # Few items: the prior's variance is integrated out, not plugged in.
            mixed = integrate_prior(model, item_counts(judgments), temper=temper, start=scores)
            scores, variance = mixed.scores, mixed.variance
            shrinkage = replace(shrinkage, prior_variance=mixed.prior_variance)
        elif not (adaptive or fixed_point) and prior_bias.needs_correction(judgments):
            # Few judgments per item: the estimate's upward bias measured by simulation.
            found = prior_bias.corrected_prior(
                judgments,
                shrinkage.prior_variance,
                lambda simulated: _pooled_prior(simulated, method),
                steps=prior_bias.STEPS.get(method, 1),
                floor=MIN_PRIOR_VARIANCE,
            )
        if fixed_point and not few and (method == "plackett_luce" or not joined):
            # The fixed point reads low after batches aimed at a threshold (about half the
            # truth's variance, as the Laplace approximation shrinks items seen once): its
            # bias measured on the same tuples, the simulated utilities in the fit's order
            # and each judgment as sensitive as its annotator was found to be
            # (benchmarks/RESULTS.md, "Adaptive designs"). With random clickers this took
            # Plackett-Luce's coverage from 0.85-0.90 to 0.95-0.97, Bradley-Terry's (whose
            # values are not the simulated utilities) from 0.87-0.90 down to 0.73-0.84:
            # its joint fit is left uncorrected.
            scale = joint.reliability.sensitivity[judgments.annotators] if joined else None
            found = prior_bias.corrected_prior(
                judgments,
                shrinkage.prior_variance,
                partial(_pooled_prior, method=method, fixed_point=True, scale=scale),
                order=scores.scores,
                spread=np.sqrt(variance),
                scale=scale,
                floor=MIN_PRIOR_VARIANCE,
            )
            if stretch:
                factor = fixed_point_stretch(prior_bias.judgments_per_item(judgments))
                found = replace(found, prior_variance=factor * found.prior_variance)
        if found is not None:
            prior = max(MIN_PRIOR_VARIANCE, found.prior_variance)
            alpha = temper * penalty(prior)
            scores = fit_model(model, item_counts(judgments), alpha=alpha, initial=scores.scores)
            variance = temper * posterior_variance(model, scores.scores, alpha)
            shrinkage = replace(
                shrinkage,
                prior_variance=prior,
                alpha=alpha,
                uncorrected=found.estimated,
                simulated=found.simulated,
            )
    else:
        alpha = temper * penalty(prior_variance)
        scores = fit_model(model, item_counts(judgments), alpha=alpha, initial=weak.scores)
        variance = temper * posterior_variance(model, scores.scores, alpha)
        shrinkage = Shrinkage(prior_variance, alpha, prior_variance, prior_variance, 0, temper)
    spread = None
    if method == "plackett_luce":
        # Its scores are the shared utilities; with annotators who differ, the pooled
        # choices follow flatter ones and each item's estimate depends on whose
        # judgments it got (benchmarks/coverage.py: coverage 0.88-0.92 without this).
        spread = annotator_spread(judgments, scores.scores, shrinkage.alpha, model=model)
        variance = (variance + spread.extra) * spread.scale**2
        scores = replace(
            scores, scores=scores.scores * spread.scale, step=scores.step * spread.scale
        )
    z = float(ndtri(0.5 + level / 2.0))  # the normal quantile
    std = np.sqrt(variance)
    shown = scores.appearances > 0
    low = np.where(shown, scores.scores - z * std, np.nan)
    high = np.where(shown, scores.scores + z * std, np.nan)
    intervals = Intervals(
        low,
        high,
        np.where(shown, std, np.nan),
        level,
        method,
        "posterior",
        prior_variance=shrinkage.prior_variance,
        alpha=shrinkage.alpha,
        annotator_variance=None if spread is None else spread.variance,
        scale=1.0 if spread is None else spread.scale,
        reliability=reliability,
    )
    if tails:
        # Balanced designs of 40 items or more (small studies integrate their prior out,
        # adaptive designs' intervals carry their own measured coverage).
        informed = (
            not (adaptive or fixed_point)
            and np.count_nonzero(scores.appearances) >= INTEGRATE_BELOW_ITEMS
            and prior_bias.judgments_per_item(judgments) >= INFORMED_JUDGMENTS
        )
        corrected = shrinkage.uncorrected is not None
        intervals = widen_tails(scores, intervals, corrected=corrected, informed=informed)
    # Bradley-Terry's joint fit is left as it is: its values are not the utilities the
    # simulations draw, and stretched its intervals covered 0.931-0.944 with 10-30% random
    # clickers (0.958-0.965 without; benchmarks/careless_coverage.py, 3 judgments a tuple).
    if prior_variance is None and spread_bias.needs_correction(judgments):
        if not (adaptive or fixed_point or few or (joined and method == "bradley_terry")):
            # Plackett-Luce's annotators fitted with their own sensitivities: the simulated
            # choices follow them, scored by the pooled fit that sees them (as prior_bias).
            scale = joint.reliability.sensitivity[judgments.annotators] if joined else None
            scores, intervals = _stretched(
                judgments, method, scores, intervals, shrinkage, None if joined else weak, scale
            )
    return scores, intervals


def _stretched(judgments, method, scores, intervals, shrinkage, weak, scale):
    """The scores stretched about their mean by the slope measured in simulation
    (bws/core/spread_bias.py), each interval moved with its score."""
    if method == "plackett_luce" and weak is not None:
        prior, shape = shrinkage.prior_variance, weak.scores
    else:
        # The simulations draw MaxDiff utilities: their variance and shape from
        # Plackett-Luce's prior and weak fit, whose scores are on that scale.
        pooled, _, plain = _shrunk(judgments, "plackett_luce", scale=scale)
        prior, shape = pooled.prior_variance, plain.scores
    found = spread_bias.stretch(
        judgments,
        method,
        prior,
        partial(_scores_at_prior, method=method, scale=scale),
        shape=shape,
        scale=scale,
    )
    shown = scores.appearances > 0
    centre = float(scores.scores[shown].mean()) if shown.any() else 0.0
    moved = np.where(shown, (found.factor - 1.0) * (scores.scores - centre), 0.0)
    scores = replace(scores, scores=scores.scores + moved)
    intervals = replace(
        intervals, low=intervals.low + moved, high=intervals.high + moved, stretch=found.factor
    )
    return scores, intervals


def _pooled_prior(
    judgments: Judgments, method: str, fixed_point: bool = False, scale: np.ndarray | None = None
) -> float:
    """The prior variance ``model_intervals`` estimates for these judgments, pooled over
    the annotators (the estimator prior_bias corrects, run on its simulated studies); with
    ``scale``, each judgment's utilities times its annotator's sensitivity, as the joint fit
    of annotators who differ sees them (bws/core/annotator_model.py)."""
    return _shrunk(judgments, method, fixed_point, scale)[0].prior_variance


def _scores_at_prior(
    judgments: Judgments, method: str, scale: np.ndarray | None = None
) -> np.ndarray:
    """The scores ``model_intervals`` fits at its estimated prior, before its corrections
    (what bws/core/spread_bias.py measures on simulated studies)."""
    return _shrunk(judgments, method, scale=scale)[1].scores


def _shrunk(judgments, method, fixed_point=False, scale=None) -> tuple[Shrinkage, Scores, Scores]:
    """The prior's estimate, the fit at it and the weakly penalised fit it started from."""
    if scale is None:
        model = model_for(method, judgments)
    else:
        model = scaled_model_for(method, judgments, scale)
    weak = fit_model(model, item_counts(judgments), alpha=WEAK_ALPHA)
    temper = dependence(judgments, method, weak=weak)
    shrinkage, scores, _ = estimate_shrinkage(
        judgments, method, temper=temper, weak=weak, model=model, fixed_point=fixed_point
    )
    return shrinkage, scores, weak


def counting_intervals(
    judgments: Judgments, *, level: float = DEFAULT_LEVEL, scores: Scores | None = None
) -> Intervals:
    """Moderated t intervals of counting scores.

    An item's score is the mean of its judgments' contributions (+1 best, -1 worst, 0
    otherwise). Their variance is measured within tuples where a tuple was judged more
    than once (the design is fixed, so what differs between tuples is not sampling
    error), else across the item's k tuples, (k / (k - 1)) sum (net_c - s n_c)^2 / sum n_c.
    It is pooled with the median over items (COUNTING_PRIOR_DF degrees of freedom), and
    the interval takes t quantiles with COUNTING_PRIOR_DF plus the item's own degrees of
    freedom.
    """
    _check_level(level)
    best, worst, appearances = item_counts(judgments)
    values = counting_scores(best, worst, appearances) if scores is None else scores.scores
    own, df_own = _contribution_variance(judgments, values)
    pooled = _pooled_contribution_variance(own, df_own, judgments.tuple_size)
    moderated = (COUNTING_PRIOR_DF * pooled + df_own * np.nan_to_num(own)) / (
        COUNTING_PRIOR_DF + df_own
    )
    shown = appearances > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        std = np.where(shown, np.sqrt(moderated / np.maximum(appearances, 1)), np.nan)
    t = stdtrit(COUNTING_PRIOR_DF + df_own, 0.5 + level / 2.0)  # Student's t quantile
    low = np.where(shown, np.maximum(values - t * std, -1.0), np.nan)
    high = np.where(shown, np.minimum(values + t * std, 1.0), np.nan)
    return Intervals(low, high, std, level, "counting", "moderated-t")


def _pooled_contribution_variance(own, df_own, tuple_size: int) -> float:
    """The variance the items' own are pooled with: their median; where that is zero,
    their mean weighted by degrees of freedom; where no item's could be measured or every
    one is zero, 2 / tuple_size (a contribution's variance when best and worst fall at
    random). After a balanced start of one appearance and a batch aimed at a threshold,
    most measured items had two appearances and the same contribution in both: the median
    was 0, every item seen once got an interval of zero width, and counting's intervals
    held 0.037 of what they should (benchmarks/adaptive_targets.py, reference, t3)."""
    known = np.isfinite(own)
    if known.any():
        median = float(np.median(own[known]))
        if median > 0:
            return median
        weight = float(df_own[known].sum())
        mean = float(np.sum(own[known] * df_own[known]) / weight) if weight > 0 else 0.0
        if mean > 0:
            return mean
    return 2.0 / tuple_size


def _contribution_variance(judgments: Judgments, values: np.ndarray):
    """Per item: the variance of one judgment's contribution and its degrees of freedom
    (NaN and 0 where it cannot be measured)."""
    n = judgments.n_items
    tuples = np.unique(judgments.tuple_ids, return_inverse=True)[1].reshape(-1)
    width = int(tuples.max()) + 1 if tuples.size else 1
    contribution = np.zeros(judgments.items.shape)
    rows = np.arange(judgments.n_judgments)
    contribution[rows, judgments.best] += 1.0
    contribution[rows, judgments.worst] -= 1.0
    item = judgments.items.ravel()
    pair = item.astype(np.int64) * width + np.repeat(tuples, judgments.tuple_size)
    keys, inverse = np.unique(pair, return_inverse=True)
    pair_item = keys // width
    x = contribution.ravel()
    pair_sum = np.bincount(inverse, x, keys.size)
    pair_squares = np.bincount(inverse, x * x, keys.size)
    pair_count = np.bincount(inverse, minlength=keys.size).astype(float)
    # within tuples judged more than once
    within = np.bincount(pair_item, pair_squares - pair_sum**2 / pair_count, n)
    within_df = np.bincount(pair_item, pair_count - 1.0, n)
    # across tuples
    clusters = np.bincount(pair_item, minlength=n).astype(float)
    spread = np.bincount(pair_item, (pair_sum - values[pair_item] * pair_count) ** 2, n)
    shown = np.bincount(pair_item, pair_count, n)
    with np.errstate(invalid="ignore", divide="ignore"):
        across = np.where(clusters > 1, clusters / (clusters - 1) * spread / shown, np.nan)
        inside = np.where(within_df > 0, within / within_df, np.nan)
    replicated = within_df > 0
    own = np.where(replicated, inside, across)
    df_own = np.where(replicated, within_df, np.maximum(clusters - 1, 0))
    return own, df_own


def calibrated(
    judgments: Judgments,
    method: str,
    *,
    level: float = DEFAULT_LEVEL,
    tails: bool = True,
    adaptive: bool = False,
    fixed_point: bool = False,
    stretch: bool = False,
) -> tuple[Scores, Intervals]:
    """The scores of ``method`` with their calibrated intervals (the platform's default;
    ``tails``, ``adaptive``, ``fixed_point`` and ``stretch``: see ``model_intervals``)."""
    if method == "counting":
        scores = fit("counting", judgments)
        return scores, counting_intervals(judgments, level=level, scores=scores)
    return model_intervals(
        judgments,
        method,
        level=level,
        tails=tails,
        adaptive=adaptive,
        fixed_point=fixed_point,
        stretch=stretch,
    )


def _check_level(level: float) -> None:
    if not 0 < level < 1:
        raise ValueError("level must lie between 0 and 1")
