"""The configuration's words for scoring are the scoring core's: the two lists (the core
cannot import the configuration) name the same methods, so a method added to one and not
the other fails here rather than as a refused config or an unknown-method error."""

from bws.core.scoring import METHOD_NAMES, METHODS
from bws.core.scoring_options import INTERVAL_METHODS
from projects.configuration import DEFAULT_SCORING_METHOD, IntervalMethod, ScoringMethod
from projects.configuration.vocabulary import DEFAULT_INTERVAL_METHOD


def test_the_config_accepts_exactly_the_methods_the_core_fits():
    assert [method.value for method in ScoringMethod] == list(METHODS)
    assert set(METHOD_NAMES) == set(METHODS)
    assert DEFAULT_SCORING_METHOD in METHODS


def test_the_config_accepts_exactly_the_interval_kinds_the_core_makes():
    assert [kind.value for kind in IntervalMethod] == list(INTERVAL_METHODS)
    assert DEFAULT_INTERVAL_METHOD in INTERVAL_METHODS
