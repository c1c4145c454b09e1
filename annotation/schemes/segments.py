"""Labelled time segments of a media file (start and end in seconds)."""

from __future__ import annotations

from typing import Any

from projects.configuration.fields import Text as TextField
from projects.configuration.labels import Labels
from projects.configuration.scheme_options import LABELS_NOTE, SchemeEntry
from projects.configuration.vocabulary import DEFAULT_MEDIA_KEY
from projects.schemes.base import (
    RowError,
    SchemeType,
    check_label_text,
    choice_message,
    form_float,
    form_nothing,
    form_rows,
    label_names,
    number,
    objects,
    seconds,
    short,
    stored_cells,
    typed_rows,
)
from projects.texts import gettext


class SegmentOptions(SchemeEntry):
    labels: Labels
    media_key: TextField = DEFAULT_MEDIA_KEY
    missing_notes = {"labels": LABELS_NOTE}

    def options(self) -> dict[str, Any]:
        return {**super().options(), "labels": self.labels, "media_key": self.media_key}


class Segments(SchemeType):
    types = ("temporal_grounding",)
    template = "annotation/schemes/segments.html"
    measure = "segments"
    Options = SegmentOptions
    empty_list_answers = True  # [] is "no segment to mark here", an answer of its own
    # Whether each segment names one of the scheme's tiers (tiers.py).
    tiered = False

    @classmethod
    def validate(cls, value, options, unit, limits) -> Any:
        """Each segment: a start and an end in seconds, 0 <= start <= end, one of the
        labels (and of the tiers); a refusal names the segment's row (RowError)."""
        labels = label_names(options)
        tier_names = list(options.get("tiers") or [])
        cleaned = []
        for n, seg in enumerate(objects(value, "segments", limits)):
            where = gettext("Segment %(number)s") % {"number": n + 1}
            start, end = seg.get("start"), seg.get("end")
            bad = tuple(k for k, v in (("start", start), ("end", end)) if not number(v))
            if bad:
                raise RowError(
                    gettext(
                        "%(where)s: the start and the end must be numbers of seconds "
                        "(the start is %(start)s, the end %(end)s)"
                    )
                    % {"where": where, "start": short(start), "end": short(end)},
                    row=n,
                    fields=bad,
                )
            if start < 0 or start > end:
                if start < 0:
                    message = gettext(
                        "%(where)s: the start must be between 0 and the end (it is %(start)s)"
                    )
                else:
                    message = gettext(
                        "%(where)s: the start must be between 0 and the end (it is %(start)s; "
                        "the end is %(end)s)"
                    )
                raise RowError(
                    message % {"where": where, "start": seconds(start), "end": seconds(end)},
                    row=n,
                    fields=("start",) if start < 0 else ("start", "end"),
                )
            if labels and seg.get("label") not in labels:
                raise RowError(
                    choice_message(where, "label", seg.get("label"), labels),
                    row=n,
                    fields=("label",),
                )
            check_label_text(seg.get("label"), where, limits, row=n)
            item = {"start": start, "end": end, "label": seg.get("label")}
            if cls.tiered:
                if seg.get("tier") not in tier_names:
                    raise RowError(
                        choice_message(where, "tier", seg.get("tier"), tier_names),
                        row=n,
                        fields=("tier",),
                    )
                item["tier"] = seg["tier"]
            cleaned.append(item)
        return cleaned

    @classmethod
    def from_post(cls, name, options, post) -> Any:
        """The filled rows as segments; [] when "Nothing to mark" is ticked and no row is
        filled; None (not answered) when neither."""
        rows = form_rows(post, name, ("start", "end", "label", "tier"))
        if form_nothing(post, name, rows, "segment"):
            return []
        if not rows:
            return None

        def cell(row, n, key):
            if key == "start":
                what = gettext("Segment %(number)s: the start")
            else:
                what = gettext("Segment %(number)s: the end")
            return form_float(row[key], what % {"number": n + 1}, row=n, field=key)

        return [
            {
                "start": cell(row, n, "start"),
                "end": cell(row, n, "end"),
                "label": row["label"] or None,
                **({"tier": row["tier"]} if cls.tiered else {}),
            }
            for n, row in enumerate(rows)
        ]

    @classmethod
    def view(cls, scheme, options, value, payload, posted=None) -> dict:
        """The rows to draw, and no empty one ("Add" makes it); "nothing" ticks the box (for
        a stored empty answer, or as it was sent when the form comes back refused)."""
        name = scheme["name"]
        if posted is not None:
            fields = ("start", "end", "label", *(("tier",) if cls.tiered else ()))
            rows = typed_rows(posted, name, fields, {"start": False, "end": False})
            for row in rows:
                row["label_invalid"] = bool(label_names(options)) and not row["label"]
            nothing = bool(posted.get(f"{name}__nothing"))
        else:
            rows = [
                {**seg, "cells": stored_cells({"start": seg.get("start"), "end": seg.get("end")})}
                for seg in value or []
            ]
            nothing = value == []  # a stored empty answer ticks "Nothing to mark"
        return {
            "rows": rows,
            "nothing": nothing,
            **cls._media(options, payload),
            "tiered": cls.tiered,
        }

    @classmethod
    def _media(cls, options: dict, payload: dict) -> dict:
        """media_url: what the player loads (a stored file's project-media URL, or the URL
        written in the data); media_kind: "audio" or "video"; media: the same URL, as
        templates read it before stored files existed."""
        key = cls._media_key(options)
        entry = (payload.get("media") or {}).get(key)
        if entry is not None:
            url, kind = entry["url"], entry["kind"]
        else:  # a payload built without media entries: the value as written
            url, kind = payload["data"].get(key), "video"
        return {"media_url": url, "media_kind": kind, "media": url}

    @classmethod
    def drawn_fields(cls, options) -> list[str]:
        return [cls._media_key(options)]

    @classmethod
    def media_fields(cls, options) -> dict[str, str]:
        return {cls._media_key(options): "timeline"}

    @staticmethod
    def _media_key(options: dict) -> str:
        return options.get("media_key") or "media_url"
