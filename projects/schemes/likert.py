"""A point on a scale: 1..size, or one of the scheme's labels in order."""

from __future__ import annotations

from typing import Any

from .base import WHOLE, SchemeType, label_names


def _size(options: dict) -> int:
    return int(options.get("size") or 5)


class Likert(SchemeType):
    types = ("likert",)
    template = "projects/schemes/likert.html"
    measure = "ordinal"
    Options = None

    @classmethod
    def validate(cls, value, options, unit, limits) -> Any:
        labels = label_names(options)
        if labels:
            if value in labels:
                return value
            raise ValueError(f"choose one of: {', '.join(labels)}")
        size = _size(options)
        if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
            value = int(value) if len(value) < 20 else 0
        if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= size:
            raise ValueError(f"give a whole number from 1 to {size}")
        return value

    @classmethod
    def from_post(cls, name, options, post) -> Any:
        value = post.get(name, "").strip()
        whole = WHOLE.fullmatch(value) and len(value) < 20
        return int(value) if whole else (value or None)

    @classmethod
    def view(cls, scheme, options, value, payload) -> dict:
        if label_names(options):
            return {}
        return {"points": list(range(1, _size(options) + 1))}
