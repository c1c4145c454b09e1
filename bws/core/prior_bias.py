"""The prior variance of studies with few judgments per item, corrected for its bias by
simulation (a parametric bootstrap).

With about 4 judgments per item the empirical-Bayes estimate of the utilities' variance
(``intervals.estimate_shrinkage``: the mean of the Laplace fixed point and the method of
moments) comes out 1.5 to 2 times the truth's: too little shrinkage, and scores more spread
than the truth, so that the calibration slope of the truth on the estimates is 0.75 to 0.80
where it should be 1 (benchmarks/RESULTS.md, "Interval coverage"). The bias depends on the
design and on the variance itself, not on the data's particulars, so it can be measured:
simulate best-worst judgments on the study's own tuples from utilities drawn with the
estimated variance, estimate again, and scale the estimate by how far the simulations' came
out from the variance they were drawn with (one multiplicative step):

    corrected = estimate * estimate / mean(estimate on the simulated studies)

This brings the calibration slope at 4 appearances to 0.96-0.99 with normal and with heavy-
tailed (t3) utilities and keeps coverage in 0.93-0.97 (Bradley-Terry after two such steps,
STEPS). From 6 judgments per item on, the
estimate's bias is small and the correction overshoots (slopes 1.07-1.12 at 6-7), so it is
made only below CORRECT_BELOW_JUDGMENTS per item. The simulations are seeded from the data:
the same judgments give the same scores.

Not for adaptive designs: their batches are chosen from the fit, and chosen from the
corrected one they ranked worse (squared Spearman with the truth 0.57-0.64 against
0.67-0.68 after 8 appearances, bws/tests/test_model_reliability.py's studies), so the
platform scores adaptive projects without it (``adaptive=True``). The exception is a design
aimed at a threshold given as a score, whose answer is read on the fit's scale: its prior is
the Laplace fixed point alone, which reads about half the truth's variance after such
batches, and that bias is measured on simulated utilities in the order of a posterior draw
of the fit (``order`` and ``spread`` of ``corrected_prior``), because the design met the
real utilities in that order: the items seen once are the extreme ones. Drawn at random
instead, the simulated utilities meet the design as the real ones did not, and the
correction comes out too small (benchmarks/RESULTS.md, "Adaptive designs").
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtri

from bws.core.choice_models import sample_maxdiff
from bws.core.judgments import Judgments

# Judgments per shown item from which and below which the estimate is corrected (measured
# at 4 and 5; at 2 the scores carry too little to say what the bias is).
CORRECT_FROM_JUDGMENTS = 3.0
CORRECT_BELOW_JUDGMENTS = 6.0
# Simulated studies: enough that their mean estimate is steady (the estimate of a study of
# n items varies as 1 / sqrt(n)); one from 1,000 items on.
SIMULATED_ITEMS = 1000
MAX_SIMULATIONS = 4
# Steps of the correction per method. Bradley-Terry's values are not the MaxDiff utilities the
# simulations draw (its pairs are read off the best and worst choices), so one step leaves
# its slope at 0.90-0.92; two bring it to 0.96-0.99 (Plackett-Luce: 0.96-0.97 after one,
# 1.03-1.04 after two, with fewer extreme items covered).
STEPS = {"bradley_terry": 2, "plackett_luce": 1}


@dataclass(frozen=True)
class Correction:
    prior_variance: float  # the corrected estimate
    estimated: float  # the estimate before the correction
    simulated: float  # the mean estimate on the simulated studies (drawn with ``estimated``)
    simulations: int


def judgments_per_item(judgments: Judgments) -> float:
    """The mean number of judgments an item was shown in, over the items shown."""
    counts = np.bincount(judgments.items.ravel(), minlength=judgments.n_items)
    shown = counts > 0
    return float(counts[shown].mean()) if shown.any() else 0.0


def needs_correction(judgments: Judgments) -> bool:
    return CORRECT_FROM_JUDGMENTS <= judgments_per_item(judgments) < CORRECT_BELOW_JUDGMENTS


def simulated_judgments(
    rng: np.random.Generator,
    utilities: np.ndarray,
    judgments: Judgments,
    scale: np.ndarray | None = None,
):
    """Best-worst choices on the same tuples under the MaxDiff model (``scale``: each
    judgment's utilities times it)."""
    best, worst = sample_maxdiff(judgments.items, utilities, rng, scale=scale)
    return Judgments(
        judgments.items,
        best,
        worst,
        judgments.tuple_ids,
        judgments.annotators,
        judgments.order,
        judgments.n_items,
    )


def data_seed(judgments: Judgments) -> int:
    digest = zlib.crc32(np.ascontiguousarray(judgments.items).tobytes())
    digest = zlib.crc32(np.ascontiguousarray(judgments.best).tobytes(), digest)
    return zlib.crc32(np.ascontiguousarray(judgments.worst).tobytes(), digest)


def corrected_prior(
    judgments: Judgments,
    estimated: float,
    estimate: Callable[[Judgments], float],
    *,
    steps: int = 1,
    order: np.ndarray | None = None,
    spread: np.ndarray | None = None,
    scale: np.ndarray | None = None,
    floor: float = 0.0,
) -> Correction:
    """``estimated``: the study's estimate of the prior variance; ``estimate``: the same
    estimator, to run on simulated studies of the same design. Each of ``steps`` scales the
    variance the simulations are drawn with by estimated / (their mean estimate); the same
    random numbers serve every step.

    ``order``: the fit's scores, for a design chosen from the fit. Its tuples are not
    independent of the utilities (a design aimed at a threshold leaves the items far from
    it with one appearance), so utilities drawn at random would not meet the design as the
    real ones did; the simulated utilities are then the normal quantiles in the order of
    these scores, so that the items seen least are again the extreme ones. ``spread``: the
    scores' posterior sd, by which each simulation perturbs that order (the fit's order is
    not the truth's: kept exactly, the correction overshot, 1.4-2.0 times the truth's
    variance against 0.8-1.3). ``scale``: per judgment, how sensitive its annotator was
    found to be (the joint fit's sensitivities); the simulated choices follow it, so that
    random clickers click at random again. ``floor``: the estimator's least value; a mean
    estimate at it says only that the simulated studies were too thin to estimate anything,
    not by how much the study's own reads low, so the variance is left as it was drawn (a
    threshold design's early fit once read 0.44 and its simulations the floor 0.01: a
    prior 44 times the estimate, 20 times the truth's, followed)."""
    shown = np.bincount(judgments.items.ravel(), minlength=judgments.n_items) > 0
    runs = int(np.clip(np.ceil(SIMULATED_ITEMS / max(int(shown.sum()), 1)), 1, MAX_SIMULATIONS))
    quantiles = ndtri((np.arange(judgments.n_items) + 0.5) / judgments.n_items)
    order = None if order is None else np.asarray(order, dtype=float)
    drawn, simulated = estimated, estimated
    for _ in range(steps):
        rng = np.random.default_rng(data_seed(judgments))
        found = []
        for _ in range(runs):
            if order is None:
                utilities = rng.normal(scale=np.sqrt(drawn), size=judgments.n_items)
            else:
                key = order if spread is None else order + spread * rng.normal(size=order.size)
                utilities = np.empty(key.size)
                utilities[np.argsort(key, kind="stable")] = np.sqrt(drawn) * quantiles
            found.append(estimate(simulated_judgments(rng, utilities, judgments, scale)))
        simulated = float(np.mean(found))
        if simulated <= floor * (1.0 + 1e-9):
            break
        drawn = drawn * estimated / simulated
    return Correction(float(drawn), float(estimated), simulated, runs)
