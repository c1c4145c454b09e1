"""Scores per group and per source, for the platform's runs and file mode alike: each item's
group (tuple_generation.group_key) and source (tuple_generation.system_key) read from its
data, the sources table of a fit (bws.core.sources) and its lines in the statistics text.

No Django here: ``python -m bws`` and the worker call the same functions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from bws.configuration import BwsDesign
from bws.core.judgments import Judgments
from bws.core.scores import Scores
from bws.core.scoring import DEFAULT_ALPHA, fit, tie_tolerance
from bws.core.sources import SourceTable, encode, group_ranks, source_effects


@dataclass(frozen=True)
class ItemLabels:
    """Each item's group and source value (None: the design has no such key, or the item no
    value), in item index order."""

    groups: list[str | None] | None = None
    sources: list[str | None] | None = None
    group_key: str | None = None
    system_key: str | None = None

    @property
    def grouped(self) -> bool:
        return self.groups is not None


def labels_of(design: BwsDesign | None, values: dict[str, Sequence[object]]) -> ItemLabels:
    """The labels of a design's items from ``values``: data field -> the items' values."""
    if design is None:
        return ItemLabels()
    group_key, system_key = design.group_key, design.system_key
    if design.items_key:  # tuples drawn within each instance's list: no group_key
        group_key = None
    return ItemLabels(
        groups=_strings(values[group_key]) if group_key else None,
        sources=_strings(values[system_key]) if system_key else None,
        group_key=group_key,
        system_key=system_key,
    )


def keys_of(design: BwsDesign | None) -> list[str]:
    """The data fields ``labels_of`` reads for a design."""
    if design is None:
        return []
    keys = [] if design.items_key or not design.group_key else [design.group_key]
    return keys + ([design.system_key] if design.system_key else [])


def _strings(values: Sequence[object]) -> list[str | None]:
    codes, names = encode(values)
    return [names[code] if code >= 0 else None for code in codes]


def ranks_within_groups(scores: Scores, labels: ItemLabels) -> np.ndarray | None:
    """Each item's rank inside its group (1 the group's best, 0 never shown), or None when
    the design has no groups."""
    if not labels.grouped:
        return None
    codes, _ = encode(labels.groups)
    shown = scores.appearances > 0
    return group_ranks(scores.scores, shown, codes, tie_tolerance(scores))


def row_order(scores: Scores, labels: ItemLabels) -> list[int]:
    """Item indices in score table order: highest score first, items never shown last;
    with groups, group by group in order of first appearance."""
    shown, values = scores.appearances > 0, scores.scores
    place: dict[str | None, int] = {}
    for group in labels.groups or []:
        place.setdefault(group, len(place))
    group_of = labels.groups or [None] * len(values)
    return sorted(
        range(len(values)),
        key=lambda i: (
            place[group_of[i]] if place else 0,
            not shown[i],
            -values[i] if shown[i] else 0.0,
            i,
        ),
    )


def groups_line(labels: ItemLabels) -> str:
    """The statistics text's note that items are ranked within their groups."""
    count = len({group for group in labels.groups or [] if group is not None})
    return (
        f"Items are ranked within each of the {count} groups ({labels.group_key}): items of "
        "different groups were never compared."
    )


def sources_table(
    scores: Scores, labels: ItemLabels, judgments: Judgments | None = None
) -> SourceTable | None:
    """The sources ranked with 95% intervals (through the groups when there are groups), or
    None without a system_key or with fewer than two sources scored.

    A model's effects come from its fit with the weak fixed penalty (DEFAULT_ALPHA, refitted
    from ``judgments`` when ``scores`` were shrunk): empirical-Bayes shrinkage pulls every
    item toward zero by its reliability, and would pull the sources' effects in with it
    (to about 0.7 of the true effects, and their intervals off them, in
    benchmarks/source_coverage.py)."""
    if labels.sources is None:
        return None
    shrunk = scores.method != "counting" and scores.options.get("alpha") != DEFAULT_ALPHA
    if shrunk and judgments is not None:
        scores = fit(scores.method, judgments, alpha=DEFAULT_ALPHA)
    sources, names = encode(labels.sources)
    groups = encode(labels.groups)[0] if labels.grouped else None
    return source_effects(scores.scores, scores.appearances > 0, sources, names, groups)


def sources_summary(table: SourceTable | None, labels: ItemLabels) -> dict | None:
    """What a run stores of its sources table (ScoreRun.sources), with the keys it read."""
    if table is None:
        return None
    return {**table.to_dict(), "system_key": labels.system_key, "group_key": labels.group_key}


def sources_lines(summary: dict | None) -> list[str]:
    """The statistics text's block of the sources ranked, from a stored summary."""
    if not summary:
        return []
    rows = summary["rows"]
    by = "groups" if summary["clustered_by"] == "group" else "items"
    width = max(len(row["source"]) for row in rows) + 1
    lines = [
        f"Systems Ranked ({summary['system_key']}; effect relative to the average system, "
        f"95% interval over {summary['n_clusters']} {by}):"
    ]
    for row in rows:
        interval = (
            "no interval"
            if row["ci_low"] is None
            else f"{row['ci_low']:+.2f} to {row['ci_high']:+.2f}"
        )
        ranks = (
            f"rank {row['rank']}"
            if row["rank_low"] == row["rank_high"]
            else f"rank {row['rank']} ({row['rank_low']}-{row['rank_high']})"
        )
        lines.append(
            f"  {row['source'] + ':':<{width}} {row['effect']:+.2f} ({interval}), {ranks}, "
            f"{row['n_items']} items"
        )
    if summary["left_out"]:
        lines.append(f"  {summary['left_out']} scored items have no {summary['system_key']!r}.")
    return lines
