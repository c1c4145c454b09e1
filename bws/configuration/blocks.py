"""The blocks of a BWS scheme that say how its tuples are built and how it is scored, as a
file writes them, each with its one check (tuple_size's bounds are here and nowhere else)."""

from __future__ import annotations

from typing import Any

from bws.configuration.adaptive import AdaptiveBlock
from bws.configuration.vocabulary import (
    DEFAULT_APPEARANCES,
    DEFAULT_BOOTSTRAP_ITERATIONS,
    DEFAULT_INTERVAL_METHOD,
    DEFAULT_SCORING_METHOD,
    DEFAULT_TUPLE_METHOD,
    MAX_TUPLE_SIZE,
    MIN_TUPLE_SIZE,
    IntervalMethod,
    ScoringMethod,
    TupleMethod,
)
from projects.configuration.fields import (
    Block,
    Flag,
    Name,
    WrittenPath,
    at_least,
    between,
    choice,
    limited,
)
from projects.configuration.vocabulary import DEFAULT_SEED

# How many items a tuple holds: the one check of tuple_size, wherever a config writes it.
TupleSize = between(MIN_TUPLE_SIZE, MAX_TUPLE_SIZE)


class TupleGeneration(Block):
    method: choice(TupleMethod) = DEFAULT_TUPLE_METHOD
    tuples_per_item: limited("appearances") = DEFAULT_APPEARANCES
    seed: at_least(0) = DEFAULT_SEED
    ensure_pair_coverage: Flag = False
    # Items sharing this data field's value form a group; tuples never mix groups.
    group_key: Name | None = None
    # The data field naming each item's source (the MT system, the model that wrote it): the
    # scores then rank the sources, through the groups when there are groups. Not the
    # scheme's source_key, which names the field shown above a tuple.
    system_key: Name | None = None
    # Further batches designed from the current fit (absent: the balanced design only).
    adaptive: AdaptiveBlock | None = None

    key_hints = {
        "min_item_appearances": ("is the bws_config (dialect A) name", "tuples_per_item"),
    }


class Scoring(Block):
    method: choice(ScoringMethod) = DEFAULT_SCORING_METHOD
    auto_compute: Flag = True
    output_file: WrittenPath | None = None
    include_confidence: Flag = True
    intervals: choice(IntervalMethod) = DEFAULT_INTERVAL_METHOD
    bootstrap_iterations: limited("bootstrap_iterations") = DEFAULT_BOOTSTRAP_ITERATIONS

    def options(self) -> dict[str, Any]:
        return self.model_dump(mode="json")
