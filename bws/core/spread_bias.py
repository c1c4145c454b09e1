"""The spread of well-measured scores corrected by simulation (a parametric bootstrap of the
calibration slope).

From about 12 judgments per item on, the model fits' scores come out too close together: the
calibration slope of the truth on the estimates was up to 1.03-1.07 with normal utilities
and 1.08-1.12 with heavy-tailed (t3) ones at 16-24 appearances (benchmarks/RESULTS.md,
"Interval coverage"), where a slope of 1 means that an item scored 1 above another is, on
average, 1 above it in truth. Two things shrink them: the empirical-Bayes estimate of the
prior's variance reads low once the data are informative, and the normal prior pulls the
extreme items of a heavy-tailed spread in further than the middle ones (an item best in
every tuple cannot say how far out it lies). Neither is in the scores themselves, but both
can be measured: simulate best-worst judgments on the study's own tuples from utilities
shaped like the study's nearly unpenalised Plackett-Luce fit (which keeps the extreme items
out where their judgments put them) and with the variance of the fitted prior, score them as
the study was scored (the same estimate of the prior, the same fit), and take the slope of
the simulated utilities (for Bradley-Terry: of the values the design has under them) on the
simulated scores. The study's scores are then stretched about their mean by that slope, and
each interval moved with its score (its width kept).

Measured (250 items, T = 4, one judgment per tuple, 20 studies a cell,
benchmarks/coverage.py --deciles): 0.979-1.035 at 16-24 appearances, normal and t3, coverage
0.943-0.959; at 12, 0.956-0.994. Below CORRECT_FROM_JUDGMENTS judgments per item the slope
is in the band already (0.96-1.00 at 4-8, with bws/core/prior_bias.py's correction at 4) and
the simulation would move it out (at 8, normal utilities: 0.94 in a prototype of 10
studies). Not made for adaptive designs or fewer than 40 items, whose priors are found
otherwise, nor for Bradley-Terry's fit of annotators with their own sensitivities (its
values are not the simulated utilities: stretched, it covered 0.931-0.944 with random
clickers); Plackett-Luce's is made with the simulated choices following those
sensitivities. The simulations are seeded from the data: the same judgments give the same
scores.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from bws.core import prior_bias
from bws.core.judgments import Judgments
from bws.core.scoring import fit

# Judgments per shown item from which the spread is corrected (measured at 16 and 24; at 8
# the simulation reads a stretch the truth does not need).
CORRECT_FROM_JUDGMENTS = 12.0
# Simulated items per correction (one simulation from this many items up, at most
# MAX_SIMULATIONS below), as for the prior's correction.
SIMULATED_ITEMS = 1000
MAX_SIMULATIONS = 4
# The stretch is kept within these bounds (it came out 0.97-1.10 in every cell measured).
LIMITS = (0.8, 1.25)


@dataclass(frozen=True)
class Stretch:
    factor: float  # the scores' deviations from their mean are multiplied by it
    simulations: int


def needs_correction(judgments: Judgments) -> bool:
    return prior_bias.judgments_per_item(judgments) >= CORRECT_FROM_JUDGMENTS


def design_values(method: str, utilities: np.ndarray, judgments: Judgments) -> np.ndarray:
    """What ``method``'s fit of these tuples converges to when the judgments follow the
    MaxDiff model with ``utilities``: its fit to every (best, worst) outcome of every
    tuple, weighted by the outcome's probability (centred; Plackett-Luce: the utilities)."""
    u = np.asarray(utilities, dtype=float)
    if method == "plackett_luce":
        return u - u.mean()
    items = judgments.items
    size = items.shape[1]
    utility = u[items]
    p_best = np.exp(utility - utility.max(axis=1, keepdims=True))
    p_best /= p_best.sum(axis=1, keepdims=True)
    best, worst = np.nonzero(~np.eye(size, dtype=bool))
    e = np.exp(-utility)
    # P(best = b, worst = w) = P(best = b) * exp(-u_w) / sum over the others of exp(-u).
    rest = e.sum(axis=1, keepdims=True) - e[:, best]
    weights = p_best[:, best] * e[:, worst] / rest
    rows = items.shape[0]
    expanded = Judgments(
        np.tile(items, (best.size, 1)),
        np.repeat(best, rows),
        np.repeat(worst, rows),
        np.arange(rows * best.size),
        np.zeros(rows * best.size, dtype=np.int64),
        np.arange(rows * best.size),
        judgments.n_items,
    )
    fitted = fit(method, expanded, alpha=1e-6, weights=weights.T.ravel() * 1000.0)
    return fitted.scores - fitted.scores.mean()


def stretch(
    judgments: Judgments,
    method: str,
    prior_variance: float,
    score: Callable[[Judgments], np.ndarray],
    shape: np.ndarray,
    *,
    scale: np.ndarray | None = None,
) -> Stretch:
    """The factor by which the study's scores should be stretched about their mean.

    ``prior_variance``: the fitted prior's variance of the utilities (MaxDiff scale);
    ``score``: the study's scoring (its prior estimated and its fit), run on simulated
    studies; ``shape``: its nearly unpenalised Plackett-Luce fit (penalty 0.01, the
    intervals' weak fit, which keeps the extreme items out where their judgments put
    them); ``scale``: per judgment, its annotator's sensitivity (the simulated choices
    follow it)."""
    counts = np.bincount(judgments.items.ravel(), minlength=judgments.n_items)
    shown = counts > 0
    shape = np.where(shown, shape - shape[shown].mean(), 0.0)
    spread = float(shape[shown].var())
    if spread <= 0 or prior_variance <= 0:
        return Stretch(1.0, 0)
    utilities = shape * np.sqrt(prior_variance / spread)
    goal = design_values(method, utilities, judgments)
    runs = int(np.clip(np.ceil(SIMULATED_ITEMS / max(int(shown.sum()), 1)), 1, MAX_SIMULATIONS))
    rng = np.random.default_rng(prior_bias.data_seed(judgments))
    slopes = []
    for _ in range(runs):
        simulated = prior_bias.simulated_judgments(rng, utilities, judgments, scale)
        found = score(simulated)
        slopes.append(np.polyfit(found[shown], goal[shown], 1)[0])
    return Stretch(float(np.clip(np.mean(slopes), *LIMITS)), runs)
