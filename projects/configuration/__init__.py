"""Project configuration: a YAML file in either dialect of the guides, read into one typed
normal form (``ProjectConfig``).

Pure Python (no Django), so the web upload, the management commands, the REST API and the
``python -m bws`` command line all read a configuration the same way. The modules, by
concern: ``yaml_text`` (the file's text), ``dialects`` (dialect A said in dialect B's
words), ``schema`` with ``fields``, ``labels``, ``design`` and the scheme types' option
models (the one declarative schema), ``build`` (paths and the shared tuple design),
``normal`` (what a project stores and readers get), ``vocabulary`` (enums and defaults).
"""

from projects.configuration.build import load_config, parse_config
from projects.configuration.issues import ConfigError, ConfigIssue
from projects.configuration.normal import BwsDesign, ProjectConfig, Scheme
from projects.configuration.vocabulary import (
    DEFAULT_BOOTSTRAP_ITERATIONS,
    DEFAULT_SCORING_METHOD,
    DEFAULT_SEED,
    DEFAULT_TUPLE_SIZE,
    AnswerFormat,
    AssignmentStrategy,
    Dialect,
    IntervalMethod,
    ScoringMethod,
    TupleMethod,
)
from projects.configuration.yaml_text import parse_yaml

OUTPUT_FORMATS = tuple(fmt.value for fmt in AnswerFormat)

__all__ = [
    "DEFAULT_BOOTSTRAP_ITERATIONS",
    "DEFAULT_SCORING_METHOD",
    "DEFAULT_SEED",
    "DEFAULT_TUPLE_SIZE",
    "OUTPUT_FORMATS",
    "AnswerFormat",
    "AssignmentStrategy",
    "BwsDesign",
    "ConfigError",
    "ConfigIssue",
    "Dialect",
    "IntervalMethod",
    "ProjectConfig",
    "Scheme",
    "ScoringMethod",
    "TupleMethod",
    "load_config",
    "parse_config",
    "parse_yaml",
]
