"""Free text (not compared by agreement)."""

from __future__ import annotations

from typing import Any

from .base import SchemeType


class Text(SchemeType):
    types = ("text",)
    template = "projects/schemes/text.html"
    measure = None
    Options = None

    @classmethod
    def validate(cls, value, options, unit, limits) -> Any:
        if not isinstance(value, str):
            raise ValueError("give a text")
        if len(value) > limits.max_text:
            raise ValueError(
                f"the text has {len(value)} characters; at most {limits.max_text} are allowed "
                f"(ANSWER_MAX_TEXT_LENGTH = {limits.max_text})"
            )
        return value
