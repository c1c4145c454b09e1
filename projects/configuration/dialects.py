"""The two dialects of the guides, and dialect A said in dialect B's words.

Dialect A names the task ``annotation_task_name``; dialect B names it ``task_name``. A
scheme type may add words of its own to dialect A (the guides' ``bws`` schemes and their
top-level ``bws_config``: bws.configuration.dialect), declared through the scheme-type
contract. A file is one dialect or the other. ``translate`` reports the keys of the other
dialect, rewrites dialect A into dialect B (the scheme types their own words), and remembers
where each moved value was written, so that the schema's messages name the key as the file
has it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from projects.configuration.issues import Issues
from projects.configuration.scheme_options import dialect_a_types
from projects.configuration.vocabulary import Dialect

TOP_KEYS = {
    Dialect.A: ("annotation_task_name", "export_annotation_format"),
    Dialect.B: ("task_name", "output_annotation_format"),
}
# The same setting under the other dialect's name.
EQUIVALENT_KEYS = {
    "task_name": "annotation_task_name",
    "annotation_task_name": "task_name",
    "output_annotation_format": "export_annotation_format",
    "export_annotation_format": "output_annotation_format",
}
RENAMED_TOP_KEYS = {
    "annotation_task_name": "task_name",
    "export_annotation_format": "output_annotation_format",
}


@dataclass
class Translated:
    data: dict  # the file in dialect B's words
    dialect: Dialect
    origins: dict[str, str] = field(default_factory=dict)  # key path in data -> as written
    notices: list[str] = field(default_factory=list)
    skipped_schemes: set[int] = field(default_factory=set)  # reported as a dialect mix
    # Blocks checked beside the file's schema: (key path, model, data), such as a scheme
    # type's settings that no scheme uses (still checked, then ignored).
    extra_blocks: list[tuple[str, Any, Any]] = field(default_factory=list)

    def written(self, key_path: str) -> str:
        """The key path as the file wrote it (the longest translated prefix replaced)."""
        for cut in sorted(_prefixes(key_path), key=len, reverse=True):
            if cut in self.origins:
                return self.origins[cut] + key_path[len(cut) :]
        return key_path


def _prefixes(key_path: str) -> list[str]:
    cuts = [key_path]
    for index, char in enumerate(key_path):
        if char in ".[":
            cuts.append(key_path[:index])
    return cuts


def _type_names() -> dict[str, tuple[Dialect, str]]:
    """annotation_type -> (the dialect that names it so, its name in the other dialect), for
    the types whose two dialects name them differently."""
    names: dict[str, tuple[Dialect, str]] = {}
    for a_name, cls in dialect_a_types().items():
        b_name = (cls.config_types or cls.types)[0]
        names[a_name] = (Dialect.A, b_name)
        for name in cls.config_types or cls.types:
            names[name] = (Dialect.B, a_name)
    return names


def _top_keys() -> dict[Dialect, tuple[str, ...]]:
    own = tuple(key for cls in dialect_a_types().values() for key in cls.dialect_a_keys)
    return {Dialect.A: TOP_KEYS[Dialect.A] + own, Dialect.B: TOP_KEYS[Dialect.B]}


def detect(data: dict, issues: Issues) -> Dialect:
    """Decide A or B and report every key of the other dialect: the two do not mix.

    The first scheme whose type the dialects name differently decides; without one, the
    first dialect-specific top-level key.
    """
    names = _type_names()
    markers: list[tuple[Dialect, str, str]] = []  # (dialect, key path, what)
    for index, scheme in schemes_of(data):
        kind = scheme.get("annotation_type")
        if isinstance(kind, str) and kind in names:
            path = f"annotation_schemes[{index}].annotation_type"
            markers.append((names[kind][0], path, f"annotation_type: {kind}"))
    for key in data:
        for dialect, keys in _top_keys().items():
            if key in keys:
                markers.append((dialect, str(key), str(key)))
    if not markers:
        return Dialect.A
    dialect, _, decider = markers[0]
    other = Dialect.B if dialect == Dialect.A else Dialect.A
    for marker_dialect, key_path, what in markers:
        if marker_dialect == dialect:
            continue
        if what.startswith("annotation_type"):
            suggestion = names[what.removeprefix("annotation_type: ")][1]
            reason = f"{what} is dialect {other}"
        else:
            suggestion = EQUIVALENT_KEYS.get(what)
            reason = f"{what} is a dialect {other} key"
        issues.add(
            key_path,
            f"{reason}, but this file is dialect {dialect} ({decider}); "
            "one file cannot mix the two dialects",
            suggestion,
        )
    return dialect


def schemes_of(data: dict) -> list[tuple[int, dict]]:
    """The file's schemes that are mappings, with their indices."""
    schemes = data.get("annotation_schemes")
    if not isinstance(schemes, list):
        return []
    return [(index, scheme) for index, scheme in enumerate(schemes) if isinstance(scheme, dict)]


def translate(data: dict, issues: Issues) -> Translated:
    dialect = detect(data, issues)
    other_keys = _top_keys()[Dialect.B if dialect == Dialect.A else Dialect.A]
    result = Translated({k: v for k, v in data.items() if k not in other_keys}, dialect)
    names = _type_names()
    result.skipped_schemes = {
        index
        for index, scheme in schemes_of(data)
        if isinstance(scheme.get("annotation_type"), str)
        and names.get(scheme["annotation_type"], (dialect,))[0] != dialect
    }
    if dialect == Dialect.B:
        return result
    for old, new in RENAMED_TOP_KEYS.items():
        if old in result.data:
            result.data[new] = result.data.pop(old)
            result.origins[new] = old
    for cls in dict.fromkeys(dialect_a_types().values()):
        cls.translate_dialect_a(result, issues)
    return result
