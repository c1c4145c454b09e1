"""What the option models of every scheme type share (each type's own model is in its module
of projects.schemes, as its class's ``Options``), and the lookup of a type's model by the
annotation_type a configuration names."""

from __future__ import annotations

from typing import Any, ClassVar

from projects.configuration.fields import Block, Flag, Name, Text
from projects.configuration.labels import Labels

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


def option_model(annotation_type: str) -> type[SchemeEntry] | None:
    """The option model of the scheme type a configuration names, or None if unknown."""
    # projects.schemes imports this module (its types declare their options here), so the
    # registry is asked when a config is read, once every type has registered.
    from projects.schemes import config_types

    return config_types().get(annotation_type)


def annotation_types() -> list[str]:
    """Every annotation_type a configuration may name (dialect A's bws included)."""
    from projects.schemes import config_types  # asked once every type has registered (above)

    return ["bws", *config_types()]
