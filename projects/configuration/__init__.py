"""Project configuration: a YAML file in either dialect of the guides, read into one typed
normal form (``ProjectConfig``).

Pure Python (no Django), so the web upload, the management commands, the REST API and the
``python -m bws`` command line all read a configuration the same way. The modules, by
concern: ``yaml_text`` (the file's text), ``dialects`` (dialect A said in dialect B's
words), ``schema`` with ``fields``, ``labels`` and the scheme types' option models (the one
declarative schema), ``build`` (paths, and the blocks a type's schemes share), ``normal``
(what a project stores and readers get), ``vocabulary`` (enums and defaults). A scheme
type owns its part of the configuration through the scheme-type contract
(projects.schemes.base): its options, its dialect-A words and the block its schemes share;
best-worst scaling's part (tuple design, scoring, bws_config) is bws.configuration.
"""

from projects.configuration.build import load_config, parse_config
from projects.configuration.issues import ConfigError, ConfigIssue
from projects.configuration.normal import ItemPool, ProjectConfig, Scheme
from projects.configuration.vocabulary import (
    DEFAULT_SEED,
    AnswerFormat,
    AssignmentStrategy,
    Dialect,
)
from projects.configuration.yaml_text import parse_yaml

OUTPUT_FORMATS = tuple(fmt.value for fmt in AnswerFormat)

__all__ = [
    "DEFAULT_SEED",
    "OUTPUT_FORMATS",
    "AnswerFormat",
    "AssignmentStrategy",
    "ConfigError",
    "ConfigIssue",
    "Dialect",
    "ItemPool",
    "ProjectConfig",
    "Scheme",
    "load_config",
    "parse_config",
    "parse_yaml",
]
