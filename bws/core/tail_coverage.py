"""What the 95% intervals of the most extreme items covered in simulations, for the mark
the dashboard and the API put next to them.

The calibrated intervals cover 0.93-0.97 of all items, but not evenly: the items whose
true utility is among the most extreme tenth are shrunk toward the middle by the model
fits' normal prior, and their intervals miss outward more often, even with the outer ends
moved out (bws/core/tail_intervals.py; at about 4 appearances only with the prior's
variance corrected, bws/core/prior_bias.py, which the r = 4 figures have), and
heavy-tailed utilities are missed more). An item estimated in the lowest or the highest
tenth of its run (OUTER_SHARE) is marked, with the figures measured for its method at the
simulated appearances nearest its own: the coverage of the items estimated in that tenth
(what a marked item's interval holds on average) and that of the tenth most extreme in
truth, with normal and with heavy-tailed (t3, scaled to sd 1) utilities.

The figures (MEASURED), one process per method, with the intervals as the platform makes
them (benchmarks/RESULTS.md, "Interval coverage", keeps the summary):
    OPENBLAS_NUM_THREADS=1 python benchmarks/coverage.py --deciles --reps 20 \\
        --methods <method> --utilities normal t3
(250 items, T = 4, one judgment per tuple, annotators who agree; 20 studies per cell, 500
items per tenth; counting's from the same command with --reps 30).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

OUTER_SHARE = 0.1
SIMULATED_ITEMS = 250
# The appearances per item the figures were measured at.
APPEARANCES = (4, 8, 16, 24)


@dataclass(frozen=True)
class Measured:
    """Coverage in one simulated cell, lowest and highest tenth: by estimate (normal
    utilities), by true utility (normal) and by true utility (t3)."""

    estimate: tuple[float, float]
    truth: tuple[float, float]
    heavy: tuple[float, float]


# method -> appearances -> figures: lowest and highest tenth by estimate (normal utilities),
# by true utility (normal) and by true utility (t3).
MEASURED: dict[str, dict[int, Measured]] = {
    "counting": {
        4: Measured((0.829, 0.837), (0.965, 0.971), (0.973, 0.975)),
        8: Measured((0.88, 0.879), (0.957, 0.96), (0.965, 0.977)),
        16: Measured((0.889, 0.897), (0.964, 0.963), (0.971, 0.965)),
        24: Measured((0.912, 0.944), (0.955, 0.964), (0.952, 0.965)),
    },
    "bradley_terry": {
        4: Measured((0.966, 0.954), (0.888, 0.926), (0.858, 0.852)),
        8: Measured((0.97, 0.952), (0.926, 0.948), (0.91, 0.908)),
        16: Measured((0.98, 0.976), (0.942, 0.954), (0.918, 0.92)),
        24: Measured((0.97, 0.976), (0.92, 0.966), (0.932, 0.942)),
    },
    "plackett_luce": {
        # 30 studies, with the inner ends brought in (bws/core/tail_intervals.py)
        4: Measured((0.952, 0.956), (0.912, 0.952), (0.901, 0.884)),
        8: Measured((0.972, 0.956), (0.948, 0.95), (0.93, 0.924)),
        16: Measured((0.978, 0.97), (0.958, 0.956), (0.942, 0.936)),
        24: Measured((0.968, 0.972), (0.94, 0.966), (0.946, 0.948)),
    },
}


@dataclass(frozen=True)
class TailMark:
    """An outer item's mark: its side and the figures measured for such items."""

    side: str  # "lowest" or "highest"
    appearances: int  # the simulated appearances the figures are for
    estimate: float
    truth: float
    heavy: float

    @property
    def note(self) -> str:
        share = f"{OUTER_SHARE:.0%}"
        return (
            f"Among the {share} of items with the {self.side} estimates. In simulations "
            f"({SIMULATED_ITEMS} items, {self.appearances} appearances each) the 95% "
            f"intervals of such items covered {self.estimate:.2f}; those of the {share} "
            f"most extreme in truth covered {self.truth:.2f} ({self.heavy:.2f} with "
            "heavy-tailed utilities); all items' intervals covered 0.93-0.97."
        )

    def as_dict(self) -> dict:
        return {
            "side": self.side,
            "share": OUTER_SHARE,
            "simulated_appearances": self.appearances,
            "coverage_by_estimate": self.estimate,
            "coverage_by_truth": self.truth,
            "coverage_by_truth_heavy_tailed": self.heavy,
            "note": self.note,
        }


@dataclass(frozen=True)
class OuterCuts:
    """The run's cuts: a score at or below ``low`` is in the lowest OUTER_SHARE, at or
    above ``high`` in the highest (None: too few scores for a tenth)."""

    method: str
    low: float | None
    high: float | None

    @classmethod
    def of(cls, method: str, scores: Iterable[float | None]) -> OuterCuts:
        values = np.sort([s for s in scores if s is not None and np.isfinite(s)])
        tail = int(np.floor(OUTER_SHARE * values.size))
        if tail == 0:
            return cls(method, None, None)
        return cls(method, float(values[tail - 1]), float(values[values.size - tail]))

    def figures(self, appearances: float) -> tuple[int, Measured] | None:
        """The figures measured for this method at the simulated appearances nearest
        ``appearances`` (None: a method without figures)."""
        figures = MEASURED.get(self.method)
        if not figures:
            return None
        nearest = min(figures, key=lambda r: abs(np.log(r) - np.log(max(appearances, 1))))
        return nearest, figures[nearest]

    def footnote(self, appearances: float) -> str | None:
        """The note under a table of the run's items (None: nothing is marked)."""
        found = self.figures(appearances)
        if found is None or self.low is None:
            return None
        r, m = found
        share = f"{OUTER_SHARE:.0%}"
        return (
            f"† The {share} of items with the lowest and the {share} with the highest "
            f"estimates. In simulations ({SIMULATED_ITEMS} items, {r} appearances each) the "
            f"95% intervals of such items covered {m.estimate[0]:.2f} and "
            f"{m.estimate[1]:.2f}; those of the {share} lowest and highest in truth "
            f"{m.truth[0]:.2f} and {m.truth[1]:.2f} ({m.heavy[0]:.2f} and {m.heavy[1]:.2f} "
            "with heavy-tailed utilities); all items' intervals covered 0.93-0.97."
        )

    def mark(self, score: float | None, appearances: int) -> TailMark | None:
        """The mark of an item of this score and appearances (None: a middle item, an
        unscored one, or a method without figures)."""
        found = self.figures(appearances)
        if score is None or self.low is None or found is None:
            return None
        side = 0 if score <= self.low else 1 if score >= self.high else None
        if side is None:
            return None
        nearest, found = found
        return TailMark(
            ("lowest", "highest")[side],
            nearest,
            found.estimate[side],
            found.truth[side],
            found.heavy[side],
        )
