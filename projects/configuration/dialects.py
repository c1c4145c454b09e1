"""The two dialects of the guides, and dialect A said in dialect B's words.

Dialect A names the task ``annotation_task_name``, has BWS schemes of type ``bws`` and one
top-level ``bws_config`` (tuple design and scoring); dialect B names it ``task_name`` and
gives each ``best_worst_scaling`` scheme its own ``tuple_generation`` and ``scoring``.
A file is one or the other. ``translate`` reports the keys only dialect A has (its bws
schemes and bws_config), rewrites the rest into dialect B, and remembers where each moved
value was written, so that the schema's messages name the key as the file has it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from projects.configuration.issues import Issues, join, type_name
from projects.configuration.vocabulary import (
    DEFAULT_APPEARANCES,
    DEFAULT_SCORING_METHOD,
    DEFAULT_SEED,
    DEFAULT_TUPLE_SIZE,
    Dialect,
)

BWS_A, BWS_B = "bws", "best_worst_scaling"
TOP_KEYS = {
    Dialect.A: ("annotation_task_name", "bws_config", "export_annotation_format"),
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

BWS_A_SCHEME_KEYS = (
    "annotation_type",
    "name",
    "description",
    "label_requirement",
    "tuple_size",
    "best_description",
    "worst_description",
    "sequential_key_binding",
)
RENAMED_SCHEME_KEYS = {"best_description": "best_label", "worst_description": "worst_label"}
_A_KEY_LIST = ", ".join(BWS_A_SCHEME_KEYS[1:])
# Keys a dialect-A `bws` scheme may carry by mistake: (reason, suggestion).
BWS_A_SCHEME_HINTS: dict[str, tuple[str, str | None]] = {
    "tuple_generation": ("tuple generation belongs in the top-level bws_config", "bws_config"),
    "scoring": ("scoring belongs in the top-level bws_config", "bws_config.scoring"),
    "min_item_appearances": ("belongs in the top-level bws_config", "bws_config"),
    "tuples_per_item": ("belongs in the top-level bws_config", "bws_config.min_item_appearances"),
    "seed": ("belongs in the top-level bws_config", "bws_config.seed"),
    "method": ("belongs in the top-level bws_config", "bws_config.scoring.method"),
    "best_label": ("is the best_worst_scaling (dialect B) name", "best_description"),
    "worst_label": ("is the best_worst_scaling (dialect B) name", "worst_description"),
}
for _key in ("items_key", "show_item_labels", "randomize_order", "show_source", "source_key"):
    BWS_A_SCHEME_HINTS[_key] = (
        "is a best_worst_scaling (dialect B) key; a bws scheme accepts only "
        f"{_A_KEY_LIST} (tuple generation and scoring belong in bws_config); "
        "for instances that hold item lists use annotation_type: best_worst_scaling",
        None,
    )

# bws_config key -> where dialect B keeps it in a scheme
BWS_CONFIG_PLACES = {
    "tuple_size": ("tuple_size",),
    "min_item_appearances": ("tuple_generation", "tuples_per_item"),
    "seed": ("tuple_generation", "seed"),
    "method": ("tuple_generation", "method"),
    "ensure_pair_coverage": ("tuple_generation", "ensure_pair_coverage"),
    "group_key": ("tuple_generation", "group_key"),
    "adaptive": ("tuple_generation", "adaptive"),
    "scoring": ("scoring",),
}
BWS_CONFIG_HINTS: dict[str, tuple[str, str | None]] = {
    "tuples_per_item": ("is the tuple_generation (dialect B) name", "min_item_appearances"),
    "items_key": (
        "belongs to best_worst_scaling (dialect B) schemes; dialect A reads one item per line",
        None,
    ),
    "tuple_generation": (
        "is a best_worst_scaling (dialect B) block; bws_config holds its settings directly",
        "method",
    ),
}
# Where bws_config is checked when no scheme uses it.
IGNORED_DESIGN = "ignored_bws_config"


@dataclass
class Translated:
    data: dict  # the file in dialect B's words
    dialect: Dialect
    origins: dict[str, str] = field(default_factory=dict)  # key path in data -> as written
    notices: list[str] = field(default_factory=list)
    skipped_schemes: set[int] = field(default_factory=set)  # reported as a dialect mix

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


def detect(data: dict, issues: Issues) -> Dialect:
    """Decide A or B and report every key of the other dialect: the two do not mix.

    The first BWS scheme decides; without one, the first dialect-specific top-level key.
    """
    markers: list[tuple[Dialect, str, str]] = []  # (dialect, key path, what)
    for index, scheme in _schemes(data):
        kind = scheme.get("annotation_type")
        if kind in (BWS_A, BWS_B):
            path = f"annotation_schemes[{index}].annotation_type"
            markers.append(
                (Dialect.A if kind == BWS_A else Dialect.B, path, f"annotation_type: {kind}")
            )
    for key in data:
        for dialect, keys in TOP_KEYS.items():
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
            suggestion = BWS_A if dialect == Dialect.A else BWS_B
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


def _schemes(data: dict) -> list[tuple[int, dict]]:
    schemes = data.get("annotation_schemes")
    if not isinstance(schemes, list):
        return []
    return [(index, scheme) for index, scheme in enumerate(schemes) if isinstance(scheme, dict)]


def translate(data: dict, issues: Issues) -> Translated:
    dialect = detect(data, issues)
    other_keys = TOP_KEYS[Dialect.B if dialect == Dialect.A else Dialect.A]
    result = Translated({k: v for k, v in data.items() if k not in other_keys}, dialect)
    mixed = BWS_B if dialect == Dialect.A else BWS_A
    result.skipped_schemes = {i for i, s in _schemes(data) if s.get("annotation_type") == mixed}
    if dialect == Dialect.B:
        return result
    for old, new in RENAMED_TOP_KEYS.items():
        if old in result.data:
            result.data[new] = result.data.pop(old)
            result.origins[new] = old
    config = result.data.pop("bws_config", None)
    if config is not None and not isinstance(config, dict):
        issues.add("bws_config", f"must be a mapping of keys, got {type_name(config)}")
        config = {}
    if config is not None:
        issues.unknown_keys(config, "bws_config", BWS_CONFIG_PLACES, BWS_CONFIG_HINTS)
        config = {key: value for key, value in config.items() if key in BWS_CONFIG_PLACES}
    _translate_schemes(result, config, issues)
    return result


def _translate_schemes(result: Translated, config: dict | None, issues: Issues) -> None:
    schemes = result.data.get("annotation_schemes")
    bws = [(i, s) for i, s in _schemes(result.data) if s.get("annotation_type") == BWS_A]
    if not bws:
        if config is not None:
            result.notices.append("bws_config is ignored: no scheme has annotation_type bws")
            result.data[IGNORED_DESIGN] = _moved(result, IGNORED_DESIGN, config)
        return
    schemes = list(schemes)
    result.data["annotation_schemes"] = schemes
    sizes = [s.get("tuple_size") for _, s in bws if _is_int(s.get("tuple_size"))]
    if config is None:
        size = sizes[0] if sizes else DEFAULT_TUPLE_SIZE
        result.notices.append(
            f"No bws_config: defaults applied (tuple_size {size}, min_item_appearances "
            f"{DEFAULT_APPEARANCES}, seed {DEFAULT_SEED}, scoring {DEFAULT_SCORING_METHOD})"
        )
    for index, scheme in bws:
        path = f"annotation_schemes[{index}]"
        issues.unknown_keys(scheme, path, BWS_A_SCHEME_KEYS, BWS_A_SCHEME_HINTS)
        entry = {k: v for k, v in scheme.items() if k in BWS_A_SCHEME_KEYS}
        entry["annotation_type"] = BWS_B
        for old, new in RENAMED_SCHEME_KEYS.items():
            if old in entry:
                entry[new] = entry.pop(old)
                result.origins[join(path, new)] = join(path, old)
        if config is None:
            entry["tuple_generation"] = {}  # the defaults, announced above
        else:
            _apply_config(entry, path, config, result, issues)
        schemes[index] = entry


def _apply_config(entry: dict, path: str, config: dict, result: Translated, issues) -> None:
    moved = _moved(result, path, config)
    size = moved.pop("tuple_size", None)
    own = entry.get("tuple_size")
    if size is not None:
        if own is None or own == size:
            entry["tuple_size"] = size
            result.origins[join(path, "tuple_size")] = "bws_config.tuple_size"
        elif _is_int(own) and _is_int(size):
            issues.add(join(path, "tuple_size"), f"{own} differs from bws_config.tuple_size {size}")
            entry["tuple_size"] = size
    entry.update(moved)
    entry.setdefault("tuple_generation", {})


def _moved(result: Translated, path: str, config: dict) -> dict:
    """bws_config's values placed where dialect B keeps them, under ``path``."""
    moved: dict[str, Any] = {}
    for key, value in config.items():
        place = BWS_CONFIG_PLACES[key]
        if len(place) == 1:
            moved[place[0]] = value
        else:
            moved.setdefault(place[0], {})[place[1]] = value
        result.origins[join(path, ".".join(place))] = f"bws_config.{key}"
    return moved


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
