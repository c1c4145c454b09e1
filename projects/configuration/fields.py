"""Building blocks of the configuration schema: a ``Block`` (a mapping that names unknown
keys with the nearest known one), field types whose refusals read as the rest of the
config messages do, and the conversion of pydantic's errors into ConfigIssues.

Scheme types build their option models from these (projects.schemes).
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, ClassVar

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Strict,
    ValidationError,
    ValidationInfo,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from projects.configuration.issues import join, nearest, type_name
from projects.limits import MAX_DB_INTEGER, Limits
from projects.paths import PathRefused, confine

CONFIG_ERROR = "config"


def problem(reason: str, suggestion: str | None = None) -> PydanticCustomError:
    """A refusal in the config's own words (the reason is not a template)."""
    return PydanticCustomError(
        CONFIG_ERROR, "{reason}", {"reason": reason, "suggestion": suggestion}
    )


def detail(loc: tuple, reason: str, suggestion: str | None = None, value: Any = None):
    return InitErrorDetails(type=problem(reason, suggestion), loc=loc, input=value)


def reraise(title: str, details: list) -> None:
    if details:
        raise ValidationError.from_exception_data(title, details)


def passed_on(error: dict, loc_prefix: tuple = ()) -> InitErrorDetails:
    """An error of an inner validation, kept (reworded) to be raised again with others."""
    loc = (*loc_prefix, *error["loc"])
    if error["type"] == CONFIG_ERROR:
        ctx = error.get("ctx") or {}
        return detail(loc, ctx.get("reason", error["msg"]), ctx.get("suggestion"), error["input"])
    return detail(loc, reason_of(error), None, error.get("input"))


def reason_of(error: dict) -> str:
    """A pydantic error in the words of the config messages."""
    kind, value = error["type"], error.get("input")
    if kind == CONFIG_ERROR:
        return (error.get("ctx") or {}).get("reason", error["msg"])
    if kind == "missing":
        return "missing required key"
    if kind in ("int_type", "int_parsing", "int_from_float"):
        return f"must be an integer, got {type_name(value)} {value!r}"
    if kind in ("bool_type", "bool_parsing"):
        return f"must be true or false, got {type_name(value)}"
    if kind == "string_type":
        return f"must be a string, got {type_name(value)}"
    if kind == "list_type":
        return f"must be a list, got {type_name(value)}"
    if kind in ("model_type", "dict_type", "model_attributes_type"):
        return f"must be a mapping of keys, got {type_name(value)}"
    return error["msg"]


def suggestion_of(error: dict) -> str | None:
    if error["type"] == CONFIG_ERROR:
        return (error.get("ctx") or {}).get("suggestion")
    return None


def limits_of(info: ValidationInfo) -> Limits:
    return (info.context or {}).get("limits") or Limits()


# --------------------------------------------------------------------------- blocks


class Block(BaseModel):
    """A mapping of the config. Unknown keys are named (with a hint where the key is a known
    mistake, else the nearest known key), null values count as absent, and a missing
    required key can say what it should hold."""

    model_config = ConfigDict(frozen=True, extra="ignore", use_enum_values=False)

    # key -> (reason, suggestion) for keys that are known mistakes
    key_hints: ClassVar[dict[str, tuple[str, str | None]]] = {}
    # field -> what a missing value should be, e.g. "(a list of data files)"
    missing_notes: ClassVar[dict[str, str]] = {}
    # field -> what its list holds, e.g. "labels"
    list_nouns: ClassVar[dict[str, str]] = {}

    @model_validator(mode="wrap")
    @classmethod
    def _read_mapping(cls, data: Any, handler: Callable) -> Any:
        if not isinstance(data, dict):
            return handler(data)
        known = cls.known_keys()
        details = []
        for key in data:
            if key in known:
                continue
            if key in cls.key_hints:
                details.append(detail((str(key),), *cls.key_hints[key]))
            else:
                details.append(detail((str(key),), "unknown key", nearest(key, sorted(known))))
        given = {key: value for key, value in data.items() if key in known and value is not None}
        try:
            result = handler(given)
        except ValidationError as exc:
            details.extend(cls._reword(error) for error in exc.errors())
            result = None
        reraise(cls.__name__, details)
        return result

    @classmethod
    def known_keys(cls) -> set[str]:
        return set(cls.model_fields)

    @classmethod
    def _reword(cls, error: dict) -> InitErrorDetails:
        field = error["loc"][0] if len(error["loc"]) == 1 else None
        if field in cls.missing_notes and error["type"] == "missing":
            return detail(error["loc"], f"missing required key {cls.missing_notes[field]}")
        if field in cls.list_nouns and error["type"] == "list_type":
            reason = f"must be a list of {cls.list_nouns[field]}, got {type_name(error['input'])}"
            return detail(error["loc"], reason, None, error["input"])
        return passed_on(error)


# --------------------------------------------------------------------------- field types

Text = Annotated[str, Strict()]
Flag = Annotated[bool, Strict()]
Whole = Annotated[int, Strict()]


def _non_empty(value: str) -> str:
    if not value.strip():
        raise problem("must not be empty")
    return value


Name = Annotated[Text, AfterValidator(_non_empty)]


def between(low: int, high: int):
    def check(value: int) -> int:
        if not low <= value <= high:
            raise problem(f"must be between {low} and {high}, got {value}")
        return value

    return Annotated[Whole, AfterValidator(check)]


def at_least(low: int):
    def check(value: int) -> int:
        if value < low:
            wanted = "a positive integer" if low == 1 else f"at least {low}"
            raise problem(f"must be {wanted}, got {value}")
        return value

    return Annotated[Whole, AfterValidator(check)]


def _count(value: int) -> int:
    if value > MAX_DB_INTEGER:
        raise problem(f"must be at most {MAX_DB_INTEGER}, got {value}")
    return value


# An optional count that database columns can hold.
Count = Annotated[at_least(1), AfterValidator(_count)]


def limited(limit: str, minimum: int = 1):
    """An integer from ``minimum`` up to the named limit (a field of projects.limits.Limits)."""

    def check(value: int, info: ValidationInfo) -> int:
        limits = limits_of(info)
        if value > getattr(limits, limit):
            raise problem(limits.above(limit, value))
        return value

    return Annotated[at_least(minimum), AfterValidator(check)]


def choice(enum: type[StrEnum]):
    """One of an enum's values; a typo gets the nearest."""
    values = [member.value for member in enum]

    def check(value: Any) -> Any:
        if isinstance(value, enum):
            return value
        if not isinstance(value, str) or value not in values:
            raise problem(
                f"unknown value {value!r} (one of: {', '.join(values)})", nearest(value, values)
            )
        return enum(value)

    return Annotated[enum, BeforeValidator(check)]


def _written_path(value: str, info: ValidationInfo) -> str:
    """A path the worker writes under: relative, and inside the project's folder."""
    root: Path | None = (info.context or {}).get("root")
    if root is None:
        return value
    try:
        confine(info.field_name or "", value, root)
    except PathRefused as exc:
        raise problem(exc.reason) from None
    return value


WrittenPath = Annotated[Text, AfterValidator(_written_path)]


def string_list(value: Any) -> list[str]:
    if not isinstance(value, list):
        raise problem(f"must be a list of strings, got {type_name(value)}")
    details = [
        detail((index,), f"must be a non-empty string, got {entry!r}")
        for index, entry in enumerate(value)
        if not isinstance(entry, str) or not entry.strip()
    ]
    reraise("strings", details)
    return value


Strings = Annotated[list[str], BeforeValidator(string_list)]


def key_path(loc: tuple) -> str:
    path = ""
    for part in loc:
        path = join(path, part)
    return path
