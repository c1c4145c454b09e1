"""The normal form of a project's configuration: what a project stores (as JSON) and what
every reader gets back as typed objects, whichever dialect the file was written in."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator

from projects.configuration.gold import GoldSettings
from projects.configuration.scheme_options import shared_block
from projects.configuration.vocabulary import (
    BWS_TYPE,
    DEFAULT_ANSWER_FORMAT,
    DEFAULT_ASSIGNMENT,
    DEFAULT_ID_KEY,
    DEFAULT_LEASE_MINUTES,
    DEFAULT_MAX_PARTICIPANTS,
    DEFAULT_OUTPUT_DIR,
    DEFAULT_PARTICIPANT_ID_PARAM,
    DEFAULT_PARTICIPANT_LEASE_MINUTES,
    DEFAULT_SEED,
    DEFAULT_TEXT_KEY,
    AnswerFormat,
    AssignmentStrategy,
    Dialect,
)


@dataclass(frozen=True)
class ItemPool:
    """How a project's data files hold the items its tuples are drawn from: each record is an
    item (``items_key`` None), or an instance holding a list of items under ``items_key``.
    The pool, and each instance's list, needs at least ``unit_size`` items; a list of exactly
    that many is one unit as given."""

    items_key: str | None
    unit_size: int


class _Normal(BaseModel):
    # Stored forms of another version: unknown keys are ignored, missing ones defaulted.
    model_config = ConfigDict(frozen=True, extra="ignore")


class OutcomeSettings(_Normal):
    """A participants' ending other than completion (partial, screen_out): the code for the
    panel, the panel's address to return to, and the page's message (None: the defaults)."""

    code: str | None = None
    url: str | None = None
    message: str | dict[str, str] | None = None


class ParticipantSettings(_Normal):
    """The participants block: a public entry link for crowd panels."""

    open_link: bool = False
    id_param: str = DEFAULT_PARTICIPANT_ID_PARAM
    units_per_participant: int | None = None
    completion_code: str | None = None
    completion_url: str | None = None
    # Markdown a participant must accept before the first unit ("" for none).
    consent: str | dict[str, str] = ""
    max_participants: int = DEFAULT_MAX_PARTICIPANTS
    # How long a participant holds a unit (the project's lease when that is shorter).
    lease_minutes: int = DEFAULT_PARTICIPANT_LEASE_MINUTES
    # No unit left for them before the quota (crowds.participants: outcome partial).
    partial: OutcomeSettings = OutcomeSettings()
    # Failed the training or too many attention checks (outcome screened_out).
    screen_out: OutcomeSettings = OutcomeSettings()


class Scheme(_Normal):
    name: str
    type: str
    description: str | dict[str, str] = ""
    options: dict[str, Any] = {}

    @property
    def is_bws(self) -> bool:
        return self.type == BWS_TYPE


class ProjectConfig(_Normal):
    """The normal form of a project configuration, whichever dialect it was written in."""

    task_name: str
    # The language of the annotator and participant pages (None: the browser's).
    language: str | None = None
    dialect: Dialect
    base_dir: str
    data_files: list[str]
    schemes: list[Scheme]
    item_properties: dict[str, str] = {"id_key": DEFAULT_ID_KEY, "text_key": DEFAULT_TEXT_KEY}
    instance_display: list[dict[str, Any]] = []
    assignment_strategy: AssignmentStrategy = DEFAULT_ASSIGNMENT
    num_annotators_per_item: int | None = None
    max_annotations_per_user: int | None = None
    lease_minutes: int = DEFAULT_LEASE_MINUTES
    allow_all_users: bool = False
    authorized_users: list[str] = []
    output_annotation_dir: str = DEFAULT_OUTPUT_DIR
    output_annotation_format: AnswerFormat = DEFAULT_ANSWER_FORMAT
    agreement_metrics: dict[str, Any] = {}
    # Markdown shown to annotators before their first unit (rendered without raw HTML).
    instructions: str | dict[str, str] = ""
    participants: ParticipantSettings | None = None
    # The tuple design the BWS schemes share: typed by the scheme type that owns it (its
    # ``Shared`` model, bws.configuration.BwsDesign), read through the registry.
    bws: Any = None
    # Gold units (training and attention checks), read from their file at import.
    gold: GoldSettings | None = None
    notices: list[str] = []
    source: str = "config.yaml"
    # What the tuple design reported when the project was built (stored by the platform).
    design_summary: list[str] = []

    @field_validator("bws", mode="before")
    @classmethod
    def _shared_design(cls, value: Any) -> Any:
        return shared_block(BWS_TYPE, value)

    @property
    def bws_schemes(self) -> list[Scheme]:
        return [scheme for scheme in self.schemes if scheme.is_bws]

    @property
    def id_key(self) -> str:
        return self.item_properties.get("id_key", DEFAULT_ID_KEY)

    @property
    def text_key(self) -> str:
        return self.item_properties.get("text_key", DEFAULT_TEXT_KEY)

    @property
    def seed(self) -> int:
        """The seed of the tuple design, and of everything random drawn for the project."""
        return self.bws.seed if self.bws is not None else DEFAULT_SEED

    @property
    def item_pool(self) -> ItemPool | None:
        """How the data files hold the items of the tuples; None: each record is an instance."""
        return self.bws.item_pool() if self.bws is not None else None

    def scheme(self, name: str) -> Scheme:
        for scheme in self.schemes:
            if scheme.name == name:
                return scheme
        known = ", ".join(s.name for s in self.schemes)
        raise KeyError(f"no scheme named {name!r} (schemes: {known})")

    def data_paths(self) -> list[Path]:
        return [Path(self.base_dir) / name for name in self.data_files]

    def output_dir(self) -> Path:
        return Path(self.base_dir) / self.output_annotation_dir

    def to_dict(self) -> dict:
        """A JSON-serialisable dict; ``from_dict`` reads it back."""
        return self.model_dump(mode="json")

    @classmethod
    def from_dict(cls, data: dict) -> ProjectConfig:
        """Read a stored ``to_dict``; keys this version does not know are ignored."""
        return cls.model_validate(data)
