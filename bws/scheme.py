"""Best-worst scaling as a scheme type: the best and the worst item of the tuple shown.

The type plugs into the scheme-type registry of `projects.schemes` the way any type does,
from outside it: pyproject.toml lists this module under the ``annolab.scheme_types`` entry
points, which the registry loads with its own modules, so every reader of a configuration
(the server, a worker, ``python -m bws`` and ``python -m agreement``) knows the type, and
with it the BWS part of the configuration (bws.configuration)."""

from __future__ import annotations

from typing import Any

from bws.configuration import dialect
from bws.configuration.blocks import Scoring, TupleGeneration, TupleSize
from bws.configuration.normal import BwsDesign
from bws.configuration.shared import shared_design
from bws.configuration.vocabulary import (
    DEFAULT_BEST_LABEL,
    DEFAULT_WORST_LABEL,
    MAX_TUPLE_SIZE,
    MIN_TUPLE_SIZE,
    WORST_KEYS,
)
from projects.configuration.fields import Flag
from projects.configuration.fields import Text as TextField
from projects.configuration.scheme_options import SchemeEntry
from projects.configuration.texts import Localized
from projects.schemes.base import SchemeType, short
from projects.texts import gettext


class BwsOptions(SchemeEntry):
    """A best_worst_scaling scheme (dialect A's bws schemes are translated into this)."""

    items_key: TextField | None = None
    tuple_size: TupleSize | None = None
    best_label: Localized = DEFAULT_BEST_LABEL
    worst_label: Localized = DEFAULT_WORST_LABEL
    show_item_labels: Flag = True
    randomize_order: Flag = False
    show_source: Flag = False
    # The item data field show_source shows (default: system, else source; the id of an
    # item listed in an instance, which names its system in the guides' data).
    source_key: TextField | None = None
    sequential_key_binding: Flag = True
    scoring: Scoring = Scoring()
    tuple_generation: TupleGeneration | None = None

    required_default = True
    key_hints = {
        "best_description": ("is the bws (dialect A) name", "best_label"),
        "worst_description": ("is the bws (dialect A) name", "worst_label"),
        "min_item_appearances": (
            "is the bws_config (dialect A) name",
            "tuple_generation.tuples_per_item",
        ),
        "seed": ("belongs in tuple_generation", "tuple_generation.seed"),
        "bootstrap_iterations": ("belongs in scoring", "scoring.bootstrap_iterations"),
        "system_key": ("belongs in tuple_generation", "tuple_generation.system_key"),
        "group_key": ("belongs in tuple_generation", "tuple_generation.group_key"),
    }

    def options(self) -> dict[str, Any]:
        return {
            "best_label": self.best_label,
            "worst_label": self.worst_label,
            "sequential_key_binding": self.sequential_key_binding,
            "required": self.required,
            "show_item_labels": self.show_item_labels,
            "randomize_order": self.randomize_order,
            "show_source": self.show_source,
            "source_key": self.source_key,
            "scoring": self.scoring.options(),
        }


class BestWorst(SchemeType):
    types = ("bws",)
    config_types = ("best_worst_scaling",)
    template = "bws/scheme.html"
    measure = "bws"
    Options = BwsOptions
    together = True
    table_keys = ("best", "worst")
    # The configuration's BWS part: dialect A's bws schemes and bws_config, and the one tuple
    # design of the project (bws.configuration).
    dialect_a_type = dialect.BWS_A
    dialect_a_keys = (dialect.BWS_CONFIG,)
    Shared = BwsDesign
    unit_items = (MIN_TUPLE_SIZE, MAX_TUPLE_SIZE)

    @classmethod
    def translate_dialect_a(cls, translated, issues) -> None:
        dialect.translate(translated, issues)

    @classmethod
    def shared_block(cls, entries, translated, issues) -> BwsDesign:
        return shared_design(entries, translated, issues)

    @classmethod
    def validate(cls, value, options, unit, limits) -> Any:
        if not isinstance(value, dict) or set(value) - {"best", "worst"}:
            raise ValueError('give {"best": ITEM_ID, "worst": ITEM_ID}')
        best, worst = value.get("best"), value.get("worst")
        if best in (None, "") or worst in (None, ""):
            if best in (None, "") and worst in (None, ""):
                raise ValueError(gettext("choose the best and worst item"))
            if best in (None, ""):
                raise ValueError(gettext("choose the best item"))
            raise ValueError(gettext("choose the worst item"))
        for key, chosen in (("best", best), ("worst", worst)):
            if not isinstance(chosen, str | int) or str(chosen) not in unit.items:
                raise ValueError(f"{key} item {short(chosen)} is not in this tuple")
        if str(best) == str(worst):
            raise ValueError(gettext("best and worst must be different items"))
        return {"best": str(best), "worst": str(worst)}

    @classmethod
    def from_post(cls, name, options, post) -> Any:
        return {
            "best": post.get(f"{name}__best") or None,
            "worst": post.get(f"{name}__worst") or None,
        }

    @classmethod
    def block(cls, views, payload) -> dict:
        """The tuple's items with their keys; the keyboard unless a scheme turns it off."""
        keyboard = all(view["options"].get("sequential_key_binding", True) for view in views)
        items = [
            {**item, "best_key": str(n + 1), "worst_key": WORST_KEYS[n]}
            for n, item in enumerate(payload["items"])
        ]
        return {
            "items": items,
            "keyboard": keyboard,
            "options": views[0]["options"],
            **cls._sources(items, payload),
        }

    @staticmethod
    def _sources(items: list[dict], payload: dict) -> dict:
        """Shown sources: once above the tuple when its items share one (the page's context
        shows it already when it is one of the context fields), else beside each item."""
        sources = {item.get("source") for item in items}
        if "source" not in (items[0] if items else {}) or len(sources) != 1:
            return {}
        for item in items:
            item.pop("source")
        (source,) = sources
        if not source or source in (field["value"] for field in payload.get("context", [])):
            return {}
        return {"shared_source": {"label": payload.get("source_label", "Source"), "value": source}}

    @classmethod
    def item_display(cls, options) -> dict:
        return {
            "randomize_order": bool(options.get("randomize_order")),
            "show_source": bool(options.get("show_source")),
            "source_key": options.get("source_key"),
        }
