"""Agreement on sets of objects (3D boxes, time segments): match by IoU, score each item.

Item score for two annotators with n and m objects: objects are matched one to one where
their IoU reaches the threshold; each matched pair adds its IoU, half of it when the two
labels differ; unmatched objects add 0; the sum is divided by n + m - (matched pairs),
the number of objects with a matched pair counted once. An empty answer (``[]``,
"nothing to mark") is an answer: two empty answers agree (1), and an empty answer against
k > 0 objects scores 0 (its k unmatched objects each add 0, over k). An absent answer
(None) is no answer: that annotator takes no part in the item. The figures are not
chance-corrected.
"""

from __future__ import annotations

import gc
import math
from collections.abc import Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import chain, combinations
from typing import Any

import numpy as np

from agreement.core.iou import box3d_iou_pairs, temporal_iou_pairs
from agreement.core.matching import match_objects

BOX_THRESHOLD = 0.25
SEGMENT_THRESHOLD = 0.5
# Object pairs whose IoU is computed in one batch.
BATCH_PAIRS = 400_000

NOT_CHANCE_CORRECTED = (
    "mean_agreement is not chance-corrected: compare it between pilots of the same task"
)
EMPTY_ANSWERS = (
    "an empty answer (nothing to mark) counts: two empty answers score 1 for the pair, "
    "an empty answer against k objects scores 0; an absent answer takes no part"
)


class ObjectError(ValueError):
    """An annotation value that is not a list of well-formed objects for its scheme."""


def item_score(
    iou: np.ndarray,
    labels_a: Sequence,
    labels_b: Sequence,
    threshold: float,
    allowed: np.ndarray | None = None,
) -> float:
    """Agreement of two annotators on one item, 0..1, from their (n, m) object IoU matrix."""
    iou = np.asarray(iou, dtype=float).reshape(len(labels_a), len(labels_b))
    n, m = iou.shape
    if n == 0 and m == 0:
        return 1.0
    labels_a, labels_b = np.asarray(labels_a), np.asarray(labels_b)
    same_label = labels_a[:, None] == labels_b[None, :]
    rows, cols = match_objects(iou, threshold, allowed, prefer=same_label)
    weight = np.where(labels_a[rows] == labels_b[cols], 1.0, 0.5) if len(rows) else 0.0
    total = float(np.sum(iou[rows, cols] * weight))
    return total / (n + m - len(rows))


@dataclass
class ObjectSets:
    """Every annotator's objects of one scheme, flattened: slices per (item, annotator).

    geometry: (N, 7) boxes or (N, 2) segments; labels and tiers: (N,) integer codes.
    sets: item key -> {annotator: (start, count)} into those arrays.
    """

    geometry: np.ndarray
    labels: np.ndarray
    tiers: np.ndarray
    sets: dict[Any, dict[str, tuple[int, int]]] = field(default_factory=dict)


def parse_boxes(units: Mapping[Any, Mapping[str, Any]]) -> ObjectSets:
    """ObjectSets of 3D boxes from item -> annotator -> list of {label, center, size, yaw}.
    ``[]`` is an annotator's empty answer (no box); None is no answer, left out.

    Well-formed input takes one pass and one array check; anything else is read again
    object by object to name the first bad one.
    """
    try:
        with _collection_paused():
            return _fast_boxes(units)
    except (KeyError, TypeError, ValueError, IndexError, AttributeError):
        return _checked_boxes(units)


def _fast_boxes(units: Mapping[Any, Mapping[str, Any]]) -> ObjectSets:
    rows: list[tuple] = []
    labels: list[str] = []
    sets: dict[Any, dict[str, tuple[int, int]]] = {}
    for item, answers in units.items():
        spans = sets.setdefault(item, {})
        for annotator, value in answers.items():
            if value is None:
                continue  # not answered: no part in the item
            if type(value) is not list:
                raise TypeError
            spans[annotator] = (len(rows), len(value))
            rows.extend(
                (
                    *box["center"],
                    *box["size"],
                    0.0 if box.get("yaw") is None else box["yaw"],
                    len(box["center"]),
                )
                for box in value
            )
            labels.extend(str(box.get("label", "")) for box in value)
    array = np.array(rows) if rows else np.zeros((0, 8))
    if (
        _has_boolean(rows)
        or array.dtype.kind not in "if"
        or array.shape != (len(rows), 8)
        or not np.all(array[:, 7] == 3)
        or not np.isfinite(array).all()
        or (array[:, 3:6] < 0).any()
    ):
        raise ValueError
    geometry = array[:, :7].astype(float)
    return ObjectSets(geometry, _codes(labels), np.zeros(len(rows), dtype=np.int64), sets)


def _checked_boxes(units: Mapping[Any, Mapping[str, Any]]) -> ObjectSets:
    rows: list[list[float]] = []
    labels: list[str] = []
    sets: dict[Any, dict[str, tuple[int, int]]] = {}
    for item, answers in units.items():
        spans = sets.setdefault(item, {})
        for annotator, value in answers.items():
            if value is None:
                continue  # not answered: no part in the item
            start = len(rows)
            for index, box in enumerate(_object_list(value, item, annotator)):
                where = f"item {item!r}, annotator {annotator!r}, box {index}"
                if not isinstance(box, Mapping):
                    raise ObjectError(f"{where}: expected an object, got {box!r}")
                center, size = box.get("center"), box.get("size")
                _refuse_booleans(box, ("center", "size", "yaw"), where)
                if not _numbers(center, 3) or not _numbers(size, 3):
                    raise ObjectError(f"{where}: needs center [x, y, z] and size [l, w, h]")
                if min(size) < 0:
                    raise ObjectError(f"{where}: size must not be negative, got {size}")
                yaw = box.get("yaw", 0.0)
                if yaw is None:
                    yaw = 0.0
                if not _numbers([yaw], 1):
                    raise ObjectError(f"{where}: yaw must be a number (radians), got {yaw!r}")
                rows.append([*center, *size, yaw])
                labels.append(str(box.get("label", "")))
            spans[annotator] = (start, len(rows) - start)
    geometry = np.asarray(rows, dtype=float).reshape(-1, 7)
    return ObjectSets(geometry, _codes(labels), np.zeros(len(rows), dtype=np.int64), sets)


def parse_segments(units: Mapping[Any, Mapping[str, Any]], *, tiered: bool = False) -> ObjectSets:
    """ObjectSets of time segments from item -> annotator -> list of {start, end, label[, tier]}.
    ``[]`` is an annotator's empty answer (no segment); None is no answer, left out."""
    try:
        with _collection_paused():
            return _fast_segments(units, tiered)
    except (KeyError, TypeError, ValueError, IndexError, AttributeError):
        return _checked_segments(units, tiered)


def _fast_segments(units: Mapping[Any, Mapping[str, Any]], tiered: bool) -> ObjectSets:
    rows: list[tuple] = []
    labels: list[str] = []
    tiers: list[str] = []
    sets: dict[Any, dict[str, tuple[int, int]]] = {}
    for item, answers in units.items():
        spans = sets.setdefault(item, {})
        for annotator, value in answers.items():
            if value is None:
                continue  # not answered: no part in the item
            if type(value) is not list:
                raise TypeError
            spans[annotator] = (len(rows), len(value))
            rows.extend((segment["start"], segment["end"]) for segment in value)
            labels.extend(str(segment.get("label", "")) for segment in value)
            if tiered:
                tiers.extend(str(segment.get("tier", "")) for segment in value)
    array = np.array(rows) if rows else np.zeros((0, 2))
    if (
        _has_boolean(rows)
        or array.dtype.kind not in "if"
        or array.shape != (len(rows), 2)
        or not np.isfinite(array).all()
        or (array[:, 1] < array[:, 0]).any()
    ):
        raise ValueError
    tier_codes = _codes(tiers) if tiered else np.zeros(len(rows), dtype=np.int64)
    return ObjectSets(array.astype(float), _codes(labels), tier_codes, sets)


def _checked_segments(units: Mapping[Any, Mapping[str, Any]], tiered: bool) -> ObjectSets:
    rows: list[list[float]] = []
    labels: list[str] = []
    tiers: list[str] = []
    sets: dict[Any, dict[str, tuple[int, int]]] = {}
    for item, answers in units.items():
        spans = sets.setdefault(item, {})
        for annotator, value in answers.items():
            if value is None:
                continue  # not answered: no part in the item
            start = len(rows)
            for index, segment in enumerate(_object_list(value, item, annotator)):
                where = f"item {item!r}, annotator {annotator!r}, segment {index}"
                if not isinstance(segment, Mapping):
                    raise ObjectError(f"{where}: expected an object, got {segment!r}")
                bounds = [segment.get("start"), segment.get("end")]
                _refuse_booleans(segment, ("start", "end"), where)
                if not _numbers(bounds, 2):
                    raise ObjectError(f"{where}: needs numeric start and end (seconds)")
                if bounds[1] < bounds[0]:
                    raise ObjectError(f"{where}: end {bounds[1]} is before start {bounds[0]}")
                rows.append(bounds)
                labels.append(str(segment.get("label", "")))
                tiers.append(str(segment.get("tier", "")) if tiered else "")
            spans[annotator] = (start, len(rows) - start)
    geometry = np.asarray(rows, dtype=float).reshape(-1, 2)
    return ObjectSets(geometry, _codes(labels), _codes(tiers), sets)


def structured_agreement(objects: ObjectSets, *, kind: str, threshold: float | None = None) -> dict:
    """Per-scheme figures: mean item score over annotator pairs and items, count difference.

    ``kind`` is "boxes" (3D IoU, default threshold 0.25) or "segments" (temporal IoU,
    0.5; tiers match only within a tier). Items with fewer than two annotators are left out.

    Every (item, annotator pair) is one term of mean_agreement, scored by ``item_score``:
    the matched pairs' IoU (half for differing labels) summed and divided by
    n + m - matched. Empty answers follow from it and count like any other:

    - both annotators answered ``[]`` (n = m = 0): the term is 1;
    - one answered ``[]`` and the other k > 0 objects: the term is 0 / k = 0 (no match;
      each of the k objects is unmatched and adds 0), and its count difference is k.

    So an item both left empty and an item where only one marked something average 0.5.
    An annotator whose value is None (not answered) is in no pair of that item; sets
    only holds answered values (parse_boxes, parse_segments).
    """
    if kind not in ("boxes", "segments"):
        raise ValueError(f"kind must be 'boxes' or 'segments', got {kind!r}")
    if threshold is None:
        threshold = BOX_THRESHOLD if kind == "boxes" else SEGMENT_THRESHOLD
    pair_iou = box3d_iou_pairs if kind == "boxes" else temporal_iou_pairs

    blocks: list[tuple[int, int, int, int]] = []  # (start_a, n_a, start_b, n_b)
    annotators: set[str] = set()
    n_items = 0
    for answers in objects.sets.values():
        if len(answers) < 2:
            continue
        n_items += 1
        annotators.update(answers)
        for first, second in combinations(sorted(answers), 2):
            blocks.append((*answers[first], *answers[second]))

    scores = np.empty(len(blocks))
    count_diff = np.empty(len(blocks))
    geometry, labels, tiers = objects.geometry, objects.labels, objects.tiers
    for batch in _batches(blocks):
        index_a, index_b = _pair_indices(batch)
        iou = pair_iou(geometry[index_a], geometry[index_b]) if len(index_a) else np.zeros(0)
        offset = 0
        for position, (start_a, n_a, start_b, n_b) in batch:
            size = n_a * n_b
            block_iou = iou[offset : offset + size].reshape(n_a, n_b)
            offset += size
            slice_a, slice_b = slice(start_a, start_a + n_a), slice(start_b, start_b + n_b)
            same_tier = tiers[slice_a, None] == tiers[None, slice_b]
            scores[position] = item_score(
                block_iou, labels[slice_a], labels[slice_b], threshold, same_tier
            )
            count_diff[position] = abs(n_a - n_b)

    notes = [NOT_CHANCE_CORRECTED, EMPTY_ANSWERS]
    sizes = np.array([(block[1], block[3]) for block in blocks], dtype=np.int64).reshape(-1, 2)
    both_empty = int(np.sum((sizes == 0).all(axis=1)))
    one_empty = int(np.sum((sizes == 0).any(axis=1))) - both_empty
    if both_empty or one_empty:
        notes.append(
            f"empty answers: {both_empty} pair(s) both empty (scored 1), "
            f"{one_empty} pair(s) with one side empty (scored 0)"
        )
    if not blocks:
        notes.append("mean_agreement undefined: no item was annotated by two or more annotators")
    return {
        "mean_agreement": float(scores.mean()) if blocks else None,
        "mean_object_count_diff": float(count_diff.mean()) if blocks else None,
        "n_items": n_items,
        "n_pairs": len(blocks),
        "n_annotators": len(annotators),
        "notes": notes,
    }


def _batches(blocks: list[tuple[int, int, int, int]]):
    batch: list[tuple[int, tuple[int, int, int, int]]] = []
    pairs = 0
    for position, block in enumerate(blocks):
        batch.append((position, block))
        pairs += block[1] * block[3]
        if pairs >= BATCH_PAIRS:
            yield batch
            batch, pairs = [], 0
    if batch:
        yield batch


def _pair_indices(batch) -> tuple[np.ndarray, np.ndarray]:
    """Row indices of every (object of a, object of b) pair of each block, row-major."""
    blocks = np.array([block for _, block in batch], dtype=np.int64).reshape(-1, 4)
    start_a, n_a, start_b, n_b = blocks.T
    sizes = n_a * n_b
    total = int(sizes.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    block = np.repeat(np.arange(len(blocks)), sizes)
    within = np.arange(total) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    row, col = np.divmod(within, n_b[block])
    return start_a[block] + row, start_b[block] + col


@contextmanager
def _collection_paused():
    """Pause the cyclic garbage collector while many small acyclic objects are made."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _object_list(value: Any, item: Any, annotator: str) -> list:
    if not isinstance(value, list):
        raise ObjectError(
            f"item {item!r}, annotator {annotator!r}: expected a list of objects, got {value!r}"
        )
    return value


def _has_boolean(rows: list[tuple]) -> bool:
    """Whether any value of the rows is a boolean (true is not the number 1 here)."""
    return bool in set(map(type, chain.from_iterable(rows)))


def _refuse_booleans(obj: Mapping, fields: Sequence[str], where: str) -> None:
    """ObjectError naming the first field (or list entry) of ``obj`` that is a boolean."""
    for name in fields:
        value = obj.get(name)
        entries = enumerate(value) if type(value) in (list, tuple) else [(None, value)]
        for index, entry in entries:
            if type(entry) is bool:
                field_name = name if index is None else f"{name}[{index}]"
                raise ObjectError(
                    f"{where}: {field_name} must be a number, got {str(entry).lower()} (a boolean)"
                )


def _numbers(value: Any, length: int) -> bool:
    if type(value) not in (list, tuple) or len(value) != length:
        return False
    for x in value:
        if type(x) not in (int, float) or not math.isfinite(x):
            return False
    return True


def _codes(labels: list[str]) -> np.ndarray:
    codes: dict[str, int] = {}
    return np.asarray([codes.setdefault(label, len(codes)) for label in labels], dtype=np.int64)
