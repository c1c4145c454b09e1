"""The config's ``gold`` block: a file of units with known answers, the share of a
participant's units that are attention checks drawn from it, and an optional training phase
of its first units with feedback and a pass threshold.

    gold:
      file: gold.jsonl        # inside the config's folder
      attention_rate: 0.1     # 0 .. 0.5
      max_failed_checks: 2    # optional: more failed checks than this screen a person out
      training:
        units: 5              # the first 5 gold units are training, with feedback
        pass_threshold: 0.8   # share answered right to pass

The file itself is read when the project is built (crowds.gold).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict

from projects.configuration.fields import Block, Count, Name, at_least, problem
from projects.configuration.issues import type_name

MAX_ATTENTION_RATE = 0.5
DEFAULT_ATTENTION_RATE = 0.1
DEFAULT_PASS_THRESHOLD = 0.8


def share(low: float, high: float):
    """A number from ``low`` to ``high`` (an integer is taken as its float)."""

    def check(value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise problem(f"must be a number from {low:g} to {high:g}, got {type_name(value)}")
        if not low <= value <= high:
            raise problem(f"must be from {low:g} to {high:g}, got {value!r}")
        return float(value)

    return Annotated[float, BeforeValidator(check)]


class TrainingBlock(Block):
    units: Count
    pass_threshold: share(0.0, 1.0) = DEFAULT_PASS_THRESHOLD

    missing_notes = {"units": "(how many gold units the training shows)"}


class GoldBlock(Block):
    file: Name
    attention_rate: share(0.0, MAX_ATTENTION_RATE) = DEFAULT_ATTENTION_RATE
    max_failed_checks: at_least(0) | None = None
    training: TrainingBlock | None = None

    missing_notes = {"file": "(the gold file, e.g. gold.jsonl)"}


class GoldSettings(BaseModel):
    """The stored form of the gold block (ProjectConfig.gold)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    file: str
    attention_rate: float = DEFAULT_ATTENTION_RATE
    training_units: int = 0
    pass_threshold: float = DEFAULT_PASS_THRESHOLD
    max_failed_checks: int | None = None  # None: failed checks never screen a person out

    @classmethod
    def of(cls, block: GoldBlock | None) -> GoldSettings | None:
        if block is None:
            return None
        return cls(
            file=block.file,
            attention_rate=block.attention_rate,
            max_failed_checks=block.max_failed_checks,
            training_units=block.training.units if block.training else 0,
            pass_threshold=(
                block.training.pass_threshold if block.training else DEFAULT_PASS_THRESHOLD
            ),
        )
