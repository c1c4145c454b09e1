"""A point on a scale: 1..size, or one of the scheme's labels in order."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationInfo, model_validator

from projects.configuration.fields import Flag, Text, detail, limited, limits_of, reraise
from projects.configuration.labels import Labels
from projects.configuration.scheme_options import SchemeEntry
from projects.schemes.base import WHOLE, SchemeType, label_names
from projects.texts import gettext


def _size(options: dict) -> int:
    return int(options.get("size") or 5)


class LikertOptions(SchemeEntry):
    size: limited("likert_size", minimum=2) | None = None
    labels: Labels | None = None
    min_label: Text = ""
    max_label: Text = ""
    sequential_key_binding: Flag = False

    @model_validator(mode="after")
    def _size_or_labels(self, info: ValidationInfo) -> LikertOptions:
        limits = limits_of(info)
        if self.size is None and self.labels is None:
            reason = "missing required key (likert needs size or labels)"
            reraise("likert", [detail(("size",), reason)])
        if self.size is not None and self.labels is not None and self.size != len(self.labels):
            reason = f"is {self.size} but {len(self.labels)} labels are listed"
            reraise("likert", [detail(("size",), reason)])
        if self.labels is not None and len(self.labels) > limits.likert_size:
            reason = limits.above("likert_size", len(self.labels), "labels")
            reraise("likert", [detail(("labels",), reason)])
        return self

    def options(self) -> dict[str, Any]:
        options = {
            **super().options(),
            "size": self.size if self.size is not None else len(self.labels or []),
            "min_label": self.min_label,
            "max_label": self.max_label,
            "sequential_key_binding": self.sequential_key_binding,
        }
        if self.labels:
            options["labels"] = self.labels
        return options


class Likert(SchemeType):
    types = ("likert",)
    template = "annotation/schemes/likert.html"
    measure = "ordinal"
    Options = LikertOptions

    @classmethod
    def validate(cls, value, options, unit, limits) -> Any:
        labels = label_names(options)
        if labels:
            if value in labels:
                return value
            raise ValueError(gettext("choose one of: %(labels)s") % {"labels": ", ".join(labels)})
        size = _size(options)
        if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
            value = int(value) if len(value) < 20 else 0
        if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= size:
            raise ValueError(gettext("give a whole number from 1 to %(size)s") % {"size": size})
        return value

    @classmethod
    def from_post(cls, name, options, post) -> Any:
        value = post.get(name, "").strip()
        whole = WHOLE.fullmatch(value) and len(value) < 20
        return int(value) if whole else (value or None)

    @classmethod
    def view(cls, scheme, options, value, payload, posted=None) -> dict:
        typed = super().view(scheme, options, value, payload, posted)
        if label_names(options):
            return typed
        return {**typed, "points": list(range(1, _size(options) + 1))}
