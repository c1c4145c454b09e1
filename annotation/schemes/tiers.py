"""Time segments on named tiers (who speaks when): a segment scheme whose segments each
name one of the scheme's tiers."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator

from annotation.schemes.segments import Segments
from projects.configuration.fields import Strings, detail, problem, reraise
from projects.configuration.scheme_options import LABELS_NOTE


def _tier_list(value: list[str]) -> list[str]:
    if not value:
        raise problem("must list at least one tier")
    details = [
        detail((index,), f"duplicate tier {tier!r}")
        for index, tier in enumerate(value)
        if tier in value[:index]
    ]
    reraise("tiers", details)
    return value


class TierOptions(Segments.Options):
    tiers: Annotated[Strings, AfterValidator(_tier_list)]
    missing_notes = {"labels": LABELS_NOTE, "tiers": "(tiered_annotation lists its tiers)"}

    def options(self) -> dict[str, Any]:
        return {**super().options(), "tiers": self.tiers}


class Tiers(Segments):
    types = ("tiered_annotation",)
    template = "annotation/schemes/segments.html"
    measure = "tiered_segments"
    Options = TierOptions
    tiered = True
