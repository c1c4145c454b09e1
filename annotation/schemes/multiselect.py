"""Any set of the scheme's labels."""

from __future__ import annotations

from typing import Any

from projects.configuration.scheme_options import ChoiceOptions
from projects.schemes.base import SchemeType, label_names, short
from projects.texts import gettext


class MultiselectOptions(ChoiceOptions):
    pass


class Multiselect(SchemeType):
    types = ("multiselect",)
    template = "annotation/schemes/multiselect.html"
    measure = "label_set"
    Options = MultiselectOptions

    @classmethod
    def validate(cls, value, options, unit, limits) -> Any:
        labels = label_names(options)
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ValueError("give a list of labels")
        unknown = [v for v in value if v not in labels]
        if unknown:
            raise ValueError(
                f"unknown label(s) {short(', '.join(unknown))}; choose from {', '.join(labels)}"
            )
        if len(set(value)) != len(value):
            raise ValueError(gettext("a label is given twice"))
        return value

    @classmethod
    def from_post(cls, name, options, post) -> Any:
        return post.getlist(name)
