"""Removal takes effect at once: removing a member or a participant ends their leases (the
units go back to the queue), records a Removal, and from then on the queue gives them
nothing and every answer of theirs (web and API, new or a change) is refused, on a project
open to every user as on a private one. Adding the person again lifts it."""

import logging

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.models import Annotation, Assignment
from crowds.models import Participant
from projects.models import Membership, Removal, Unit
from projects.services import add_project_members, import_project, remove_project_member
from projects.tests.factories import MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db

CONFIG = """task_name: Removal
data_files: [d.jsonl]
user_config: {{allow_all_users: {open}}}
annotation_schemes:
  - {{annotation_type: radio, name: q, description: Yes or no, labels: [yes_, no_]}}
participants:
  open_link: true
  units_per_participant: 3
  completion_code: "C0DE-9"
"""


def make_project(tmp_path, open_to_all: bool):
    (tmp_path / "d.jsonl").write_text(
        "".join(f'{{"id": "u{n}", "text": "Text {n}"}}\n' for n in range(5))
    )
    (tmp_path / "c.yaml").write_text(CONFIG.format(open=str(open_to_all).lower()))
    project = import_project(config_path=tmp_path / "c.yaml", slug="gone").project
    assert project.allow_all_users == open_to_all
    return project


def manager_of(project) -> Client:
    boss = UserFactory(username="boss")
    MembershipFactory(user=boss, project=project, role=Membership.Role.MANAGER)
    client = Client()
    client.force_login(boss)
    return client


def api_as(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def state(project):
    return (
        sorted(Annotation.objects.values_list("annotator__username", "unit_id", "value")),
        sorted(Unit.objects.filter(project=project).values_list("id", "load")),
    )


@pytest.mark.parametrize("open_to_all", [True, False])
def test_a_removed_participants_answer_to_the_unit_they_hold_is_refused(
    tmp_path, open_to_all, caplog
):
    """The reported case: on an open project, the removed participant's answer was stored."""
    project = make_project(tmp_path, open_to_all)
    participant = Client()
    participant.get("/p/gone/start?PROLIFIC_PID=p1")
    unit_url = participant.get(reverse("participant-flow", args=["gone"]))["Location"]
    assert participant.post(unit_url, {"q": "yes_"}).status_code == 302  # one answer kept
    held_url = participant.get(reverse("participant-flow", args=["gone"]))["Location"]
    user = Participant.objects.get().user
    assert Assignment.objects.filter(annotator=user, status="reserved").count() == 1
    boss = manager_of(project)
    page = boss.get(reverse("project-detail", args=["gone"])).content.decode()
    assert f'name="remove" value="{user.pk}"' in page  # the participants list's button
    removed = boss.post(reverse("project-members", args=["gone"]), {"remove": user.pk})
    assert removed.status_code == 302
    # the lease ended at once: the unit is back in the queue
    assert not Assignment.objects.filter(annotator=user, status="reserved").exists()
    assert Removal.objects.filter(project=project, user=user).exists()
    before = state(project)
    with caplog.at_level(logging.WARNING, logger="annolab.security"):
        answer = participant.post(held_url, {"q": "no_"})
        assert answer.status_code in (403, 404)
        # nor may they change the answer they gave before removal: refused, and the page
        # they are sent to says why
        changed = participant.post(unit_url, {"q": "no_"}, follow=True)
        assert changed.status_code in (403, 404)
        if changed.status_code == 403:
            assert "no longer part of this study" in changed.content.decode()
        flow = participant.get(reverse("participant-flow", args=["gone"]))
        assert flow.status_code == 403
        assert "no longer part of this study" in flow.content.decode()
        assert "C0DE-9" not in flow.content.decode()
    assert state(project) == before
    assert Participant.objects.get().outcome == ""
    assert "refused" in caplog.text


def test_a_removed_member_of_an_open_project_gets_nothing_and_answers_nothing(tmp_path, caplog):
    project = make_project(tmp_path, open_to_all=True)
    anna = UserFactory(username="anna")
    MembershipFactory(user=anna, project=project, role=Membership.Role.ANNOTATOR)
    api = api_as(anna)
    first = api.post("/api/v1/projects/gone/queue/next/").json()
    kept = api.post(
        "/api/v1/projects/gone/annotations/",
        {"unit": first["id"], "annotations": {"q": "yes_"}},
        format="json",
    )
    assert kept.status_code == 201, kept.content
    held = api.post("/api/v1/projects/gone/queue/next/").json()
    held_id = held["id"]
    boss = UserFactory(username="boss")
    MembershipFactory(user=boss, project=project, role=Membership.Role.MANAGER)
    deleted = api_as(boss).delete("/api/v1/projects/gone/members/?username=anna")
    assert deleted.status_code == 204
    assert not Assignment.objects.filter(annotator=anna, status="reserved").exists()
    removal = Removal.objects.get(project=project, user=anna)
    assert removal.removed_by == boss
    before = state(project)
    with caplog.at_level(logging.WARNING, logger="annolab.security"):
        refused = api.post(
            "/api/v1/projects/gone/annotations/",
            {"unit": held_id, "annotations": {"q": "no_"}},
            format="json",
        )
        # As on a private project, the open project is closed to them: no answer, new or a
        # change, and no unit, on the API or the web.
        assert refused.status_code == 404
        edit = api.post(
            "/api/v1/projects/gone/annotations/",
            {"unit": first["id"], "annotations": {"q": "no_"}},
            format="json",
        )
        assert edit.status_code == 404
    nothing = api.post("/api/v1/projects/gone/queue/next/")
    assert nothing.status_code == 404
    web = Client()
    web.force_login(anna)
    page = web.get(reverse("annotate", args=["gone"]))
    assert page.status_code == 404 and "not part of" in page.content.decode()
    assert "gone" not in [p["slug"] for p in api.get("/api/v1/projects/").json()["results"]]
    assert not Assignment.objects.filter(annotator=anna, status="reserved").exists()
    assert state(project) == before
    # added again, they may work again
    add_project_members(project=project, usernames=["anna"], role=Membership.Role.ANNOTATOR)
    assert not Removal.objects.filter(project=project, user=anna).exists()
    again = api.post("/api/v1/projects/gone/queue/next/")
    assert (
        again.status_code == 200
        and Assignment.objects.filter(annotator=anna, status="reserved").exists()
    )


def test_removal_by_the_service_ends_leases_and_is_recorded_once(tmp_path):
    project = make_project(tmp_path, open_to_all=False)
    anna = UserFactory(username="anna")
    MembershipFactory(user=anna, project=project, role=Membership.Role.ANNOTATOR)
    api_as(anna).post("/api/v1/projects/gone/queue/next/")
    loads = sum(Unit.objects.filter(project=project).values_list("load", flat=True))
    assert loads == 1
    assert remove_project_member(project=project, user=anna) == 1
    assert remove_project_member(project=project, user=anna) == 0
    assert Removal.objects.filter(project=project, user=anna).count() == 1
    assert sum(Unit.objects.filter(project=project).values_list("load", flat=True)) == 0


def test_a_removed_member_of_an_open_project_gets_no_training_unit(tmp_path):
    from crowds.tests.test_gold import bws_project, gold_records

    block = "gold:\n  file: gold.jsonl\n  attention_rate: 0.1\n  training:\n    units: 2\n"
    project = bws_project(tmp_path, gold_lines=gold_records(6), block=block)
    project.allow_all_users = True
    project.save()
    anna = UserFactory(username="anna")
    MembershipFactory(user=anna, project=project, role=Membership.Role.ANNOTATOR)
    boss = UserFactory(username="boss")
    remove_project_member(project=project, user=anna, removed_by=boss)
    web = Client()
    web.force_login(anna)
    before = sorted(Unit.objects.filter(project=project).values_list("id", "load"))
    page = web.get(reverse("project-training", args=[project.slug]))
    assert page.status_code == 404
    assert not Assignment.objects.filter(annotator=anna).exists()
    assert sorted(Unit.objects.filter(project=project).values_list("id", "load")) == before
