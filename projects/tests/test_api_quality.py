"""The REST endpoints for annotator quality, exclusions and the participant link: the quality
page's figures per annotator, paged and filtered; leaving an annotator out through the API
changes the scores and taking them back restores them; the participant link with its
settings and the participants' states; a project the caller may not manage is a 404."""

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from crowds.tests.test_gold import _answer_all, bws_project, gold_records, member
from crowds.tests.test_participants import answer, enter, make_project, start_url
from projects.models import Membership
from projects.tests.factories import UserFactory

pytestmark = pytest.mark.django_db

# Every figure of a quality row, as bws.quality.AnnotatorQuality names it.
FIGURES = [
    "user_id",
    "username",
    "role",
    "excluded",
    "answers",
    "gold_checks",
    "gold_right",
    "gold_accuracy",
    "best_accuracy",
    "worst_accuracy",
    "training",
    "judgments",
    "agreement",
    "p_value",
    "median_seconds",
    "flagged",
    "reversed",
]


def api_as(user) -> APIClient:
    client = APIClient()
    client.force_login(user)
    return client


def assert_error(response, status, field=None):
    assert response.status_code == status, response.content
    body = response.json()
    assert isinstance(body["detail"], str) and body["detail"]
    if field is not None:
        assert all(isinstance(m, str) for m in body["errors"][field]), body
    return body


@pytest.fixture
def ranked(tmp_path):
    """A best-worst project with attention checks, four annotators of whom the last
    answers backwards, and a manager."""
    project = bws_project(tmp_path, gold_lines=gold_records(6), appearances=4, slug="ranked")
    users = [member(project, UserFactory(username=f"ann{n}")) for n in range(4)]
    _answer_all(project, users, flip=(users[3],))
    boss = member(project, UserFactory(username="boss"), role=Membership.Role.MANAGER)
    return project, users, boss


def quality(client, slug="ranked", **query):
    return client.get(f"/api/v1/projects/{slug}/quality/", query)


def test_the_quality_rows_are_the_web_page_s_figures(ranked):
    project, users, boss = ranked
    web = Client()
    web.force_login(boss)
    page = web.get(reverse("project-quality", args=[project.slug]))
    assert page.status_code == 200
    report = page.context["report"]
    response = quality(api_as(boss))
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["count"] == len(report.rows) == 5
    assert [r["username"] for r in body["results"]] == [r.username for r in report.rows]
    for got, shown in zip(body["results"], report.rows, strict=True):
        for name in FIGURES:
            assert got[name] == pytest.approx(getattr(shown, name)), (shown.username, name)
    assert body["bws"] is True
    assert body["typical_agreement"] == pytest.approx(report.typical)
    assert body["random_threshold"] == pytest.approx(report.threshold)
    assert body["min_judgments"] == report.min_judgments
    rows = {r["username"]: r for r in body["results"]}
    # The figures say something: attention checks were graded, the one who answered
    # backwards agrees less with the others than they agree with each other.
    assert rows["ann0"]["gold_checks"] > 0 and rows["ann0"]["gold_accuracy"] == 1.0
    assert rows["ann3"]["gold_accuracy"] == 0.0
    assert rows["ann3"]["agreement"] < rows["ann0"]["agreement"]
    assert rows["ann3"]["flag"] == "reversed" and "reversed?" in page.content.decode()
    assert rows["ann0"]["flag"] == "ok"
    assert rows["boss"]["role"] == "manager" and rows["boss"]["flag"] is None


def test_quality_filters_and_pages(ranked):
    project, users, boss = ranked
    client = api_as(boss)
    flagged = quality(client, flagged="true").json()
    assert [r["username"] for r in flagged["results"]] == ["ann3"]
    assert {r["username"] for r in quality(client, flagged="false").json()["results"]} == {
        "ann0",
        "ann1",
        "ann2",
        "boss",
    }
    managers = quality(client, role="manager").json()
    assert [r["username"] for r in managers["results"]] == ["boss"]
    assert quality(client, excluded="true").json()["count"] == 0
    first = quality(client, page_size=4).json()
    assert first["count"] == 5 and len(first["results"]) == 4 and first["next"]
    second = client.get(first["next"]).json()
    assert [r["username"] for r in second["results"]] == ["boss"]
    assert_error(quality(client, role="boss"), 400, "role")
    assert_error(quality(client, page=9), 404)


def scores(project):
    from bws import selectors, services

    run = services.request_run(project=project, scheme="q", bootstrap=50)
    services.execute_run(run.pk)
    latest = selectors.latest_good_run(project, "q")
    return {s.item_id: s.score for s in latest.item_scores.all()}


def exclude(client, username, excluded, slug="ranked"):
    return client.post(
        f"/api/v1/projects/{slug}/exclusions/",
        {"username": username, "excluded": excluded},
        format="json",
    )


def test_leaving_out_through_the_api_changes_scores_and_including_restores(ranked):
    project, users, boss = ranked
    from agreement import selectors as agreement_selectors
    from agreement import services as agreement

    client = api_as(boss)
    before = scores(project)
    agreement.compute_report(project=project)
    assert agreement_selectors.is_current(agreement_selectors.latest_report(project))
    response = exclude(client, "ann3", True)
    assert response.status_code == 200, response.content
    assert response.json() == {
        "username": "ann3",
        "role": "annotator",
        "excluded": True,
        "changed": True,
    }
    assert Membership.objects.get(project=project, user=users[3]).excluded
    # The agreement report is out of date, as after the web page's button.
    assert not agreement_selectors.is_current(agreement_selectors.latest_report(project))
    listed = client.get("/api/v1/projects/ranked/exclusions/").json()
    assert [r["username"] for r in listed["results"]] == ["ann3"]
    assert [r["username"] for r in quality(client, excluded="true").json()["results"]] == ["ann3"]
    left_out = scores(project)
    assert left_out != before
    # Without the one who answered backwards, the top item scores higher.
    assert left_out["i23"] > before["i23"]
    # Asked again: nothing changes.
    assert exclude(client, "ann3", True).json()["changed"] is False
    response = exclude(client, "ann3", False)
    assert response.json() == {
        "username": "ann3",
        "role": "annotator",
        "excluded": False,
        "changed": True,
    }
    assert client.get("/api/v1/projects/ranked/exclusions/").json()["count"] == 0
    assert scores(project) == before


def test_exclusion_refusals_have_the_one_error_shape(ranked):
    project, users, boss = ranked
    client = api_as(boss)
    body = assert_error(exclude(client, "boss", True), 400, "username")
    assert "manager" in body["detail"]
    body = assert_error(exclude(client, "nobody", True), 400, "username")
    assert "nobody is not a member" in body["detail"]
    assert_error(
        client.post("/api/v1/projects/ranked/exclusions/", {"username": "ann0"}, format="json"),
        400,
        "excluded",
    )
    assert_error(exclude(client, "ann0", "perhaps"), 400, "excluded")
    assert not Membership.objects.filter(project=project, excluded=True).exists()


def test_who_may_not_manage_gets_404_and_changes_nothing(ranked):
    project, users, boss = ranked
    outsider = UserFactory(username="stranger")
    for user in (users[0], outsider):
        client = api_as(user)
        assert_error(quality(client), 404)
        assert_error(client.get("/api/v1/projects/ranked/exclusions/"), 404)
        assert_error(exclude(client, "ann3", True), 404)
        assert_error(client.get("/api/v1/projects/ranked/participants/"), 404)
    assert not Membership.objects.get(project=project, user=users[3]).excluded
    assert APIClient().get("/api/v1/projects/ranked/quality/").status_code == 401


# --------------------------------------------------------------------------- participants


def test_the_participants_endpoint_shows_the_link_settings_and_states(db, tmp_path):
    project = make_project(tmp_path)
    Client().get(start_url(PROLIFIC_PID="just-came"))
    client = Client()
    answer(client, enter(client, pid="worker-7", STUDY_ID="s1"))
    boss = member(project, UserFactory(username="boss"), role=Membership.Role.MANAGER)
    api = api_as(boss)
    response = api.get("/api/v1/projects/crowd/participants/")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["link"] == (
        "http://testserver/p/crowd/start?PROLIFIC_PID={{%PROLIFIC_PID%}}"
        "&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
    )
    assert body["settings"] == {
        "open_link": True,
        "id_param": "PROLIFIC_PID",
        "units_per_participant": 3,
        "completion_code": "C1A2B3",
        "completion_url": "https://panel.example.org/complete?cc=C1A2B3",
        "consent": "I agree that my **answers** are stored.",
        "max_participants": project.settings.participants.max_participants,
        "lease_minutes": 10,
        "partial": {"code": None, "url": None, "message": None},
        "screen_out": {"code": None, "url": None, "message": None},
    }
    assert body["count"] == 2
    came, working = body["results"]  # in the order they came
    assert came["external_id"] == "just-came"
    assert came["state"] == "consent" and came["state_label"] == "Not yet consented"
    assert came["completed_at"] is None and came["arrived_at"]
    assert working["external_id"] == "worker-7"
    assert working["state"] == "annotating" and working["state_label"] == "Annotating: 1 of 3"
    assert working["params"] == {"STUDY_ID": "s1"}
    assert working["consent_at"] and working["username"].startswith("participant-")
    # Filters and pages.
    only = api.get("/api/v1/projects/crowd/participants/", {"external_id": "worker"}).json()
    assert [p["external_id"] for p in only["results"]] == ["worker-7"]
    done = api.get("/api/v1/projects/crowd/participants/", {"completed": "true"}).json()
    assert done["count"] == 0 and done["settings"]["open_link"] is True
    paged = api.get("/api/v1/projects/crowd/participants/", {"page_size": 1}).json()
    assert paged["count"] == 2 and len(paged["results"]) == 1 and paged["next"]


def test_a_closed_link_or_no_participants_block(db, tmp_path):
    closed = make_project(tmp_path, block="participants:\n  open_link: false\n", slug="shut")
    plain = make_project(tmp_path, block="", slug="plain")
    boss = UserFactory(username="boss")
    for project in (closed, plain):
        member(project, boss, role=Membership.Role.MANAGER)
    api = api_as(boss)
    body = api.get("/api/v1/projects/shut/participants/").json()
    assert body["link"] is None and body["settings"]["open_link"] is False
    assert body["count"] == 0 and body["results"] == []
    body = api.get("/api/v1/projects/plain/participants/").json()
    assert body["link"] is None and body["settings"] is None
    # Quality of a project without a best-worst scheme: no agreement, no flags.
    body = quality(api, slug="plain").json()
    assert body["bws"] is False and body["typical_agreement"] is None
    assert [r["flag"] for r in body["results"]] == [None]
