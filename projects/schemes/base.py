"""The base class of annotation scheme types, and the helpers several types share.

A scheme type is everything the platform knows about one kind of question: how an answer
is checked, read from the annotation page's form, drawn on the page, flattened into a
table, and which agreement measure fits it. Each type is a subclass of ``SchemeType`` in
its own module of this package; defining the class registers it (``__init_subclass__``),
and the package imports every module it holds, so a new type is its module and its
template (templates/annotation/schemes/), plus the options the configuration accepts for it.

Pure Python: no Django, no other app. The REST API sends answers as JSON values, which go
straight to ``validate``; no separate API parsing step is needed (nor defined).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from projects.texts import gettext, gettext_noop, ngettext, pick


@dataclass(frozen=True)
class AnswerLimits:
    """Bounds on one submission; each error names the setting that holds the bound."""

    max_text: int  # ANSWER_MAX_TEXT_LENGTH: characters in one text answer or label
    max_objects: int  # ANSWER_MAX_OBJECTS: boxes, segments or trace steps in one answer
    max_depth: int  # ANSWER_MAX_DEPTH: nesting of lists and objects in one answer
    max_bytes: int  # ANSWER_MAX_BYTES: the submission's answers as UTF-8 JSON


@dataclass(frozen=True)
class UnitContext:
    """What a value is checked against: the tuple's item ids, and the instance's data."""

    items: list[str] = field(default_factory=list)
    data: dict = field(default_factory=dict)


# Registered types by stored type name (filled by SchemeType.__init_subclass__).
_REGISTRY: dict[str, type[SchemeType]] = {}

# What a browser's number field sends: ASCII digits only (float() would also take other
# scripts' digits, "inf", "nan" and underscores).
DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
WHOLE = re.compile(r"[0-9]+")
# The text a number field keeps as its value; any other text it would show empty.
HTML_NUMBER = re.compile(r"-?(?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


class SchemeType:
    """One kind of annotation scheme. Subclasses set the class attributes and override the
    methods that differ from the defaults below; every method is a classmethod and takes
    the scheme's options dict as projects.configuration stores it.

    ``validate`` is the one check of an answer value, whatever sent it: the web form (after
    ``from_post``), the REST API (JSON values, validated as they come) and file imports.
    """

    # The stored type names this class serves (a project's scheme dicts carry one of them).
    types: ClassVar[tuple[str, ...]] = ()
    # Its template under templates/annotation/schemes/ ("annotation/schemes/<name>.html").
    template: ClassVar[str | None] = None
    # What agreement computes from its answers: "nominal", "ordinal", "label_set", "boxes",
    # "segments", "tiered_segments", "trace", "bws", or None (answers not compared).
    measure: ClassVar[str | None] = None
    # The annotation_type names a configuration uses for it, where they differ from types.
    config_types: ClassVar[tuple[str, ...]] = ()
    # Its options in the configuration: a projects.configuration SchemeEntry model whose
    # options() gives the dict every method here receives.
    Options: ClassVar[Any] = None
    # Whether all schemes of the type are drawn in one block (the best-worst table of the
    # tuple's items, one column pair per scheme) rather than one fieldset each. Such blocks
    # lead the page; their template gets `block` (with `views`) instead of `view`.
    together: ClassVar[bool] = False
    # A value that is an object with these keys is one table column per key
    # (``<scheme>.<key>``) in CSV/TSV exports; empty: one column holding the value.
    table_keys: ClassVar[tuple[str, ...]] = ()
    # Whether an empty list is an answer of its own ("nothing to mark here": no boxes, no
    # segments) rather than no answer. For such a type ``[]`` is stored, exported and
    # compared by agreement; None (or the key absent) still means "not answered".
    empty_list_answers: ClassVar[bool] = False

    # ----------------------------------------------------------------- its configuration
    # Beyond ``Options``, a type may own more of the configuration:
    # - dialect A (the guides' first dialect) may name the type otherwise in annotation_type
    #   (``dialect_a_type``) and keep some of its settings in top-level keys of its own
    #   (``dialect_a_keys``), which ``translate_dialect_a`` rewrites in dialect B's words;
    # - its schemes may share one block per project (``Shared``: the stored model, which
    #   ``shared_block`` builds from the schemes' checked options), kept in the normal form
    #   under the type's stored name.
    dialect_a_type: ClassVar[str | None] = None
    dialect_a_keys: ClassVar[tuple[str, ...]] = ()
    Shared: ClassVar[Any] = None
    # The fewest and most items one unit of the type shows (None: it shows no item list).
    unit_items: ClassVar[tuple[int, int] | None] = None

    @classmethod
    def translate_dialect_a(cls, translated: Any, issues: Any) -> None:
        """Rewrite the type's dialect-A schemes and keys in ``translated.data`` (a
        projects.configuration.dialects.Translated) into dialect B's words; problems go to
        ``issues``."""

    @classmethod
    def shared_block(cls, entries: list, translated: Any, issues: Any) -> Any:
        """The block the type's schemes share, from [(index, checked options)] in file order
        (never empty), or None; problems go to ``issues``."""
        return None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for name in cls.types:
            known = _REGISTRY.get(name)
            if known is not None and known.__qualname__ != cls.__qualname__:
                raise TypeError(
                    f"scheme type {name!r} is served by both {known.__module__}."
                    f"{known.__qualname__} and {cls.__module__}.{cls.__qualname__}"
                )
            _REGISTRY[name] = cls

    # ----------------------------------------------------------------- answers

    @classmethod
    def validate(cls, value: Any, options: dict, unit: UnitContext, limits: AnswerLimits) -> Any:
        """The cleaned value to store; ValueError with the message the person sees."""
        raise NotImplementedError(f"{cls.__name__}.validate")

    @classmethod
    def from_post(cls, name: str, options: dict, post) -> Any:
        """The answer from the annotation page's form fields (a QueryDict: get, getlist,
        items), before validate; ValueError for fields that are not even numbers. The
        default reads one field named after the scheme (None when empty)."""
        return post.get(name) or None

    # ----------------------------------------------------------------- the page

    @classmethod
    def view(cls, scheme: dict, options: dict, value: Any, payload: dict, posted=None) -> dict:
        """What the template needs besides the generic view (scheme, options, value, labels,
        field, template): e.g. a trace's steps, a segment table's rows. ``payload`` is the
        unit as the annotator sees it (projects.selectors.unit_payload). ``posted``: the
        form as sent (a QueryDict) when the page comes back refused, so that what was typed
        is drawn again as typed instead of ``value``; the default reads it with from_post."""
        if posted is None:
            return {}
        try:
            return {"value": cls.from_post(scheme["name"], options, posted)}
        except ValueError:
            return {}

    @classmethod
    def block(cls, views: list[dict], payload: dict) -> dict:
        """For a ``together`` type: the context of its one block beyond ``views`` (the
        best-worst table's items with their keys). A true ``keyboard`` turns on the page's
        keyboard help and Enter to submit."""
        return {}

    @classmethod
    def drawn_fields(cls, options: dict) -> list[str]:
        """Instance data keys the page draws for this scheme (and the API sends), such as a
        trace's steps_key or a segment scheme's media_key."""
        return []

    @classmethod
    def media_fields(cls, options: dict) -> dict[str, str]:
        """Instance data keys that name a media file, with what it must be: "timeline"
        (audio or video) or "pointcloud". Such a field holds a URL or a relative path to a
        file the project stores at import (projects.media)."""
        return {}

    @classmethod
    def item_display(cls, options: dict) -> dict | None:
        """For a type that shows a tuple's items: {"randomize_order", "show_source"};
        None for the others."""
        return None

    # ----------------------------------------------------------------- data files

    @classmethod
    def data_problems(cls, options: dict, data: Mapping) -> list[str]:
        """Why one instance's data cannot be annotated with this scheme (empty: it can)."""
        return []

    # ----------------------------------------------------------------- tables

    @classmethod
    def export_columns(cls, name: str) -> list[str]:
        """The CSV/TSV columns of this scheme's answers."""
        return [f"{name}.{key}" for key in cls.table_keys] or [name]

    @classmethod
    def fits_table_keys(cls, value: Any) -> bool:
        """Whether a value read without its scheme splits into this type's table keys."""
        return (
            bool(cls.table_keys)
            and isinstance(value, Mapping)
            and bool(value)
            and set(value) <= set(cls.table_keys)
        )


# --------------------------------------------------------------------------- shared helpers


def label_names(options: dict) -> list[str]:
    """The names of the scheme's labels (strings or {"name": ...} entries), in order."""
    return [
        label["name"] if isinstance(label, dict) else str(label)
        for label in options.get("labels") or []
    ]


def label_texts(options: dict, language: str | None) -> dict[str, str]:
    """Label name -> the text people read in ``language``, for labels that give one."""
    return {
        label["name"]: pick(label["text"], language)
        for label in options.get("labels") or []
        if isinstance(label, dict) and label.get("text")
    }


def number(value: Any) -> bool:
    """A finite number a 64-bit float holds (comparing never overflows, and NaN fails it)."""
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and abs(value) <= sys.float_info.max
    )


def short(value: Any) -> str:
    """A value quoted for a message, cut to a readable length."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


# A refused choice of a table row's label or tier: none given, or one not offered.
CHOICE_MESSAGES = {
    ("label", False): gettext_noop("%(where)s: choose a label (%(choices)s)"),
    ("label", True): gettext_noop("%(where)s: the label %(value)s is not one of %(choices)s"),
    ("tier", False): gettext_noop("%(where)s: choose a tier (%(choices)s)"),
    ("tier", True): gettext_noop("%(where)s: the tier %(value)s is not one of %(choices)s"),
}


def choice_message(where: str, what: str, value: Any, choices: list[str]) -> str:
    """A refused choice in plain words: "Box 2: choose a label (car, truck)", or when one
    was given, "Box 2: the label 'bus' is not one of car, truck"; ``what``: label or tier."""
    given = not (value is None or value == "")
    return gettext(CHOICE_MESSAGES[what, given]) % {
        "where": where,
        "value": short(value),
        "choices": ", ".join(choices),
    }


def check_one_label(value: Any, labels: list[str]) -> str:
    """A single choice among the labels (radio)."""
    if not isinstance(value, str) or value not in labels:
        raise ValueError(gettext("choose one of: %(labels)s") % {"labels": ", ".join(labels)})
    return value


def check_label_text(text: Any, where: str, limits: AnswerLimits, row: int | None = None) -> None:
    """A label is a text within the length limit; ``row``: the table row a RowError names."""
    message = None
    if text is not None and not isinstance(text, str):
        message = gettext("%(where)s: the label must be a text") % {"where": where}
    elif text is not None and len(text) > limits.max_text:
        message = gettext(
            "%(where)s: the label is longer than %(most)s characters "
            "(ANSWER_MAX_TEXT_LENGTH = %(most)s)"
        ) % {"where": where, "most": limits.max_text}
    if message is None:
        return
    if row is None:
        raise ValueError(message)
    raise RowError(message, row=row, fields=("label",))


def too_many(count: int, what: str, limits: AnswerLimits) -> None:
    if count > limits.max_objects:
        raise ValueError(
            f"{count} {what} in one answer; at most {limits.max_objects} are allowed "
            f"(ANSWER_MAX_OBJECTS = {limits.max_objects})"
        )


def objects(value: Any, what: str, limits: AnswerLimits) -> list[dict]:
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise ValueError("give a list of objects")
    too_many(len(value), what, limits)
    return value


def _quoted(text: str) -> str:
    return repr(text) if len(text) <= 40 else repr(text[:37]) + "..."


class RowError(ValueError):
    """A refused row of a table answer (boxes, segments): its message, the row (0-based,
    among the rows filled in, so the n-th box or segment) and the form fields at fault
    (none: the row as a whole), so that the page marks that row and those cells."""

    def __init__(self, message: str, *, row: int, fields: tuple[str, ...] = ()):
        super().__init__(message)
        self.row = row
        self.fields = tuple(fields)


def seconds(value: float) -> str:
    """A time in seconds as a message writes it: 7.2 s, 3 s."""
    return f"{value:g} s"


def form_float(text: str, what: str, *, row: int | None = None, field: str = "") -> float:
    """A number field's text as a float (inf passes: validate refuses non-finite numbers).
    ``what``: how the message names the cell ("Box 3: the width"); ``row`` and ``field``:
    the row and form field a RowError names (without a row, a plain ValueError)."""
    if len(text) <= 400 and DECIMAL.fullmatch(text):
        return float(text)
    if not text:
        message = gettext("%(what)s is empty; fill in a number") % {"what": what}
    else:
        message = gettext(
            "%(what)s is %(text)s, which is not a number (write it with the digits 0-9)"
        ) % {"what": what, "text": _quoted(text)}
    if row is None:
        raise ValueError(message)
    raise RowError(message, row=row, fields=(field,) if field else ())


def form_rows(post, name: str, fields: tuple[str, ...]) -> list[dict]:
    """Rows of parallel form lists `name__field`; a row counts when any field but the
    tier (a select that always holds a value) is filled."""
    columns = {f: post.getlist(f"{name}__{f}") for f in fields}
    n = max((len(c) for c in columns.values()), default=0)
    rows = []
    for i in range(n):
        row = {f: (columns[f][i].strip() if i < len(columns[f]) else "") for f in fields}
        if any(v for f, v in row.items() if f != "tier"):
            rows.append(row)
    return rows


def typed_rows(post, name: str, fields: tuple[str, ...], numbers: dict[str, bool]) -> list[dict]:
    """The rows of parallel form lists as typed, for drawing a refused form again: the rows
    form_rows counts, each field's text unchanged, and under "cells" per number field
    (``numbers``: field -> whether it may be left empty) {"text", "invalid", "typed"}:
    ``invalid`` when from_post cannot read it, ``typed`` when it holds text a number field
    would show empty (the page then draws it as a text field, so nothing typed is hidden)."""
    columns = {f: post.getlist(f"{name}__{f}") for f in fields}
    n = max((len(c) for c in columns.values()), default=0)
    rows = []
    for i in range(n):
        row = {f: (columns[f][i] if i < len(columns[f]) else "") for f in fields}
        if not any(v.strip() for f, v in row.items() if f != "tier"):
            continue
        cells = {}
        for key, may_be_empty in numbers.items():
            text = row[key].strip()
            bad = not (len(text) <= 400 and DECIMAL.fullmatch(text))
            cells[key] = {
                "text": row[key],
                "invalid": bad and not (may_be_empty and not text),
                "typed": bool(row[key]) and not HTML_NUMBER.fullmatch(row[key]),
            }
        rows.append({**row, "cells": cells})
    return rows


def stored_cells(numbers: dict[str, Any]) -> dict[str, dict]:
    """Number cells (as typed_rows gives them) for a stored answer's values."""
    return {
        key: {"text": "" if v is None else v, "invalid": False, "typed": False}
        for key, v in numbers.items()
    }


def form_nothing(post, name: str, rows: list[dict], kind: str) -> bool:
    """Whether the scheme's "Nothing to mark" box (`name__nothing`) is ticked; ValueError
    when it is ticked while rows are filled in too (the answer would say both); ``kind``:
    box or segment."""
    ticked = bool(post.get(f"{name}__nothing"))
    if ticked and rows:
        count = len(rows)
        if kind == "box":
            message = ngettext(
                '"Nothing to mark" is ticked, but %(count)s box is filled in: untick it, or '
                "remove the boxes",
                '"Nothing to mark" is ticked, but %(count)s boxes are filled in: untick it, or '
                "remove the boxes",
                count,
            )
        else:
            message = ngettext(
                '"Nothing to mark" is ticked, but %(count)s segment is filled in: untick it, '
                "or remove the segments",
                '"Nothing to mark" is ticked, but %(count)s segments are filled in: untick '
                "it, or remove the segments",
                count,
            )
        raise ValueError(message % {"count": count})
    return ticked


def json_type(value: Any) -> str:
    """A JSON value's kind for a message: null, a boolean, a number, a string, ..."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object"
