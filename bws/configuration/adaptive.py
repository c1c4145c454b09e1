"""The ``adaptive`` block of a BWS tuple design, as written and as stored: after a balanced
start, each further batch of tuples is designed from the current fit, where it tells most
(bws.adaptive).

    tuple_generation:
      adaptive:
        strategy: adaptive        # or iterative (rounds within buckets of similar items)
        initial_appearances: 4    # per item, from the balanced design (batch 0)
        batch_tuples: 200         # tuples per further batch
        max_appearances: 16       # per item, every batch included
        ready_margin: 50          # design the next batch when fewer tuples than this are open

Absent: no adaptive design (the balanced design is the whole tuple set). With it,
tuples_per_item is not used: the balanced start has initial_appearances. The iterative
strategy designs rounds rather than batches of batch_tuples: each round shows every item
still below max_appearances once, within buckets of similar score (doubling each round).
Neither works with items_key or group_key.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, model_validator

from projects.configuration.fields import Block, between, choice, detail, limited, reraise


class AdaptiveStrategy(StrEnum):
    ADAPTIVE = "adaptive"  # each batch from the whole pool, where the fit is least sure
    ITERATIVE = "iterative"  # rounds within buckets of items of similar score


DEFAULT_STRATEGY = AdaptiveStrategy.ADAPTIVE
DEFAULT_INITIAL_APPEARANCES = 4
DEFAULT_BATCH_TUPLES = 200
DEFAULT_MAX_APPEARANCES = 16
DEFAULT_READY_MARGIN = 50
MAX_BATCH_TUPLES = 100_000


class AdaptiveBlock(Block):
    strategy: choice(AdaptiveStrategy) = DEFAULT_STRATEGY
    initial_appearances: limited("appearances") = DEFAULT_INITIAL_APPEARANCES
    batch_tuples: between(1, MAX_BATCH_TUPLES) = DEFAULT_BATCH_TUPLES
    max_appearances: limited("appearances") = DEFAULT_MAX_APPEARANCES
    ready_margin: between(0, MAX_BATCH_TUPLES) = DEFAULT_READY_MARGIN

    key_hints = {
        "tuples_per_item": (
            "belongs to tuple_generation; the adaptive start is initial_appearances",
            "initial_appearances",
        ),
        "enabled": ("is not a key: the block's presence turns the design on", "strategy"),
    }

    @model_validator(mode="after")
    def _bounds_agree(self) -> AdaptiveBlock:
        details = []
        if self.max_appearances <= self.initial_appearances:
            details.append(
                detail(
                    ("max_appearances",),
                    f"must be above initial_appearances ({self.initial_appearances}), got "
                    f"{self.max_appearances}: the adaptive batches need room to add "
                    "appearances",
                )
            )
        if self.ready_margin > self.batch_tuples:
            details.append(
                detail(
                    ("ready_margin",),
                    f"must be at most batch_tuples ({self.batch_tuples}), got "
                    f"{self.ready_margin}: a batch is started when fewer tuples than this "
                    "are open",
                )
            )
        reraise("adaptive", details)
        return self


class AdaptiveSettings(BaseModel):
    """The stored form of the adaptive block (BwsDesign.adaptive)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    strategy: AdaptiveStrategy = DEFAULT_STRATEGY
    initial_appearances: int = DEFAULT_INITIAL_APPEARANCES
    batch_tuples: int = DEFAULT_BATCH_TUPLES
    max_appearances: int = DEFAULT_MAX_APPEARANCES
    ready_margin: int = DEFAULT_READY_MARGIN

    @classmethod
    def of(cls, block: AdaptiveBlock | None) -> AdaptiveSettings | None:
        return None if block is None else cls(**block.model_dump())
