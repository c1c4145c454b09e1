"""Groups of items that tuples must not mix (tuple_generation.group_key): the outputs of
one source sentence, say. A design is then built separately inside each group.

Pure Python and numpy, like the rest of ``bws.core``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .design import DesignError

# How many offending items or groups a refusal names before it counts the rest.
NAMED = 5


def item_groups(
    values: Sequence[object], ids: Sequence[str], tuple_size: int, key: str
) -> list[tuple[str, np.ndarray]]:
    """(group value, int64 indices of its items) for every group of items sharing the value
    of ``key`` (``values[i]`` is item i's), in order of first appearance.

    Raises DesignError naming the items without a usable value, or the groups holding fewer
    than ``tuple_size`` items with their counts.
    """
    members: dict[str, list[int]] = {}
    missing: list[str] = []
    for index, value in enumerate(values):
        if value is None or value == "" or isinstance(value, dict | list | bool):
            missing.append(ids[index])
            continue
        members.setdefault(str(value), []).append(index)
    if missing:
        raise DesignError(
            f"group_key {key!r}: {_count(len(missing), 'item has', 'items have')} no {key!r} "
            f"value to group by ({_named(missing)})"
        )
    small = [
        (value, len(indices)) for value, indices in members.items() if len(indices) < tuple_size
    ]
    if small:
        listed = _named([f"{value!r} has {count}" for value, count in small])
        raise DesignError(
            f"group_key {key!r}: every group needs at least tuple_size {tuple_size} items; "
            f"{_count(len(small), 'group has', 'groups have')} fewer ({listed})"
        )
    return [(value, np.asarray(indices, dtype=np.int64)) for value, indices in members.items()]


def _named(entries: list[str]) -> str:
    shown = ", ".join(entries[:NAMED])
    return shown if len(entries) <= NAMED else f"{shown} and {len(entries) - NAMED:,} more"


def _count(n: int, one: str, many: str) -> str:
    return f"{n:,} {one if n == 1 else many}"
