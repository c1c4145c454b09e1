"""What the option models of every scheme type share (each type's own model is in its module
of projects.schemes, as its class's ``Options``), and the lookup of a type's model by the
annotation_type a configuration names."""

from __future__ import annotations

from typing import Any, ClassVar

from projects import schemes
from projects.configuration.fields import Block, Flag, Name, Text
from projects.configuration.labels import Labels
from projects.configuration.texts import Localized

LABELS_NOTE = "(the choices, a list of labels)"


class LabelRequirement(Block):
    required: Flag | None = None


class SchemeEntry(Block):
    """What every scheme has: its type, a name unique in the project, a description, and
    whether an answer is required (``required_default`` when label_requirement is absent)."""

    annotation_type: Text
    name: Name
    description: Localized = ""
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
    return schemes.config_types().get(annotation_type)


def scheme_types() -> list[type]:
    """Every registered scheme type, once each."""
    return schemes.registered_types()


def dialect_a_types() -> dict[str, type]:
    """The annotation_type names only dialect A uses (its bws) -> the type they name."""
    return {cls.dialect_a_type: cls for cls in scheme_types() if cls.dialect_a_type}


def annotation_types() -> list[str]:
    """Every annotation_type a configuration may name (dialect A's names included)."""
    return [*dialect_a_types(), *schemes.config_types()]


def shared_block(type_name: str, value: Any) -> Any:
    """A stored block that the schemes of ``type_name`` share, read into the type's
    ``Shared`` model (kept as given when it is one already, or when the type has none)."""
    if value is None:
        return None
    model = schemes.scheme_type(type_name).Shared
    return value if model is None or isinstance(value, model) else model.model_validate(value)
