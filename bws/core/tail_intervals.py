"""The outer ends of the model fits' posterior intervals, moved out by the prior's pull.

A normal prior shrinks every estimate toward the middle by k_i = 1 - v_i / tau^2 (v_i the
posterior variance, tau^2 the prior's). An item whose true utility is far out is then
estimated short of it by about (1 - k_i) times that utility, and its interval, centred on
the shrunk estimate, misses outward more often than 1 in 40: the tenth of the items with
the most extreme true utilities was covered 0.85-0.90 at 8-24 appearances (0.80-0.86
with heavy-tailed t3 utilities) where all items were covered 0.93-0.95
(benchmarks/coverage.py --deciles --no-tails; benchmarks/RESULTS.md). Moved out as below they
cover 0.91-0.97 (t3: 0.88-0.94) and all items still 0.95-0.97. Each item's outer end
(the one away from the middle) is moved out by its shrinkage, (1 - k_i) / k_i |u_i|: the
unshrunk estimate less the shrunk one. The inner end and the estimate stay, so the
intervals are no longer symmetric about the estimate (their ``std`` is the posterior's).

Where the prior dominates (the study's median k below MIN_KEEP: about 4 appearances per
item and one judgment per tuple) nothing is moved unless the prior's variance was
corrected for its bias: uncorrected it is too large there (calibration slope 0.76-0.80),
the extreme tenths already covered 0.90-0.94 with normal utilities and moving the ends took
the coverage of all items above 0.97. Corrected (bws/core/prior_bias.py; not for adaptive
designs) the estimates shrink as much as the truth asks, the extreme tenths fell to
0.77-0.86 with the ends left, and with them moved they cover 0.91-0.96 (t3: 0.86-0.90).
Corrected, Plackett-Luce's intervals covered 0.969-0.973 of all items (the middle eight
tenths 0.982-0.988: its intervals of items near the middle are wide), so its inner ends
are brought in by INNER_SHARE of the same shift (never past the estimate): the truth of a
shrunk item lies outward of its estimate more often than inward. That took the whole to
0.962-0.964 and left the tenths most extreme in truth as they were (0.912 / 0.952, t3 0.901
/ 0.884); the tenths most extreme in estimate came from 0.971-0.973 (t3 0.927-0.940) to
0.952-0.956 (t3 0.896-0.921) (30 studies of 250 items at 4 appearances a cell).

From INFORMED_JUDGMENTS judgments per item the gate is not consulted for balanced designs of
40 items or more: the prior is no longer too large there, and with heavy-tailed utilities at
8 appearances it shut in 2 of 5 studies, leaving the extreme tenths at 0.894-0.916 (moved
in every study: 0.908-0.930, all items 0.958-0.966).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from bws.core.scores import Scores

# The study's median shrinkage factor k below which nothing is moved, and above which
# everything is (linearly between).
MIN_KEEP = 0.65
FULL_KEEP = 0.70
# No estimate counts as shrunk by more than this factor's inverse (k_i at least this).
KEEP_FLOOR = 0.05
# Judgments per item from which every end is moved whatever the shrinkage: the gate is for
# the uncorrected prior of about 4 judgments per item, which reads too large; with
# heavy-tailed utilities at 8 it read small instead, closed the gate in 2 of 5 studies and
# left the extreme tenths at 0.894-0.916 (moved in every study: 0.908-0.930).
INFORMED_JUDGMENTS = 6.0
# Plackett-Luce's inner ends, where its prior was corrected: brought in by this share of
# the outer ends' shift (0.3 took the whole to 0.950-0.954, but the tenths most extreme in
# estimate to 0.855-0.929).
INNER_SHARE = {"plackett_luce": 0.15}


def tail_weight(keep: np.ndarray) -> float:
    """How much of the shift a study gets, from its items' shrinkage factors."""
    if keep.size == 0:
        return 0.0
    typical = float(np.median(keep))
    return float(np.clip((typical - MIN_KEEP) / (FULL_KEEP - MIN_KEEP), 0.0, 1.0))


def widen_tails(scores: Scores, intervals, *, corrected: bool = False, informed: bool = False):
    """``intervals`` (bws.core.intervals.Intervals, posterior) with each item's outer end
    moved out by its estimated shrinkage; counting's, and intervals without a prior, are
    returned as they are. ``corrected``: the prior's variance was corrected for its bias
    (bws/core/prior_bias.py), so the gate below does not apply: every end is moved.
    ``informed``: the items have enough judgments (INFORMED_JUDGMENTS) for the prior's
    estimate not to be too large, so the gate does not apply either."""
    if intervals.kind != "posterior" or not intervals.prior_variance:
        return intervals
    u = scores.scores
    shown = np.isfinite(intervals.low) & np.isfinite(intervals.std)
    prior = intervals.prior_variance * intervals.scale**2
    keep = np.clip(1.0 - np.nan_to_num(intervals.std) ** 2 / prior, KEEP_FLOOR, 1.0)
    weight = 1.0 if corrected or informed else tail_weight(keep[shown])
    if weight == 0.0:
        return intervals
    shift = weight * (1.0 - keep) / keep * np.abs(u)
    low = np.where(shown & (u < 0), intervals.low - shift, intervals.low)
    high = np.where(shown & (u > 0), intervals.high + shift, intervals.high)
    share = INNER_SHARE.get(intervals.method, 0.0)
    if corrected and share:
        inner = share * shift
        low = np.where(shown & (u > 0), np.minimum(low + inner, u), low)
        high = np.where(shown & (u < 0), np.maximum(high - inner, u), high)
    return replace(intervals, low=low, high=high)
