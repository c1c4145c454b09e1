"""Configuration files for the configuration tests: the two dialects' reference texts and
ways to write, load and collect the issues of a config in a temporary task directory."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from projects.configuration import ConfigError, ProjectConfig, load_config

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

DIALECT_A = """\
annotation_task_name: "Ranking"
data_files: ["data/items.jsonl"]
bws_config:
  tuple_size: 4
  min_item_appearances: 8
  seed: 42
  scoring: {method: bradley_terry}
annotation_schemes:
  - annotation_type: bws
    name: fluency
    tuple_size: 4
    best_description: "Most Fluent"
    worst_description: "Least Fluent"
"""

DIALECT_B = """\
task_name: "Ranking"
data_files: ["data/items.jsonl"]
annotation_schemes:
  - annotation_type: best_worst_scaling
    name: fluency
    items_key: translations
    tuple_size: 4
    best_label: "Most Fluent"
    worst_label: "Least Fluent"
    tuple_generation: {method: balanced_incomplete, tuples_per_item: 5, seed: 7}
"""


def write(tmp_path: Path, text: str, name: str = "config.yaml") -> Path:
    data = tmp_path / "data"
    data.mkdir(exist_ok=True)
    (data / "items.jsonl").write_text('{"id": "a", "text": "A"}\n')
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def load(tmp_path: Path, text: str, name: str = "config.yaml") -> ProjectConfig:
    return load_config(write(tmp_path, text, name))


def issues(tmp_path: Path, text: str) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, text)
    assert str(caught.value) == "\n".join(str(issue) for issue in caught.value.issues)
    return [str(issue) for issue in caught.value.issues]
