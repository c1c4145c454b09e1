"""Free text (not compared by agreement)."""

from __future__ import annotations

from typing import Any

from projects.configuration.fields import Flag
from projects.configuration.scheme_options import SchemeEntry
from projects.schemes.base import SchemeType
from projects.texts import gettext


class TextOptions(SchemeEntry):
    multiline: Flag = False

    def options(self) -> dict[str, Any]:
        return {**super().options(), "multiline": self.multiline}


class Text(SchemeType):
    types = ("text",)
    template = "annotation/schemes/text.html"
    measure = None
    Options = TextOptions

    @classmethod
    def validate(cls, value, options, unit, limits) -> Any:
        if not isinstance(value, str):
            raise ValueError(gettext("give a text"))
        if len(value) > limits.max_text:
            raise ValueError(
                f"the text has {len(value)} characters; at most {limits.max_text} are allowed "
                f"(ANSWER_MAX_TEXT_LENGTH = {limits.max_text})"
            )
        return value
