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

from .fields import (
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
from .gold import GoldBlock
from .issues import nearest, type_name
from .scheme_options import SchemeEntry, annotation_types, option_model
from .vocabulary import (
    DATA_SUFFIXES,
    DEFAULT_ANSWER_FORMAT,
    DEFAULT_ASSIGNMENT,
    DEFAULT_ID_KEY,
    DEFAULT_LEASE_MINUTES,
    DEFAULT_MAX_PARTICIPANTS,
    DEFAULT_OUTPUT_DIR,
    DEFAULT_PARTICIPANT_ID_PARAM,
    DEFAULT_TEXT_KEY,
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


def _panel_url(value: str) -> str:
    if not re.fullmatch(r"https?://[^\s/]+\S*", value) or len(value) > 2000:
        raise problem(f"must be an http:// or https:// address, got {value!r}")
    return value


def _short(limit: int):
    def check(value: str) -> str:
        if len(value) > limit:
            raise problem(f"must be at most {limit} characters, got {len(value)}")
        return value

    return AfterValidator(check)


class Participants(Block):
    """A public entry link for crowd participants (projects/participants.py)."""

    open_link: Flag = False
    id_param: Annotated[Text, AfterValidator(_param_name)] = DEFAULT_PARTICIPANT_ID_PARAM
    units_per_participant: Count | None = None
    completion_code: Annotated[Name, _short(200)] | None = None
    completion_url: Annotated[Text, AfterValidator(_panel_url)] | None = None
    consent: Annotated[Name, _short(64 * 1024)] | None = None
    max_participants: Count = DEFAULT_MAX_PARTICIPANTS


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
    instructions: Text | None = None
    instructions_file: Text | None = None
    participants: Participants | None = None
    gold: GoldBlock | None = None
    annotation_schemes: Schemes

    missing_notes = {
        "data_files": "(a list of data files)",
        "annotation_schemes": "(at least one scheme)",
    }
