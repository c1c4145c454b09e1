"""The scores API: latest good run with items, re-score, poll; managers only."""

import pytest
from rest_framework.test import APIClient

from bws import scheduling, services
from projects.models import Membership
from projects.tests.factories import UserFactory

from .test_dashboard import scored  # noqa: F401  (fixture)
from .test_runs import study  # noqa: F401  (fixture)

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(scored):  # noqa: F811
    user = UserFactory(username="boss")
    Membership.objects.create(user=user, project=scored, role="manager")
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_latest_scores_with_items(api):
    data = api.get("/api/v1/projects/mt/scores/", {"scheme": "overall_quality"}).json()
    assert data["status"] == "ok" and data["method"] == "bradley_terry"
    assert data["n_judgments"] == 120 and len(data["items"]) == 6
    assert [i["rank"] for i in data["items"]] == sorted(i["rank"] for i in data["items"])
    assert all(i["ci_low"] <= i["score"] <= i["ci_high"] for i in data["items"])
    missing = api.get("/api/v1/projects/mt/scores/", {"method": "plackett_luce"})
    assert missing.status_code == 404


def test_rescore_then_poll(api, monkeypatch):
    sent = []
    monkeypatch.setattr(scheduling, "send_task", lambda task, *a, **k: sent.append(a) or True)
    response = api.post(
        "/api/v1/projects/mt/scores/",
        {"scheme": "overall_quality", "method": "counting", "bootstrap": 50},
        format="json",
    )
    assert response.status_code == 202
    run_id = response.json()["id"]
    assert sent == [(run_id,)]
    poll = api.get(f"/api/v1/projects/mt/scores/runs/{run_id}/").json()
    assert poll["status"] == "queued" and poll["parameters"]["bootstrap"] == 50
    services.execute_run(run_id)  # what the worker does
    assert api.get(f"/api/v1/projects/mt/scores/runs/{run_id}/").json()["status"] == "ok"
    latest = api.get("/api/v1/projects/mt/scores/", {"method": "counting"}).json()
    assert latest["id"] == run_id


def test_bad_requests_are_field_errors(api):
    bad = api.post("/api/v1/projects/mt/scores/", {"scheme": "nope"}, format="json")
    assert bad.status_code == 400 and "scheme" in bad.json()["errors"]
    bad = api.post(
        "/api/v1/projects/mt/scores/", {"scheme": "overall_quality", "method": "x"}, format="json"
    )
    assert bad.status_code == 400 and "method" in bad.json()["errors"]


def test_annotators_and_strangers_get_404(scored):  # noqa: F811
    annotator = UserFactory(username="ann")
    Membership.objects.create(user=annotator, project=scored, role="annotator")
    for user in (annotator, UserFactory(username="stranger")):
        client = APIClient()
        client.force_authenticate(user)
        assert client.get("/api/v1/projects/mt/scores/").status_code == 404


def test_a_rescore_chooses_its_interval_method(api, monkeypatch):
    """Calibrated by default; the percentile bootstrap when asked, over its resamples."""
    monkeypatch.setattr(scheduling, "send_task", lambda task, *a, **k: True)
    default = api.post(
        "/api/v1/projects/mt/scores/", {"scheme": "overall_quality"}, format="json"
    ).json()
    assert default["parameters"]["interval_method"] == "calibrated"
    asked = api.post(
        "/api/v1/projects/mt/scores/",
        {"scheme": "overall_quality", "intervals": "bootstrap", "bootstrap": 40},
        format="json",
    ).json()
    assert asked["parameters"]["interval_method"] == "bootstrap"
    run = services.execute_run(asked["id"])
    assert run.status == "ok"
    items = api.get("/api/v1/projects/mt/scores/", {"method": run.method}).json()["items"]
    assert all(i["ci_low"] <= i["score"] <= i["ci_high"] for i in items)
    bad = api.post(
        "/api/v1/projects/mt/scores/",
        {"scheme": "overall_quality", "intervals": "wald"},
        format="json",
    )
    assert bad.status_code == 400 and "intervals" in bad.json()["errors"]
