"""Checks of submitted answers: the limits every submission keeps, required and unknown
schemes, then each value by its scheme type (projects.schemes). Pure Python: the web form,
the REST API and the annotation import all validate through here."""

from __future__ import annotations

import json
import sys
from typing import Any

from projects.schemes import scheme_type
from projects.schemes.base import AnswerLimits, RowError, UnitContext, short
from projects.storable import json_problem, text_problem

MAX_MILLISECONDS = 2**31 - 1  # time_taken_ms: what an integer column holds


NO_LIMITS = AnswerLimits(
    max_text=sys.maxsize, max_objects=sys.maxsize, max_depth=sys.maxsize, max_bytes=sys.maxsize
)


class AnswerError(ValueError):
    """Field errors by scheme name: {scheme: message}; ``rows``: for a scheme whose table
    row was refused (RowError), that row and its fields at fault, {scheme: (row, fields)},
    so that the page marks the row."""

    def __init__(self, errors: dict[str, str], rows: dict[str, tuple] | None = None):
        self.errors = dict(errors)
        self.rows = dict(rows or {})
        super().__init__("; ".join(f"{k}: {v}" for k, v in self.errors.items()))


def row_of(error: ValueError) -> tuple[int, tuple[str, ...]] | None:
    """The table row (and its fields) a scheme's error names, or None (not a row's)."""
    return (error.row, error.fields) if isinstance(error, RowError) else None


def _field(name: Any) -> str:
    """A submitted scheme name as the key of its error (long ones cut short)."""
    name = str(name)
    return name if len(name) <= 100 else short(name)


def is_empty(value: Any, kind: type | None = None) -> bool:
    """Whether a value is no answer at all: absent (None), "", [], {} or an object of empty
    fields. For a scheme type whose ``empty_list_answers`` is set (boxes, segments, tiers)
    ``[]`` is an answer, "nothing to mark here", and not empty; None stays "not answered"."""
    if isinstance(value, list) and not value and getattr(kind, "empty_list_answers", False):
        return False
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
    An explicit empty answer (``[]`` for boxes and segments) is answered, and satisfies a
    required scheme; an absent or None value is not (see is_empty).
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
    rows: dict[str, tuple] = {}
    cleaned: dict[str, Any] = {}
    for name in answers:
        if name not in by_name:
            errors[_field(name)] = f"no scheme named {short(name)} in this project"
    for name, scheme in by_name.items():
        kind = scheme_type(scheme["type"])
        options = scheme["options"]
        value = answers.get(name)
        if is_empty(value, kind):
            if enforce_required and options["required"]:
                errors[name] = "an answer is required"
            continue
        try:
            cleaned[name] = kind.validate(value, options, unit, bounds)
        except ValueError as exc:
            errors[name] = str(exc)
            if (row := row_of(exc)) is not None:
                rows[name] = row
    if errors:
        raise AnswerError(errors, rows)
    if not cleaned:
        raise AnswerError({"annotations": "nothing to save: answer at least one question"})
    return cleaned
