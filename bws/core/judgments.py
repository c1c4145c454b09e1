"""Best-worst judgments as integer arrays: the one input of scoring, bootstrap and reliability.

Item ids become indices once; a judgment is then a row of an (m, T) index array (the
tuple's items in stored order) with the column positions of its best and worst item, the
tuple it answered (the cluster for resampling), its annotator and its place in time.
No Django here: the command line, the workers and notebooks build the same arrays.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np

from projects.problems import FileProblem, FileProblemsError

MAX_PROBLEMS = 20


JudgmentProblem = FileProblem


class JudgmentError(FileProblemsError):
    """Judgments that cannot be scored. ``problems`` lists each one as file:line: reason."""


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
) -> Judgments:
    """Judgments of one BWS scheme from interchange records (projects.interchange.UnitRecord).

    ``records`` need attributes id, items, annotations, annotator, timestamp, file and line;
    records without an answer for ``scheme`` are skipped. Item ids map through
    ``item_index`` (an id repeated across instances maps to one index, so scores
    aggregate by id). Time order is by timestamp, then by reading order. Raise
    JudgmentError naming file and line for every unusable record (up to 20).
    """
    problems: list[JudgmentProblem] = []
    rows: list[list[int]] = []
    best: list[int] = []
    worst: list[int] = []
    tuples: list[str] = []
    annotators: list[str] = []
    stamps: list[float] = []
    size: int | None = None
    size_from = ""

    def problem(record: Any, reason: str) -> None:
        problems.append(JudgmentProblem(record.file, record.line, reason))
        if len(problems) >= MAX_PROBLEMS:
            raise JudgmentError(problems)

    for record in records:
        answer = (record.annotations or {}).get(scheme)
        if answer is None:
            continue
        ids = record.items
        if not ids:
            problem(record, f"{scheme}: a best-worst answer needs the tuple's 'items'")
            continue
        if not isinstance(answer, Mapping):
            problem(record, f"{scheme}: expected {{'best': ..., 'worst': ...}}, got {answer!r}")
            continue
        unknown = [item for item in ids if item not in item_index]
        if unknown:
            names = ", ".join(repr(item) for item in unknown)
            problem(record, f"unknown item id{'s' if len(unknown) > 1 else ''} {names}")
            continue
        if len(set(ids)) != len(ids):
            problem(record, f"an item appears twice in tuple {record.id!r}: {list(ids)}")
            continue
        if size is None:
            size, size_from = len(ids), f"{record.file}:{record.line}"
        elif len(ids) != size:
            problem(record, f"tuple of {len(ids)} items; {size_from} has {size}")
            continue
        chosen = {}
        for key in ("best", "worst"):
            value = answer.get(key)
            if value is None:
                problem(record, f"{scheme}: missing {key!r}")
            elif value not in ids:
                problem(record, f"{scheme}: {key} {value!r} is not in the tuple {list(ids)}")
            else:
                chosen[key] = ids.index(value)
        if len(chosen) < 2:
            continue
        if chosen["best"] == chosen["worst"]:
            problem(record, f"{scheme}: best and worst are the same item {answer['best']!r}")
            continue
        rows.append([item_index[item] for item in ids])
        best.append(chosen["best"])
        worst.append(chosen["worst"])
        tuples.append(str(record.id))
        annotators.append(str(record.annotator or ""))
        stamps.append(_timestamp(record.timestamp))
    if problems:
        raise JudgmentError(problems)

    if n_items is None:
        n_items = max(item_index.values(), default=-1) + 1
    m = len(rows)
    items = np.asarray(rows, dtype=np.int64).reshape(m, size or 2)
    stamp_array = np.asarray(stamps, dtype=float)
    # Undated judgments keep their reading order, after the dated ones.
    time_order = np.lexsort((np.arange(m), np.nan_to_num(stamp_array, nan=np.inf)))
    order = np.empty(m, dtype=np.int64)
    order[time_order] = np.arange(m)
    return Judgments(
        items=items,
        best=np.asarray(best, dtype=np.int64),
        worst=np.asarray(worst, dtype=np.int64),
        tuple_ids=_codes(tuples),
        annotators=_codes(annotators),
        order=order,
        n_items=n_items,
    )


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
