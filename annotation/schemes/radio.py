"""One label among the scheme's labels."""

from __future__ import annotations

from typing import Any

from projects.configuration.scheme_options import ChoiceOptions
from projects.schemes.base import SchemeType, check_one_label, label_names


class RadioOptions(ChoiceOptions):
    pass


class Radio(SchemeType):
    types = ("radio",)
    template = "annotation/schemes/radio.html"
    measure = "nominal"
    Options = RadioOptions

    @classmethod
    def validate(cls, value, options, unit, limits) -> Any:
        return check_one_label(value, label_names(options))
