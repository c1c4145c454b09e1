"""The words a configuration may use (enums) and every default, each stated once; a BWS
scheme's own (tuple design, scoring) are bws.configuration.vocabulary.

The schema (``schema``), the normal form a project stores (``normal``) and every reader
take their defaults from here.
"""

from __future__ import annotations

from enum import StrEnum


class AssignmentStrategy(StrEnum):
    LEAST_ANNOTATED = "least_annotated"
    RANDOM = "random"
    FIXED_ORDER = "fixed_order"


class AnswerFormat(StrEnum):
    """The interchange formats answers are read and written in (projects.interchange)."""

    JSONL = "jsonl"
    CSV = "csv"
    TSV = "tsv"


class DisplayType(StrEnum):
    TEXT = "text"
    IMAGE = "image"
    AUDIO = "audio"
    VIDEO = "video"
    CODE = "code"
    DIALOGUE = "dialogue"


class Dialect(StrEnum):
    A = "A"  # annotation_type: bws with a top-level bws_config
    B = "B"  # annotation_type: best_worst_scaling with tuple_generation and scoring per scheme


DATA_SUFFIXES = (".jsonl", ".json", ".csv", ".tsv")

# The seed of the tuple design, and of everything random drawn for a project.
DEFAULT_SEED = 42
DEFAULT_LEASE_MINUTES = 30
DEFAULT_OUTPUT_DIR = "annotation_output/"
DEFAULT_ANSWER_FORMAT = AnswerFormat.JSONL
DEFAULT_ASSIGNMENT = AssignmentStrategy.LEAST_ANNOTATED
DEFAULT_ID_KEY = "id"
DEFAULT_TEXT_KEY = "text"
DEFAULT_MEDIA_KEY = "media_url"
DEFAULT_STEPS_KEY = "steps"
# Participant links (participants block): the query parameter that names a participant
# (Prolific's), and how many participants one link may create.
DEFAULT_PARTICIPANT_ID_PARAM = "PROLIFIC_PID"
DEFAULT_MAX_PARTICIPANTS = 5000
# How long a participant holds a unit before it returns to the pool (minutes), and the most a
# config may set: short, so idle or fake participants cannot hold the units others need.
DEFAULT_PARTICIPANT_LEASE_MINUTES = 10
MAX_PARTICIPANT_LEASE_MINUTES = 120

# The stored type of a BWS scheme, whichever dialect named it.
BWS_TYPE = "bws"


# The languages annotator and participant pages can be shown in (config.settings.LANGUAGES
# lists the same codes): a project's `language:` and the keys of a text given per language.
LANGUAGE_CODES = ("en", "de", "pt", "it", "es", "fr", "ar")
