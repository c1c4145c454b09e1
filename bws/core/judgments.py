"""Best-worst judgments as integer arrays: the one input of scoring, bootstrap and reliability.

Item ids become indices once; a judgment is then a row of an (m, T) index array (the
tuple's items in stored order) with the column positions of its best and worst item, the
tuple it answered (the cluster for resampling), its annotator and its place in time.
No Django here: the command line, the workers and notebooks build the same arrays.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np

MAX_PROBLEMS = 20


@dataclass(frozen=True)
class JudgmentProblem:
    """Why one answer record cannot be scored, and where it is (file and line)."""

    file: str
    line: int | None
    reason: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        return f"{where}: {self.reason}"


class JudgmentError(ValueError):
    """Judgments that cannot be scored. ``problems`` lists each one as file:line: reason."""

    def __init__(self, problems: Iterable[JudgmentProblem]):
        self.problems = list(problems)
        super().__init__("\n".join(str(problem) for problem in self.problems))


@dataclass(frozen=True, eq=False)
class Judgments:
    """m best-worst judgments over n_items items, as arrays.

    items: (m, T) int64 item indices of each judged tuple, in stored order.
    best, worst: (m,) int64 column positions (0..T-1) of the chosen items.
    tuple_ids: (m,) int64 tuple (cluster) index; judgments of one tuple share it.
    annotators: (m,) int64 annotator index.
    order: (m,) int64 time rank, 0 for the earliest judgment (a permutation of 0..m-1).
    """

    items: np.ndarray
    best: np.ndarray
    worst: np.ndarray
    tuple_ids: np.ndarray
    annotators: np.ndarray
    order: np.ndarray
    n_items: int

    def __post_init__(self) -> None:
        items = np.asarray(self.items, dtype=np.int64)
        if items.ndim != 2 or items.shape[1] < 2:
            raise ValueError(f"items must be an (m, T) array with T >= 2, got {items.shape}")
        m, size = items.shape
        fields = {}
        for name in ("best", "worst", "tuple_ids", "annotators", "order"):
            value = np.asarray(getattr(self, name), dtype=np.int64).reshape(-1)
            if value.shape != (m,):
                raise ValueError(f"{name} must have {m} entries, got {value.shape[0]}")
            fields[name] = value
        if m and (items.min() < 0 or items.max() >= self.n_items):
            raise ValueError(f"item indices must lie in 0..{self.n_items - 1}")
        for name in ("best", "worst"):
            column = fields[name]
            if m and (column.min() < 0 or column.max() >= size):
                raise ValueError(f"{name} must be column positions 0..{size - 1}")
        if np.any(fields["best"] == fields["worst"]):
            raise ValueError("best and worst must differ in every judgment")
        object.__setattr__(self, "items", items)
        for name, value in fields.items():
            object.__setattr__(self, name, value)

    @classmethod
    def from_indices(
        cls,
        items: Any,
        best_items: Any,
        worst_items: Any,
        n_items: int | None = None,
        *,
        tuple_ids: Any = None,
        annotators: Any = None,
        order: Any = None,
    ) -> Judgments:
        """Judgments from item indices of best and worst (rather than column positions).

        Defaults: each judgment its own tuple, one annotator, time order = row order.
        """
        items = np.asarray(items, dtype=np.int64)
        if items.ndim != 2:
            raise ValueError(f"items must be an (m, T) array, got shape {items.shape}")
        m = items.shape[0]
        best = _columns(items, np.asarray(best_items, dtype=np.int64), "best")
        worst = _columns(items, np.asarray(worst_items, dtype=np.int64), "worst")
        return cls(
            items=items,
            best=best,
            worst=worst,
            tuple_ids=np.arange(m) if tuple_ids is None else tuple_ids,
            annotators=np.zeros(m, dtype=np.int64) if annotators is None else annotators,
            order=np.arange(m) if order is None else order,
            n_items=int(items.max()) + 1 if n_items is None else n_items,
        )

    @property
    def n_judgments(self) -> int:
        return self.items.shape[0]

    @property
    def tuple_size(self) -> int:
        return self.items.shape[1]

    @property
    def best_items(self) -> np.ndarray:
        return self.items[np.arange(self.n_judgments), self.best]

    @property
    def worst_items(self) -> np.ndarray:
        return self.items[np.arange(self.n_judgments), self.worst]

    @property
    def n_tuples(self) -> int:
        return int(np.unique(self.tuple_ids).size)

    @property
    def n_annotators(self) -> int:
        return int(np.unique(self.annotators).size)

    def subset(self, rows: Any) -> Judgments:
        """The judgments selected by ``rows`` (indices or a boolean mask), time ranks renumbered."""
        rows = np.asarray(rows)
        if rows.dtype == bool:
            rows = np.flatnonzero(rows)
        order = np.argsort(np.argsort(self.order[rows], kind="stable"), kind="stable")
        return Judgments(
            items=self.items[rows],
            best=self.best[rows],
            worst=self.worst[rows],
            tuple_ids=self.tuple_ids[rows],
            annotators=self.annotators[rows],
            order=order,
            n_items=self.n_items,
        )

    def permute_items(self, permutation: Any) -> Judgments:
        """The same judgments with item i renamed permutation[i]."""
        permutation = np.asarray(permutation, dtype=np.int64)
        return Judgments(
            items=permutation[self.items],
            best=self.best,
            worst=self.worst,
            tuple_ids=self.tuple_ids,
            annotators=self.annotators,
            order=self.order,
            n_items=self.n_items,
        )


def _columns(items: np.ndarray, chosen: np.ndarray, name: str) -> np.ndarray:
    hits = items == chosen.reshape(-1, 1)
    found = hits.any(axis=1)
    if not found.all():
        row = int(np.flatnonzero(~found)[0])
        raise ValueError(f"judgment {row}: {name} item {chosen[row]} is not in its tuple")
    return hits.argmax(axis=1)


def build_judgments(
    records: Iterable[Any],
    item_index: Mapping[str, int],
    scheme: str,
    *,
    n_items: int | None = None,
    tuples: Mapping[str, Sequence[str]] | None = None,
) -> Judgments:
    """Judgments of one BWS scheme from interchange records (projects.interchange.UnitRecord).

    ``records`` need attributes id, items, annotations, annotator, timestamp, file and line;
    records without an answer for ``scheme`` are skipped. A record without ``items`` (the
    guides' answer record) takes the items of its tuple id from ``tuples`` (the project's
    stored tuples). Item ids map through ``item_index`` (an id repeated across instances
    maps to one index, so scores aggregate by id). Time order is by timestamp, then by
    reading order. Raise JudgmentError naming file and line for every unusable record (up
    to 20).
    """
    rows = _JudgmentRows(item_index, scheme, tuples or {})
    for record in records:
        rows.add(record)
    if rows.problems:
        raise JudgmentError(rows.problems)
    if n_items is None:
        n_items = max(item_index.values(), default=-1) + 1
    return rows.judgments(n_items)


class _JudgmentRows:
    """Judgments read so far as Python lists, and the problems found on the way."""

    def __init__(
        self, item_index: Mapping[str, int], scheme: str, tuples: Mapping[str, Sequence[str]]
    ):
        self.item_index, self.scheme, self.tuples = item_index, scheme, tuples
        self.problems: list[JudgmentProblem] = []
        self.rows: list[list[int]] = []
        self.best: list[int] = []
        self.worst: list[int] = []
        self.tuple_names: list[str] = []
        self.annotators: list[str] = []
        self.stamps: list[float] = []
        self.size: int | None = None
        self.size_from = ""

    def problem(self, record: Any, reason: str) -> None:
        self.problems.append(JudgmentProblem(record.file, record.line, reason))
        if len(self.problems) >= MAX_PROBLEMS:
            raise JudgmentError(self.problems)

    def add(self, record: Any) -> None:
        """Keep the record's judgment of the scheme, or note why it cannot be scored."""
        answer = (record.annotations or {}).get(self.scheme)
        if answer is None:
            return
        ids = self._items(record)
        reason = _tuple_problem(record, ids, answer, self.item_index, self.scheme)
        if reason is None and self.size is not None and len(ids) != self.size:
            reason = f"tuple of {len(ids)} items; {self.size_from} has {self.size}"
        reasons = [reason] if reason is not None else _choice_problems(ids, answer, self.scheme)
        for reason in reasons:
            self.problem(record, reason)
        if reasons:
            return
        if self.size is None:
            self.size, self.size_from = len(ids), f"{record.file}:{record.line}"
        self.rows.append([self.item_index[item] for item in ids])
        self.best.append(ids.index(answer["best"]))
        self.worst.append(ids.index(answer["worst"]))
        self.tuple_names.append(str(record.id))
        self.annotators.append(str(record.annotator or ""))
        self.stamps.append(_timestamp(record.timestamp))

    def _items(self, record: Any) -> list:
        if record.items:
            return list(record.items)
        return list(self.tuples.get(str(record.id)) or [])

    def judgments(self, n_items: int) -> Judgments:
        m = len(self.rows)
        items = np.asarray(self.rows, dtype=np.int64).reshape(m, self.size or 2)
        stamp_array = np.asarray(self.stamps, dtype=float)
        # Undated judgments keep their reading order, after the dated ones.
        time_order = np.lexsort((np.arange(m), np.nan_to_num(stamp_array, nan=np.inf)))
        order = np.empty(m, dtype=np.int64)
        order[time_order] = np.arange(m)
        return Judgments(
            items=items,
            best=np.asarray(self.best, dtype=np.int64),
            worst=np.asarray(self.worst, dtype=np.int64),
            tuple_ids=_codes(self.tuple_names),
            annotators=_codes(self.annotators),
            order=order,
            n_items=n_items,
        )


def _tuple_problem(
    record: Any, ids: list, answer: Any, item_index: Mapping[str, int], scheme: str
) -> str | None:
    """Why the record's tuple cannot be scored (no items, unknown or repeated ids), or None."""
    if not ids:
        return (
            f"{scheme}: a best-worst answer needs the tuple's 'items', or a tuple id "
            f"({record.id!r}) listed in the project's tuples.jsonl"
        )
    if not isinstance(answer, Mapping):
        return f"{scheme}: expected {{'best': ..., 'worst': ...}}, got {answer!r}"
    unknown = [item for item in ids if item not in item_index]
    if unknown:
        names = ", ".join(repr(item) for item in unknown)
        return f"unknown item id{'s' if len(unknown) > 1 else ''} {names}"
    if len(set(ids)) != len(ids):
        return f"an item appears twice in tuple {record.id!r}: {ids}"
    return None


def _choice_problems(ids: list, answer: Mapping, scheme: str) -> list[str]:
    """Why the best and worst choices cannot be scored (missing, not in the tuple, equal)."""
    reasons = []
    for key in ("best", "worst"):
        value = answer.get(key)
        if value is None:
            reasons.append(f"{scheme}: missing {key!r}")
        elif value not in ids:
            reasons.append(f"{scheme}: {key} {value!r} is not in the tuple {ids}")
    if not reasons and answer["best"] == answer["worst"]:
        reasons.append(f"{scheme}: best and worst are the same item {answer['best']!r}")
    return reasons


def _codes(labels: list[str]) -> np.ndarray:
    codes: dict[str, int] = {}
    return np.asarray([codes.setdefault(label, len(codes)) for label in labels], dtype=np.int64)


def _timestamp(value: Any) -> float:
    if not isinstance(value, str) or not value:
        return float("nan")
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return float("nan")
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()
