"""3D boxes drawn in a scene: center, size and yaw, each with a label."""

from __future__ import annotations

from typing import Any

from projects.configuration.fields import Text as TextField
from projects.configuration.labels import Labels
from projects.configuration.scheme_options import LABELS_NOTE, SchemeEntry
from projects.schemes.base import (
    SchemeType,
    check_label_text,
    form_float,
    form_nothing,
    form_rows,
    label_names,
    number,
    objects,
    stored_cells,
    typed_rows,
)

BOX_FIELDS = ("cx", "cy", "cz", "l", "w", "h", "yaw")
DEFAULT_POINTCLOUD_KEY = "pointcloud"
# What a message calls each field: the column headings of the exact-edit table.
FIELD_NAMES = {
    "cx": "x",
    "cy": "y",
    "cz": "z",
    "l": "length",
    "w": "width",
    "h": "height",
    "yaw": "yaw",
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
        labels = label_names(options)
        cleaned = []
        for n, box in enumerate(objects(value, "boxes", limits)):
            where = f"box {n + 1}"
            if labels and box.get("label") not in labels:
                raise ValueError(f"{where}: label must be one of {', '.join(labels)}")
            check_label_text(box.get("label"), where, limits)
            center, size = box.get("center"), box.get("size")
            if not (isinstance(center, list) and len(center) == 3 and all(map(number, center))):
                raise ValueError(f"{where}: center must be three finite numbers [x, y, z]")
            if not (isinstance(size, list) and len(size) == 3 and all(map(number, size))):
                raise ValueError(f"{where}: size must be three finite numbers [l, w, h]")
            if min(size) <= 0:
                raise ValueError(f"{where}: every size must be positive")
            yaw = box.get("yaw", 0.0)
            if not number(yaw):
                raise ValueError(f"{where}: yaw must be a finite number (radians)")
            cleaned.append(
                {"label": box.get("label"), "center": center, "size": size, "yaw": float(yaw)}
            )
        return cleaned

    @classmethod
    def from_post(cls, name, options, post) -> Any:
        """The filled rows as boxes; [] when "Nothing to mark" is ticked and no row is
        filled; None (not answered) when neither."""
        rows = form_rows(post, name, (*BOX_FIELDS, "label"))
        if form_nothing(post, name, rows, "box", "boxes"):
            return []
        if not rows:
            return None
        return [
            {
                "label": row["label"] or None,
                "center": [
                    form_float(row[k], f"box {n + 1} {FIELD_NAMES[k]}") for k in ("cx", "cy", "cz")
                ],
                "size": [
                    form_float(row[k], f"box {n + 1} {FIELD_NAMES[k]}") for k in ("l", "w", "h")
                ],
                "yaw": form_float(row["yaw"] or "0", f"box {n + 1} yaw"),
            }
            for n, row in enumerate(rows)
        ]

    @classmethod
    def view(cls, scheme, options, value, payload, posted=None) -> dict:
        """The rows to draw plus one empty row to add to; "nothing" ticks the box (for a
        stored empty answer, or as it was sent when the form comes back refused)."""
        name = scheme["name"]
        if posted is not None:
            rows = typed_rows(
                posted, name, (*BOX_FIELDS, "label"), {k: k == "yaw" for k in BOX_FIELDS}
            )
            for row in rows:
                row["label_invalid"] = bool(label_names(options)) and not row["label"]
            return {
                "rows": [*rows, {}],
                "nothing": bool(posted.get(f"{name}__nothing")),
                "points_url": cls._points_url(options, payload),
            }
        rows = []
        for box in value or []:
            numbers = [*box.get("center", ()), *box.get("size", ()), box.get("yaw")]
            cells = stored_cells(dict(zip(BOX_FIELDS, numbers, strict=False)))
            rows.append({"label": box.get("label"), "cells": cells})
        return {
            "rows": [*rows, {}],
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
