"""The quality page and its API show each annotator's reliability estimated by the newest
model run, with its interval: a random clicker's is below every attentive annotator's."""

import numpy as np
import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.answers import submit_answers
from annotation.queue import next_unit
from bws import services
from crowds.tests.test_gold import bws_project, member, truthful
from projects.models import Membership
from projects.tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def answer_all(project, users, clicker):
    rng = np.random.default_rng(0)
    for user in users:
        while (unit := next_unit(project=project, user=user)) is not None:
            answer = truthful(unit)
            if user == clicker:
                best, worst = rng.choice(unit.item_ids, size=2, replace=False)
                answer = {"q": {"best": str(best), "worst": str(worst)}}
            submit_answers(project=project, user=user, unit_id=unit.pk, answers=answer)


def test_the_quality_page_shows_each_annotator_s_reliability(tmp_path):
    project = bws_project(tmp_path, appearances=8, slug="careless")
    users = [member(project, UserFactory(username=f"ann{n}")) for n in range(4)]
    boss = member(project, UserFactory(username="boss"), role=Membership.Role.MANAGER)
    answer_all(project, users, clicker=users[3])
    run = services.request_run(project=project, scheme="q", method="plackett_luce")
    run = services.execute_run(run.pk)
    stored = run.annotator_reliability
    assert set(stored["annotators"]) == {str(user.pk) for user in users}

    web = Client()
    web.force_login(boss)
    page = web.get(reverse("project-quality", args=[project.slug]))
    assert page.status_code == 200
    assert "Reliability" in page.content.decode()
    rows = {row.username: row for row in page.context["report"].rows}
    found = {name: rows[name].reliability[0] for name in ("ann0", "ann1", "ann2", "ann3")}
    for shown in found.values():
        assert shown.low <= shown.sensitivity <= shown.high
        assert shown.judgments > 0
        assert f"{shown.sensitivity:.2f}" in page.content.decode()
    clicker = found["ann3"].sensitivity
    assert all(clicker < found[name].sensitivity for name in ("ann0", "ann1", "ann2"))
    assert rows["boss"].reliability == []

    api = APIClient()
    api.force_login(boss)
    body = api.get(f"/api/v1/projects/{project.slug}/quality/").json()
    by_name = {row["username"]: row for row in body["results"]}
    given = by_name["ann3"]["reliability"][0]
    assert given["scheme"] == "q" and given["method"] == "plackett_luce"
    assert given["sensitivity"] == pytest.approx(clicker)
    assert given["low"] <= given["sensitivity"] <= given["high"]
