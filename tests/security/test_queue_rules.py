"""The queue's rules hold on every submit path: a person answers only a unit they hold a live
lease on, or changes their own earlier answer; per-person caps hold; a client_id names one
submission; queue/next shows what the annotator page shows and nothing more."""

import json
import re
import uuid
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from annotation.models import Annotation, Assignment
from annotation.queue import next_unit, reclaim_expired_leases
from projects.models import Membership
from projects.services import import_project
from projects.tests.factories import MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db

RADIO = """annotation_task_name: Queue rules
data_files: [d.jsonl]
annotation_schemes:
  - {annotation_type: radio, name: q, description: Yes or no, labels: [yes_, no_]}
"""


def make_project(tmp_path, n_units=4, extra="", slug="rules"):
    rows = "".join(json.dumps({"id": f"u{n}", "text": f"text {n}"}) + "\n" for n in range(n_units))
    (tmp_path / "d.jsonl").write_text(rows)
    (tmp_path / "c.yaml").write_text(RADIO + extra)
    project = import_project(config_path=tmp_path / "c.yaml", slug=slug).project
    project.allow_all_users = False
    project.save()
    return project


def member(project, username):
    user = UserFactory(username=username)
    MembershipFactory(user=user, project=project, role=Membership.Role.ANNOTATOR)
    return user


def api_as(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def take(client, project) -> dict:
    response = client.post(f"/api/v1/projects/{project.slug}/queue/next/")
    assert response.status_code == 200, response.content
    return response.json()


def submit(client, project, unit_id, value="yes_", client_id=None):
    body = {"unit": unit_id, "annotations": {"q": value}}
    if client_id is not None:
        body["client_id"] = str(client_id)
    return client.post(f"/api/v1/projects/{project.slug}/annotations/", body, format="json")


@pytest.fixture
def project(tmp_path):
    return make_project(tmp_path)


def test_a_unit_never_handed_out_is_refused_and_nothing_stored(project):
    anna = member(project, "anna")
    mine = take(api_as(anna), project)
    other = project.units.exclude(pk=mine["id"]).first()
    response = submit(api_as(anna), project, other.pk)
    assert response.status_code == 409
    assert "not reserved for you" in response.json()["detail"]
    assert not Annotation.objects.exists()
    assert not Assignment.objects.filter(unit=other).exists()
    other.refresh_from_db()
    assert (other.load, other.completed) == (0, 0)


def test_past_max_annotations_per_user_is_refused(tmp_path):
    project = make_project(tmp_path, n_units=5, extra="max_annotations_per_user: 2\n")
    anna = member(project, "anna")
    client = api_as(anna)
    for _ in range(2):
        assert submit(client, project, take(client, project)["id"]).status_code == 201
    assert client.post(f"/api/v1/projects/{project.slug}/queue/next/").status_code == 204
    for unit in project.units.exclude(assignments__annotator=anna):
        assert submit(client, project, unit.pk).status_code == 409
    assert Annotation.objects.filter(annotator=anna).count() == 2


def test_a_cap_lowered_while_a_lease_is_held_still_holds(tmp_path):
    project = make_project(tmp_path, n_units=5)
    anna = member(project, "anna")
    client = api_as(anna)
    assert submit(client, project, take(client, project)["id"]).status_code == 201
    held = take(client, project)
    project.config = {**project.config, "max_annotations_per_user": 1}
    project.save()
    response = submit(client, project, held["id"])
    assert response.status_code == 409
    assert "max_annotations_per_user = 1" in response.json()["detail"]
    assert Annotation.objects.filter(annotator=anna).count() == 1


def test_an_expired_lease_given_to_someone_else_is_refused(tmp_path):
    project = make_project(tmp_path, n_units=1, extra="num_annotators_per_item: 1\n")
    slow, quick = member(project, "slow"), member(project, "quick")
    unit = take(api_as(slow), project)
    Assignment.objects.filter(annotator=slow).update(
        leased_until=timezone.now() - timedelta(seconds=1)
    )
    assert take(api_as(quick), project)["id"] == unit["id"]  # reclaimed and handed on
    assert submit(api_as(quick), project, unit["id"]).status_code == 201
    late = submit(api_as(slow), project, unit["id"], value="no_")
    assert late.status_code == 409 and "lease ran out" in late.json()["detail"]
    assert list(Annotation.objects.values_list("annotator__username", "value")) == [
        ("quick", "yes_")
    ]
    assert project.units.get().completed == 1


def test_an_expired_lease_not_yet_reclaimed_is_refused(project):
    anna = member(project, "anna")
    unit = take(api_as(anna), project)
    Assignment.objects.filter(annotator=anna).update(leased_until=timezone.now())
    assert submit(api_as(anna), project, unit["id"]).status_code == 409
    assert not Annotation.objects.exists()
    assert reclaim_expired_leases(project) == 1


def test_changing_my_own_earlier_answer_is_allowed(project):
    anna = member(project, "anna")
    client = api_as(anna)
    first = take(client, project)
    assert submit(client, project, first["id"], "yes_").status_code == 201
    take(client, project)  # moved on to another unit
    changed = submit(client, project, first["id"], "no_", client_id=uuid.uuid4())
    assert changed.status_code == 201, changed.content
    stored = Annotation.objects.get(unit_id=first["id"])
    assert stored.value == "no_" and Annotation.objects.count() == 1
    assert project.units.get(pk=first["id"]).completed == 1  # counted once


def test_same_client_id_and_answers_is_a_replay(project):
    anna = member(project, "anna")
    client = api_as(anna)
    unit = take(client, project)
    client_id = uuid.uuid4()
    first = submit(client, project, unit["id"], client_id=client_id)
    again = submit(client, project, unit["id"], client_id=client_id)
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json() == first.json()
    assert Annotation.objects.count() == 1


def test_client_id_reused_on_another_unit_is_refused_with_the_stored_answer(project):
    anna = member(project, "anna")
    client = api_as(anna)
    client_id = uuid.uuid4()
    first_unit = take(client, project)
    first = submit(client, project, first_unit["id"], client_id=client_id)
    second_unit = take(client, project)
    reused = submit(client, project, second_unit["id"], "no_", client_id=client_id)
    assert reused.status_code == 409
    body = reused.json()
    assert body["annotation_ids"] == [first.json()[0]["id"]]
    assert body["unit_id"] == first_unit["id"] and body["unit"] == first_unit["external_id"]
    assert "client_id" in body["detail"]
    assert not Annotation.objects.filter(unit_id=second_unit["id"]).exists()
    assert Assignment.objects.get(unit_id=second_unit["id"]).status == "reserved"
    # the lease is still there: a fresh client id stores the answer
    assert submit(client, project, second_unit["id"], client_id=uuid.uuid4()).status_code == 201


def test_client_id_reused_with_other_answers_is_refused(project):
    anna = member(project, "anna")
    client = api_as(anna)
    unit = take(client, project)
    client_id = uuid.uuid4()
    first = submit(client, project, unit["id"], "yes_", client_id=client_id)
    other = submit(client, project, unit["id"], "no_", client_id=client_id)
    assert other.status_code == 409
    assert other.json()["annotation_ids"] == [first.json()[0]["id"]]
    assert Annotation.objects.get().value == "yes_"


# --- the web page goes through the same service -------------------------------------------


def page(client, project):
    response = client.get(reverse("annotate", args=[project.slug]))
    assert response.status_code == 200
    html = response.content.decode()
    action = re.search(r'action="([^"]+)" id="annotate-form"', html).group(1)
    client_id = re.search(r'name="client_id" value="([^"]+)"', html).group(1)
    return action, client_id


def test_web_answer_on_an_expired_lease_is_refused_with_a_message(client, project):
    anna = member(project, "anna")
    client.force_login(anna)
    action, client_id = page(client, project)
    Assignment.objects.filter(annotator=anna).update(leased_until=timezone.now())
    response = client.post(action, {"q": "yes_", "client_id": client_id}, follow=True)
    assert "not reserved for you" in response.content.decode()
    assert not Annotation.objects.exists()


def test_web_client_id_reused_on_another_unit_shows_a_message(client, project):
    anna = member(project, "anna")
    client.force_login(anna)
    action, client_id = page(client, project)
    assert client.post(action, {"q": "yes_", "client_id": client_id}).status_code == 302
    second, _ = page(client, project)
    assert second != action
    response = client.post(second, {"q": "no_", "client_id": client_id}, follow=True)
    assert "already used" in response.content.decode()
    assert Annotation.objects.count() == 1


def test_web_cannot_open_or_answer_a_unit_never_handed_out(client, project):
    anna = member(project, "anna")
    client.force_login(anna)
    page(client, project)
    other = project.units.exclude(assignments__annotator=anna).first()
    url = reverse("annotate-unit", args=[project.slug, other.pk])
    assert client.post(url, {"q": "yes_"}).status_code == 404
    assert not Annotation.objects.exists()


# --- queue/next shows exactly what the page shows ------------------------------------------

HIDDEN = """annotation_task_name: Hidden fields
data_files: [d.jsonl]
instance_display:
  fields:
    - {key: text, type: text, display_options: {label: The text}}
annotation_schemes:
  - {annotation_type: radio, name: q, description: Yes or no, labels: [yes_, no_]}
  - {annotation_type: process_reward, name: steps, description: Each step, labels: [good, bad]}
"""

SOURCES = """task_name: Sources
data_files: [s.jsonl]
item_properties: {id_key: id, text_key: source}
annotation_schemes:
  - annotation_type: best_worst_scaling
    name: quality
    description: Best and worst
    items_key: translations
    tuple_size: 4
    show_source: SHOW
    tuple_generation: {method: balanced_incomplete, tuples_per_item: 2, seed: 1}
"""


@pytest.fixture
def hidden_fields(tmp_path):
    rows = [
        {
            "id": f"d{n}",
            "text": f"Visible text {n}",
            "gold": "SECRET-GOLD",
            "meta": {"note": "SECRET-META"},
            "steps": [{"action": "search"}, {"action": "click"}],
        }
        for n in range(3)
    ]
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "c.yaml").write_text(HIDDEN)
    return import_project(config_path=tmp_path / "c.yaml", slug="hidden").project


def bws_project(tmp_path, show_source: bool):
    rows = [
        {
            "id": f"s{n}",
            "source": f"Source sentence {n}",
            "translations": [
                {"id": f"sys_{k}", "text": f"Translation {n}.{k}", "system": f"SYSTEM-{k}"}
                for k in "abcdef"
            ],
        }
        for n in range(2)
    ]
    (tmp_path / "s.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "c.yaml").write_text(SOURCES.replace("SHOW", str(show_source).lower()))
    return import_project(config_path=tmp_path / "c.yaml", slug="sources").project


def api_and_page(client, project, username):
    """The queue/next payload and the annotator page for the same reserved unit."""
    user = member(project, username)
    payload = take(api_as(user), project)
    client.force_login(user)
    response = client.get(reverse("annotate", args=[project.slug]))
    assert response.status_code == 200
    assert response.context["unit"].pk == payload["id"]
    return payload, response


def test_queue_next_hides_instance_fields_the_page_hides(client, hidden_fields):
    payload, response = api_and_page(client, hidden_fields, "anna")
    html = response.content.decode()
    sent = json.dumps(payload)
    for secret in ("SECRET-GOLD", "SECRET-META"):
        assert secret not in sent and secret not in html
    assert payload["data"] == {"steps": [{"action": "search"}, {"action": "click"}]}
    assert [f["label"] for f in payload["context"]] == ["The text"]
    assert payload["context"][0]["value"] in html and "The text" in html
    assert "search" in html and "click" in html  # the steps the page draws
    assert json.loads(json.dumps(response.context["payload"])) == payload


@pytest.mark.parametrize("show_source", [False, True])
def test_queue_next_shows_sources_only_when_the_page_does(client, tmp_path, show_source):
    project = bws_project(tmp_path, show_source)
    payload, response = api_and_page(client, project, "anna")
    html = response.content.decode()
    sent = json.dumps(payload)
    assert ("SYSTEM-" in sent) is show_source
    assert ("SYSTEM-" in html) is show_source
    assert all(("source" in item) is show_source for item in payload["items"])
    for item in payload["items"]:
        assert item["text"] in html
        if show_source:
            assert f'<span class="item-source">{item["source"]}</span>' in html
    assert json.loads(json.dumps(response.context["payload"])) == payload


# --- two copies of one submission at once ---------------------------------------------------


def submit_together(project, user, unit_ids, values, client_id):
    """Submit from two threads at the same moment; each gets a SubmitResult or an error."""
    import threading

    from django.db import connection

    from annotation.answers import submit_answers

    barrier = threading.Barrier(len(unit_ids))
    outcomes = [None] * len(unit_ids)

    def work(n):
        try:
            barrier.wait()
            outcomes[n] = submit_answers(
                project=project,
                user=user,
                unit_id=unit_ids[n],
                answers={"q": values[n]},
                client_id=client_id,
            )
        except Exception as exc:  # reported in outcomes
            outcomes[n] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=work, args=(n,)) for n in range(len(unit_ids))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return outcomes


@pytest.mark.django_db(transaction=True)
def test_racing_copies_of_one_submission_store_one_answer(tmp_path):
    from annotation.answers import SubmitResult

    project = make_project(tmp_path)
    anna = member(project, "anna")
    unit = next_unit(project=project, user=anna)
    outcomes = submit_together(project, anna, [unit.pk, unit.pk], ["yes_", "yes_"], uuid.uuid4())
    assert all(isinstance(o, SubmitResult) for o in outcomes), outcomes
    assert sorted(o.replayed for o in outcomes) == [False, True]
    assert Annotation.objects.count() == 1
    unit.refresh_from_db()
    assert unit.completed == 1


@pytest.mark.django_db(transaction=True)
def test_racing_reuse_of_a_client_id_on_two_units_stores_one(tmp_path):
    from annotation.answers import SubmitRefused, SubmitResult

    project = make_project(tmp_path)
    anna = member(project, "anna")
    first = next_unit(project=project, user=anna)
    # a second live lease at once (the queue hands out one at a time)
    second = project.units.exclude(pk=first.pk).first()
    Assignment.objects.create(
        project=project,
        unit=second,
        annotator=anna,
        status=Assignment.Status.RESERVED,
        leased_until=timezone.now() + timedelta(minutes=5),
    )
    outcomes = submit_together(project, anna, [first.pk, second.pk], ["yes_", "no_"], uuid.uuid4())
    kinds = sorted(type(o).__name__ for o in outcomes)
    assert kinds == ["SubmitRefused", "SubmitResult"], outcomes
    refusal = next(o for o in outcomes if isinstance(o, SubmitRefused))
    stored = next(o for o in outcomes if isinstance(o, SubmitResult))
    assert [a.pk for a in refusal.stored] == [a.pk for a in stored.annotations]
    assert Annotation.objects.count() == 1
