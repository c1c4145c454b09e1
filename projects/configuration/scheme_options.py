"""Option models of each scheme type (to move into projects.schemes)."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import AfterValidator, ValidationInfo, model_validator

from .design import Scoring, TupleGeneration
from .fields import (
    Block,
    Flag,
    Name,
    Strings,
    Text,
    between,
    detail,
    limited,
    limits_of,
    problem,
    reraise,
)
from .labels import Labels
from .vocabulary import (
    DEFAULT_BEST_LABEL,
    DEFAULT_MEDIA_KEY,
    DEFAULT_STEPS_KEY,
    DEFAULT_WORST_LABEL,
    MAX_TUPLE_SIZE,
    MIN_TUPLE_SIZE,
)

LABELS_NOTE = "(the choices, a list of labels)"


class LabelRequirement(Block):
    required: Flag | None = None


class SchemeEntry(Block):
    """What every scheme has: its type, a name unique in the project, a description, and
    whether an answer is required (``required_default`` when label_requirement is absent)."""

    annotation_type: Text
    name: Name
    description: Text = ""
    label_requirement: LabelRequirement | None = None

    required_default: ClassVar[bool] = False

    @property
    def required(self) -> bool:
        given = self.label_requirement.required if self.label_requirement else None
        return self.required_default if given is None else given

    def options(self) -> dict[str, Any]:
        """The scheme's options in the normal form a project stores."""
        return {"required": self.required}


class ChoiceOptions(SchemeEntry):
    labels: Labels
    sequential_key_binding: Flag = False
    horizontal: Flag = False
    missing_notes = {"labels": LABELS_NOTE}

    def options(self) -> dict[str, Any]:
        return {
            **super().options(),
            "labels": self.labels,
            "sequential_key_binding": self.sequential_key_binding,
            "horizontal": self.horizontal,
        }


class RadioOptions(ChoiceOptions):
    pass


class MultiselectOptions(ChoiceOptions):
    pass


class LikertOptions(SchemeEntry):
    size: limited("likert_size", minimum=2) | None = None
    labels: Labels | None = None
    min_label: Text = ""
    max_label: Text = ""
    sequential_key_binding: Flag = False

    @model_validator(mode="after")
    def _size_or_labels(self, info: ValidationInfo) -> LikertOptions:
        limits = limits_of(info)
        if self.size is None and self.labels is None:
            reason = "missing required key (likert needs size or labels)"
            reraise("likert", [detail(("size",), reason)])
        if self.size is not None and self.labels is not None and self.size != len(self.labels):
            reason = f"is {self.size} but {len(self.labels)} labels are listed"
            reraise("likert", [detail(("size",), reason)])
        if self.labels is not None and len(self.labels) > limits.likert_size:
            reason = limits.above("likert_size", len(self.labels), "labels")
            reraise("likert", [detail(("labels",), reason)])
        return self

    def options(self) -> dict[str, Any]:
        options = {
            **super().options(),
            "size": self.size if self.size is not None else len(self.labels or []),
            "min_label": self.min_label,
            "max_label": self.max_label,
            "sequential_key_binding": self.sequential_key_binding,
        }
        if self.labels:
            options["labels"] = self.labels
        return options


class TextOptions(SchemeEntry):
    multiline: Flag = False

    def options(self) -> dict[str, Any]:
        return {**super().options(), "multiline": self.multiline}


class BoxOptions(SchemeEntry):
    labels: Labels
    missing_notes = {"labels": LABELS_NOTE}

    def options(self) -> dict[str, Any]:
        return {**super().options(), "labels": self.labels}


class SegmentOptions(SchemeEntry):
    labels: Labels
    media_key: Text = DEFAULT_MEDIA_KEY
    missing_notes = {"labels": LABELS_NOTE}

    def options(self) -> dict[str, Any]:
        return {**super().options(), "labels": self.labels, "media_key": self.media_key}


def _tier_list(value: list[str]) -> list[str]:
    if not value:
        raise problem("must list at least one tier")
    details = [
        detail((index,), f"duplicate tier {tier!r}")
        for index, tier in enumerate(value)
        if tier in value[:index]
    ]
    reraise("tiers", details)
    return value


class TierOptions(SegmentOptions):
    tiers: Annotated[Strings, AfterValidator(_tier_list)]
    missing_notes = {"labels": LABELS_NOTE, "tiers": "(tiered_annotation lists its tiers)"}

    def options(self) -> dict[str, Any]:
        return {**super().options(), "tiers": self.tiers}


class TraceOptions(SchemeEntry):
    labels: Labels
    steps_key: Text = DEFAULT_STEPS_KEY
    missing_notes = {"labels": LABELS_NOTE}

    def options(self) -> dict[str, Any]:
        return {**super().options(), "labels": self.labels, "steps_key": self.steps_key}


class BwsOptions(SchemeEntry):
    """A best_worst_scaling scheme (dialect A's bws schemes are translated into this)."""

    items_key: Text | None = None
    tuple_size: between(MIN_TUPLE_SIZE, MAX_TUPLE_SIZE) | None = None
    best_label: Text = DEFAULT_BEST_LABEL
    worst_label: Text = DEFAULT_WORST_LABEL
    show_item_labels: Flag = True
    randomize_order: Flag = False
    show_source: Flag = False
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
            "scoring": self.scoring.options(),
        }


TRACE_TYPES = (
    "process_reward",
    "trajectory_eval",
    "tool_call_review",
    "failure_attribution",
    "gui_trajectory",
)
OPTION_MODELS: dict[str, type[SchemeEntry]] = {
    "best_worst_scaling": BwsOptions,
    "radio": RadioOptions,
    "multiselect": MultiselectOptions,
    "likert": LikertOptions,
    "text": TextOptions,
    "spatial_annotation": BoxOptions,
    "temporal_grounding": SegmentOptions,
    "tiered_annotation": TierOptions,
    **dict.fromkeys(TRACE_TYPES, TraceOptions),
}
