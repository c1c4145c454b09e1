"""The guides' file workflow: a project's folder is scored on the command line.

The platform writes a project's tuples beside its config (tuples.jsonl); an answer record
that names its tuple by id only (``id``, ``annotations``, ``annotator``, ``timestamp``)
is scored against them.
"""

import json
import shutil
import uuid
from pathlib import Path

import pytest
from django.conf import settings

from bws.core.judgments import JudgmentError, build_judgments
from bws.filemode import TUPLES_FILE, load_study, read_tuple_file
from projects.interchange import parse_record, read_file, write_table
from projects.services import import_project

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "mt_tuples"
INDEX = {"a": 0, "b": 1, "c": 2, "d": 3}


def guide_record(tuple_id, best, worst, annotator="ann1"):
    return parse_record(
        {
            "id": tuple_id,
            "annotations": {"quality": {"best": best, "worst": worst}},
            "annotator": annotator,
            "timestamp": "2026-01-05T09:00:00Z",
        }
    )


def test_a_record_without_items_takes_the_items_of_its_tuple():
    tuples = {"t1": ["a", "b", "c"], "t2": ["b", "c", "d"]}
    records = [guide_record("t1", "a", "c"), guide_record("t2", "d", "b")]
    judgments = build_judgments(records, INDEX, "quality", tuples=tuples)
    assert judgments.items.tolist() == [[0, 1, 2], [1, 2, 3]]
    assert judgments.best.tolist() == [0, 2] and judgments.worst.tolist() == [2, 0]


def test_a_tuple_id_the_project_does_not_hold_is_named():
    with pytest.raises(JudgmentError, match=r"tuple id \('t9'\) listed in the project's"):
        build_judgments([guide_record("t9", "a", "c")], INDEX, "quality", tuples={})


def test_items_in_the_record_win_over_the_stored_tuple():
    record = parse_record(
        {
            "id": "t1",
            "items": ["c", "d", "a"],
            "annotations": {"quality": {"best": "d", "worst": "a"}},
        }
    )
    judgments = build_judgments([record], INDEX, "quality", tuples={"t1": ["a", "b", "c"]})
    assert judgments.items.tolist() == [[2, 3, 0]]


@pytest.mark.django_db
def test_the_platform_writes_the_tuples_that_score_the_guides_records(
    django_capture_on_commit_callbacks,
):
    folder = Path(settings.PROJECT_FILES_ROOT) / uuid.uuid4().hex
    folder.mkdir(parents=True)
    shutil.copy(EXAMPLE / "config.yaml", folder / "config.yaml")
    shutil.copytree(EXAMPLE / "data", folder / "data")
    with django_capture_on_commit_callbacks(execute=True):
        import_project(config_path=folder / "config.yaml", storage_folder=folder.name)

    stored = read_tuple_file(folder / TUPLES_FILE)
    # The example's tuples (examples/make_data.py) are the ones the platform designs.
    assert stored == read_tuple_file(EXAMPLE / TUPLES_FILE)
    first = json.loads((folder / TUPLES_FILE).read_text().splitlines()[0])
    assert set(first) == {"id", "items", "instance"}

    (folder / "output").mkdir()
    shutil.copy(EXAMPLE / "output" / "annotations.jsonl", folder / "output" / "answers.jsonl")
    study = load_study(folder / "config.yaml")
    judgments = study.judgments("overall_quality")
    assert judgments.n_judgments == 720
    assert study.planned_tuples() == len(stored) == 240


def test_the_example_study_scores_from_its_files():
    study = load_study(EXAMPLE / "config.yaml")
    assert study.judgments("overall_quality").n_judgments == 720


def test_answers_in_the_configured_table_format_are_read_and_score_tables_are_not(tmp_path):
    folder = tmp_path / "study"
    shutil.copytree(EXAMPLE, folder, ignore=shutil.ignore_patterns("output"))
    config = (
        (folder / "config.yaml")
        .read_text()
        .replace('output_annotation_format: "jsonl"', 'output_annotation_format: "tsv"')
    )
    (folder / "config.yaml").write_text(config)
    (folder / "output").mkdir()
    records = read_file(EXAMPLE / "output" / "annotations.jsonl")
    write_table(records, folder / "output" / "answers.tsv")
    # A score table in the same folder is not an answer file.
    (folder / "output" / "bws_scores.tsv").write_text("item_id\tscore\nsys_a\t1.0\n")
    assert load_study(folder / "config.yaml").judgments("overall_quality").n_judgments == 720
