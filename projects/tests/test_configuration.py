"""Project configuration: both dialects read into one form; every mistake named precisely."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from projects.configuration import (
    BwsDesign,
    ConfigError,
    ConfigIssue,
    ProjectConfig,
    Scheme,
    load_config,
    parse_config,
)

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


# --------------------------------------------------------------------------- the examples


def test_dialect_a_reference_example_normalises():
    config = load_config(EXAMPLES / "mt_bws" / "config.yaml")
    assert config.to_dict() == {
        "task_name": "MT System Ranking (BWS)",
        "dialect": "A",
        "base_dir": str(EXAMPLES / "mt_bws"),
        "data_files": ["data/mt_systems.jsonl"],
        "schemes": [
            {
                "name": "overall_quality",
                "type": "bws",
                "description": "Select the BEST and the WORST translation",
                "options": {
                    "best_label": "Best Translation",
                    "worst_label": "Worst Translation",
                    "sequential_key_binding": True,
                    "required": True,
                    "show_item_labels": True,
                    "randomize_order": False,
                    "show_source": False,
                    "source_key": None,
                    "scoring": {
                        "method": "bradley_terry",
                        "auto_compute": True,
                        "output_file": None,
                        "include_confidence": True,
                        "intervals": "calibrated",
                        "bootstrap_iterations": 1000,
                    },
                },
            }
        ],
        "item_properties": {"id_key": "id", "text_key": "text"},
        "instance_display": [],
        "assignment_strategy": "least_annotated",
        "num_annotators_per_item": None,
        "max_annotations_per_user": None,
        "lease_minutes": 30,
        "allow_all_users": True,
        "authorized_users": [],
        "output_annotation_dir": "annotation_output/",
        "output_annotation_format": "jsonl",
        "agreement_metrics": {},
        "instructions": "",
        "participants": None,
        "gold": None,
        "bws": {
            "tuple_size": 4,
            "items_key": None,
            "method": "balanced_incomplete",
            "appearances": 8,
            "seed": 42,
            "ensure_pair_coverage": False,
            "group_key": None,
            "adaptive": None,
        },
        "notices": [],
        "source": "config.yaml",
        "design_summary": [],
    }
    assert config.data_paths() == [EXAMPLES / "mt_bws" / "data" / "mt_systems.jsonl"]
    assert config.output_dir() == EXAMPLES / "mt_bws" / "annotation_output"


def test_dialect_b_reference_example_normalises():
    config = load_config(EXAMPLES / "mt_tuples" / "config.yaml")
    assert config.dialect == "B"
    assert config.task_name == "MT System Ranking (BWS)"
    assert config.item_properties == {"id_key": "id", "text_key": "source"}
    assert config.instance_display == [
        {"key": "source", "label": "Source Sentence", "type": "text"}
    ]
    assert config.bws == BwsDesign(
        tuple_size=4,
        items_key="translations",
        method="balanced_incomplete",
        appearances=5,
        seed=42,
        ensure_pair_coverage=False,
    )
    (scheme,) = config.schemes
    assert scheme == config.scheme("overall_quality") == config.bws_schemes[0]
    assert scheme.type == "bws"
    assert scheme.options == {
        "best_label": "Best Translation",
        "worst_label": "Worst Translation",
        "sequential_key_binding": True,
        "required": True,
        "show_item_labels": True,
        "randomize_order": True,
        "show_source": False,
        "source_key": None,
        "scoring": {
            "method": "bradley_terry",
            "auto_compute": True,
            "output_file": "output/quality_scores.csv",
            "include_confidence": True,
            "intervals": "calibrated",
            "bootstrap_iterations": 1000,
        },
    }
    assert config.output_annotation_dir == "output/"
    assert config.output_annotation_format == "jsonl"
    assert config.notices == []


def test_demo_project_has_two_schemes_on_one_tuple_set():
    config = load_config(EXAMPLES / "mt_two_dims" / "config.yaml")
    assert [s.name for s in config.bws_schemes] == ["fluency", "adequacy"]
    assert config.bws.tuple_size == 4 and config.bws.appearances == 8
    assert config.num_annotators_per_item == 2
    assert all(s.options["scoring"]["method"] == "bradley_terry" for s in config.bws_schemes)


@pytest.mark.parametrize("example", ["mt_bws", "mt_tuples", "mt_two_dims"])
def test_normal_form_survives_json(example):
    config = load_config(EXAMPLES / example / "config.yaml")
    stored = json.loads(json.dumps(config.to_dict()))
    assert ProjectConfig.from_dict(stored) == config


def test_stored_form_from_another_version_still_reads():
    stored = load_config(EXAMPLES / "mt_bws" / "config.yaml").to_dict()
    stored["added_later"] = 1
    stored["bws"]["added_later"] = 2
    del stored["lease_minutes"]
    config = ProjectConfig.from_dict(stored)
    assert config.lease_minutes == 30 and config.bws.tuple_size == 4


# --------------------------------------------------------------------------- defaults


def test_bws_scheme_without_bws_config_gets_defaults_and_a_notice(tmp_path):
    config = load(
        tmp_path,
        """\
        annotation_task_name: T
        data_files: [data/items.jsonl]
        annotation_schemes:
          - {annotation_type: bws, name: quality}
        """,
    )
    assert config.bws == BwsDesign(
        tuple_size=4, method="balanced_incomplete", appearances=8, seed=42
    )
    assert config.scheme("quality").options["scoring"]["method"] == "counting"
    assert config.scheme("quality").options["best_label"] == "Best"
    assert config.notices == [
        "No bws_config: defaults applied (tuple_size 4, min_item_appearances 8, seed 42, "
        "scoring counting)"
    ]


def test_dialect_b_without_tuple_generation_gets_defaults_and_a_notice(tmp_path):
    config = load(
        tmp_path,
        """\
        task_name: T
        data_files: [data/items.jsonl]
        annotation_schemes:
          - {annotation_type: best_worst_scaling, name: quality, tuple_size: 5}
        """,
    )
    assert config.bws == BwsDesign(
        tuple_size=5, method="balanced_incomplete", appearances=8, seed=42
    )
    assert config.notices == [
        "No tuple_generation: defaults applied (balanced_incomplete, tuples_per_item 8, seed 42)"
    ]


def test_second_b_scheme_shares_the_first_ones_tuple_generation(tmp_path):
    config = load(
        tmp_path,
        DIALECT_B
        + """\
  - annotation_type: best_worst_scaling
    name: adequacy
    items_key: translations
""",
    )
    assert config.bws.appearances == 5 and config.bws.seed == 7
    assert [s.name for s in config.bws_schemes] == ["fluency", "adequacy"]


def test_missing_task_name_is_taken_from_the_file_with_a_notice(tmp_path):
    config = load(tmp_path, DIALECT_A.replace('annotation_task_name: "Ranking"\n', ""), "mt.yaml")
    assert config.task_name == "mt"
    assert config.notices == ["No annotation_task_name: the task is named 'mt' after the file"]


def test_project_wide_settings(tmp_path):
    config = load(
        tmp_path,
        DIALECT_A
        + """\
assignment_strategy: fixed_order
num_annotators_per_item: 3
max_annotations_per_user: 50
assignment_lease_minutes: 10
user_config: {allow_all_users: false, authorized_users: [ann1, ann2]}
export_annotation_format: tsv
""",
    )
    assert config.assignment_strategy == "fixed_order"
    assert config.num_annotators_per_item == 3
    assert config.max_annotations_per_user == 50
    assert config.lease_minutes == 10
    assert config.allow_all_users is False
    assert config.authorized_users == ["ann1", "ann2"]
    assert config.output_annotation_format == "tsv"


def test_data_files_resolve_against_task_dir(tmp_path):
    (tmp_path / "study" / "data").mkdir(parents=True)
    (tmp_path / "study" / "data" / "x.csv").write_text("id,text\n1,a\n")
    config = load(
        tmp_path,
        """\
        task_dir: study
        data_files: [data/x.csv]
        annotation_schemes: [{annotation_type: text, name: comment}]
        """,
    )
    assert config.base_dir == str(tmp_path / "study")
    assert config.data_paths() == [tmp_path / "study" / "data" / "x.csv"]


def test_parse_config_can_skip_the_file_check():
    data = {"data_files": ["nowhere.jsonl"], "annotation_schemes": [{"annotation_type": "text"}]}
    data["annotation_schemes"][0]["name"] = "note"
    config = parse_config(data, "upload.yaml", "/tmp", check_files=False)
    assert config.data_files == ["nowhere.jsonl"] and config.task_name == "upload"


def test_every_other_scheme_type_normalises(tmp_path):
    config = load(
        tmp_path,
        """\
        data_files: [data/items.jsonl]
        annotation_schemes:
          - annotation_type: radio
            name: sentiment
            labels: [positive, {name: negative, key_value: n}]
            label_requirement: {required: true}
          - {annotation_type: multiselect, name: topics, labels: [sport, politics]}
          - {annotation_type: likert, name: quality, size: 5, min_label: bad, max_label: good}
          - {annotation_type: likert, name: agree, labels: ["no", maybe, "yes"]}
          - {annotation_type: text, name: comment, multiline: true}
          - {annotation_type: spatial_annotation, name: boxes, labels: [car, pedestrian]}
          - {annotation_type: temporal_grounding, name: events, labels: [speech]}
          - annotation_type: tiered_annotation
            name: turns
            labels: [speech, laughter]
            tiers: [speaker_a, speaker_b]
            media_key: audio
          - {annotation_type: process_reward, name: steps, labels: [good, bad]}
          - annotation_type: gui_trajectory
            name: clicks
            labels: [correct, wrong]
            steps_key: actions
        """,
    )
    assert config.bws is None and config.bws_schemes == []
    options = {s.name: s.options for s in config.schemes}
    assert options["sentiment"] == {
        "required": True,
        "labels": [
            {"name": "positive", "key_value": None},
            {"name": "negative", "key_value": "n"},
        ],
        "sequential_key_binding": False,
        "horizontal": False,
    }
    assert options["quality"]["size"] == 5 and options["quality"]["min_label"] == "bad"
    assert options["agree"]["size"] == 3
    assert [label["name"] for label in options["agree"]["labels"]] == ["no", "maybe", "yes"]
    assert options["comment"] == {"required": False, "multiline": True}
    assert options["boxes"]["labels"][1] == {"name": "pedestrian", "key_value": None}
    assert options["events"]["media_key"] == "media_url"
    assert options["turns"]["tiers"] == ["speaker_a", "speaker_b"]
    assert options["turns"]["media_key"] == "audio"
    assert options["steps"]["steps_key"] == "steps"
    assert options["clicks"]["steps_key"] == "actions"
    assert [s.type for s in config.schemes][-2:] == ["process_reward", "gui_trajectory"]


def test_bws_config_without_bws_scheme_is_ignored_with_a_notice(tmp_path):
    config = load(
        tmp_path,
        """\
        data_files: [data/items.jsonl]
        bws_config: {tuple_size: 4}
        annotation_schemes: [{annotation_type: text, name: c}]
        """,
    )
    assert config.bws is None
    assert "bws_config is ignored: no scheme has annotation_type bws" in config.notices


def test_issue_text_names_file_key_path_reason_and_suggestion():
    issue = ConfigIssue(
        "config.yaml", "annotation_schemes[0].best_lable", "unknown key", "best_label"
    )
    assert str(issue) == (
        "config.yaml: annotation_schemes[0].best_lable: unknown key; did you mean 'best_label'?"
    )
    assert str(ConfigIssue("c.yaml", "", "the file is empty")) == "c.yaml: the file is empty"


def test_scheme_lookup_names_the_known_schemes():
    config = ProjectConfig(
        task_name="t",
        dialect="A",
        base_dir="/",
        data_files=[],
        schemes=[Scheme(name="a", type="text")],
    )
    with pytest.raises(KeyError, match="schemes: a"):
        config.scheme("b")


# --------------------------------------------------------------------------- bad configs


def test_unknown_scheme_key_suggests_the_nearest(tmp_path):
    text = DIALECT_B.replace("best_label:", "best_lable:")
    assert issues(tmp_path, text) == [
        "config.yaml: annotation_schemes[0].best_lable: unknown key; did you mean 'best_label'?"
    ]


def test_unknown_top_level_key(tmp_path):
    text = DIALECT_A.replace("annotation_schemes:", "anotation_schemes:")
    assert issues(tmp_path, text) == [
        "config.yaml: anotation_schemes: unknown key; did you mean 'annotation_schemes'?",
        "config.yaml: annotation_schemes: missing required key (at least one scheme)",
    ]


def test_unknown_keys_in_nested_blocks(tmp_path):
    text = (
        DIALECT_B.replace("tuples_per_item", "tuples_per_itme")
        + """\
    scoring: {method: counting, bootstrap_iteration: 10}
item_properties: {id_kye: id}
user_config: {allow_all_user: true}
instance_display: {fields: [{key: source, lable: Source}]}
"""
    )
    assert issues(tmp_path, text) == [
        "config.yaml: item_properties.id_kye: unknown key; did you mean 'id_key'?",
        "config.yaml: instance_display.fields[0].lable: unknown key; did you mean 'label'?",
        "config.yaml: user_config.allow_all_user: unknown key; did you mean 'allow_all_users'?",
        "config.yaml: annotation_schemes[0].scoring.bootstrap_iteration: unknown key; "
        "did you mean 'bootstrap_iterations'?",
        "config.yaml: annotation_schemes[0].tuple_generation.tuples_per_itme: unknown key; "
        "did you mean 'tuples_per_item'?",
    ]


def test_bws_config_unknown_key_and_bad_method(tmp_path):
    text = DIALECT_A.replace("min_item_appearances", "min_item_appearence").replace(
        "bradley_terry", "bradly_terry"
    )
    assert issues(tmp_path, text) == [
        "config.yaml: bws_config.min_item_appearence: unknown key; "
        "did you mean 'min_item_appearances'?",
        "config.yaml: bws_config.scoring.method: unknown value 'bradly_terry' "
        "(one of: counting, bradley_terry, plackett_luce); did you mean 'bradley_terry'?",
    ]


def test_dialect_b_tuple_size_out_of_range(tmp_path):
    assert issues(tmp_path, DIALECT_B.replace("tuple_size: 4", "tuple_size: 9")) == [
        "config.yaml: annotation_schemes[0].tuple_size: must be between 3 and 8, got 9"
    ]


def test_wrong_types_are_named(tmp_path):
    text = (
        DIALECT_B.replace("tuple_size: 4", 'tuple_size: "4"')
        + "num_annotators_per_item: 0\nuser_config: {allow_all_users: maybe}\n"
        + "agreement_metrics: [alpha]\n"
    )
    assert issues(tmp_path, text) == [
        "config.yaml: num_annotators_per_item: must be a positive integer, got 0",
        "config.yaml: user_config.allow_all_users: must be true or false, got string",
        "config.yaml: agreement_metrics: must be a mapping of keys, got list",
        "config.yaml: annotation_schemes[0].tuple_size: must be an integer, got string '4'",
    ]


def test_scheme_tuple_size_must_match_bws_config(tmp_path):
    text = DIALECT_A.replace("    tuple_size: 4\n    best", "    tuple_size: 5\n    best")
    assert issues(tmp_path, text) == [
        "config.yaml: annotation_schemes[0].tuple_size: 5 differs from bws_config.tuple_size 4"
    ]


def test_bws_scheme_with_dialect_b_keys_points_to_bws_config(tmp_path):
    text = DIALECT_A + "    items_key: translations\n    scoring: {method: counting}\n"
    found = issues(tmp_path, text)
    assert len(found) == 2
    assert found[0].startswith(
        "config.yaml: annotation_schemes[0].items_key: is a best_worst_scaling (dialect B) key; "
        "a bws scheme accepts only name, description, label_requirement, tuple_size, "
        "best_description, worst_description, sequential_key_binding"
    )
    assert "belong in bws_config" in found[0] and "best_worst_scaling" in found[0]
    assert found[1] == (
        "config.yaml: annotation_schemes[0].scoring: scoring belongs in the top-level "
        "bws_config; did you mean 'bws_config.scoring'?"
    )


def test_bws_scheme_with_dialect_b_label_names(tmp_path):
    text = DIALECT_A.replace("best_description", "best_label")
    assert issues(tmp_path, text) == [
        "config.yaml: annotation_schemes[0].best_label: is the best_worst_scaling (dialect B) "
        "name; did you mean 'best_description'?"
    ]


def test_missing_required_scheme_keys(tmp_path):
    text = """\
    data_files: [data/items.jsonl]
    annotation_schemes:
      - {description: "no name, no type"}
      - {annotation_type: radio, name: sentiment}
    """
    assert issues(tmp_path, text) == [
        "config.yaml: annotation_schemes[0].name: missing required key",
        "config.yaml: annotation_schemes[0].annotation_type: missing required key",
        "config.yaml: annotation_schemes[1].labels: missing required key "
        "(the choices, a list of labels)",
    ]


def test_missing_data_files_and_schemes(tmp_path):
    assert issues(tmp_path, "annotation_task_name: T\nannotation_schemes: []\n") == [
        "config.yaml: data_files: missing required key (a list of data files)",
        "config.yaml: annotation_schemes: must hold at least one scheme",
    ]


def test_duplicate_scheme_names(tmp_path):
    text = DIALECT_A + "  - {annotation_type: bws, name: fluency}\n"
    assert issues(tmp_path, text) == [
        "config.yaml: annotation_schemes[1].name: duplicate scheme name 'fluency' "
        "(also annotation_schemes[0])"
    ]


def test_bws_schemes_must_share_one_tuple_set(tmp_path):
    text = (
        DIALECT_B
        + """\
  - annotation_type: best_worst_scaling
    name: adequacy
    items_key: outputs
    tuple_size: 5
    tuple_generation: {method: random, tuples_per_item: 5, seed: 7}
"""
    )
    shared = "the BWS schemes of a project share one tuple set"
    assert issues(tmp_path, text) == [
        "config.yaml: annotation_schemes[1].items_key: 'outputs' differs from "
        f"annotation_schemes[0].items_key 'translations': {shared}",
        "config.yaml: annotation_schemes[1].tuple_size: 5 differs from "
        f"annotation_schemes[0].tuple_size 4: {shared}",
        "config.yaml: annotation_schemes[1].tuple_generation: differs from "
        f"annotation_schemes[0].tuple_generation: {shared}",
    ]


def test_dialect_a_schemes_without_bws_config_must_agree_on_tuple_size(tmp_path):
    text = """\
    data_files: [data/items.jsonl]
    annotation_schemes:
      - {annotation_type: bws, name: a, tuple_size: 4}
      - {annotation_type: bws, name: b, tuple_size: 5}
    """
    assert issues(tmp_path, text) == [
        "config.yaml: annotation_schemes[1].tuple_size: 5 differs from "
        "annotation_schemes[0].tuple_size 4: the BWS schemes of a project share one tuple set"
    ]


def test_yaml_syntax_error_names_the_line(tmp_path):
    text = "annotation_task_name: T\ndata_files: [data/items.jsonl\nannotation_schemes: []\n"
    (found,) = issues(tmp_path, text)
    assert found.startswith("config.yaml: YAML syntax error at line 3, column ")


def test_duplicate_yaml_key_names_both_lines(tmp_path):
    text = DIALECT_A + "bws_config: {tuple_size: 4}\n"
    assert issues(tmp_path, text) == ["config.yaml: bws_config: duplicate key (lines 3 and 14)"]


def test_data_file_not_found(tmp_path):
    text = DIALECT_A.replace("data/items.jsonl", "data/missing.jsonl")
    assert issues(tmp_path, text) == [
        "config.yaml: data_files[0]: data file not found: 'data/missing.jsonl'"
    ]


def test_task_dir_not_found(tmp_path):
    text = DIALECT_A + "task_dir: study\n"
    assert issues(tmp_path, text) == ["config.yaml: task_dir: directory not found: 'study'"]


def test_unsupported_data_file_type(tmp_path):
    text = DIALECT_A.replace("data/items.jsonl", "data/items.txt")
    assert issues(tmp_path, text) == [
        "config.yaml: data_files[0]: unsupported file type '.txt' for 'data/items.txt' "
        "(use .jsonl, .json, .csv, .tsv)"
    ]


def test_dialects_do_not_mix(tmp_path):
    text = (
        DIALECT_A.replace("annotation_task_name", "task_name") + "output_annotation_format: csv\n"
    )
    decided = "but this file is dialect A (annotation_type: bws)"
    assert issues(tmp_path, text) == [
        f"config.yaml: task_name: task_name is a dialect B key, {decided}; one file cannot mix "
        "the two dialects; did you mean 'annotation_task_name'?",
        f"config.yaml: output_annotation_format: output_annotation_format is a dialect B key, "
        f"{decided}; one file cannot mix the two dialects; "
        "did you mean 'export_annotation_format'?",
    ]


def test_bws_and_best_worst_scaling_schemes_do_not_mix(tmp_path):
    text = DIALECT_B + "  - {annotation_type: bws, name: adequacy}\n"
    assert issues(tmp_path, text) == [
        "config.yaml: annotation_schemes[1].annotation_type: annotation_type: bws is dialect A, "
        "but this file is dialect B (annotation_type: best_worst_scaling); one file cannot mix "
        "the two dialects; did you mean 'best_worst_scaling'?"
    ]


def test_unknown_annotation_type_and_enum_values(tmp_path):
    text = """\
    data_files: [data/items.jsonl]
    assignment_strategy: least_annoted
    annotation_schemes:
      - {annotation_type: radoi, name: s, labels: [a]}
    """
    assert issues(tmp_path, text) == [
        "config.yaml: assignment_strategy: unknown value 'least_annoted' "
        "(one of: least_annotated, random, fixed_order); did you mean 'least_annotated'?",
        "config.yaml: annotation_schemes[0].annotation_type: unknown annotation type 'radoi'; "
        "did you mean 'radio'?",
    ]


def test_label_lists_are_checked(tmp_path):
    text = """\
    data_files: [data/items.jsonl]
    annotation_schemes:
      - annotation_type: radio
        name: s
        labels: [pos, pos, {name: neg, key: n}, {key_value: x}]
      - {annotation_type: likert, name: l, min_label: bad}
      - {annotation_type: tiered_annotation, name: t, labels: [speech]}
    """
    assert issues(tmp_path, text) == [
        "config.yaml: annotation_schemes[0].labels[1]: duplicate label 'pos'",
        "config.yaml: annotation_schemes[0].labels[2].key: unknown key; did you mean 'key_value'?",
        "config.yaml: annotation_schemes[0].labels[3].name: missing required key",
        "config.yaml: annotation_schemes[1].size: missing required key "
        "(likert needs size or labels)",
        "config.yaml: annotation_schemes[2].tiers: missing required key "
        "(tiered_annotation lists its tiers)",
    ]


def test_unquoted_yes_no_labels_are_explained(tmp_path):
    text = """\
    data_files: [data/items.jsonl]
    annotation_schemes: [{annotation_type: radio, name: s, labels: [yes, no]}]
    """
    assert issues(tmp_path, text)[0] == (
        "config.yaml: annotation_schemes[0].labels[0]: YAML read this label as the boolean "
        "true; quote it (yes/no/on/off/true/false unquoted are booleans)"
    )


def test_all_issues_are_reported_together(tmp_path):
    text = """\
    annotation_task_name: T
    data_files: [data/nope.jsonl]
    max_annotations_per_user: -1
    bws_config: {tuple_size: 2, seed: x}
    annotation_schemes:
      - {annotation_type: bws, name: q, best_descripton: Best}
    """
    found = issues(tmp_path, text)
    assert len(found) == 5
    assert any("data_files[0]: data file not found" in line for line in found)
    assert "config.yaml: max_annotations_per_user: must be a positive integer, got -1" in found
    assert "config.yaml: bws_config.tuple_size: must be between 3 and 8, got 2" in found
    assert "config.yaml: bws_config.seed: must be an integer, got string 'x'" in found
    assert (
        "config.yaml: annotation_schemes[0].best_descripton: unknown key; "
        "did you mean 'best_description'?"
    ) in found


def test_chosen_agreement_metrics_are_refused_not_ignored(tmp_path):
    text = DIALECT_A + "agreement_metrics: {fluency: {metrics: [alpha]}}\n"
    assert issues(tmp_path, text) == [
        "config.yaml: agreement_metrics: is not supported: the agreement report computes "
        "every figure each scheme's type defines; remove this key"
    ]
    assert load(tmp_path, DIALECT_A + "agreement_metrics: {}\n").agreement_metrics == {}


def test_an_answer_format_nothing_reads_is_refused(tmp_path):
    found = issues(tmp_path, DIALECT_A + "export_annotation_format: json\n")
    assert found == [
        "config.yaml: export_annotation_format: unknown value 'json' (one of: jsonl, csv, tsv)"
        "; did you mean 'jsonl'?"
    ]


def test_agreement_metrics_must_be_plain_data(tmp_path):
    text = DIALECT_A + "agreement_metrics: {since: 2024-03-01}\n"
    assert issues(tmp_path, text) == [
        "config.yaml: agreement_metrics: holds a value that is not plain data "
        "(quote dates and times)"
    ]


def test_file_that_is_not_a_mapping(tmp_path):
    assert issues(tmp_path, "- just\n- a list\n") == [
        "config.yaml: the file must hold a mapping of keys, got list"
    ]


def test_missing_config_file(tmp_path):
    with pytest.raises(ConfigError, match=r"^nope.yaml: file not found$"):
        load_config(tmp_path / "nope.yaml")


def test_a_stored_scoring_block_reads_as_stored_whatever_the_limits_now():
    """The limits apply when a config is read; a project stored under a site's larger
    limit (the operator's) keeps its settings, and runs hold them to the limits then."""
    stored = load_config(EXAMPLES / "mt_bws" / "config.yaml").to_dict()
    stored["schemes"][0]["options"]["scoring"]["bootstrap_iterations"] = 60000
    scheme = ProjectConfig.from_dict(stored).schemes[0]
    assert scheme.scoring.bootstrap_iterations == 60000
    assert scheme.scoring.method == "bradley_terry"
