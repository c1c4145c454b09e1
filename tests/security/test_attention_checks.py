"""Attention checks indistinguishable: a unit's address carries no order telling a check from
an ordinary unit; the number a person reads is their own running count, never one they saw
before; a check's page is any unit's page; the rate is an exact share per person, on top of
the quota; too many failed checks screen a person out."""

import re

import pytest
from django.urls import reverse

from annotation.answers import submit_answers
from annotation.models import Assignment
from annotation.queue import next_unit
from crowds import attention_checks, gold
from crowds.tests.test_gold import bws_project, gold_records, radio_project, truthful
from projects.models import UNIT_ID_HIGH, UNIT_ID_LOW, Membership, Unit
from projects.tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def member(project, username):
    user = UserFactory(username=username)
    Membership.objects.create(project=project, user=user, role=Membership.Role.ANNOTATOR)
    return user


def flipped(answer):
    return {"q": {"best": answer["q"]["worst"], "worst": answer["q"]["best"]}}


def with_config(project, **changes):
    project.config = {**project.config, **changes}
    project.save()
    return project


def test_gold_units_do_not_carry_the_highest_ids(tmp_path):
    project = bws_project(tmp_path, gold_lines=gold_records(12))
    ordinary = list(
        Unit.objects.filter(project=project, is_gold=False).values_list("pk", flat=True)
    )
    checks = list(Unit.objects.filter(project=project, is_gold=True).values_list("pk", flat=True))
    assert len(checks) == 12 and len(ordinary) == 48
    # Drawn from one space: the checks are not all above (or below) the ordinary units.
    assert not min(checks) > max(ordinary)
    assert not max(checks) < min(ordinary)
    assert all(UNIT_ID_LOW <= pk < UNIT_ID_HIGH for pk in ordinary + checks)
    # Instance units (made by bulk_create) are drawn the same way.
    (tmp_path / "r").mkdir()
    radio = radio_project(tmp_path / "r", "gold:\n  file: gold.jsonl\n")
    ids = list(Unit.objects.filter(project=radio).values_list("pk", flat=True))
    assert all(UNIT_ID_LOW <= pk < UNIT_ID_HIGH for pk in ids)
    assert sorted(ids) != [u.pk for u in Unit.objects.filter(project=radio).order_by("position")]


def headings(client, project, user, n):
    """The number each of the person's next n unit pages shows, answering each truthfully."""
    client.force_login(user)
    seen = []
    for _ in range(n):
        page = client.get(reverse("annotate", args=[project.slug]))
        if page.status_code != 200 or "No more work" in page.content.decode():
            break
        html = page.content.decode()
        heading = re.search(r"(Tuple \d+ of \d+)", html).group(1)
        unit_id = int(re.search(r'action="/projects/[^/]+/annotate/(\d+)/"', html).group(1))
        unit = Unit.objects.get(pk=unit_id)
        seen.append((heading, unit, html))
        answer = truthful(unit)["q"]
        posted = client.post(
            reverse("annotate-unit", args=[project.slug, unit_id]),
            {"q__best": answer["best"], "q__worst": answer["worst"]},
        )
        assert posted.status_code == 302
    return seen


def test_a_person_reads_their_own_count_and_never_a_number_twice(tmp_path, client):
    block = "gold:\n  file: gold.jsonl\n  attention_rate: 0.2\n"
    project = bws_project(tmp_path, gold_lines=gold_records(10), block=block, slug="ranking")
    with_config(project, max_annotations_per_user=10)
    user = member(project, "reader")
    seen = headings(client, project, user, 20)
    assert [h for h, _, _ in seen] == [f"Tuple {k} of 12" for k in range(1, 13)]
    assert sum(unit.is_gold for _, unit, _ in seen) == 2
    # A check's page has the controls of any unit's page, and nothing that names it.
    controls = {re.sub(r"\d+", "N", html_controls(html)) for _, _, html in seen}
    assert len(controls) == 1
    for _, unit, html in seen:
        if unit.is_gold:
            assert "gold" not in html.lower() and "check" not in html.lower()
            assert unit.external_id not in html
    # The done page lists them by the same numbers.
    done = client.get(reverse("annotate", args=[project.slug])).content.decode()
    assert "No more work" in done
    assert set(re.findall(r">Tuple (\d+)</a>", done)) == {str(k) for k in range(1, 13)}


def html_controls(html: str) -> str:
    """The form's control names and types, in order (what a script could tell apart)."""
    form = html[html.index('id="annotate-form"') :]
    return " ".join(re.findall(r'<(?:input|button|select|textarea)[^>]*?name="([^"]+)"', form))


def test_the_rate_is_an_exact_share_on_top_of_the_quota(tmp_path):
    block = "gold:\n  file: gold.jsonl\n  attention_rate: 0.1\n"
    project = bws_project(tmp_path, gold_lines=gold_records(20), block=block, appearances=16)
    with_config(project, max_annotations_per_user=25)
    positions = {}
    for name in ("ann", "bob", "cyd", "dee"):
        user = member(project, name)
        served = []
        while (unit := next_unit(project=project, user=user)) is not None:
            served.append(unit)
            submit_answers(project=project, user=user, unit_id=unit.pk, answers=truthful(unit))
        # round(0.1 x 25) = 3 checks, on top of the 25 ordinary units.
        assert sum(u.is_gold for u in served) == 3, name
        assert sum(not u.is_gold for u in served) == 25, name
        assert len({u.pk for u in served}) == 28
        positions[name] = tuple(n for n, u in enumerate(served) if u.is_gold)
        plan = attention_checks.check_plan(project, user)
        assert positions[name] == tuple(sorted(plan.positions(0)))  # seeded per person
    assert len(set(positions.values())) > 1, "positions drawn per person, not one pattern"


def test_without_a_quota_each_block_of_twenty_holds_its_share(tmp_path):
    block = "gold:\n  file: gold.jsonl\n  attention_rate: 0.15\n"
    project = bws_project(tmp_path, gold_lines=gold_records(40), block=block, appearances=16)
    user = member(project, "endless")
    plan = attention_checks.check_plan(project, user)
    assert (plan.ordinary, plan.checks, plan.repeats) == (20, 3, True)
    served = []
    for _ in range(2 * plan.length):
        unit = next_unit(project=project, user=user)
        served.append(unit)
        submit_answers(project=project, user=user, unit_id=unit.pk, answers=truthful(unit))
    for block_start in (0, plan.length):
        chunk = served[block_start : block_start + plan.length]
        assert sum(u.is_gold for u in chunk) == 3


def test_too_many_failed_checks_screen_an_annotator_out(tmp_path, client):
    block = "gold:\n  file: gold.jsonl\n  attention_rate: 0.5\n  max_failed_checks: 1\n"
    project = bws_project(tmp_path, gold_lines=gold_records(10), block=block)
    user = member(project, "careless")
    failed = 0
    while (unit := next_unit(project=project, user=user)) is not None:
        answer = flipped(truthful(unit)) if unit.is_gold else truthful(unit)
        failed += unit.is_gold
        submit_answers(project=project, user=user, unit_id=unit.pk, answers=answer)
    assert failed == 2  # the second failure screens them out
    assert gold.screening_failure(project, user) == "failed 2 of 2 attention checks"
    handed = Assignment.objects.filter(annotator=user).count()
    assert next_unit(project=project, user=user) is None
    assert Assignment.objects.filter(annotator=user).count() == handed
    client.force_login(user)
    done = client.get(reverse("annotate", args=[project.slug])).content.decode()
    assert "failed 2 of 2 attention checks" in done


def test_the_config_refuses_a_negative_failed_check_limit():
    from projects.configuration import ConfigError, parse_config

    base = {
        "data_files": ["x.jsonl"],
        "annotation_schemes": [{"name": "q", "annotation_type": "best_worst_scaling"}],
    }
    gold_block = {"file": "g.jsonl", "max_failed_checks": -1}
    with pytest.raises(ConfigError, match="gold.max_failed_checks: must be at least 0"):
        parse_config({**base, "gold": gold_block}, check_files=False)
    gold_block["max_failed_checks"] = 0
    config = parse_config({**base, "gold": gold_block}, check_files=False)
    assert config.gold.max_failed_checks == 0


def test_the_api_names_no_tuple_by_its_place_in_a_project_with_checks(tmp_path):
    from rest_framework.test import APIClient

    block = "gold:\n  file: gold.jsonl\n  attention_rate: 0.5\n"
    project = bws_project(tmp_path, gold_lines=gold_records(10), block=block)
    user = member(project, "scripted")
    api = APIClient()
    api.force_authenticate(user)
    base = f"/api/v1/projects/{project.slug}"
    names, checks = [], 0
    for _ in range(12):
        unit = api.post(f"{base}/queue/next/").json()
        checks += Unit.objects.get(pk=unit["id"]).is_gold
        answer = truthful(Unit.objects.get(pk=unit["id"]))
        stored = api.post(
            f"{base}/annotations/", {"unit": unit["id"], "annotations": answer}, format="json"
        ).json()
        names += [unit["external_id"], stored[0]["unit"]]
        assert unit["external_id"] == stored[0]["unit"] == str(unit["id"])
    listed = api.get(f"{base}/annotations/").json()["results"]
    assert {row["unit"] for row in listed} == {str(row["unit_id"]) for row in listed}
    assert checks > 0, "the person was handed checks"
    assert not any(name.startswith("tuple_") for name in names)
    # The managers still read the design's names.
    boss = UserFactory(username="boss")
    Membership.objects.create(project=project, user=boss, role=Membership.Role.MANAGER)
    api.force_authenticate(boss)
    rows = api.get(f"{base}/annotations/").json()["results"]
    assert all(row["unit"].startswith("tuple_") for row in rows)


PAID_STUDY = """task_name: Paid study
data_files: [d.jsonl]
annotation_schemes:
  - {annotation_type: radio, name: q, description: Is it polite, labels: [yes_, no_]}
participants:
  open_link: true
  units_per_participant: 10
  completion_code: "PAID-C0DE"
  completion_url: "https://panel.example.org/complete?cc=PAID-C0DE"
gold:
  file: gold.jsonl
  attention_rate: 0.2
"""


def test_a_participant_gets_the_quota_and_its_checks_on_top(tmp_path):
    from django.test import Client

    from projects.services import import_project

    (tmp_path / "d.jsonl").write_text(
        "".join(f'{{"id": "u{n}", "text": "Reply {n}"}}\n' for n in range(30))
    )
    (tmp_path / "gold.jsonl").write_text(
        "".join(f'{{"instance": "u{n}", "answers": {{"q": "yes_"}}}}\n' for n in range(6))
    )
    (tmp_path / "c.yaml").write_text(PAID_STUDY)
    import_project(config_path=tmp_path / "c.yaml", slug="paid")
    client = Client()
    assert client.get("/p/paid/start?PROLIFIC_PID=worker-1").status_code == 302
    location = client.get(reverse("participant-flow", args=["paid"]))["Location"]
    served, headings_seen = [], []
    while "/annotate/" in location:
        page = client.get(location).content.decode()
        headings_seen.append(re.search(r"(Unit \d+ of \d+)", page).group(1))
        unit = Unit.objects.get(pk=int(re.search(r"/annotate/(\d+)/", location).group(1)))
        served.append(unit)
        location = client.post(location, {"q": "yes_"})["Location"]
    # round(0.2 x 10) = 2 checks, on top of the 10 units of the quota
    assert sum(u.is_gold for u in served) == 2
    assert sum(not u.is_gold for u in served) == 10
    assert headings_seen == [f"Unit {k} of 12" for k in range(1, 13)]
    done = client.get(location).content.decode()
    assert "PAID-C0DE" in done


def test_a_change_to_a_check_is_refused_as_any_change_is(tmp_path, client):
    """Refusing a check's change while ordinary answers stay open would tell the check apart
    after the fact: where checks are mixed in, every answer is final, with one message."""
    block = "gold:\n  file: gold.jsonl\n  attention_rate: 0.5\n"
    project = bws_project(tmp_path, gold_lines=gold_records(10), block=block)
    with_config(project, max_annotations_per_user=4)
    user = member(project, "changer")
    served = []
    while (unit := next_unit(project=project, user=user)) is not None:
        served.append(unit)
        submit_answers(project=project, user=user, unit_id=unit.pk, answers=truthful(unit))
    check = next(u for u in served if u.is_gold)
    ordinary = next(u for u in served if not u.is_gold)
    before = {(a.unit_id, a.scheme): a.value for a in user.annotations.all()}
    client.force_login(user)
    refusals = []
    for unit in (check, ordinary):
        page = client.get(reverse("annotate-unit", args=[project.slug, unit.pk])).content.decode()
        assert "This answer is final" in page and 'id="submit-answer"' not in page
        answer = flipped(truthful(unit))["q"]
        posted = client.post(
            reverse("annotate-unit", args=[project.slug, unit.pk]),
            {"q__best": answer["best"], "q__worst": answer["worst"]},
        )
        refusals.append((posted.status_code, "final" in posted.content.decode()))
    assert refusals[0] == refusals[1] == (409, True)
    assert {(a.unit_id, a.scheme): a.value for a in user.annotations.all()} == before
