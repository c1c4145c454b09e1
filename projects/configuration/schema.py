"""The one schema a configuration is validated against: dialect B's shape (a dialect A file
is translated into it first, see ``dialects``). Declarative: each block a model, each
default from ``vocabulary``, each scheme type's options from its own model."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BeforeValidator,
    ValidationError,
    ValidationInfo,
    model_validator,
)

from projects.configuration.fields import (
    Block,
    Count,
    Flag,
    Name,
    Strings,
    Text,
    WrittenPath,
    choice,
    detail,
    limited,
    passed_on,
    problem,
    reraise,
)
from projects.configuration.gold import GoldBlock
from projects.configuration.issues import nearest, type_name
from projects.configuration.scheme_options import SchemeEntry, annotation_types, option_model
from projects.configuration.texts import LanguageCode, Localized, sizes
from projects.configuration.vocabulary import (
    DATA_SUFFIXES,
    DEFAULT_ANSWER_FORMAT,
    DEFAULT_ASSIGNMENT,
    DEFAULT_ID_KEY,
    DEFAULT_LEASE_MINUTES,
    DEFAULT_MAX_PARTICIPANTS,
    DEFAULT_OUTPUT_DIR,
    DEFAULT_PARTICIPANT_ID_PARAM,
    DEFAULT_PARTICIPANT_LEASE_MINUTES,
    DEFAULT_TEXT_KEY,
    MAX_PARTICIPANT_LEASE_MINUTES,
    AnswerFormat,
    AssignmentStrategy,
    DisplayType,
)


class ItemProperties(Block):
    id_key: Text = DEFAULT_ID_KEY
    text_key: Text = DEFAULT_TEXT_KEY


class UserConfig(Block):
    allow_all_users: Flag = False
    authorized_users: Strings = []


class DisplayOptions(Block):
    label: Text | None = None


class DisplayField(Block):
    key: Name
    type: choice(DisplayType) = DisplayType.TEXT
    label: Text | None = None
    display_options: DisplayOptions | None = None


class InstanceDisplay(Block):
    fields: list[DisplayField] = []

    @model_validator(mode="after")
    def _each_field_once(self) -> InstanceDisplay:
        seen: set[str] = set()
        details = []
        for index, entry in enumerate(self.fields):
            if entry.key in seen:
                details.append(
                    detail(("fields", index, "key"), f"field {entry.key!r} is listed twice")
                )
            seen.add(entry.key)
        reraise("instance_display", details)
        return self


_PARAM_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}")


def _param_name(value: str) -> str:
    if not _PARAM_NAME.fullmatch(value):
        raise problem(
            f"must be a query parameter name (a letter, then letters, digits or _, at most "
            f"64), got {value!r}"
        )
    return value


# What a browser or a proxy accepts in a header (the panel's address goes into Location and
# Refresh): visible ASCII only. A code is shown on a page and typed into a panel: printable
# ASCII, spaces inside it allowed.
_HEADER_SAFE = re.compile(r"[\x21-\x7e]+")
_PRINTABLE = re.compile(r"[\x20-\x7e]+")
MAX_PANEL_URL = 2000
MAX_CODE = 200
MAX_OUTCOME_MESSAGE = 2000


def _bad_character(value: str, allowed: re.Pattern) -> str | None:
    """Why the value holds a character it may not: a control character, a space or a
    character outside ASCII, named by its code point; None when every character is allowed."""
    for char in value:
        if allowed.fullmatch(char):
            continue
        point = f"U+{ord(char):04X}"
        if ord(char) < 0x20 or 0x7F <= ord(char) < 0xA0:
            return f"contains a control character ({point})"
        if char.isspace():
            return f"contains a space or other blank ({point}); percent-encode it"
        return f"contains a character outside printable ASCII ({point}); percent-encode it"
    return None


def _panel_url(value: str) -> str:
    if len(value) > MAX_PANEL_URL:
        raise problem(f"must be at most {MAX_PANEL_URL} characters, got {len(value)}")
    if (bad := _bad_character(value, _HEADER_SAFE)) is not None:
        raise problem(bad)
    if not re.fullmatch(r"https?://[^/?#]+(?:[/?#]\S*)?", value, flags=re.IGNORECASE):
        raise problem(f"must be an absolute http:// or https:// address, got {value!r}")
    return value


def _code(value: str) -> str:
    if len(value) > MAX_CODE:
        raise problem(f"must be at most {MAX_CODE} characters, got {len(value)}")
    if (bad := _bad_character(value, _PRINTABLE)) is not None:
        raise problem(bad)
    if value != value.strip():
        raise problem("must not start or end with a space")
    return value


def _message(value):
    for code, text in sizes(value):
        where = f"the {code} text " if code else ""
        if not text.strip():
            raise problem(f"{where}must not be empty")
        if len(text) > MAX_OUTCOME_MESSAGE:
            raise problem(
                f"{where}must be at most {MAX_OUTCOME_MESSAGE} characters, got {len(text)}"
            )
        for char in text:
            if (ord(char) < 0x20 and char not in "\n\t") or 0x7F <= ord(char) < 0xA0:
                raise problem(f"{where}contains a control character (U+{ord(char):04X})")
    return value


def _consent(value):
    for code, text in sizes(value):
        where = f"the {code} text " if code else ""
        if not text.strip():
            raise problem(f"{where}must not be empty")
        if len(text) > MAX_CONSENT_CHARS:
            raise problem(f"{where}must be at most {MAX_CONSENT_CHARS} characters, got {len(text)}")
    return value


MAX_CONSENT_CHARS = 64 * 1024


PanelUrl = Annotated[Text, AfterValidator(_panel_url)]
Code = Annotated[Name, AfterValidator(_code)]


def _lease(value: int) -> int:
    if value > MAX_PARTICIPANT_LEASE_MINUTES:
        raise problem(f"must be at most {MAX_PARTICIPANT_LEASE_MINUTES} minutes, got {value}")
    return value


class Outcome(Block):
    """How a participant's part ends other than by completing it (partial, screen_out): the
    code to give the panel, where to send them back, and what the page says."""

    code: Code | None = None
    url: PanelUrl | None = None
    message: Annotated[Localized, AfterValidator(_message)] | None = None


class Participants(Block):
    """A public entry link for crowd participants (crowds/participants.py)."""

    open_link: Flag = False
    id_param: Annotated[Text, AfterValidator(_param_name)] = DEFAULT_PARTICIPANT_ID_PARAM
    units_per_participant: Count | None = None
    completion_code: Code | None = None
    completion_url: PanelUrl | None = None
    consent: Annotated[Localized, AfterValidator(_consent)] | None = None
    max_participants: Count = DEFAULT_MAX_PARTICIPANTS
    lease_minutes: Annotated[Count, AfterValidator(_lease)] = DEFAULT_PARTICIPANT_LEASE_MINUTES
    partial: Outcome | None = None
    screen_out: Outcome | None = None


def _data_files(value: Any) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        raise problem(f"must be a list of file names, got {type_name(value)}")
    if not value:
        raise problem("must name at least one data file")
    details = []
    for index, name in enumerate(value):
        if not isinstance(name, str) or not name.strip():
            details.append(detail((index,), f"must be a file name, got {name!r}"))
        elif name in value[:index]:
            details.append(detail((index,), f"{name!r} is listed twice"))
        elif (suffix := Path(name).suffix.lower()) not in DATA_SUFFIXES:
            details.append(
                detail(
                    (index,),
                    f"unsupported file type {suffix or '(none)'!r} for {name!r} "
                    f"(use {', '.join(DATA_SUFFIXES)})",
                )
            )
    reraise("data_files", details)
    return value


def _agreement_metrics(value: Any) -> dict:
    if not isinstance(value, dict):
        raise problem(f"must be a mapping of keys, got {type_name(value)}")
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        raise problem("holds a value that is not plain data (quote dates and times)") from None
    if value:
        # Chosen metrics would be ignored: refuse them rather than pretend.
        raise problem(
            "is not supported: the agreement report computes every figure each scheme's "
            "type defines; remove this key"
        )
    return value


class _SchemeHead(Block):
    """What can be checked of a scheme whose type is missing or unknown."""

    name: Name


def _scheme_list(value: Any, info: ValidationInfo) -> list[SchemeEntry]:
    if not isinstance(value, list):
        raise problem(f"must be a list of schemes, got {type_name(value)}")
    if not value:
        raise problem("must hold at least one scheme")
    details: list = []
    schemes: list[SchemeEntry] = []
    names: dict[str, int] = {}
    skipped = (info.context or {}).get("skipped_schemes") or set()
    for index, entry in enumerate(value):
        if index in skipped:
            continue  # reported already (a scheme of the other dialect)
        if entry is None:
            details.append(detail((index,), "empty scheme"))
            continue
        if not isinstance(entry, dict):
            details.append(detail((index,), f"must be a mapping of keys, got {type_name(entry)}"))
            continue
        name = entry.get("name")
        if isinstance(name, str) and name in names:
            details.append(
                detail(
                    (index, "name"),
                    f"duplicate scheme name {name!r} (also annotation_schemes[{names[name]}])",
                )
            )
        elif isinstance(name, str):
            names[name] = index
        kind = entry.get("annotation_type")
        model = option_model(kind) if isinstance(kind, str) else None
        try:
            if model is None:
                _head(entry, info)
            else:
                schemes.append(model.model_validate(entry, context=info.context))
        except ValidationError as exc:
            details.extend(passed_on(error, (index,)) for error in exc.errors())
        if model is None:
            details.append(_type_problem(index, kind))
    reraise("annotation_schemes", details)
    return schemes


def _head(entry: dict, info: ValidationInfo) -> None:
    head = {"name": entry["name"]} if entry.get("name") is not None else {}
    _SchemeHead.model_validate(head, context=info.context)


def _type_problem(index: int, kind: Any):
    where = (index, "annotation_type")
    if kind is None:
        return detail(where, "missing required key")
    return detail(where, f"unknown annotation type {kind!r}", nearest(kind, annotation_types()))


Schemes = Annotated[list[SchemeEntry], BeforeValidator(_scheme_list)]


class ConfigFile(Block):
    """A configuration file in dialect B's words."""

    task_name: Text | None = None
    language: LanguageCode = None
    task_dir: Text = "."
    data_files: Annotated[list[str], BeforeValidator(_data_files)]
    item_properties: ItemProperties = ItemProperties()
    instance_display: InstanceDisplay | None = None
    assignment_strategy: choice(AssignmentStrategy) = DEFAULT_ASSIGNMENT
    num_annotators_per_item: Count | None = None
    max_annotations_per_user: Count | None = None
    assignment_lease_minutes: limited("lease_minutes") = DEFAULT_LEASE_MINUTES
    user_config: UserConfig = UserConfig()
    output_annotation_dir: WrittenPath = DEFAULT_OUTPUT_DIR
    output_annotation_format: choice(AnswerFormat) = DEFAULT_ANSWER_FORMAT
    agreement_metrics: Annotated[dict, BeforeValidator(_agreement_metrics)] = {}
    instructions: Localized | None = None
    instructions_file: Text | None = None
    participants: Participants | None = None
    gold: GoldBlock | None = None
    annotation_schemes: Schemes

    missing_notes = {
        "data_files": "(a list of data files)",
        "annotation_schemes": "(at least one scheme)",
    }
