"""Pairwise questions about a project's items ("is A above B?"), answered from the answers
as they are now, with Holm's correction over the pairs asked (bws.rank_results.compare)."""

from __future__ import annotations

from bws import selectors
from bws.filemode import score_judgments
from bws.rank_results import MAX_COMPARED_ITEMS, compare

LEVEL = 0.95


class CompareRefused(ValueError):
    """Items that cannot be compared, with the reason in plain words."""


def compare_items(project, *, scheme: str, method: str, item_ids: list[str]) -> dict:
    """Every pair of ``item_ids``: which is above at 95% (Holm-adjusted), or neither."""
    asked = list(dict.fromkeys(item_ids))
    if len(asked) < 2:
        raise CompareRefused("give at least two item ids, separated by commas")
    if len(asked) > MAX_COMPARED_ITEMS:
        raise CompareRefused(f"compare at most {MAX_COMPARED_ITEMS} items at once")
    ids, _ = selectors.item_ids_and_texts(project)
    index = {item_id: n for n, item_id in enumerate(ids)}
    unknown = [item_id for item_id in asked if item_id not in index]
    if unknown:
        raise CompareRefused(f"no item {unknown[0]!r} in this project")
    judgments, _ = selectors.judgments_and_annotators(project, scheme)
    if judgments.n_judgments == 0:
        raise CompareRefused("no judgments yet for this scheme")
    report = score_judgments(judgments, method, bootstrap=1)
    unseen = [i for i in asked if report.scores.appearances[index[i]] == 0]
    if unseen:
        raise CompareRefused(f"item {unseen[0]!r} has not been shown in a judged tuple yet")
    found = compare(report, [index[i] for i in asked], level=LEVEL)
    labels = {"first": "first_above", "second": "second_above", "unsure": "not_told_apart"}
    return {
        "scheme": scheme,
        "method": method,
        "level": LEVEL,
        "correction": "holm",
        "pairs": [
            {
                "first": ids[pair.first],
                "second": ids[pair.second],
                "difference": pair.difference,
                "sd": pair.sd,
                "p_value": pair.p_value,
                "p_holm": pair.p_holm,
                "verdict": labels[pair.verdict],
            }
            for pair in found
        ],
    }
