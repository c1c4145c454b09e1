"""The answer file the platform keeps in a project's output_annotation_dir: written when the
answers settle, in the configured format, replaced whole, never outside the project's
folder, and scored by ``python -m bws score --config`` on the project's folder."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.answers import submit_answers
from annotation.models import Annotation
from annotation.queue import next_unit
from annotation.tasks import write_answer_file_task
from projects import events, interchange
from projects import paths as project_paths
from projects.models import Project
from projects.services import create_project_from_upload, project_folder
from projects.tests.factories import LabFactory, UserFactory

pytestmark = pytest.mark.django_db

ITEMS = [{"id": f"it{n}", "text": f"Sentence {n}"} for n in range(8)]


def config(fmt="jsonl", output_dir="answers/"):
    return (
        "annotation_task_name: Answer files\n"
        'task_dir: "."\n'
        'data_files: ["items.jsonl"]\n'
        f"output_annotation_dir: {json.dumps(output_dir)}\n"
        f"export_annotation_format: {fmt}\n"
        "annotation_schemes:\n"
        "  - {annotation_type: bws, name: quality, description: Best and worst}\n"
        "bws_config:\n"
        "  tuple_size: 4\n"
        "  min_item_appearances: 2\n"
        "  scoring: {method: counting, output_file: scores.tsv}\n"
    )


def upload(text: str) -> Project:
    rows = "".join(json.dumps(row) + "\n" for row in ITEMS).encode()
    return create_project_from_upload(
        config_file=SimpleUploadedFile("config.yaml", text.encode()),
        data_files=[SimpleUploadedFile("items.jsonl", rows)],
        lab=LabFactory(),
        owner=None,
    ).project


def annotate(project, username: str, n_units: int) -> None:
    user = UserFactory(username=username)
    for _ in range(n_units):
        unit = next_unit(project=project, user=user)
        items = list(unit.bws_tuple.item_ids)
        answers = {"quality": {"best": items[0], "worst": items[-1]}}
        submit_answers(project=project, user=user, unit_id=unit.pk, answers=answers)


@pytest.fixture
def worker(monkeypatch):
    """The default queue's worker, run in place: a queued rewrite runs at once."""
    queued = []

    def run(*, args, **kwargs):
        queued.append(args)
        write_answer_file_task(*args)

    monkeypatch.setattr(write_answer_file_task, "apply_async", run)
    return queued


def settle(project) -> None:
    events.answers_settled.send(sender=type(project), project=project)


def answer_keys(records) -> set:
    return {(r.id, r.annotator, json.dumps(r.annotations, sort_keys=True)) for r in records}


def stored_keys(project) -> set:
    keys = set()
    for answer in Annotation.objects.filter(project=project).select_related("unit", "annotator"):
        value = {answer.scheme: answer.value}
        keys.add((answer.unit.external_id, answer.annotator.username, json.dumps(value)))
    return keys


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "tsv"])
def test_settled_answers_are_written_in_the_configured_format(worker, fmt):
    project = upload(config(fmt))
    annotate(project, "ann1", 3)
    annotate(project, "ann2", 2)
    settle(project)

    assert worker == [(project.pk,)]
    path = project_folder(project) / "answers" / f"annotations.{fmt}"
    assert path.is_file()
    records = interchange.read_file(path)
    assert len(records) == 5
    assert answer_keys(records) == stored_keys(project)
    assert all(r.items and r.timestamp for r in records)


def test_the_next_settle_replaces_the_file_whole(worker, monkeypatch):
    project = upload(config())
    annotate(project, "ann1", 2)
    settle(project)
    folder = project_folder(project) / "answers"
    path = folder / "annotations.jsonl"
    first = path.read_text()

    annotate(project, "ann2", 3)
    real_replace = os.replace
    seen_before_replace = []

    def replace(src, dst, **kwargs):
        # At the moment of the rename the old file is still whole where a reader looks.
        seen_before_replace.append(path.read_text())
        real_replace(src, dst, **kwargs)

    monkeypatch.setattr(project_paths.os, "replace", replace)
    settle(project)

    assert seen_before_replace == [first]
    assert len(interchange.read_file(path)) == 5
    assert answer_keys(interchange.read_file(path)) == stored_keys(project)
    assert [p.name for p in folder.iterdir()] == ["annotations.jsonl"]  # no temporary left


def test_a_failed_write_leaves_the_previous_file(worker, monkeypatch):
    project = upload(config())
    annotate(project, "ann1", 2)
    settle(project)
    path = project_folder(project) / "answers" / "annotations.jsonl"
    first = path.read_text()

    annotate(project, "ann2", 1)

    def broken(records, stream):
        stream.write("{partial")
        raise OSError("disk full")

    monkeypatch.setattr(interchange, "write_jsonl", broken)
    with pytest.raises(OSError):
        write_answer_file_task.run(project.pk)

    assert path.read_text() == first
    assert [p.name for p in path.parent.iterdir()] == ["annotations.jsonl"]


@pytest.mark.parametrize(
    "outside", ["../escaped/", "/tmp/annolab-escaped/", "answers/../../x/", 7, None]
)
def test_a_tampered_output_dir_writes_nothing_outside(worker, outside, tmp_path):
    project = upload(config())
    annotate(project, "ann1", 2)
    Project.objects.filter(pk=project.pk).update(
        config={**project.config, "output_annotation_dir": outside}
    )
    project.refresh_from_db()
    root = Path(settings.PROJECT_FILES_ROOT)
    before = sorted(p for p in root.parent.rglob("*"))

    settle(project)  # does not raise

    assert write_answer_file_task(project.pk) is None
    assert sorted(p for p in root.parent.rglob("*")) == before
    assert not Path("/tmp/annolab-escaped").exists()


def test_a_link_planted_as_the_output_dir_is_not_followed(worker, tmp_path):
    project = upload(config())
    annotate(project, "ann1", 2)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (project_folder(project) / "answers").symlink_to(elsewhere)

    settle(project)

    assert list(elsewhere.iterdir()) == []


def test_a_deleted_project_or_a_broker_that_is_down_is_no_error(monkeypatch):
    project = upload(config())

    def down(*args, **kwargs):
        raise ConnectionError("broker down")

    monkeypatch.setattr(write_answer_file_task, "apply_async", down)
    settle(project)  # does not raise
    assert write_answer_file_task(10**9) is None


def test_bws_score_reads_the_written_file_in_the_projects_folder(worker, tmp_path):
    project = upload(config())
    annotate(project, "ann1", 4)
    annotate(project, "ann2", 4)
    write_answer_file_task(project.pk)

    folder = project_folder(project)
    environment = {**os.environ, "PYTHONPATH": str(settings.BASE_DIR)}
    environment.pop("DJANGO_SETTINGS_MODULE", None)
    done = subprocess.run(
        [sys.executable, "-m", "bws", "score", "--config", str(folder / "config.yaml")],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    table = (folder / "scores.tsv").read_text().splitlines()
    assert len(table) == 1 + len(ITEMS)
