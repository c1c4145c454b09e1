"""A code only for the work: the completion code is shown only once a participant answered
their quota of ordinary units. Extra participant ids opened by one person hold at most one
short lease each, which returns to the pool when it runs out; a participant the queue has
nothing more for before the quota gets the "no more work" (partial) outcome with its own
code and address, never the completion code. Managers see the units and the outcome."""

from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from annotation.models import Annotation, Assignment
from crowds.models import Participant
from projects.models import Membership
from projects.services import import_project
from projects.tests.factories import MembershipFactory, UserFactory
from tests.security.concurrency import at_once

pytestmark = pytest.mark.django_db

CONFIG = """task_name: Paid study
data_files: [d.jsonl]
assignment_lease_minutes: 600
num_annotators_per_item: 1
annotation_schemes:
  - {annotation_type: radio, name: q, description: Is it polite, labels: [yes_, no_]}
participants:
  open_link: true
  units_per_participant: 2
  completion_code: "PAID-C0DE"
  completion_url: "https://panel.example.org/complete?cc=PAID-C0DE"
  lease_minutes: 5
  partial:
    code: "PART-7"
    url: "https://panel.example.org/complete?cc=PART-7"
    message: "The study ran out of units for you."
"""
CODE = "PAID-C0DE"


def make_project(tmp_path, units=4, config=CONFIG):
    (tmp_path / "d.jsonl").write_text(
        "".join(f'{{"id": "u{n}", "text": "Reply {n}"}}\n' for n in range(units))
    )
    (tmp_path / "c.yaml").write_text(config)
    return import_project(config_path=tmp_path / "c.yaml", slug="paid").project


def start(pid: str) -> Client:
    client = Client()
    assert client.get(f"/p/paid/start?PROLIFIC_PID={pid}").status_code == 302
    return client


def flow(client):
    return client.get(reverse("participant-flow", args=["paid"]))


def answer(client, response, label="yes_"):
    unit_url = response["Location"]
    assert "/annotate/" in unit_url, unit_url
    return client.post(unit_url, {"q": label})


def snapshot(project):
    return (
        sorted(Participant.objects.values_list("external_id", "outcome", "completed_at")),
        Annotation.objects.count(),
    )


def test_extra_ids_holding_every_lease_give_the_real_id_no_completion_code(tmp_path):
    """The reported case: fake ids hold every unit; the real id reached the done page with
    "You answered 0 units" and the code. Now: no more work, with the partial code only."""
    project = make_project(tmp_path)
    fakes = [start(f"fake{n}") for n in range(4)]
    for fake in fakes:
        assert "/annotate/" in flow(fake)["Location"]  # each holds one unit
    assert Assignment.objects.filter(status="reserved").count() == 4
    real = start("real")
    done = real.get(flow(real)["Location"])
    page = done.content.decode()
    assert CODE not in page and "cc=PAID" not in page and "cc=PAID" not in done["Refresh"]
    assert "No more work for you" in page and "PART-7" in page
    assert "The study ran out of units for you." in page
    assert done["Refresh"] == "10; url=https://panel.example.org/complete?cc=PART-7"
    participant = Participant.objects.get(external_id="real")
    assert participant.outcome == Participant.Outcome.PARTIAL
    assert participant.completed_at is None
    assert "after 0 of 2" in participant.outcome_reason
    # asking again changes nothing: the outcome stays, still no completion code
    before = snapshot(project)
    again = real.get(reverse("participant-done", args=["paid"]))
    assert CODE not in again.content.decode()
    assert "/done/" in flow(real)["Location"]
    assert snapshot(project) == before


def test_the_done_page_shows_no_code_before_an_outcome(tmp_path):
    make_project(tmp_path)
    client = start("early")
    response = client.get(reverse("participant-done", args=["paid"]))
    assert response.status_code == 302
    assert response["Location"] == reverse("participant-flow", args=["paid"])
    assert Participant.objects.get().outcome == ""


def test_a_participant_holds_one_short_lease_and_it_returns_to_the_pool(tmp_path):
    project = make_project(tmp_path)
    client = start("p1")
    first = flow(client)["Location"]
    for _ in range(3):  # asking again gives the same unit, never a second lease
        assert flow(client)["Location"] == first
    held = Assignment.objects.get(status="reserved")
    left = held.leased_until - timezone.now()
    # the participants' lease (5 minutes), not the project's (600)
    assert timedelta(minutes=4) < left <= timedelta(minutes=5)
    # the lease runs out: the unit goes to the next participant who asks
    Assignment.objects.filter(pk=held.pk).update(leased_until=timezone.now() - timedelta(1))
    others = [start(f"o{n}") for n in range(4)]
    taken = [flow(other)["Location"] for other in others]
    assert first in taken
    # and the first participant's answer to the lapsed unit is refused, nothing stored
    refused = client.post(first, {"q": "yes_"})
    assert refused.status_code == 404  # no longer theirs
    assert Annotation.objects.count() == 0
    assert project.units.filter(is_gold=False).count() == 4


def test_the_completion_code_comes_with_the_quota_answered(tmp_path):
    make_project(tmp_path)
    client = start("worker")
    response = flow(client)
    response = answer(client, response)
    assert "/annotate/" in response["Location"]  # one of two: no code yet
    response = answer(client, response)
    assert response["Location"] == reverse("participant-done", args=["paid"])
    page = client.get(response["Location"]).content.decode()
    assert CODE in page and "You answered 2 units" in page and "PART-7" not in page
    participant = Participant.objects.get()
    assert participant.outcome == Participant.Outcome.COMPLETED and participant.completed_at


def test_managers_see_answered_units_and_outcomes_on_the_page_in_the_api_and_csv(tmp_path):
    project = make_project(tmp_path, units=3)
    worker = start("worker")
    response = flow(worker)
    answer(worker, answer(worker, response))
    late = start("late")
    late.get(flow(late)["Location"])  # one unit left, then none: partial after 1 of 2
    response = flow(late)
    late.get(answer(late, response)["Location"])
    manager = UserFactory(username="boss")
    MembershipFactory(user=manager, project=project, role=Membership.Role.MANAGER)
    boss = Client()
    boss.force_login(manager)
    page = boss.get(reverse("project-detail", args=["paid"])).content.decode()
    assert "Completed (2 units)" in page and "No more work (1 of 2)" in page
    api = APIClient()
    api.force_authenticate(manager)
    rows = api.get("/api/v1/projects/paid/participants/").json()["results"]
    seen = {row["external_id"]: (row["outcome"], row["answered"], row["state"]) for row in rows}
    assert seen == {
        "worker": ("completed", 2, "completed"),
        "late": ("partial", 1, "partial"),
    }
    partial = api.get("/api/v1/projects/paid/participants/?state=partial").json()
    assert [row["external_id"] for row in partial["results"]] == ["late"]
    csv = boss.get(reverse("participants-export", args=["paid"]))
    assert csv.status_code == 200
    lines = csv.content.decode().splitlines()
    assert lines[0].startswith("external_id,username,outcome,outcome_at,outcome_reason,answered")
    assert any(line.startswith("worker,") and ",completed," in line for line in lines)
    # a participant or another annotator gets no such download
    assert worker.get(reverse("participants-export", args=["paid"])).status_code in (302, 404)
    stranger = Client()
    stranger.force_login(UserFactory(username="stranger"))
    assert stranger.get(reverse("participants-export", args=["paid"])).status_code == 404


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_one_participant_asking_many_times_at_once_holds_one_lease(tmp_path):
    make_project(tmp_path, units=12)
    first = start("greedy")
    cookies = first.cookies

    def ask(_):
        client = Client()
        client.cookies = cookies
        return flow(client)["Location"]

    locations = at_once(10, ask, timeout=60)
    assert len(set(locations)) == 1 and "/annotate/" in locations[0], locations
    assert Assignment.objects.filter(status="reserved").count() == 1
