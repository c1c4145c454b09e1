"""3D boxes drawn in a scene: center, size and yaw, each with a label."""

from __future__ import annotations

from typing import Any

from projects.configuration.fields import Text as TextField
from projects.configuration.labels import Labels
from projects.configuration.scheme_options import LABELS_NOTE, SchemeEntry
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
    short,
    stored_cells,
    typed_rows,
)
from projects.texts import gettext, gettext_noop

BOX_FIELDS = ("cx", "cy", "cz", "l", "w", "h", "yaw")
DEFAULT_POINTCLOUD_KEY = "pointcloud"
# What a message calls each field (the columns of the exact-edit table), with its article.
FIELD_NAMES = {
    "cx": gettext_noop("the x"),
    "cy": gettext_noop("the y"),
    "cz": gettext_noop("the z"),
    "l": gettext_noop("the length"),
    "w": gettext_noop("the width"),
    "h": gettext_noop("the height"),
    "yaw": gettext_noop("the yaw"),
}


class BoxOptions(SchemeEntry):
    labels: Labels
    # The instance field naming the scene's point cloud: a stored .bin/.pcd file or a URL.
    pointcloud_key: TextField = DEFAULT_POINTCLOUD_KEY
    missing_notes = {"labels": LABELS_NOTE}

    def options(self) -> dict[str, Any]:
        return {**super().options(), "labels": self.labels, "pointcloud_key": self.pointcloud_key}


class Boxes(SchemeType):
    types = ("spatial_annotation",)
    template = "annotation/schemes/boxes.html"
    measure = "boxes"
    Options = BoxOptions
    empty_list_answers = True  # [] is "no box to draw here", an answer of its own

    @classmethod
    def validate(cls, value, options, unit, limits) -> Any:
        """Each box: one of the labels, a centre and a size of three numbers (every size
        more than 0) and a yaw in radians; a refusal names the box's row (RowError)."""
        labels = label_names(options)
        cleaned = []
        for n, box in enumerate(objects(value, "boxes", limits)):
            where = gettext("Box %(number)s") % {"number": n + 1}
            if labels and box.get("label") not in labels:
                raise RowError(
                    choice_message(where, "label", box.get("label"), labels),
                    row=n,
                    fields=("label",),
                )
            check_label_text(box.get("label"), where, limits, row=n)
            center, size = box.get("center"), box.get("size")
            if not (isinstance(center, list) and len(center) == 3 and all(map(number, center))):
                raise RowError(
                    gettext(
                        "%(where)s: the centre must be three numbers, x, y and z (it is %(value)s)"
                    )
                    % {"where": where, "value": short(center)},
                    row=n,
                    fields=("cx", "cy", "cz"),
                )
            if not (isinstance(size, list) and len(size) == 3 and all(map(number, size))):
                raise RowError(
                    gettext(
                        "%(where)s: the size must be three numbers, length, width and height "
                        "(it is %(value)s)"
                    )
                    % {"where": where, "value": short(size)},
                    row=n,
                    fields=("l", "w", "h"),
                )
            sizes = dict(zip(("l", "w", "h"), size, strict=True))
            flat = [key for key, v in sizes.items() if v <= 0]
            if flat:
                if len(flat) == 1:
                    message = gettext("%(where)s: %(field)s must be more than 0 (it is %(value)s)")
                    message %= {
                        "where": where,
                        "field": gettext(FIELD_NAMES[flat[0]]),
                        "value": f"{sizes[flat[0]]:g}",
                    }
                else:
                    shown = gettext(", ").join(
                        gettext("%(field)s is %(value)s")
                        % {"field": gettext(FIELD_NAMES[key]), "value": f"{sizes[key]:g}"}
                        for key in flat
                    )
                    message = gettext("%(where)s: every size must be more than 0 (%(sizes)s)")
                    message %= {"where": where, "sizes": shown}
                raise RowError(message, row=n, fields=tuple(flat))
            yaw = box.get("yaw", 0.0)
            if not number(yaw):
                raise RowError(
                    gettext("%(where)s: the yaw must be a number of radians (it is %(value)s)")
                    % {"where": where, "value": short(yaw)},
                    row=n,
                    fields=("yaw",),
                )
            cleaned.append(
                {"label": box.get("label"), "center": center, "size": size, "yaw": float(yaw)}
            )
        return cleaned

    @classmethod
    def from_post(cls, name, options, post) -> Any:
        """The filled rows as boxes; [] when "Nothing to mark" is ticked and no row is
        filled; None (not answered) when neither."""
        rows = form_rows(post, name, (*BOX_FIELDS, "label"))
        if form_nothing(post, name, rows, "box"):
            return []
        if not rows:
            return None

        def cell(row, n, key, default=None):
            text = row[key] or (default or "")
            what = gettext("%(where)s: %(field)s") % {
                "where": gettext("Box %(number)s") % {"number": n + 1},
                "field": gettext(FIELD_NAMES[key]),
            }
            return form_float(text, what, row=n, field=key)

        return [
            {
                "label": row["label"] or None,
                "center": [cell(row, n, k) for k in ("cx", "cy", "cz")],
                "size": [cell(row, n, k) for k in ("l", "w", "h")],
                "yaw": cell(row, n, "yaw", "0"),
            }
            for n, row in enumerate(rows)
        ]

    @classmethod
    def view(cls, scheme, options, value, payload, posted=None) -> dict:
        """The rows to draw, and no empty one ("Add" makes it); "nothing" ticks the box (for
        a stored empty answer, or as it was sent when the form comes back refused)."""
        name = scheme["name"]
        if posted is not None:
            rows = typed_rows(
                posted, name, (*BOX_FIELDS, "label"), {k: k == "yaw" for k in BOX_FIELDS}
            )
            for row in rows:
                row["label_invalid"] = bool(label_names(options)) and not row["label"]
            return {
                "rows": rows,
                "nothing": bool(posted.get(f"{name}__nothing")),
                "points_url": cls._points_url(options, payload),
            }
        rows = []
        for box in value or []:
            numbers = [*box.get("center", ()), *box.get("size", ()), box.get("yaw")]
            cells = stored_cells(dict(zip(BOX_FIELDS, numbers, strict=False)))
            rows.append({"label": box.get("label"), "cells": cells})
        return {
            "rows": rows,
            "nothing": value == [],
            "points_url": cls._points_url(options, payload),
        }

    @classmethod
    def drawn_fields(cls, options) -> list[str]:
        return [cls._pointcloud_key(options)]

    @classmethod
    def media_fields(cls, options) -> dict[str, str]:
        return {cls._pointcloud_key(options): "pointcloud"}

    @staticmethod
    def _pointcloud_key(options: dict) -> str:
        return options.get("pointcloud_key") or DEFAULT_POINTCLOUD_KEY

    @classmethod
    def _points_url(cls, options: dict, payload: dict) -> str | None:
        """The decoded points of the instance's stored cloud (projects.media.unit_media);
        None without one, or when the field holds a URL (only stored files are decoded)."""
        entry = (payload.get("media") or {}).get(cls._pointcloud_key(options))
        return entry["points_url"] if entry else None
