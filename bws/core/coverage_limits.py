"""Where calibrated 95% intervals were measured to miss the 0.93-0.97 band in simulations:
every interval of such a study is marked approximate (bws/core/diagnostics.py), with the
measured range in its message and note: designs chosen from the current fit
(DESIGN_COVERAGE) and studies of few items (SMALL_STUDY_ITEMS)."""

from __future__ import annotations

from bws.core.scoring_options import METHOD_NAMES

# Where the tuples after a balanced start were chosen from the current fit, the 95%
# intervals of some methods missed the 0.93-0.97 band in simulations (1,000 items, normal
# and t3 utilities, starts of 2 and 4 balanced appearances, 6 to 12 appearances, 2 seeds:
# benchmarks/adaptive_coverage.py; ranges over single runs, benchmarks/RESULTS.md,
# "Intervals under iterative rounds"). Under iterative rounds the empirical-Bayes prior is
# estimated far too wide (4.1-4.7 for a true 1: the bucket levels rest on the very
# judgments that formed the buckets), and counting's intervals come out too wide. Every
# interval of these (strategy, method) pairs is marked approximate, with the measured
# range; counting's and Plackett-Luce's under adaptive batches stayed in the band but for
# single runs off it by 0.003 or less (0.938-0.972, 0.929-0.973).
#
# Batches aimed at a narrow target (bws.filemode.design_kind: top_k, threshold, reference,
# comparisons) were measured by `python benchmarks/adaptive_targets.py --items 1000 --seeds
# 10` and, for a threshold, also at `--items 10000` (a balanced start of one appearance;
# normal, t3 and 4 of 20 annotators clicking at random; each method's intervals on the
# judgments spent when the target's answer was as accurate as the balanced design's):
# every method missed the band in some cell. Counting's came out too wide (up to
# 0.99-1.00); the model fits' too narrow where the design stopped soon after its single
# balanced appearance (chosen pairs, a reference item: the prior's variance is still at
# its floor then, 0.14-0.24 in the worst studies) and, for a threshold, Bradley-Terry's
# with clickers (0.85-0.91). A threshold's Plackett-Luce intervals came into the band with
# its prior stretched (0.940-0.970 in every cell, bws.core.intervals.fixed_point_stretch;
# 0.89 before, t3 at 10,000 items) but are still marked, with that range: they were
# measured at the stopping points only, and earlier in a design the prior has been seen at
# its floor (bws.core.targets.placed). The reference's
# ranges are those of its batches with the reference in every tuple, fitted on the fixed
# point (the worst, 0.18, after 1.1-1.2 appearances; 0.88-0.98 where its answer was scored
# by F1 and the design ran to 4-5 appearances). Chosen pairs' ranges are those of their
# linked batches, at 1,000 and 10,000 items (the worst, 0.14-0.16, where the answer was as
# accurate as the balanced design's after 12-14% of its judgments).
DESIGN_COVERAGE = {
    ("iterative", "plackett_luce"): "0.67-0.98",
    ("iterative", "bradley_terry"): "0.66-0.97",
    ("iterative", "counting"): "0.96-0.98",
    ("adaptive", "bradley_terry"): "0.90-0.96",
    ("top_k", "plackett_luce"): "0.92-0.97",
    ("top_k", "bradley_terry"): "0.90-0.97",
    ("top_k", "counting"): "0.95-0.99",
    ("threshold", "plackett_luce"): "0.94-0.97",
    ("threshold", "bradley_terry"): "0.85-0.97",
    ("threshold", "counting"): "0.96-0.99",
    ("reference", "plackett_luce"): "0.18-0.98",
    ("reference", "bradley_terry"): "0.18-0.97",
    ("reference", "counting"): "0.96-1.00",
    ("comparisons", "plackett_luce"): "0.14-0.98",
    ("comparisons", "bradley_terry"): "0.14-0.97",
    ("comparisons", "counting"): "0.96-1.00",
}
DESIGN_WORDS = {
    "iterative": "drawn inside score buckets (iterative rounds)",
    "adaptive": "designed from the current fit (adaptive batches)",
    "top_k": "aimed at the top k (adaptive batches)",
    "threshold": "aimed at the items above a score (adaptive batches)",
    "reference": "aimed at the items above a reference item (adaptive batches)",
    "comparisons": "aimed at chosen comparisons (adaptive batches)",
}

# Studies with few items: a method listed here was measured to miss the band below its
# item count, and every interval of such a study is marked approximate with the measured
# range. Measured by `python benchmarks/coverage.py --small --reps 20` (tuples of 4; 4, 8
# and 16 appearances per item; one or three judgments per tuple; annotators who agree; at
# least 2,500 intervals per cell; the table in benchmarks/RESULTS.md, "Interval
# coverage"). With the prior's variance plugged in, Bradley-Terry covered 0.809-0.945 under
# 40 items and Plackett-Luce 0.833-0.950 under 20, and both were listed (40 and 20). Since
# the prior's variance is integrated out below 40 items (bws/core/hyperprior.py) every cell
# from 6 items up is in the band, 0.943-0.968 (Plackett-Luce at 40 and 100 items 0.954-0.972,
# its two highest cells above 0.97 by 0.001-0.002, one standard error: wider, not shorter),
# and counting's 0.940-0.965 always were. No method is listed; smaller studies were not
# measured.
SMALL_STUDY_ITEMS: dict[str, int] = {}
SMALL_STUDY_COVERAGE: dict[str, str] = {}


def small_study_items(method: str | None) -> int:
    """The fewest shown items from which the method's calibrated intervals were measured
    to hold 95% (0: no limit measured)."""
    return SMALL_STUDY_ITEMS.get(method, 0)


def small_study_message(n_shown: int, method: str) -> str:
    """The warning for a study under the method's limit: every interval is approximate."""
    return (
        f"The study has only {n_shown:,} items: in simulations of studies under "
        f"{SMALL_STUDY_ITEMS[method]} items, {METHOD_NAMES[method]} calibrated intervals "
        f"called 95% covered {SMALL_STUDY_COVERAGE[method]} of the time, so every interval "
        "is approximate (\u2248)."
    )


def small_study_reason(n_shown: int | None, method: str | None) -> str:
    """The part of one item's note on a study under its method's limit."""
    if method not in SMALL_STUDY_ITEMS:
        return "the study has too few items for its intervals to hold 95% of the time"
    study = "" if n_shown is None else f"the study has only {n_shown:,} items, and "
    return (
        f"{study}in simulations of studies under {SMALL_STUDY_ITEMS[method]} items "
        f"{METHOD_NAMES[method]} calibrated 95% intervals covered "
        f"{SMALL_STUDY_COVERAGE[method]} of the time"
    )
