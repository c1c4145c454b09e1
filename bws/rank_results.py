"""Ranks with confidence intervals for a scored study, as the worker stores them, the
dashboard and the API show them and ``python -m bws score --ranks`` prints them: each item's
rank interval (marginal and simultaneous, bws.core.ranks), within its group when the design
has groups (items of different groups were never compared), the items surely among the
top k of an ungrouped study, and pairwise questions with Holm's correction.

No Django: the worker, the web pages and the command line share it.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from bws.core.intervals import Intervals
from bws.core.rank_covariance import score_covariance
from bws.core.ranks import (
    DEFAULT_LEVEL,
    PairComparison,
    pairwise,
    pairwise_sd,
    rank_intervals,
    score_rank_intervals,
    top_k_sets,
)
from bws.source_scores import ItemLabels

# Studies with more items shown than this get no rank intervals (the scores are still
# ranked): the step-down's pairs grow with the square of the items. Grouped studies take
# one dense covariance of every shown item, so they stop earlier.
MAX_RANKED_ITEMS = 20_000
MAX_GROUPED_ITEMS = 2_000
# Pairwise questions: at most this many items at once (their pairs grow quadratically).
MAX_COMPARED_ITEMS = 20


@dataclass
class RankTable:
    """Rank intervals per item index (0: none), the top-k statement and how they were made."""

    low: np.ndarray
    high: np.ndarray
    simultaneous_low: np.ndarray
    simultaneous_high: np.ndarray
    level: float
    procedure: str
    grouped: bool
    k: int | None = None
    confident: list[int] = field(default_factory=list)  # surely in the top k (indices)
    possible: list[int] = field(default_factory=list)  # hold the top k between them
    note: str | None = None  # why the intervals are approximate, if they are

    def to_dict(self, ids: list[str]) -> dict:
        """JSON-ready: item id -> [low, high, simultaneous low, simultaneous high]."""
        items = {
            ids[i]: [
                int(self.low[i]),
                int(self.high[i]),
                int(self.simultaneous_low[i]),
                int(self.simultaneous_high[i]),
            ]
            for i in np.flatnonzero(self.low > 0)
        }
        return {
            "level": self.level,
            "procedure": self.procedure,
            "grouped": self.grouped,
            "note": self.note,
            "items": items,
            "top_k": None
            if self.k is None
            else {
                "k": self.k,
                "confident": [ids[i] for i in self.confident],
                "possible": [ids[i] for i in self.possible],
            },
        }


def ranks_with_k(stored: dict | None, asked: str) -> dict:
    """A run's stored ranks with the top-k statement for another k (from the stored
    simultaneous intervals); ValueError in plain words for a k that cannot be used."""
    if not stored or not stored.get("items"):
        raise ValueError("this run has no rank intervals (they need calibrated intervals)")
    if stored.get("grouped"):
        raise ValueError("ranks are within groups here: no top k runs across them")
    items = stored["items"]
    try:
        k = int(asked)
    except ValueError:
        raise ValueError(f"give a whole number, got {asked!r}") from None
    if not 1 <= k <= len(items):
        raise ValueError(f"give a k from 1 to {len(items)} (the items ranked)")
    ids = list(items)
    low = np.array([items[i][2] for i in ids])
    high = np.array([items[i][3] for i in ids])
    top = top_k_sets(low, high, k, np.ones(len(ids), dtype=bool))
    return {
        **stored,
        "top_k": {
            "k": k,
            "confident": [ids[i] for i in top.confident],
            "possible": [ids[i] for i in top.possible],
        },
    }


def calibrated(intervals) -> bool:
    """Calibrated intervals (bws.core.intervals), the ones rank intervals build on; not the
    bootstrap's percentile intervals."""
    return isinstance(intervals, Intervals)


def default_k(n_items: int) -> int:
    """The k of the top-k statement when none is asked for: the top 10%, 1 to 10 items."""
    return int(min(10, max(1, round(0.1 * n_items))))


def study_ranks(
    report,
    labels: ItemLabels | None = None,
    *,
    k: int | None = None,
    level: float = DEFAULT_LEVEL,
    seed: int = 0,
) -> RankTable | None:
    """The study's rank intervals from a ScoreReport with calibrated intervals, or None
    when there are none to build on (bootstrap or no intervals, too many items)."""
    intervals = report.intervals
    if not calibrated(intervals):
        return None
    judgments, scores = report.judgments, report.scores
    shown = np.flatnonzero((scores.appearances > 0) & np.isfinite(intervals.std))
    if shown.size < 2 or shown.size > MAX_RANKED_ITEMS:
        return None
    n = judgments.n_items
    grouped = labels is not None and labels.grouped
    if not grouped:
        found = score_rank_intervals(judgments, scores, intervals, level=level, seed=seed)
        table = RankTable(
            found.low,
            found.high,
            found.simultaneous_low,
            found.simultaneous_high,
            level,
            found.procedure,
            False,
        )
        table.k = min(k or default_k(shown.size), shown.size)
        top = top_k_sets(found.simultaneous_low, found.simultaneous_high, table.k, found.ranked)
        table.confident, table.possible = top.confident.tolist(), top.possible.tolist()
        return table
    if shown.size > MAX_GROUPED_ITEMS:
        return None
    covariance = score_covariance(judgments, scores, intervals, shown)
    members: dict[str, list[int]] = defaultdict(list)
    for position, item in enumerate(shown):
        members[str(labels.groups[item])].append(position)
    arrays = [np.zeros(n, dtype=np.int64) for _ in range(4)]
    for positions in members.values():
        part = np.asarray(positions)
        items = shown[part]
        if part.size == 1:
            for array in arrays:
                array[items] = 1
            continue
        found = rank_intervals(
            scores.scores[items], covariance[np.ix_(part, part)], level=level, seed=seed
        )
        for array, values in zip(
            arrays,
            (found.low, found.high, found.simultaneous_low, found.simultaneous_high),
            strict=True,
        ):
            array[items] = values
    return RankTable(*arrays, level, "bootstrap", True)


def compare(report, items: list[int], *, level: float = DEFAULT_LEVEL) -> list[PairComparison]:
    """Is A above B? for every pair of ``items`` (indices), Holm-adjusted over the pairs."""
    if len(items) > MAX_COMPARED_ITEMS:
        raise ValueError(f"compare at most {MAX_COMPARED_ITEMS} items at once")
    if not calibrated(report.intervals):
        raise ValueError("pairwise questions need calibrated intervals (--intervals calibrated)")
    sd = pairwise_sd(report.judgments, report.scores, report.intervals, np.asarray(items))
    return pairwise(report.scores.scores, sd, np.asarray(items), level=level)


def rank_lines(table: RankTable, ids: list[str], scores: np.ndarray, limit: int = 20) -> list[str]:
    """What the command line prints: the best items with their rank intervals and the
    top-k statement."""
    level = round(100 * table.level)
    ranked = np.flatnonzero(table.low > 0)
    order = ranked[np.lexsort((-scores[ranked], table.low[ranked]))]
    where = " within its group" if table.grouped else ""
    lines = [f"Ranks with {level}% intervals{where} (marginal; all at once):"]
    if table.note:
        lines.append(f"  ({table.note})")
    for i in order[:limit]:
        lines.append(
            f"  {ids[i]}: {_span(table.low[i], table.high[i])}; "
            f"{_span(table.simultaneous_low[i], table.simultaneous_high[i])}"
        )
    if order.size > limit:
        lines.append(f"  ... {order.size - limit} more in the score table's order")
    if table.k is not None:
        sure = ", ".join(ids[i] for i in table.confident) or "none yet"
        lines.append(f"Among the top {table.k} with {level}% confidence: {sure}")
        lines.append(
            f"The top {table.k} lie among these {len(table.possible)}: "
            + ", ".join(ids[i] for i in table.possible)
        )
    return lines


def comparison_lines(found: list[PairComparison], ids: list[str], level: float) -> list[str]:
    """One line per pair: which is above, with its Holm-adjusted p-value."""
    lines = [f"Pairwise, Holm-adjusted over {len(found)} pairs at {round(100 * level)}%:"]
    for pair in found:
        a, b = ids[pair.first], ids[pair.second]
        if pair.verdict == "first":
            said = f"{a} is above {b}"
        elif pair.verdict == "second":
            said = f"{b} is above {a}"
        else:
            said = f"{a} and {b}: not told apart"
        lines.append(f"  {said} (difference {pair.difference:+.3f}, p = {pair.p_holm:.3g})")
    return lines


def _span(low: int, high: int) -> str:
    return str(low) if low == high else f"{low}-{high}"
