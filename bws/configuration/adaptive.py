"""The ``adaptive`` block of a BWS tuple design, as written and as stored: after a balanced
start, each further batch of tuples is designed from the current fit, where it tells most
(bws.adaptive).

    tuple_generation:
      adaptive:
        strategy: adaptive        # or iterative (rounds within buckets of similar items)
        initial_appearances: 1    # per item, from the balanced design (batch 0)
        batch_tuples: 32          # tuples per further batch
        max_appearances: 32       # per item, every batch included (a threshold's
                                  # reference item and compared items excepted)
        ready_margin: 8           # design the next batch when fewer tuples than this are open
        target: top_k             # what the batches aim at: ranking (the whole order, the
                                  # default), top_k, threshold or comparisons
        k: 0.1                    # top_k: how many (a count, or a share of the items below 1)
        # threshold: 1.5          # threshold: items above this score, or
        # reference: item_017     #   above this item
        # comparisons: [[a, b], [c, d]]   # comparisons: the pairs of items whose order matters

Absent: no adaptive design (the balanced design is the whole tuple set). The four sizes are
optional: left out, each is what the benchmarks measured for the block's target (MEASURED;
benchmarks/RESULTS.md, "Adaptive designs"), the batch as a share of the items, set when the
project is imported and its items counted (``AdaptiveSettings.sized``). With it,
tuples_per_item is not used: the balanced start has initial_appearances. The iterative
strategy designs rounds rather than batches of batch_tuples: each round shows every item
still below max_appearances once, within buckets of similar score (doubling each round).
Neither works with items_key or group_key. A target other than ranking needs the adaptive
strategy (bws.core.targets); its item ids are checked against the data at import.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Annotated

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Strict,
    ValidationInfo,
    model_validator,
)

from projects.configuration.fields import (
    Block,
    Name,
    between,
    choice,
    detail,
    limited,
    limits_of,
    problem,
    reraise,
)


class AdaptiveStrategy(StrEnum):
    ADAPTIVE = "adaptive"  # each batch from the whole pool, where the fit is least sure
    ITERATIVE = "iterative"  # rounds within buckets of items of similar score


class AdaptiveTarget(StrEnum):
    RANKING = "ranking"  # the whole order
    TOP_K = "top_k"  # which k items are the best
    THRESHOLD = "threshold"  # which items lie above a score or a reference item
    COMPARISONS = "comparisons"  # the order of chosen pairs of items


# The keys each target reads (the others are refused with it).
TARGET_KEYS = {
    AdaptiveTarget.RANKING: (),
    AdaptiveTarget.TOP_K: ("k",),
    AdaptiveTarget.THRESHOLD: ("threshold", "reference"),
    AdaptiveTarget.COMPARISONS: ("comparisons",),
}
MAX_COMPARISONS = 1000


def _positive(value: float) -> float:
    if not value > 0 or value != value or value == float("inf"):
        raise problem(f"must be a positive number, got {value}")
    return value


def _finite(value: float) -> float:
    if value != value or value in (float("inf"), float("-inf")):
        raise problem(f"must be a finite number, got {value}")
    return value


def _pairs(value: list) -> list:
    if not 1 <= len(value) <= MAX_COMPARISONS:
        raise problem(f"must list from 1 to {MAX_COMPARISONS} pairs, got {len(value)}")
    for n, pair in enumerate(value, start=1):
        if pair[0] == pair[1]:
            raise problem(f"pair {n} names {pair[0]!r} twice: a pair needs two items")
    return value


Share = Annotated[float, AfterValidator(_positive)]
Score = Annotated[float, AfterValidator(_finite)]
Pairs = Annotated[
    list[tuple[Annotated[str, Strict()], Annotated[str, Strict()]]], AfterValidator(_pairs)
]  # noqa: E501

DEFAULT_STRATEGY = AdaptiveStrategy.ADAPTIVE
# Stored forms from before the sizes followed the target (every key was stored then).
DEFAULT_INITIAL_APPEARANCES = 4
DEFAULT_BATCH_TUPLES = 200
DEFAULT_MAX_APPEARANCES = 16
DEFAULT_READY_MARGIN = 50


@dataclass(frozen=True)
class Measured:
    """The sizes a target's design was measured with: the balanced start and the bound
    (appearances per item), and a batch of n_items // batch_divisor tuples."""

    initial_appearances: int
    max_appearances: int
    batch_divisor: int


# What a block leaves out (benchmarks/adaptive.py and benchmarks/adaptive_targets.py): the
# whole ranking from 2 balanced appearances in batches of half an appearance per item; a
# narrow target from 1 (a start of 4 spends half the balanced design's judgments before the
# first batch) with at most 32, in batches of 1/8 appearance per item, a threshold score in
# batches of 1/16 (42-51% of the balanced design's judgments, against 41-54% with 1/8).
MEASURED = {
    AdaptiveTarget.RANKING: Measured(2, 16, 8),
    AdaptiveTarget.TOP_K: Measured(1, 32, 32),
    AdaptiveTarget.THRESHOLD: Measured(1, 32, 64),
    "reference": Measured(1, 32, 32),
    AdaptiveTarget.COMPARISONS: Measured(1, 32, 32),
}
MIN_BATCH_TUPLES = 4
# The next batch is designed when a quarter of a batch is left open (at least 2 tuples), as
# measured through the queue (benchmarks/adaptive_queue.py): designed sooner, a batch would
# come from a fit that has not seen the answers to the one before.
MARGIN_DIVISOR = 4
MIN_READY_MARGIN = 2


def measured(target, strategy=None, *, reference: bool = False) -> Measured:
    """The sizes measured for ``target`` (iterative rounds: the whole ranking's); anything
    that is not a known target reads as the whole ranking (its own check names it)."""
    if strategy == AdaptiveStrategy.ITERATIVE:
        return MEASURED[AdaptiveTarget.RANKING]
    if target == AdaptiveTarget.THRESHOLD and reference:
        return MEASURED["reference"]
    try:
        return MEASURED[AdaptiveTarget(target)]
    except ValueError:
        return MEASURED[AdaptiveTarget.RANKING]


MAX_BATCH_TUPLES = 100_000


class AdaptiveBlock(Block):
    strategy: choice(AdaptiveStrategy) = DEFAULT_STRATEGY
    initial_appearances: limited("appearances") = DEFAULT_INITIAL_APPEARANCES
    batch_tuples: between(1, MAX_BATCH_TUPLES) | None = None  # None: sized at import
    max_appearances: limited("appearances") = DEFAULT_MAX_APPEARANCES
    ready_margin: between(0, MAX_BATCH_TUPLES) | None = None  # None: sized at import
    target: choice(AdaptiveTarget) = AdaptiveTarget.RANKING
    k: Share | None = None
    threshold: Score | None = None
    reference: Name | None = None
    comparisons: Pairs | None = None

    key_hints = {
        "tuples_per_item": (
            "belongs to tuple_generation; the adaptive start is initial_appearances",
            "initial_appearances",
        ),
        "enabled": ("is not a key: the block's presence turns the design on", "strategy"),
    }

    @model_validator(mode="before")
    @classmethod
    def _measured_sizes(cls, data, info: ValidationInfo):
        """The start and the bound a block leaves out, as measured for its target (within
        the deployment's limit of appearances); a bound left out stays above a start given."""
        if not isinstance(data, dict):
            return data
        sizes = measured(
            data.get("target") or AdaptiveTarget.RANKING,
            data.get("strategy"),
            reference=data.get("reference") is not None,
        )
        limit = limits_of(info).appearances
        filled = dict(data)
        if filled.get("initial_appearances") is None:
            filled["initial_appearances"] = min(sizes.initial_appearances, limit)
        if filled.get("max_appearances") is None:
            start = filled["initial_appearances"]
            room = 2 * start if isinstance(start, int) and not isinstance(start, bool) else 0
            filled["max_appearances"] = min(max(sizes.max_appearances, room), limit)
        return filled

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
        given = self.ready_margin is not None and self.batch_tuples is not None
        if given and self.ready_margin > self.batch_tuples:
            details.append(
                detail(
                    ("ready_margin",),
                    f"must be at most batch_tuples ({self.batch_tuples}), got "
                    f"{self.ready_margin}: a batch is started when fewer tuples than this "
                    "are open",
                )
            )
        details.extend(self._target_details())
        reraise("adaptive", details)
        return self

    def _target_details(self) -> list:
        details = []
        given = [
            key
            for key in ("k", "threshold", "reference", "comparisons")
            if getattr(self, key) is not None
        ]
        for key in given:
            if key not in TARGET_KEYS[self.target]:
                wanted = next(t for t, keys in TARGET_KEYS.items() if key in keys)
                details.append(detail((key,), f"belongs to target {wanted}, not {self.target}"))
        if self.target != AdaptiveTarget.RANKING and self.strategy != AdaptiveStrategy.ADAPTIVE:
            details.append(
                detail(
                    ("target",),
                    f"target {self.target} needs strategy adaptive, got {self.strategy}",
                )
            )
        if self.target == AdaptiveTarget.TOP_K:
            if self.k is None:
                details.append(
                    detail(
                        ("k",),
                        "top_k needs k: a count, or a share below 1 (0.1: the top 10%)",
                    )
                )
            elif self.k >= 1 and self.k != int(self.k):
                details.append(
                    detail(("k",), f"must be a whole count, or a share below 1, got {self.k}")
                )
        if self.target == AdaptiveTarget.THRESHOLD and (self.threshold is None) == (
            self.reference is None
        ):
            details.append(
                detail(
                    ("threshold",),
                    "threshold needs one of threshold (a score) or reference (an item id)",
                )
            )
        if self.target == AdaptiveTarget.COMPARISONS and self.comparisons is None:
            details.append(
                detail(
                    ("comparisons",),
                    "comparisons needs the pairs of items, e.g. [[item_a, item_b]]",
                )
            )
        return details


class AdaptiveSettings(BaseModel):
    """The stored form of the adaptive block (BwsDesign.adaptive)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    strategy: AdaptiveStrategy = DEFAULT_STRATEGY
    initial_appearances: int = DEFAULT_INITIAL_APPEARANCES
    # None until the project is imported (``sized``): then a share of its items.
    batch_tuples: int | None = DEFAULT_BATCH_TUPLES
    max_appearances: int = DEFAULT_MAX_APPEARANCES
    ready_margin: int | None = DEFAULT_READY_MARGIN
    target: AdaptiveTarget = AdaptiveTarget.RANKING
    k: float | None = None
    threshold: float | None = None
    reference: str | None = None
    comparisons: list[tuple[str, str]] | None = None

    def sized(self, n_items: int) -> AdaptiveSettings:
        """The settings with the batch and the margin the block left out set for a pool
        of ``n_items``: n_items // the target's batch divisor tuples (at least
        MIN_BATCH_TUPLES), designed when a quarter of a batch is left open."""
        sizes = measured(self.target, self.strategy, reference=self.reference is not None)
        batch = self.batch_tuples
        if batch is None:
            batch = min(max(MIN_BATCH_TUPLES, n_items // sizes.batch_divisor), MAX_BATCH_TUPLES)
        margin = self.ready_margin
        if margin is None:
            margin = min(max(MIN_READY_MARGIN, batch // MARGIN_DIVISOR), batch)
        return self.model_copy(update={"batch_tuples": batch, "ready_margin": margin})

    def item_ids(self) -> list[str]:
        """The item ids the target names (checked against the data at import)."""
        named = [self.reference] if self.reference is not None else []
        for a, b in self.comparisons or ():
            named.extend((a, b))
        return named

    def describe(self, n_items: int) -> str:
        """The target in words, for the dashboard."""
        if self.target == AdaptiveTarget.TOP_K:
            return f"the top {self.count(n_items)} items"
        if self.target == AdaptiveTarget.THRESHOLD:
            if self.reference is not None:
                return f"the items above {self.reference}"
            return f"the items scoring above {self.threshold:g}"
        if self.target == AdaptiveTarget.COMPARISONS:
            n = len(self.comparisons or ())
            return f"the order of {n} chosen pair{'s' if n != 1 else ''}"
        return "the whole ranking"

    def count(self, n_items: int) -> int:
        """top_k's k as a count of items, from 1 to n_items - 1."""
        k = self.k or 0.1
        count = round(k * n_items) if k < 1 else int(k)
        return max(1, min(count, n_items - 1))

    @classmethod
    def of(cls, block: AdaptiveBlock | None) -> AdaptiveSettings | None:
        return None if block is None else cls(**block.model_dump())
