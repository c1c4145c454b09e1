"""Empty structured answers ([]: nothing to mark) in agreement: both empty agree (1), one
empty against k objects scores 0, an absent answer takes no part; and the platform's
report and ``python -m agreement report`` on its export give the same figures."""

import json
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from agreement.cli import main
from agreement.core.report import build_report
from agreement.core.structured import (
    EMPTY_ANSWERS,
    parse_boxes,
    parse_segments,
    structured_agreement,
)
from agreement.services import compute_report
from annotation.annotation_files import import_records, write_export
from annotation.models import Assignment
from projects.interchange import read_jsonl_text
from projects.models import Unit
from projects.services import import_project
from projects.tests.factories import MembershipFactory, UserFactory


def box(x, label="car"):
    return {"label": label, "center": [x, 0.0, 0.0], "size": [4.0, 2.0, 1.5], "yaw": 0.0}


def seg(start, end, label="go", tier=None):
    return {"start": start, "end": end, "label": label, **({"tier": tier} if tier else {})}


def boxes_report(units):
    return structured_agreement(parse_boxes(units), kind="boxes")


# --------------------------------------------------------------------------- the rules


def test_both_empty_scores_one():
    report = boxes_report({"scan": {"a": [], "b": []}})
    assert report["mean_agreement"] == 1.0
    assert report["mean_object_count_diff"] == 0.0
    assert (report["n_items"], report["n_pairs"]) == (1, 1)
    assert "empty answers: 1 pair(s) both empty (scored 1), 0 pair(s)" in " ".join(report["notes"])


@pytest.mark.parametrize("k", [1, 3])
def test_one_empty_against_k_objects_scores_zero(k):
    report = boxes_report({"scan": {"a": [], "b": [box(10 * i) for i in range(k)]}})
    assert report["mean_agreement"] == 0.0
    assert report["mean_object_count_diff"] == k
    segments = parse_segments({"clip": {"a": [seg(0, 1)] * k, "b": []}})
    assert structured_agreement(segments, kind="segments")["mean_agreement"] == 0.0


def test_the_measured_case_gives_one_half():
    # One scan nobody marked, one where only b saw a car: 1 and 0, mean 0.5.
    units = {"empty": {"a": [], "b": []}, "one": {"a": [], "b": [box(0)]}}
    report = boxes_report(units)
    assert report["mean_agreement"] == 0.5
    assert (report["n_items"], report["n_pairs"]) == (2, 2)
    assert EMPTY_ANSWERS in report["notes"]
    assert (
        "1 pair(s) both empty (scored 1), 1 pair(s) with one side empty (scored 0)"
        in (report["notes"][-1])
    )
    # The same through the report, from interchange records.
    records = [
        {"id": "empty", "annotator": "a", "annotations": {"cars": []}},
        {"id": "empty", "annotator": "b", "annotations": {"cars": []}},
        {"id": "one", "annotator": "a", "annotations": {"cars": []}},
        {"id": "one", "annotator": "b", "annotations": {"cars": [box(0)]}},
    ]
    scheme = {"name": "cars", "type": "spatial_annotation", "options": {}}
    assert build_report(records, [scheme])["schemes"]["cars"]["mean_agreement"] == 0.5


def test_an_absent_answer_takes_no_part():
    # None is "not answered": b is in no pair of the scan, which then has one annotator.
    report = boxes_report({"scan": {"a": [box(0)], "b": None}})
    assert report["mean_agreement"] is None
    assert (report["n_items"], report["n_pairs"], report["n_annotators"]) == (0, 0, 0)
    # With a third annotator who marked nothing, the only pair is a with c.
    report = boxes_report({"scan": {"a": [box(0)], "b": None, "c": []}})
    assert report["mean_agreement"] == 0.0 and report["n_pairs"] == 1
    records = [
        {"id": "s", "annotator": "a", "annotations": {"cars": [box(0)]}},
        {"id": "s", "annotator": "b", "annotations": {"cars": None}},
        {"id": "s", "annotator": "c", "annotations": {}},
    ]
    scheme = {"name": "cars", "type": "spatial_annotation", "options": {}}
    assert build_report(records, [scheme])["schemes"]["cars"]["n_pairs"] == 0


def test_empty_tiers_and_the_checked_reader_agree_with_the_fast_one():
    from agreement.core import structured

    units = {"clip": {"a": [], "b": [seg(0, 1, tier="A")], "c": None}, "quiet": {"a": None}}
    fast = parse_segments(units, tiered=True)
    checked = structured._checked_segments(units, True)
    assert fast.sets == checked.sets == {"clip": {"a": (0, 0), "b": (0, 1)}, "quiet": {}}
    assert structured_agreement(fast, kind="segments")["mean_agreement"] == 0.0


# --------------------------------------------------------------------------- platform vs files

CONFIG = """annotation_task_name: Empty answers agree
data_files: [d.jsonl]
num_annotators_per_item: 3
annotation_schemes:
  - {annotation_type: spatial_annotation, name: boxes, description: Cars, labels: [car]}
  - {annotation_type: temporal_grounding, name: events, description: When, labels: [go]}
  - {annotation_type: tiered_annotation, name: speech, description: Who speaks,
     labels: [go], tiers: [A, B]}
  - {annotation_type: radio, name: topic, description: Topic, labels: [sport, politics]}
"""
# amy answers on the page, bob through the API, cal by an import; a missing scheme is not
# answered, [] is "nothing to mark".
AMY = {
    "doc0": {"boxes": [], "events": [], "speech": [], "topic": "sport"},
    "doc1": {"boxes": [box(0)], "events": [seg(0, 2)], "speech": [seg(0, 1, tier="A")]},
    "doc2": {"boxes": [box(0)], "events": [seg(1, 3)], "speech": []},
    "doc3": {"boxes": [box(0)], "events": [], "topic": "politics"},
}
BOB = {
    "doc0": {"boxes": [], "events": [seg(0, 2)], "speech": [], "topic": "sport"},
    "doc1": {"boxes": [], "events": [seg(0, 2)]},
    "doc2": {"boxes": [box(0.5)], "events": [], "speech": [seg(0, 1, tier="B")]},
    "doc3": {"events": [], "topic": "sport"},
}
CAL = {
    "doc0": {"boxes": None, "events": []},
    "doc3": {"boxes": [], "events": [seg(0, 1)], "speech": []},
}


def form_fields(answers: dict) -> dict:
    """The annotation page's fields for these answers ([] ticks Nothing to mark)."""
    fields: dict[str, list[str]] = {}

    def add(key, value):
        fields.setdefault(key, []).append(str(value))

    for name, value in answers.items():
        if value == []:
            add(f"{name}__nothing", "1")
        elif name == "topic":
            add(name, value)
        elif name == "boxes":
            for b in value:
                for key, number in zip(("cx", "cy", "cz"), b["center"], strict=True):
                    add(f"boxes__{key}", number)
                for key, number in zip(("l", "w", "h"), b["size"], strict=True):
                    add(f"boxes__{key}", number)
                add("boxes__yaw", b["yaw"])
                add("boxes__label", b["label"])
        else:
            for s in value:
                for key in ("start", "end", "label", "tier"):
                    if key in s:
                        add(f"{name}__{key}", s[key])
    return fields


def lease(project, user, unit):
    Assignment.objects.create(
        project=project,
        unit=unit,
        annotator=user,
        status=Assignment.Status.RESERVED,
        leased_until=timezone.now() + timedelta(minutes=30),
    )


@pytest.fixture
def answered(db, tmp_path, client):
    rows = [{"id": f"doc{n}", "text": f"Doc {n}", "media_url": "/v.mp4"} for n in range(4)]
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "c.yaml").write_text(CONFIG)
    project = import_project(config_path=tmp_path / "c.yaml", slug="empties").project
    units = {u.external_id: u for u in Unit.objects.filter(project=project)}
    amy, bob = UserFactory(username="amy"), UserFactory(username="bob")
    for user in (amy, bob):
        MembershipFactory(user=user, project=project)
    client.force_login(amy)
    for doc, answers in AMY.items():
        lease(project, amy, units[doc])
        url = reverse("annotate-unit", args=["empties", units[doc].pk])
        response = client.post(url, form_fields(answers))
        assert response.status_code == 302, response.content.decode()[-2000:]
    api = APIClient()
    api.force_authenticate(bob)
    for doc, answers in BOB.items():
        lease(project, bob, units[doc])
        body = {"unit": units[doc].pk, "annotations": answers}
        response = api.post("/api/v1/projects/empties/annotations/", body, format="json")
        assert response.status_code == 201, response.content
    lines = [
        json.dumps({"id": doc, "annotator": "cal", "annotations": answers})
        for doc, answers in CAL.items()
    ]
    import_records(project=project, records=read_jsonl_text("\n".join(lines), "cal.jsonl"))
    return project, tmp_path


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "tsv"])
def test_the_platform_and_the_files_give_the_same_report(answered, capsys, fmt):
    project, folder = answered
    platform = json.loads(json.dumps(compute_report(project=project).report))
    export = folder / f"export.{fmt}"
    write_export(project, export, fmt)
    capsys.readouterr()
    code = main(["report", "--config", str(folder / "c.yaml"), "--annotations", str(export)])
    assert code == 0
    files = json.loads(capsys.readouterr().out)
    assert files["n_records"] == platform["n_records"] == 10
    assert (
        list(files["schemes"])
        == list(platform["schemes"])
        == [
            "boxes",
            "events",
            "speech",
            "topic",
        ]
    )
    for name, figures in platform["schemes"].items():
        assert files["schemes"][name] == figures, name
    boxes = platform["schemes"]["boxes"]
    # doc0 amy/bob both empty 1; doc1 amy/bob one empty 0; doc2 amy/bob boxes half a
    # metre apart; doc3 amy/cal one empty 0 (bob did not answer boxes, cal's None on doc0
    # is no answer).
    assert (boxes["n_items"], boxes["n_pairs"], boxes["n_annotators"]) == (4, 4, 3)
    shifted = boxes_report({"doc2": {"amy": [box(0)], "bob": [box(0.5)]}})["mean_agreement"]
    assert boxes["mean_agreement"] == pytest.approx((1 + 0 + shifted + 0) / 4)
    assert "2 pair(s) both empty" not in " ".join(boxes["notes"])
    assert "1 pair(s) both empty (scored 1), 2 pair(s) with one side empty" in " ".join(
        boxes["notes"]
    )
    events = platform["schemes"]["events"]
    # doc0: amy-bob 0, amy-cal 1, bob-cal 0; doc1: 1; doc2: 0; doc3: amy-bob 1, 0, 0.
    assert events["n_pairs"] == 8 and events["mean_agreement"] == pytest.approx(3 / 8)
    speech = platform["schemes"]["speech"]
    # doc0 amy/bob both empty 1; doc2 amy empty, bob one segment 0; doc3 cal alone.
    assert speech["n_pairs"] == 2 and speech["mean_agreement"] == pytest.approx(0.5)


MIXED = """annotation_task_name: Empty values of every kind
data_files: [d.jsonl]
annotation_schemes:
  - {annotation_type: spatial_annotation, name: boxes, description: Cars, labels: [car]}
  - {annotation_type: radio, name: topic, description: Topic, labels: [sport, politics]}
  - {annotation_type: multiselect, name: tags, description: Tags, labels: [x, y]}
"""


def test_a_file_and_its_import_give_the_same_report(db, tmp_path, capsys):
    # Values the platform does not store ("" for a radio, [] for a multiselect, null) are
    # no answer in file mode too; [] for boxes is an answer in both.
    rows = [{"id": f"doc{n}", "text": f"Doc {n}"} for n in range(2)]
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "c.yaml").write_text(MIXED)
    project = import_project(config_path=tmp_path / "c.yaml", slug="mixed").project
    records = [
        {"id": "doc0", "annotator": "a", "annotations": {"topic": "", "tags": [], "boxes": []}},
        {"id": "doc0", "annotator": "b", "annotations": {"topic": "sport", "tags": ["x"],
                                                         "boxes": [box(0)]}},
        {"id": "doc1", "annotator": "a", "annotations": {"topic": "sport", "tags": [],
                                                         "boxes": None}},
        {"id": "doc1", "annotator": "b", "annotations": {"topic": "politics", "tags": ["x"],
                                                         "boxes": []}},
        {"id": "doc1", "annotator": "c", "annotations": {"boxes": []}},
    ]  # fmt: skip
    path = tmp_path / "answers.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    import_records(project=project, records=read_jsonl_text(path.read_text(), "answers.jsonl"))
    platform = json.loads(json.dumps(compute_report(project=project).report))
    capsys.readouterr()
    assert main(["report", "--config", str(tmp_path / "c.yaml"), "--annotations", str(path)]) == 0
    files = json.loads(capsys.readouterr().out)
    assert files == platform
    # boxes: doc0 a/b one empty 0; doc1 b/c both empty 1 (a's null is no answer).
    assert platform["schemes"]["boxes"]["mean_agreement"] == 0.5
    assert platform["schemes"]["topic"]["n_units"] == 1  # a's "" on doc0 is no answer
    assert platform["schemes"]["tags"]["n_units"] == 0  # a's [] tags are no answer
