"""The configuration's words for scoring are the scoring core's: the two lists (the core
cannot import the configuration) name the same methods, so a method added to one and not
the other fails here rather than as a refused config or an unknown-method error. And the
configuration's BWS words are read in bws alone."""

import ast
import re
from pathlib import Path

from bws.configuration import (
    DEFAULT_INTERVAL_METHOD,
    DEFAULT_SCORING_METHOD,
    IntervalMethod,
    ScoringMethod,
    TupleMethod,
)
from bws.core.scoring import METHOD_NAMES, METHODS
from bws.core.scoring_options import INTERVAL_METHODS


def test_the_config_accepts_exactly_the_methods_the_core_fits():
    assert [method.value for method in ScoringMethod] == list(METHODS)
    assert set(METHOD_NAMES) == set(METHODS)
    assert DEFAULT_SCORING_METHOD in METHODS


def test_the_config_accepts_exactly_the_interval_kinds_the_core_makes():
    assert [kind.value for kind in IntervalMethod] == list(INTERVAL_METHODS)
    assert DEFAULT_INTERVAL_METHOD in INTERVAL_METHODS


# The words only a BWS configuration uses: what a tuple design and a scoring block say.
# Another app that needed one of them would be reading BWS settings itself.
BWS_WORDS = {
    *METHODS,
    TupleMethod.BALANCED_INCOMPLETE.value,  # (random is also an assignment strategy)
    "bws_config",
    "tuple_generation",
    "tuples_per_item",
    "min_item_appearances",
    "ensure_pair_coverage",
    "initial_appearances",
    "max_appearances",
}
ROOT = Path(__file__).resolve().parents[2]


def _code_strings(path: Path):
    """(line, text) of the string constants of a module's code (docstrings left out)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
        ):
            yield node.lineno, node.value


def test_only_bws_reads_the_words_of_a_bws_configuration():
    offences = []
    for app in ("projects", "labs", "annotation", "crowds", "agreement", "demo"):
        for path in sorted((ROOT / app).rglob("*.py")):
            if {"tests", "migrations"} & set(path.relative_to(ROOT).parts):
                continue
            for line, text in _code_strings(path):
                words = set(re.findall(r"[a-z_]+", text)) & BWS_WORDS
                if words:
                    offences.append(f"{path.relative_to(ROOT)}:{line}: {sorted(words)}")
    assert offences == []


def test_the_words_checked_are_read_by_bws():
    """The check above looks for words bws itself reads, so it cannot pass by looking for
    words nobody uses."""
    found = set()
    for path in (ROOT / "bws" / "configuration").rglob("*.py"):
        for _, text in _code_strings(path):
            found |= set(re.findall(r"[a-z_]+", text)) & BWS_WORDS
    found |= set(METHODS)  # the core's list, made the configuration's enum
    assert found == BWS_WORDS
