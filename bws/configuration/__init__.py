"""A BWS scheme's part of a project's configuration, owned here and plugged into the reader
of `projects.configuration` through the scheme-type contract (bws.scheme):

- ``vocabulary``: the words and defaults (the scoring methods and interval kinds are the
  scoring core's own lists);
- ``blocks``: the blocks as a file writes them (tuple_size, tuple_generation, scoring) and
  their one check each;
- ``adaptive``: the adaptive block of the tuple design;
- ``normal``: what a project stores of them (``BwsDesign``, ``ScoringSettings``);
- ``dialect``: dialect A's ``bws`` schemes and ``bws_config`` said in dialect B's words;
- ``shared``: the one tuple design a project's BWS schemes share.

Pure Python (pydantic, no Django, no numpy), so ``python -m bws`` reads configs quickly.
"""

from bws.configuration.normal import BwsDesign, ScoringSettings, design_of, scoring_of
from bws.configuration.vocabulary import (
    DEFAULT_BOOTSTRAP_ITERATIONS,
    DEFAULT_INTERVAL_METHOD,
    DEFAULT_SCORING_METHOD,
    DEFAULT_TUPLE_SIZE,
    IntervalMethod,
    ScoringMethod,
    TupleMethod,
)

__all__ = [
    "DEFAULT_BOOTSTRAP_ITERATIONS",
    "DEFAULT_INTERVAL_METHOD",
    "DEFAULT_SCORING_METHOD",
    "DEFAULT_TUPLE_SIZE",
    "BwsDesign",
    "IntervalMethod",
    "ScoringMethod",
    "ScoringSettings",
    "TupleMethod",
    "design_of",
    "scoring_of",
]
