"""Checks of submitted answers per scheme type (SPEC section 7's value table). Pure Python:
the web form, the REST API and the annotation import all validate through here."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

TRACE_TYPES = {
    "process_reward",
    "trajectory_eval",
    "tool_call_review",
    "failure_attribution",
    "gui_trajectory",
}


class AnswerError(ValueError):
    """Field errors by scheme name: {scheme: message}."""

    def __init__(self, errors: dict[str, str]):
        self.errors = dict(errors)
        super().__init__("; ".join(f"{k}: {v}" for k, v in self.errors.items()))


@dataclass(frozen=True)
class UnitContext:
    """What a value is checked against: the tuple's item ids, and the instance's data."""

    items: list[str] = field(default_factory=list)
    data: dict = field(default_factory=dict)


def label_names(options: dict) -> list[str]:
    return [
        label["name"] if isinstance(label, dict) else str(label)
        for label in options.get("labels") or []
    ]


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _check_bws(value: Any, options: dict, unit: UnitContext) -> Any:
    if not isinstance(value, dict) or set(value) - {"best", "worst"}:
        raise ValueError('give {"best": ITEM_ID, "worst": ITEM_ID}')
    best, worst = value.get("best"), value.get("worst")
    if best in (None, "") or worst in (None, ""):
        missing = " and ".join(k for k in ("best", "worst") if value.get(k) in (None, ""))
        raise ValueError(f"choose the {missing} item")
    for key, chosen in (("best", best), ("worst", worst)):
        if str(chosen) not in unit.items:
            raise ValueError(f"{key} item {chosen!r} is not in this tuple")
    if str(best) == str(worst):
        raise ValueError("best and worst must be different items")
    return {"best": str(best), "worst": str(worst)}


def _check_radio(value: Any, options: dict, unit: UnitContext) -> Any:
    labels = label_names(options)
    if not isinstance(value, str) or value not in labels:
        raise ValueError(f"choose one of: {', '.join(labels)}")
    return value


def _check_multiselect(value: Any, options: dict, unit: UnitContext) -> Any:
    labels = label_names(options)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError("give a list of labels")
    unknown = [v for v in value if v not in labels]
    if unknown:
        raise ValueError(f"unknown label(s) {', '.join(unknown)}; choose from {', '.join(labels)}")
    if len(set(value)) != len(value):
        raise ValueError("a label is given twice")
    return value


def _check_likert(value: Any, options: dict, unit: UnitContext) -> Any:
    labels = label_names(options)
    if labels:
        if value in labels:
            return value
        raise ValueError(f"choose one of: {', '.join(labels)}")
    size = int(options.get("size") or 5)
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= size:
        raise ValueError(f"give a whole number from 1 to {size}")
    return value


def _check_text(value: Any, options: dict, unit: UnitContext) -> Any:
    if not isinstance(value, str):
        raise ValueError("give a text")
    return value


def _objects(value: Any) -> list[dict]:
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise ValueError("give a list of objects")
    return value


def _check_boxes(value: Any, options: dict, unit: UnitContext) -> Any:
    labels = label_names(options)
    cleaned = []
    for n, box in enumerate(_objects(value)):
        where = f"box {n + 1}"
        if labels and box.get("label") not in labels:
            raise ValueError(f"{where}: label must be one of {', '.join(labels)}")
        center, size = box.get("center"), box.get("size")
        if not (isinstance(center, list) and len(center) == 3 and all(map(_number, center))):
            raise ValueError(f"{where}: center must be three numbers [x, y, z]")
        if not (isinstance(size, list) and len(size) == 3 and all(map(_number, size))):
            raise ValueError(f"{where}: size must be three numbers [l, w, h]")
        if min(size) <= 0:
            raise ValueError(f"{where}: every size must be positive")
        yaw = box.get("yaw", 0.0)
        if not _number(yaw):
            raise ValueError(f"{where}: yaw must be a number (radians)")
        cleaned.append(
            {"label": box.get("label"), "center": center, "size": size, "yaw": float(yaw)}
        )
    return cleaned


def _check_segments(value: Any, options: dict, unit: UnitContext, *, tiers=False) -> Any:
    labels = label_names(options)
    tier_names = list(options.get("tiers") or [])
    cleaned = []
    for n, seg in enumerate(_objects(value)):
        where = f"segment {n + 1}"
        start, end = seg.get("start"), seg.get("end")
        if not (_number(start) and _number(end)):
            raise ValueError(f"{where}: start and end must be numbers (seconds)")
        if start < 0 or start > end:
            raise ValueError(f"{where}: need 0 <= start <= end")
        if labels and seg.get("label") not in labels:
            raise ValueError(f"{where}: label must be one of {', '.join(labels)}")
        item = {"start": start, "end": end, "label": seg.get("label")}
        if tiers:
            if seg.get("tier") not in tier_names:
                raise ValueError(f"{where}: tier must be one of {', '.join(tier_names)}")
            item["tier"] = seg["tier"]
        cleaned.append(item)
    return cleaned


def _check_trace(value: Any, options: dict, unit: UnitContext) -> Any:
    labels = label_names(options)
    steps = unit.data.get(options.get("steps_key") or "steps") or []
    if not isinstance(value, dict):
        raise ValueError('give an object from step index ("0", "1", ...) to label')
    cleaned = {}
    for key, label in value.items():
        key = str(key)
        if not key.isdigit() or int(key) >= len(steps):
            raise ValueError(f"step {key!r} is not a step of this trace (0 to {len(steps) - 1})")
        if label not in labels:
            raise ValueError(f"step {key}: choose one of {', '.join(labels)}")
        cleaned[key] = label
    return cleaned


CHECKS = {
    "bws": _check_bws,
    "radio": _check_radio,
    "multiselect": _check_multiselect,
    "likert": _check_likert,
    "text": _check_text,
    "spatial_annotation": _check_boxes,
    "temporal_grounding": _check_segments,
    "tiered_annotation": lambda v, o, u: _check_segments(v, o, u, tiers=True),
    **dict.fromkeys(TRACE_TYPES, _check_trace),
}


def is_empty(value: Any) -> bool:
    if value is None or value == "" or value == [] or value == {}:
        return True
    return isinstance(value, dict) and all(v in (None, "") for v in value.values())


def validate_answers(
    schemes: list[dict], answers: Any, unit: UnitContext, *, enforce_required: bool = True
) -> dict[str, Any]:
    """Check a submission (scheme name -> value) against the project's schemes; return the
    cleaned values of the schemes answered, or raise AnswerError naming each bad scheme.
    Imports pass enforce_required=False: records from elsewhere may answer some schemes."""
    if not isinstance(answers, dict):
        raise AnswerError({"annotations": "give an object from scheme name to value"})
    by_name = {scheme["name"]: scheme for scheme in schemes}
    errors: dict[str, str] = {}
    cleaned: dict[str, Any] = {}
    for name in answers:
        if name not in by_name:
            errors[name] = f"no scheme named {name!r} in this project"
    for name, scheme in by_name.items():
        options = scheme.get("options") or {}
        value = answers.get(name)
        if is_empty(value):
            if enforce_required and options.get("required"):
                errors[name] = "an answer is required"
            continue
        try:
            cleaned[name] = CHECKS[scheme["type"]](value, options, unit)
        except ValueError as exc:
            errors[name] = str(exc)
    if errors:
        raise AnswerError(errors)
    if not cleaned:
        raise AnswerError({"annotations": "nothing to save: answer at least one question"})
    return cleaned
