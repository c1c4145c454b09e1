"""One label among the scheme's labels."""

from __future__ import annotations

from typing import Any

from .base import SchemeType, check_one_label, label_names


class Radio(SchemeType):
    types = ("radio",)
    template = "projects/schemes/radio.html"
    measure = "nominal"
    Options = None

    @classmethod
    def validate(cls, value, options, unit, limits) -> Any:
        return check_one_label(value, label_names(options))
