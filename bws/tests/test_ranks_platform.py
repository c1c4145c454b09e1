"""Rank inference stored with a run and shown: each item's rank interval (marginal and
simultaneous) in the run, the API and the dashboard's table, and the top-k card."""

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from bws import services
from bws.models import ScoreRun
from projects.models import Membership
from projects.tests.factories import UserFactory

from .test_dashboard import manager_client, scored  # noqa: F401  (fixtures)
from .test_runs import study  # noqa: F401  (fixture)

pytestmark = pytest.mark.django_db


@pytest.fixture
def run(scored):  # noqa: F811
    return ScoreRun.objects.filter(project=scored, status="ok").latest("created_at")


def test_a_run_stores_rank_intervals_that_hold_the_preferred_order(run):
    ranks = run.ranks
    assert ranks["level"] == 0.95 and not ranks["grouped"]
    items = ranks["items"]
    shown = run.item_scores.exclude(score=None).count()
    assert len(items) == shown >= 6
    # the annotators preferred items in the order of their ids (annotate() in test_runs)
    truth = {item_id: n + 1 for n, item_id in enumerate(sorted(items))}
    held = 0
    for item_id, (low, high, slow, shigh) in items.items():
        assert 1 <= slow <= low <= high <= shigh <= shown
        held += low <= truth[item_id] <= high
    assert held >= shown - 1  # 95% each: at most one of a handful may miss
    top = ranks["top_k"]
    assert top["k"] >= 1
    assert set(top["confident"]) <= set(top["possible"])
    assert sorted(items)[0] in top["possible"]


def test_the_api_gives_each_items_rank_interval_and_the_top_k(scored):  # noqa: F811
    user = UserFactory(username="api-boss")
    Membership.objects.create(user=user, project=scored, role="manager")
    client = APIClient()
    client.force_authenticate(user)
    data = client.get("/api/v1/projects/mt/scores/", {"scheme": "overall_quality"}).json()
    assert data["ranks"]["top_k"]["k"] >= 1
    for item in data["items"]:
        if item["score"] is None:
            assert item["rank_interval"] is None
            continue
        interval = item["rank_interval"]
        assert interval["simultaneous_low"] <= interval["low"] <= item["rank"]
        assert item["rank"] <= interval["high"] <= interval["simultaneous_high"]


def test_the_dashboard_shows_rank_intervals_and_the_top_k_card(manager_client, run):  # noqa: F811
    html = manager_client.get(reverse("bws-dashboard", args=["mt"])).content.decode()
    assert "data-top-k" in html and f"Top {run.ranks['top_k']['k']} with 95% confidence" in html
    assert html.count('class="muted small rank-span"') == len(run.ranks["items"])


def test_bootstrap_intervals_store_no_ranks(scored):  # noqa: F811
    queued = services.request_run(
        project=scored,
        scheme="overall_quality",
        method="counting",
        bootstrap=20,
        intervals="bootstrap",
    )
    done = services.execute_run(queued.pk)
    assert done.status == "ok" and done.ranks is None


@pytest.fixture
def api(scored):  # noqa: F811
    user = UserFactory(username="api-rita")
    Membership.objects.create(user=user, project=scored, role="manager")
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_the_api_answers_pairwise_questions_with_holm(api):
    url = "/api/v1/projects/mt/scores/compare/"
    found = api.get(url, {"items": "sys_a,sys_f,sys_b", "method": "bradley_terry"})
    assert found.status_code == 200
    data = found.json()
    assert data["correction"] == "holm" and data["level"] == 0.95
    pairs = {(p["first"], p["second"]): p for p in data["pairs"]}
    assert set(pairs) == {("sys_a", "sys_f"), ("sys_a", "sys_b"), ("sys_f", "sys_b")}
    # the annotators preferred sys_a over sys_f every time it mattered
    assert pairs[("sys_a", "sys_f")]["verdict"] == "first_above"
    for pair in pairs.values():
        assert pair["p_value"] <= pair["p_holm"] <= 1


@pytest.mark.parametrize(
    ("query", "words"),
    [
        ({"items": "sys_a"}, "at least two item ids"),
        ({"items": "sys_a,nope"}, "no item 'nope'"),
        ({"items": ",".join(f"x{n}" for n in range(21))}, "at most 20 items"),
        ({"items": "sys_a,sys_b", "method": "wald"}, "choose one of"),
        ({"items": "sys_a,sys_b", "scheme": "nope"}, "no best-worst scheme"),
    ],
)
def test_a_bad_pairwise_question_is_a_400_with_a_message(api, query, words):
    refused = api.get("/api/v1/projects/mt/scores/compare/", query)
    assert refused.status_code == 400
    assert words in str(refused.json())


def test_the_dashboard_answers_pairwise_questions_and_refuses_in_words(manager_client, run):  # noqa: F811
    url = reverse("bws-dashboard", args=["mt"])
    html = manager_client.get(url, {"compare": "sys_a, sys_f"}).content.decode()
    assert 'aria-label="Pairwise questions"' in html and "sys_a is above" in html
    refused = manager_client.get(url, {"compare": "sys_a,nope"})
    assert refused.status_code == 200  # the page, with the form's message under it
    text = refused.content.decode()
    assert 'id="compare-error" role="alert">no item &#x27;nope&#x27; in this project' in text
    assert 'aria-invalid="true"' in text


def test_the_api_states_the_top_k_for_the_k_asked(api, run):
    data = api.get("/api/v1/projects/mt/scores/", {"k": "3"}).json()
    top = data["ranks"]["top_k"]
    assert top["k"] == 3
    items = run.ranks["items"]
    # surely in the top 3: its simultaneous upper bound is at most 3; possibly: lower <= 3
    assert all(items[i][3] <= 3 for i in top["confident"])
    assert {i for i, bounds in items.items() if bounds[2] <= 3} == set(top["possible"])


@pytest.mark.parametrize(("k", "words"), [("0", "from 1 to"), ("99", "from 1 to"), ("x", "whole")])
def test_a_bad_k_is_a_400_with_a_message(api, k, words):
    refused = api.get("/api/v1/projects/mt/scores/", {"k": k})
    assert refused.status_code == 400 and words in str(refused.json()["errors"]["k"])
