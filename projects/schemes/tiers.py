"""Time segments on named tiers (who speaks when): a segment scheme whose segments each
name one of the scheme's tiers."""

from __future__ import annotations

from .segments import Segments


class Tiers(Segments):
    types = ("tiered_annotation",)
    template = "projects/schemes/segments.html"
    measure = "tiered_segments"
    Options = None
    tiered = True
