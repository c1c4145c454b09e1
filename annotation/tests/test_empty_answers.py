"""An empty structured answer ("nothing to mark": no box, no segment) is an answer of its
own, apart from "not answered": the form's "Nothing to mark" box, the API's ``[]`` and a
file's ``[]`` all store it, exports write it back, and a required scheme takes it."""

import json
import re
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from annotation.annotation_files import export_records, import_records, write_export
from annotation.answer_forms import answers_from_post
from annotation.models import Annotation, Assignment
from projects.interchange import read_file, read_jsonl_text
from projects.models import Unit
from projects.schemes import scheme_type
from projects.schemes.base import UnitContext
from projects.services import import_project
from projects.tests.factories import MembershipFactory, UserFactory
from projects.tests.test_scheme_types import form
from projects.validation import AnswerError, is_empty, validate_answers

STRUCTURED = ("spatial_annotation", "temporal_grounding", "tiered_annotation")
OPTIONS = {
    "spatial_annotation": {"labels": ["car"], "required": True},
    "temporal_grounding": {"labels": ["go"], "required": True},
    "tiered_annotation": {"labels": ["go"], "tiers": ["A", "B"], "required": True},
}
CONFIG = """annotation_task_name: Nothing to mark
data_files: [d.jsonl]
num_annotators_per_item: 3
annotation_schemes:
  - {annotation_type: spatial_annotation, name: boxes, description: Cars, labels: [car],
     label_requirement: {required: true}}
  - {annotation_type: temporal_grounding, name: events, description: When, labels: [go]}
  - {annotation_type: tiered_annotation, name: speech, description: Who speaks,
     labels: [talk], tiers: [A, B]}
  - {annotation_type: text, name: note, description: Note}
"""
BOX = {"label": "car", "center": [0.0, 0.0, 0.0], "size": [4.0, 2.0, 1.5], "yaw": 0.0}


def scheme(type_name):
    return {"name": "s", "type": type_name, "options": OPTIONS[type_name]}


# --------------------------------------------------------------------------- the check


@pytest.mark.parametrize("type_name", STRUCTURED)
def test_an_empty_list_is_an_answer_and_none_is_not(type_name):
    kind = scheme_type(type_name)
    assert not is_empty([], kind)
    assert is_empty(None, kind)
    # A required structured scheme is satisfied by an explicit empty answer ...
    assert validate_answers([scheme(type_name)], {"s": []}, UnitContext()) == {"s": []}
    # ... and not by an absent one.
    for answers in ({"s": None}, {}):
        with pytest.raises(AnswerError) as caught:
            validate_answers([scheme(type_name)], answers, UnitContext())
        assert caught.value.errors == {"s": "an answer is required"}


def test_an_empty_list_is_still_no_answer_for_other_types():
    assert is_empty([]) and is_empty([], scheme_type("multiselect"))
    options = {"labels": ["a"], "required": False}
    multiselect = {"name": "m", "type": "multiselect", "options": options}
    with pytest.raises(AnswerError, match="nothing to save"):
        validate_answers([multiselect], {"m": []}, UnitContext())


# --------------------------------------------------------------------------- the form


@pytest.mark.parametrize("type_name", STRUCTURED)
def test_the_form_tells_nothing_to_mark_from_not_answered(type_name):
    ticked = form({"s__nothing": "1", "s__start": "", "s__cx": "", "s__label": ""})
    assert answers_from_post([scheme(type_name)], ticked) == {"s": []}
    untouched = form({"s__start": "", "s__cx": "", "s__label": "", "s__tier": "A"})
    assert answers_from_post([scheme(type_name)], untouched) == {"s": None}


@pytest.mark.parametrize(
    "type_name, fields, message",
    [
        (
            "spatial_annotation",
            {"s__cx": "1", "s__cy": "0", "s__cz": "0", "s__l": "1", "s__w": "1", "s__h": "1"},
            '"Nothing to mark" is ticked, but 1 box is filled in: untick it, or remove the boxes',
        ),
        (
            "temporal_grounding",
            {"s__start": ["0", "3"], "s__end": ["1", "4"]},
            '"Nothing to mark" is ticked, but 2 segments are filled in: '
            "untick it, or remove the segments",
        ),
    ],
)
def test_ticked_with_rows_filled_is_refused(type_name, fields, message):
    with pytest.raises(AnswerError) as caught:
        answers_from_post([scheme(type_name)], form({**fields, "s__nothing": "1"}))
    assert caught.value.errors == {"s": message}


# --------------------------------------------------------------------------- the platform


@pytest.fixture
def project(db, tmp_path):
    rows = [{"id": f"doc{n}", "text": f"Doc {n}", "media_url": "/v.mp4"} for n in range(3)]
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "c.yaml").write_text(CONFIG)
    return import_project(config_path=tmp_path / "c.yaml", slug="empty").project


def lease(project, user, position):
    unit = Unit.objects.get(project=project, position=position)
    Assignment.objects.create(
        project=project,
        unit=unit,
        annotator=user,
        status=Assignment.Status.RESERVED,
        leased_until=timezone.now() + timedelta(minutes=30),
    )
    return unit


def stored(project, user):
    return dict(
        Annotation.objects.filter(project=project, annotator=user).values_list("scheme", "value")
    )


def test_the_page_stores_nothing_to_mark_and_shows_it_ticked(client, project):
    user = UserFactory(username="ann")
    MembershipFactory(user=user, project=project)
    client.force_login(user)
    unit = lease(project, user, 0)
    url = reverse("annotate-unit", args=["empty", unit.pk])
    html = client.get(url).content.decode()
    assert 'name="boxes__nothing"' in html and 'name="events__nothing"' in html
    assert "Nothing to mark" in html
    assert not re.search(r'name="boxes__nothing"[^>]*checked', html)
    response = client.post(
        url,
        {
            "boxes__nothing": "1",
            "boxes__cx": [""],
            "events__start": [""],
            "events__end": [""],
            "speech__start": [""],
            "speech__tier": ["A"],
        },
    )
    assert response.status_code == 302
    # Boxes ticked: stored as []; events and speech neither ticked nor filled: not answered.
    assert stored(project, user) == {"boxes": []}
    html = client.get(url).content.decode()
    assert re.search(r'name="boxes__nothing"[^>]*checked', html)
    assert not re.search(r'name="events__nothing"[^>]*checked', html)


def test_the_page_refuses_ticked_with_rows(client, project):
    user = UserFactory(username="ann")
    MembershipFactory(user=user, project=project)
    client.force_login(user)
    unit = lease(project, user, 0)
    url = reverse("annotate-unit", args=["empty", unit.pk])
    response = client.post(
        url,
        {
            "boxes__nothing": "1",
            **{f"boxes__{k}": "1" for k in ("cx", "cy", "cz", "l", "w", "h")},
            "boxes__label": "car",
        },
    )
    assert response.status_code == 400
    assert "untick it, or remove the boxes" in response.content.decode()
    assert stored(project, user) == {}


def test_a_required_boxes_scheme_left_untouched_is_refused_on_the_page(client, project):
    user = UserFactory(username="ann")
    MembershipFactory(user=user, project=project)
    client.force_login(user)
    unit = lease(project, user, 0)
    url = reverse("annotate-unit", args=["empty", unit.pk])
    response = client.post(url, {"boxes__cx": [""], "note": "looked at it"})
    assert response.status_code == 400
    assert "an answer is required" in response.content.decode()


def test_the_api_takes_an_empty_list_as_the_answer(project):
    user = UserFactory(username="bot")
    MembershipFactory(user=user, project=project)
    api = APIClient()
    api.force_authenticate(user)
    unit = lease(project, user, 0)
    body = {"unit": unit.pk, "annotations": {"boxes": [], "events": [], "speech": None}}
    response = api.post("/api/v1/projects/empty/annotations/", body, format="json")
    assert response.status_code == 201, response.content
    assert stored(project, user) == {"boxes": [], "events": []}
    other = lease(project, user, 1)
    body = {"unit": other.pk, "annotations": {"boxes": None, "events": []}}
    response = api.post("/api/v1/projects/empty/annotations/", body, format="json")
    assert response.status_code == 400
    assert response.json()["errors"]["annotations"] == {"boxes": ["an answer is required"]}


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "tsv"])
def test_empty_answers_export_and_import_as_empty(project, tmp_path, fmt):
    lines = [
        {"id": "doc0", "annotator": "amy", "annotations": {"boxes": [], "events": []}},
        {"id": "doc0", "annotator": "bob", "annotations": {"boxes": [BOX], "speech": []}},
        {"id": "doc1", "annotator": "amy", "annotations": {"boxes": [], "events": None}},
    ]
    text = "".join(json.dumps(line) + "\n" for line in lines)
    summary = import_records(project=project, records=read_jsonl_text(text, "in.jsonl"))
    assert summary.annotations == 5  # [] stored; null and absent not
    answers = {(r.id, r.annotator): r.annotations for r in export_records(project)}
    assert answers == {
        ("doc0", "amy"): {"boxes": [], "events": []},
        ("doc0", "bob"): {"boxes": [BOX], "speech": []},
        ("doc1", "amy"): {"boxes": []},
    }
    path = tmp_path / f"out.{fmt}"
    write_export(project, path, fmt)
    if fmt == "jsonl":
        assert '"boxes": []' in path.read_text()
    else:
        delimiter = "\t" if fmt == "tsv" else ","
        header, *rows = path.read_text().splitlines()
        columns = header.split(delimiter)
        cells = dict(zip(columns, rows[0].split(delimiter), strict=True))
        assert cells["boxes"] == "[]" and cells["speech"] == ""  # empty vs not answered
    back = {(r.id, r.annotator): r.annotations for r in read_file(path)}
    assert back == answers


def test_files_keep_empty_apart_from_not_answered(tmp_path):
    from projects.interchange import UnitRecord, write_jsonl, write_table

    records = [
        UnitRecord(id="u1", annotator="a", annotations={"boxes": [], "events": [BOX]}),
        UnitRecord(id="u1", annotator="b", annotations={"events": []}),
    ]
    for name in ("r.jsonl", "r.csv", "r.tsv"):
        path = tmp_path / name
        if name.endswith(".jsonl"):
            write_jsonl(records, path)
        else:
            write_table(records, path)
        back = [r.annotations for r in read_file(path)]
        assert back == [{"boxes": [], "events": [BOX]}, {"events": []}], name
