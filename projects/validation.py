"""Checks of submitted answers per scheme type, one rule per answer value. Pure Python:
the web form, the REST API and the annotation import all validate through here."""

from __future__ import annotations

import json
import math
import re
import sys
from dataclasses import dataclass, field
from typing import Any

TRACE_TYPES = {
    "process_reward",
    "trajectory_eval",
    "tool_call_review",
    "failure_attribution",
    "gui_trajectory",
}


MAX_MILLISECONDS = 2**31 - 1  # time_taken_ms: what an integer column holds

# PostgreSQL stores neither NUL nor lone surrogates (which have no UTF-8 form) in text or jsonb.
_UNSTORABLE = re.compile(r"[\x00\ud800-\udfff]")


@dataclass(frozen=True)
class AnswerLimits:
    """Bounds on one submission; each error names the setting that holds the bound."""

    max_text: int  # ANSWER_MAX_TEXT_LENGTH: characters in one text answer or label
    max_objects: int  # ANSWER_MAX_OBJECTS: boxes, segments or trace steps in one answer
    max_depth: int  # ANSWER_MAX_DEPTH: nesting of lists and objects in one answer
    max_bytes: int  # ANSWER_MAX_BYTES: the submission's answers as UTF-8 JSON


def text_problem(text: str) -> str | None:
    """Why a string cannot be stored as text, or None."""
    bad = _UNSTORABLE.search(text)
    if bad is None:
        return None
    if bad.group() == "\x00":
        return "contains a NUL character (\\u0000), which text cannot hold"
    return "contains a lone surrogate (\\ud800-\\udfff), which is not valid Unicode text"


def json_problem(value: Any, *, max_depth: int, setting: str) -> str | None:
    """Why a parsed JSON value cannot be taken as it is (too deep, a string that cannot be
    stored, a number beyond a 64-bit float), or None. Walks without recursion."""
    stack = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict | list):
            if depth + 1 > max_depth:
                return f"nested deeper than {max_depth} levels ({setting} = {max_depth})"
            if isinstance(node, dict):
                for key in node:
                    if isinstance(key, str) and (problem := text_problem(key)):
                        return f"a key {problem}"
                children = node.values()
            else:
                children = node
            stack.extend((child, depth + 1) for child in children)
        elif isinstance(node, str):
            if problem := text_problem(node):
                return f"a string {problem}"
        elif isinstance(node, float) and not math.isfinite(node):
            return "a number is infinite or not a number (at most about 1.8e308 in size)"
    return None


NO_LIMITS = AnswerLimits(
    max_text=sys.maxsize, max_objects=sys.maxsize, max_depth=sys.maxsize, max_bytes=sys.maxsize
)


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
    """A finite number a 64-bit float holds (comparing never overflows, and NaN fails it)."""
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and abs(value) <= sys.float_info.max
    )


def _short(value: Any) -> str:
    """A value quoted for a message, cut to a readable length."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _field(name: Any) -> str:
    """A submitted scheme name as the key of its error (long ones cut short)."""
    name = str(name)
    return name if len(name) <= 100 else _short(name)


def _check_bws(value: Any, options: dict, unit: UnitContext, limits: AnswerLimits) -> Any:
    if not isinstance(value, dict) or set(value) - {"best", "worst"}:
        raise ValueError('give {"best": ITEM_ID, "worst": ITEM_ID}')
    best, worst = value.get("best"), value.get("worst")
    if best in (None, "") or worst in (None, ""):
        missing = " and ".join(k for k in ("best", "worst") if value.get(k) in (None, ""))
        raise ValueError(f"choose the {missing} item")
    for key, chosen in (("best", best), ("worst", worst)):
        if not isinstance(chosen, str | int) or str(chosen) not in unit.items:
            raise ValueError(f"{key} item {_short(chosen)} is not in this tuple")
    if str(best) == str(worst):
        raise ValueError("best and worst must be different items")
    return {"best": str(best), "worst": str(worst)}


def _check_radio(value: Any, options: dict, unit: UnitContext, limits: AnswerLimits) -> Any:
    labels = label_names(options)
    if not isinstance(value, str) or value not in labels:
        raise ValueError(f"choose one of: {', '.join(labels)}")
    return value


def _check_multiselect(value: Any, options: dict, unit: UnitContext, limits: AnswerLimits) -> Any:
    labels = label_names(options)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError("give a list of labels")
    unknown = [v for v in value if v not in labels]
    if unknown:
        raise ValueError(
            f"unknown label(s) {_short(', '.join(unknown))}; choose from {', '.join(labels)}"
        )
    if len(set(value)) != len(value):
        raise ValueError("a label is given twice")
    return value


def _check_likert(value: Any, options: dict, unit: UnitContext, limits: AnswerLimits) -> Any:
    labels = label_names(options)
    if labels:
        if value in labels:
            return value
        raise ValueError(f"choose one of: {', '.join(labels)}")
    size = int(options.get("size") or 5)
    if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
        value = int(value) if len(value) < 20 else 0
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= size:
        raise ValueError(f"give a whole number from 1 to {size}")
    return value


def _check_label_text(text: Any, where: str, limits: AnswerLimits) -> None:
    if text is not None and not isinstance(text, str):
        raise ValueError(f"{where}: label must be a text")
    if text is not None and len(text) > limits.max_text:
        raise ValueError(
            f"{where}: label is longer than {limits.max_text} characters "
            f"(ANSWER_MAX_TEXT_LENGTH = {limits.max_text})"
        )


def _check_text(value: Any, options: dict, unit: UnitContext, limits: AnswerLimits) -> Any:
    if not isinstance(value, str):
        raise ValueError("give a text")
    if len(value) > limits.max_text:
        raise ValueError(
            f"the text has {len(value)} characters; at most {limits.max_text} are allowed "
            f"(ANSWER_MAX_TEXT_LENGTH = {limits.max_text})"
        )
    return value


def _too_many(count: int, what: str, limits: AnswerLimits) -> None:
    if count > limits.max_objects:
        raise ValueError(
            f"{count} {what} in one answer; at most {limits.max_objects} are allowed "
            f"(ANSWER_MAX_OBJECTS = {limits.max_objects})"
        )


def _objects(value: Any, what: str, limits: AnswerLimits) -> list[dict]:
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise ValueError("give a list of objects")
    _too_many(len(value), what, limits)
    return value


def _check_boxes(value: Any, options: dict, unit: UnitContext, limits: AnswerLimits) -> Any:
    labels = label_names(options)
    cleaned = []
    for n, box in enumerate(_objects(value, "boxes", limits)):
        where = f"box {n + 1}"
        if labels and box.get("label") not in labels:
            raise ValueError(f"{where}: label must be one of {', '.join(labels)}")
        _check_label_text(box.get("label"), where, limits)
        center, size = box.get("center"), box.get("size")
        if not (isinstance(center, list) and len(center) == 3 and all(map(_number, center))):
            raise ValueError(f"{where}: center must be three finite numbers [x, y, z]")
        if not (isinstance(size, list) and len(size) == 3 and all(map(_number, size))):
            raise ValueError(f"{where}: size must be three finite numbers [l, w, h]")
        if min(size) <= 0:
            raise ValueError(f"{where}: every size must be positive")
        yaw = box.get("yaw", 0.0)
        if not _number(yaw):
            raise ValueError(f"{where}: yaw must be a finite number (radians)")
        cleaned.append(
            {"label": box.get("label"), "center": center, "size": size, "yaw": float(yaw)}
        )
    return cleaned


def _check_segments(
    value: Any, options: dict, unit: UnitContext, limits: AnswerLimits, *, tiers=False
) -> Any:
    labels = label_names(options)
    tier_names = list(options.get("tiers") or [])
    cleaned = []
    for n, seg in enumerate(_objects(value, "segments", limits)):
        where = f"segment {n + 1}"
        start, end = seg.get("start"), seg.get("end")
        if not (_number(start) and _number(end)):
            raise ValueError(f"{where}: start and end must be finite numbers (seconds)")
        if start < 0 or start > end:
            raise ValueError(f"{where}: need 0 <= start <= end")
        if labels and seg.get("label") not in labels:
            raise ValueError(f"{where}: label must be one of {', '.join(labels)}")
        _check_label_text(seg.get("label"), where, limits)
        item = {"start": start, "end": end, "label": seg.get("label")}
        if tiers:
            if seg.get("tier") not in tier_names:
                raise ValueError(f"{where}: tier must be one of {', '.join(tier_names)}")
            item["tier"] = seg["tier"]
        cleaned.append(item)
    return cleaned


def _check_tiers(value: Any, options: dict, unit: UnitContext, limits: AnswerLimits) -> Any:
    return _check_segments(value, options, unit, limits, tiers=True)


def _check_trace(value: Any, options: dict, unit: UnitContext, limits: AnswerLimits) -> Any:
    labels = label_names(options)
    steps = unit.data.get(options.get("steps_key") or "steps") or []
    if not isinstance(value, dict):
        raise ValueError('give an object from step index ("0", "1", ...) to label')
    _too_many(len(value), "trace steps", limits)
    cleaned = {}
    for key, label in value.items():
        key = str(key)
        if not (key.isascii() and key.isdigit()) or int(key) >= len(steps):
            raise ValueError(
                f"step {_short(key)} is not a step of this trace (0 to {len(steps) - 1})"
            )
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
    "tiered_annotation": _check_tiers,
    **dict.fromkeys(TRACE_TYPES, _check_trace),
}


def is_empty(value: Any) -> bool:
    if value is None or value == "" or value == [] or value == {}:
        return True
    return isinstance(value, dict) and all(v in (None, "") for v in value.values())


def validate_answers(
    schemes: list[dict],
    answers: Any,
    unit: UnitContext,
    *,
    enforce_required: bool = True,
    limits: AnswerLimits | None = None,
) -> dict[str, Any]:
    """Check a submission (scheme name -> value) against the project's schemes; return the
    cleaned values of the schemes answered, or raise AnswerError naming each bad scheme.
    Imports pass enforce_required=False: records from elsewhere may answer some schemes.
    Submissions from people pass limits; the operator's import is bounded only by what can
    be stored at all (no NUL, no lone surrogate, finite numbers)."""
    if not isinstance(answers, dict):
        raise AnswerError({"annotations": "give an object from scheme name to value"})
    bounds = limits or NO_LIMITS
    for name, value in answers.items():
        if problem := text_problem(str(name)):
            raise AnswerError({"annotations": f"a scheme name {problem}"})
        if problem := json_problem(value, max_depth=bounds.max_depth, setting="ANSWER_MAX_DEPTH"):
            raise AnswerError({_field(name): problem})
    if limits is not None:
        size = len(json.dumps(answers, ensure_ascii=False).encode())
        if size > limits.max_bytes:
            raise AnswerError(
                {
                    "annotations": f"the answers take {size} bytes; at most {limits.max_bytes} "
                    f"are allowed (ANSWER_MAX_BYTES = {limits.max_bytes})"
                }
            )
    by_name = {scheme["name"]: scheme for scheme in schemes}
    errors: dict[str, str] = {}
    cleaned: dict[str, Any] = {}
    for name in answers:
        if name not in by_name:
            errors[_field(name)] = f"no scheme named {_short(name)} in this project"
    for name, scheme in by_name.items():
        options = scheme.get("options") or {}
        value = answers.get(name)
        if is_empty(value):
            if enforce_required and options.get("required"):
                errors[name] = "an answer is required"
            continue
        try:
            cleaned[name] = CHECKS[scheme["type"]](value, options, unit, bounds)
        except ValueError as exc:
            errors[name] = str(exc)
    if errors:
        raise AnswerError(errors)
    if not cleaned:
        raise AnswerError({"annotations": "nothing to save: answer at least one question"})
    return cleaned
