"""Groups and systems on the platform: the MT demo (40 sentences x 5 systems, tuples within
each sentence) ranks its items within each sentence, never across, and ranks the systems
with intervals on the dashboard, in the API, the stats text and the downloaded table."""

import re
import shutil

import pytest
from django.conf import settings
from django.urls import reverse
from rest_framework.test import APIClient

from bws.models import ItemScore, ScoreRun
from demo.management.commands.load_demo import SYSTEM_QUALITY, simulate_bws_answers
from projects.models import Membership
from projects.services import import_project
from projects.tests.factories import UserFactory

pytestmark = pytest.mark.django_db
DEMO = settings.BASE_DIR / "examples" / "mt_two_dims"
TRUE_ORDER = sorted(SYSTEM_QUALITY, key=SYSTEM_QUALITY.get, reverse=True)


@pytest.fixture
def demo(tmp_path, settings):
    settings.PROJECT_FILES_ROOT = tmp_path / "projects"
    shutil.copytree(DEMO, tmp_path / "mt")
    project = import_project(config_path=tmp_path / "mt" / "config.yaml", slug="mt2").project
    simulate_bws_answers(project)  # 450 judgments, both schemes scored
    return project


@pytest.fixture
def manager(demo):
    user = UserFactory(username="lead")
    Membership.objects.create(user=user, project=demo, role="manager")
    return user


def fluency(project) -> ScoreRun:
    return ScoreRun.objects.get(project=project, scheme="fluency", status="ok")


def test_items_rank_within_their_sentence_and_never_across(demo):
    items = list(ItemScore.objects.filter(run=fluency(demo)))
    groups = {}
    for item in items:
        groups.setdefault(item.design_group, []).append(item)
    assert len(groups) == 40 and all(len(members) == 5 for members in groups.values())
    for members in groups.values():
        # ranks 1..n_g inside the sentence (tied scores may share one), in score order
        ranked = sorted(members, key=lambda i: -i.score)
        assert ranked[0].rank == 1 and max(i.rank for i in members) <= 5
        assert [i.rank for i in ranked] == sorted(i.rank for i in members)
    assert max(item.rank for item in items) <= 5  # no global rank 1..200
    assert {item.source for item in items} == set(SYSTEM_QUALITY)


def test_the_run_ranks_the_systems_with_intervals(demo):
    for run in ScoreRun.objects.filter(project=demo, status="ok"):
        table = run.sources
        assert table["system_key"] == "system" and table["group_key"] == "sentence_id"
        assert table["clustered_by"] == "group" and table["n_clusters"] == 40
        rows = table["rows"]
        assert [row["rank"] for row in rows] == [1, 2, 3, 4, 5]
        # five systems 0.6 apart with item noise 0.5 and 450 judgments: the demo's order
        assert [row["source"] for row in rows] == TRUE_ORDER
        assert all(row["ci_low"] < row["effect"] < row["ci_high"] for row in rows)
        assert abs(sum(row["effect"] for row in rows)) < 1e-9  # relative to the average
        assert all(row["rank_low"] <= row["rank"] <= row["rank_high"] for row in rows)
        assert all(row["n_items"] == 40 and row["n_groups"] == 40 for row in rows)
        assert "Systems Ranked (system" in run.stats_text
        assert "ranked within each of the 40 groups (sentence_id)" in run.stats_text
        assert "Top 5 Items" not in run.stats_text


def test_dashboard_shows_systems_ranked_and_ranks_in_groups(client, demo, manager):
    client.force_login(manager)
    html = client.get(reverse("bws-dashboard", args=["mt2"]), {"scheme": "fluency"}).content
    html = html.decode()
    assert "Systems ranked" in html and 'data-chart="systems"' in html
    systems = html.split('data-table="systems"', 1)[1].split("</table>", 1)[0]
    assert re.findall(r"<code>(sys_\w)</code>", systems) == TRUE_ORDER
    ranked = html.split("Ranked items", 1)[1].split("</table>", 1)[0]
    assert "<th>sentence_id</th><th>Rank in group</th>" in ranked
    # each rank within its group, with its 95% interval within the group (5 systems)
    cell = r"<td>(\d+)(?: <span [^>]*>\((\d+)(?:–(\d+))?\)</span>)?</td>\s*<td><code>mt_"
    found = re.findall(cell, ranked)
    ranks = [int(r) for r, _, _ in found]
    assert all(low and 1 <= int(low) <= int(r) <= int(high or low) <= 5 for r, low, high in found)
    assert len(ranks) == 50 and max(ranks) <= 5 and ranks.count(1) >= 10
    assert ranked.count("<strong>") == 10  # each of the page's ten sentences named once


def test_the_systems_card_needs_a_run_that_ranked_systems(client, demo, manager):
    # A run stored before systems were ranked (or without a system_key) shows no card.
    client.force_login(manager)
    run = fluency(demo)
    ScoreRun.objects.filter(pk=run.pk).update(sources=None)
    html = client.get(reverse("bws-dashboard", args=["mt2"]), {"scheme": "fluency"}).content
    assert b"Systems ranked" not in html and b"Rank in group" in html


def test_api_gives_ranks_in_groups_and_the_systems(demo, manager):
    api = APIClient()
    api.force_authenticate(manager)
    data = api.get("/api/v1/projects/mt2/scores/", {"scheme": "adequacy"}).json()
    assert [row["source"] for row in data["sources"]["rows"]] == TRUE_ORDER
    items = data["items"]
    assert len(items) == 200 and max(i["rank"] for i in items) <= 5
    first = items[0]
    assert first["design_group"] and first["source"] in SYSTEM_QUALITY
    # group by group, ranked inside each
    seen = []
    for item in items:
        if not seen or seen[-1] != item["design_group"]:
            seen.append(item["design_group"])
    assert len(seen) == 40


def test_download_has_group_and_system_columns(client, demo, manager):
    client.force_login(manager)
    url = reverse("bws-download", args=["mt2"])
    lines = client.get(url, {"scheme": "fluency", "format": "tsv"}).content.decode().splitlines()
    header = lines[0].split("\t")
    assert header[-3:] == ["rank", "group", "system"]
    rows = [dict(zip(header, line.split("\t"), strict=True)) for line in lines[1:]]
    assert max(int(row["rank"]) for row in rows) <= 5
    assert {row["system"] for row in rows} == set(SYSTEM_QUALITY)
