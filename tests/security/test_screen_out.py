"""Screen-out: a participant who fails the training, or more attention checks than the gold
block allows, ends with the screen-out outcome (participants.screen_out: its own code, the
panel's address and message), never the completion code, and gets no further unit; the
managers see why, on the page, in the API and in the CSV of participants."""

import re

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.models import Annotation, Assignment
from crowds.models import Participant
from projects.models import Membership, Unit
from projects.services import import_project
from projects.tests.factories import MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db

HEAD = """task_name: Screened study
data_files: [d.jsonl]
annotation_schemes:
  - {annotation_type: radio, name: q, description: Is it polite, labels: [yes_, no_]}
participants:
  open_link: true
  units_per_participant: 4
  completion_code: "PAID-C0DE"
  completion_url: "https://panel.example.org/complete?cc=PAID-C0DE"
  screen_out:
    code: "SCREENED-1"
    url: "https://panel.example.org/complete?cc=SCREENED-1"
    message: "Thank you: the study's checks end your part here."
"""
TRAINING = """gold:
  file: gold.jsonl
  attention_rate: 0
  training: {units: 2, pass_threshold: 1.0}
"""
CHECKS = """gold:
  file: gold.jsonl
  attention_rate: 0.5
  max_failed_checks: 0
"""


def make_project(tmp_path, gold: str, gold_rows: int = 2, units: int = 10):
    (tmp_path / "d.jsonl").write_text(
        "".join(f'{{"id": "u{n}", "text": "Reply {n}"}}\n' for n in range(units))
    )
    (tmp_path / "gold.jsonl").write_text(
        "".join(f'{{"instance": "u{n}", "answers": {{"q": "yes_"}}}}\n' for n in range(gold_rows))
    )
    (tmp_path / "c.yaml").write_text(HEAD + gold)
    return import_project(config_path=tmp_path / "c.yaml", slug="screened").project


def start(pid: str) -> Client:
    client = Client()
    assert client.get(f"/p/screened/start?PROLIFIC_PID={pid}").status_code == 302
    return client


def assert_screened_out(client, project, reason_words: str):
    flow = client.get(reverse("participant-flow", args=["screened"]))
    assert flow["Location"] == reverse("participant-done", args=["screened"])
    done = client.get(flow["Location"])
    page = done.content.decode()
    assert "PAID-C0DE" not in page and "cc=PAID" not in done["Refresh"]
    assert "SCREENED-1" in page and "checks end your part here" in page
    assert done["Refresh"] == "10; url=https://panel.example.org/complete?cc=SCREENED-1"
    participant = Participant.objects.get()
    assert participant.outcome == Participant.Outcome.SCREENED_OUT
    assert participant.completed_at is None
    assert reason_words in participant.outcome_reason
    # no further unit on any path, and nothing changes by asking
    before = (Assignment.objects.count(), Annotation.objects.count())
    client.get(reverse("annotate", args=["screened"]), follow=True)
    client.get(reverse("participant-flow", args=["screened"]), follow=True)
    assert (Assignment.objects.count(), Annotation.objects.count()) == before
    # the managers see it, with the reason, on the page, in the API and the CSV
    boss = UserFactory(username="boss")
    MembershipFactory(user=boss, project=project, role=Membership.Role.MANAGER)
    web = Client()
    web.force_login(boss)
    assert (
        f"Screened out: {participant.outcome_reason}"
        in web.get(reverse("project-detail", args=["screened"])).content.decode()
    )
    api = APIClient()
    api.force_authenticate(boss)
    row = api.get("/api/v1/projects/screened/participants/?state=screened_out").json()
    assert [r["outcome"] for r in row["results"]] == ["screened_out"]
    assert row["results"][0]["outcome_reason"] == participant.outcome_reason
    csv = web.get(reverse("participants-export", args=["screened"])).content.decode()
    assert ",screened_out," in csv


def test_failing_the_training_ends_with_the_screen_out_code(tmp_path):
    project = make_project(tmp_path, TRAINING)
    client = start("careless")
    training = reverse("project-training", args=["screened"])
    assert client.get(reverse("participant-flow", args=["screened"]))["Location"] == training
    for _ in range(2):
        assert client.get(training).status_code == 200
        client.post(training, {"q": "no_"})
    assert_screened_out(client, project, "training")
    assert not Assignment.objects.filter(unit__is_gold=False).exists()


def test_failing_an_attention_check_ends_with_the_screen_out_code(tmp_path):
    project = make_project(tmp_path, CHECKS)
    client = start("careless")
    response = client.get(reverse("participant-flow", args=["screened"]))
    for _ in range(8):
        location = response["Location"]
        if "/annotate/" not in location:
            break
        unit = Unit.objects.get(pk=int(re.search(r"/annotate/(\d+)/", location).group(1)))
        # ordinary units answered well enough, every check answered wrong
        response = client.post(location, {"q": "no_" if unit.is_gold else "yes_"})
    assert Assignment.objects.filter(unit__is_gold=True, status="completed").exists()
    assert_screened_out(client, project, "check")
