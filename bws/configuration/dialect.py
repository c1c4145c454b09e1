"""Dialect A's words for best-worst scaling said in dialect B's: its ``bws`` schemes (with
``best_description`` and ``worst_description``) become ``best_worst_scaling`` schemes, and
the one top-level ``bws_config`` (tuple design and scoring) is placed in each of them, where
dialect B keeps it (``tuple_size``, ``tuple_generation``, ``scoring``). Every moved value
remembers where the file wrote it, so that messages name the key as written.
"""

from __future__ import annotations

from typing import Any

from bws.configuration.blocks import Scoring, TupleGeneration, TupleSize
from bws.configuration.vocabulary import (
    DEFAULT_APPEARANCES,
    DEFAULT_SCORING_METHOD,
    DEFAULT_TUPLE_SIZE,
)
from projects.configuration.dialects import Translated, schemes_of
from projects.configuration.fields import Block
from projects.configuration.issues import Issues, join, type_name
from projects.configuration.vocabulary import DEFAULT_SEED

BWS_A, BWS_B = "bws", "best_worst_scaling"
# The top-level key only dialect A has.
BWS_CONFIG = "bws_config"
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
    "group_key": ("belongs in the top-level bws_config", "bws_config.group_key"),
    "system_key": ("belongs in the top-level bws_config", "bws_config.system_key"),
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
    "system_key": ("tuple_generation", "system_key"),
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


class IgnoredDesign(Block):
    """bws_config with no bws scheme to use it: still checked."""

    tuple_size: TupleSize | None = None
    tuple_generation: TupleGeneration | None = None
    scoring: Scoring | None = None


def translate(result: Translated, issues: Issues) -> None:
    """Dialect A's bws schemes and bws_config, in ``result.data``, in dialect B's words."""
    config = result.data.pop(BWS_CONFIG, None)
    if config is not None and not isinstance(config, dict):
        issues.add(BWS_CONFIG, f"must be a mapping of keys, got {type_name(config)}")
        config = {}
    if config is not None:
        issues.unknown_keys(config, BWS_CONFIG, BWS_CONFIG_PLACES, BWS_CONFIG_HINTS)
        config = {key: value for key, value in config.items() if key in BWS_CONFIG_PLACES}
    _translate_schemes(result, config, issues)


def _translate_schemes(result: Translated, config: dict | None, issues: Issues) -> None:
    schemes = result.data.get("annotation_schemes")
    bws = [(i, s) for i, s in schemes_of(result.data) if s.get("annotation_type") == BWS_A]
    if not bws:
        if config is not None:
            result.notices.append("bws_config is ignored: no scheme has annotation_type bws")
            moved = _moved(result, IGNORED_DESIGN, config)
            result.extra_blocks.append((IGNORED_DESIGN, IgnoredDesign, moved))
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
