"""Reading a configuration: the file's text, its dialect, the schema, the paths, and the
blocks a scheme type's schemes share (the BWS schemes' one tuple design, built by the bws
scheme type); every problem reported together."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from projects.configuration.dialects import Translated, translate
from projects.configuration.fields import key_path, reason_of, suggestion_of
from projects.configuration.gold import GoldSettings
from projects.configuration.instructions import read_instructions
from projects.configuration.issues import ConfigError, Issues, type_name
from projects.configuration.normal import ParticipantSettings, ProjectConfig, Scheme
from projects.configuration.schema import ConfigFile
from projects.configuration.vocabulary import BWS_TYPE, DATA_SUFFIXES, Dialect
from projects.configuration.yaml_text import parse_yaml, read_text
from projects.limits import Limits
from projects.paths import PathRefused, confine
from projects.schemes import registered_types, stored_type


def load_config(
    path: str | Path,
    *,
    check_files: bool = True,
    trusted: bool = True,
    limits: Limits | None = None,
) -> ProjectConfig:
    """Read and check a YAML configuration file; raise ConfigError naming every problem.

    ``trusted`` (the operator's own files) lets task_dir and data_files point anywhere;
    otherwise (a config that came over the web) they must stay inside the config's folder.
    Paths the worker writes stay inside the project's folder either way.
    """
    limits = limits or Limits()
    path = Path(path)
    data = parse_yaml(read_text(path, limits), path.name, limits=limits)
    return parse_config(
        data,
        path.name,
        path.resolve().parent,
        check_files=check_files,
        trusted=trusted,
        limits=limits,
    )


def parse_config(
    data: Any,
    source: str = "config.yaml",
    base_dir: str | Path = ".",
    *,
    check_files: bool = True,
    trusted: bool = True,
    limits: Limits | None = None,
) -> ProjectConfig:
    """Check parsed YAML data and normalise it; raise ConfigError listing every problem.

    ``source`` names the file in messages; ``base_dir`` is the directory of the
    configuration file, against which ``task_dir`` (and through it the data files) resolve.
    Untrusted (``trusted=False``), every path key must stay inside ``base_dir``; trusted,
    task_dir and data_files may point anywhere. output_annotation_dir and
    scoring.output_file stay inside the project's folder either way.
    """
    issues = Issues(source)
    if not isinstance(data, dict):
        issues.add("", f"the file must hold a mapping of keys, got {type_name(data)}")
        raise ConfigError(issues.found)
    base = Path(base_dir).resolve()
    translated = translate(data, issues)
    root = _task_dir(translated.data, base, trusted=trusted, check_files=check_files, issues=issues)
    context = {
        "limits": limits or Limits(),
        "root": root or base,
        "skipped_schemes": translated.skipped_schemes,
    }
    file = _validate(ConfigFile, translated.data, context, translated, issues)
    for prefix, model, block in translated.extra_blocks:
        _validate(model, block, context, translated, issues, prefix=prefix)
    _check_data_files(_file_names(translated.data), root, base, trusted, check_files, issues)
    if file is None:
        raise ConfigError(issues.found)
    if file.task_name is not None and not file.task_name.strip():
        issues.add(translated.written("task_name"), "must not be empty")
    shared = _shared_blocks(file, translated, issues)
    instructions = read_instructions(
        file.instructions, file.instructions_file, base, check_files=check_files, issues=issues
    )
    issues.raise_if_any()
    config = _normal_form(file, translated, source, base_dir, root or base, shared)
    return config.model_copy(update={"instructions": instructions}) if instructions else config


def _validate(model, data, context, translated: Translated, issues: Issues, prefix=""):
    try:
        return model.model_validate(data, context=context)
    except ValidationError as exc:
        for error in exc.errors():
            path = key_path(((prefix,) if prefix else ()) + tuple(error["loc"]))
            issues.add(translated.written(path), reason_of(error), suggestion_of(error))
        return None


def _task_dir(data: dict, base: Path, *, trusted, check_files, issues) -> Path | None:
    task_dir = data.get("task_dir")
    if not isinstance(task_dir, str):
        task_dir = "."  # a value of another type is reported by the schema
    if trusted:
        root = (base / task_dir).resolve()
    else:
        try:
            root = confine("task_dir", task_dir, base)
        except PathRefused as exc:
            issues.add("task_dir", exc.reason)
            return None
    if check_files and task_dir != "." and not root.is_dir():
        issues.add("task_dir", f"directory not found: {task_dir!r}")
    return root


def _file_names(data: dict) -> list[str]:
    """The data files named (the schema reports a list it cannot use)."""
    names = data.get("data_files")
    names = [names] if isinstance(names, str) else names
    if not isinstance(names, list):
        return []
    return [name if isinstance(name, str) and name.strip() else "" for name in names]


def _check_data_files(files, root, base, trusted, check_files, issues) -> None:
    for index, name in enumerate(files):
        where = f"data_files[{index}]"
        unusable = not name or Path(name).suffix.lower() not in DATA_SUFFIXES
        if root is None or unusable or name in files[:index]:
            continue
        if not trusted:
            try:
                confine(where, name, base, start=root)
            except PathRefused as exc:
                issues.add(where, exc.reason)
                continue
        if check_files and root.is_dir() and not (root / name).is_file():
            issues.add(where, f"data file not found: {name!r}")


def _shared_blocks(file: ConfigFile, translated: Translated, issues: Issues) -> dict[str, Any]:
    """The block each scheme type's schemes share (its ``shared_block``), by stored type."""
    blocks: dict[str, Any] = {}
    for cls in registered_types():
        entries = [
            (index, scheme)
            for index, scheme in enumerate(file.annotation_schemes)
            if stored_type(scheme.annotation_type) in cls.types
        ]
        if entries:
            block = cls.shared_block(entries, translated, issues)
            if block is not None:
                blocks[cls.types[0]] = block
    return blocks


def _normal_form(file: ConfigFile, translated, source, base_dir, root, shared) -> ProjectConfig:
    notices = translated.notices
    name_key = "annotation_task_name" if translated.dialect == Dialect.A else "task_name"
    task_name = file.task_name
    if not task_name:
        task_name = _default_task_name(source, base_dir)
        notices.insert(0, f"No {name_key}: the task is named {task_name!r} after the file")
    display = file.instance_display.fields if file.instance_display else []
    return ProjectConfig(
        task_name=task_name,
        language=file.language,
        dialect=translated.dialect,
        base_dir=str(root),
        data_files=file.data_files,
        schemes=[
            Scheme(
                name=scheme.name,
                type=stored_type(scheme.annotation_type),
                description=scheme.description,
                options=scheme.options(),
            )
            for scheme in file.annotation_schemes
        ],
        item_properties=file.item_properties.model_dump(),
        instance_display=[
            {
                "key": entry.key,
                "label": entry.label
                or (entry.display_options.label if entry.display_options else None)
                or entry.key,
                "type": str(entry.type),
            }
            for entry in display
        ],
        assignment_strategy=file.assignment_strategy,
        num_annotators_per_item=file.num_annotators_per_item,
        max_annotations_per_user=file.max_annotations_per_user,
        lease_minutes=file.assignment_lease_minutes,
        allow_all_users=file.user_config.allow_all_users,
        authorized_users=file.user_config.authorized_users,
        output_annotation_dir=file.output_annotation_dir,
        output_annotation_format=file.output_annotation_format,
        agreement_metrics=file.agreement_metrics,
        participants=ParticipantSettings(**file.participants.model_dump(exclude_none=True))
        if file.participants
        else None,
        bws=shared.get(BWS_TYPE),
        gold=GoldSettings.of(file.gold),
        notices=notices,
        source=source,
    )


def _default_task_name(source: str, base_dir: str | Path) -> str:
    stem = Path(source).stem
    folder = Path(base_dir).resolve().name
    if stem in ("config", "project", "") and folder:
        return folder
    return stem or "Untitled task"
