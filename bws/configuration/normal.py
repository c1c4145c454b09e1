"""What a project stores of a BWS configuration, read back as typed objects: the tuple design
the project's BWS schemes share (``BwsDesign``, kept in the normal form's ``bws`` slot) and a
scheme's scoring block (``ScoringSettings``, kept in the scheme's options)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from bws.configuration.adaptive import AdaptiveSettings
from bws.configuration.vocabulary import (
    DEFAULT_APPEARANCES,
    DEFAULT_BOOTSTRAP_ITERATIONS,
    DEFAULT_INTERVAL_METHOD,
    DEFAULT_SCORING_METHOD,
    DEFAULT_TUPLE_METHOD,
    DEFAULT_TUPLE_SIZE,
    IntervalMethod,
    ScoringMethod,
    TupleMethod,
)
from projects.configuration.normal import ItemPool, ProjectConfig, Scheme
from projects.configuration.vocabulary import DEFAULT_SEED


class _Stored(BaseModel):
    # Stored forms of another version: unknown keys are ignored, missing ones defaulted.
    model_config = ConfigDict(frozen=True, extra="ignore")


class BwsDesign(_Stored):
    """How the project's one tuple set is built: shared by every BWS scheme of the project."""

    tuple_size: int = DEFAULT_TUPLE_SIZE
    items_key: str | None = None
    method: TupleMethod = DEFAULT_TUPLE_METHOD
    appearances: int = DEFAULT_APPEARANCES
    seed: int = DEFAULT_SEED
    ensure_pair_coverage: bool = False
    group_key: str | None = None
    # The item field naming each item's source (system); scores then rank the sources.
    system_key: str | None = None
    # Adaptive batches after the balanced start (bws.adaptive); None: the balanced design only.
    adaptive: AdaptiveSettings | None = None

    def item_pool(self) -> ItemPool:
        """How the data files hold the items the tuples are drawn from."""
        return ItemPool(items_key=self.items_key, unit_size=self.tuple_size)


class ScoringSettings(_Stored):
    """A BWS scheme's stored scoring block. Read as stored: the limits were applied when the
    config was read, and a run holds what it asks to the limits in force then."""

    method: ScoringMethod = DEFAULT_SCORING_METHOD
    auto_compute: bool = True
    output_file: str | None = None
    include_confidence: bool = True
    intervals: IntervalMethod = DEFAULT_INTERVAL_METHOD
    bootstrap_iterations: int = DEFAULT_BOOTSTRAP_ITERATIONS

    def options(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


def design_of(config: ProjectConfig) -> BwsDesign:
    """A project's tuple design (the defaults for a project with no BWS scheme)."""
    return config.bws if config.bws is not None else BwsDesign()


def scoring_of(scheme: Scheme) -> ScoringSettings:
    """How a BWS scheme is scored (the defaults for any other scheme)."""
    return ScoringSettings.model_validate(scheme.options.get("scoring") or {})
