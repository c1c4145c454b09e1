"""Project configuration mistakes: every one named precisely, all reported together."""

from __future__ import annotations

import pytest

from projects.configuration import ConfigError, load_config
from projects.tests.config_files import DIALECT_A, DIALECT_B, issues, load

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
