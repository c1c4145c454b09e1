"""The words a BWS scheme's configuration may use, and its defaults, each stated once.

The scoring methods and interval kinds are the scoring core's lists
(``bws.core.scoring_options``), made enums here: a method the core learns is a word the
configuration accepts, with nothing else to change.
"""

from __future__ import annotations

from enum import StrEnum

from bws.core.scoring_options import (
    DEFAULT_INTERVALS,
    DEFAULT_METHOD,
    DEFAULT_RESAMPLES,
    INTERVAL_METHODS,
    METHODS,
)

ScoringMethod = StrEnum("ScoringMethod", [(name.upper(), name) for name in METHODS])
# How a scheme's 95% intervals are made (coverage of each in benchmarks/RESULTS.md).
IntervalMethod = StrEnum("IntervalMethod", [(name.upper(), name) for name in INTERVAL_METHODS])


class TupleMethod(StrEnum):
    BALANCED_INCOMPLETE = "balanced_incomplete"
    RANDOM = "random"


# The BWS page binds best to 1, 2, ... and worst to these keys, one per item of a tuple,
# so their number is the most items a tuple can hold.
WORST_KEYS = "qwertyui"
MIN_TUPLE_SIZE, MAX_TUPLE_SIZE = 3, len(WORST_KEYS)

DEFAULT_TUPLE_SIZE = 4
DEFAULT_APPEARANCES = 8
DEFAULT_TUPLE_METHOD = TupleMethod.BALANCED_INCOMPLETE
DEFAULT_SCORING_METHOD = ScoringMethod(DEFAULT_METHOD)
DEFAULT_INTERVAL_METHOD = IntervalMethod(DEFAULT_INTERVALS)
DEFAULT_BOOTSTRAP_ITERATIONS = DEFAULT_RESAMPLES
DEFAULT_BEST_LABEL = "Best"
DEFAULT_WORST_LABEL = "Worst"
