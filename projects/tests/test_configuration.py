"""Project configuration: both dialects read into one form, with defaults and notices."""

from __future__ import annotations

import json

import pytest

from bws.configuration import BwsDesign, scoring_of
from projects.configuration import (
    ConfigIssue,
    ProjectConfig,
    Scheme,
    load_config,
    parse_config,
)
from projects.tests.config_files import DIALECT_A, DIALECT_B, EXAMPLES, load

# --------------------------------------------------------------------------- the examples


def test_dialect_a_reference_example_normalises():
    config = load_config(EXAMPLES / "mt_bws" / "config.yaml")
    assert config.to_dict() == {
        "task_name": "MT System Ranking (BWS)",
        "language": None,
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
        "instance_display": [
            {"key": "source", "label": "Source sentence (English)", "type": "text"}
        ],
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
            "group_key": "sentence_id",
            "system_key": None,
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


def test_a_stored_scoring_block_reads_as_stored_whatever_the_limits_now():
    """The limits apply when a config is read; a project stored under a site's larger
    limit (the operator's) keeps its settings, and runs hold them to the limits then."""
    stored = load_config(EXAMPLES / "mt_bws" / "config.yaml").to_dict()
    stored["schemes"][0]["options"]["scoring"]["bootstrap_iterations"] = 60000
    scheme = ProjectConfig.from_dict(stored).schemes[0]
    assert scoring_of(scheme).bootstrap_iterations == 60000
    assert scoring_of(scheme).method == "bradley_terry"
