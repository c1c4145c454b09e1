"""The BWS tab: charts drawn server-side, the ranked table, re-scoring, downloads."""

import re

import pytest
from django.urls import reverse

from bws import scheduling, services
from bws.models import ScoreRun
from projects.models import Membership
from projects.tests.factories import UserFactory

from .test_runs import annotate, study  # noqa: F401  (fixture)

pytestmark = pytest.mark.django_db


@pytest.fixture
def scored(study):  # noqa: F811
    from projects.services import import_project

    project = import_project(config_path=study / "config.yaml", slug="mt").project
    annotate(project, ["overall_quality"], n_users=3, per_user=40)
    run = services.request_run(project=project, scheme="overall_quality", bootstrap=100)
    services.execute_run(run.pk)
    return project


@pytest.fixture
def manager_client(client, scored):
    user = UserFactory(username="boss")
    Membership.objects.create(user=user, project=scored, role="manager")
    client.force_login(user)
    return client


def test_dashboard_draws_every_chart_and_the_table(manager_client):
    html = manager_client.get(reverse("bws-dashboard", args=["mt"])).content.decode()
    assert html.count('data-chart="bars"') == 2  # histogram and coverage
    assert 'data-chart="convergence"' in html and "<polyline" in html
    assert 'data-figure="split-half"' in html
    assert "from <strong>120</strong> judgments by 3 annotators" in html
    # The run's intervals say what they are (a scheme's runs are calibrated by default).
    assert "with calibrated 95% intervals (empirical-Bayes posterior)" in html
    assert "Ranked items" in html and "sys_a" in html
    assert "python -m bws stats" in html and "Schema: overall_quality" in html
    # Charts need no script; the one script is the pickers' autosubmit, a static file.
    scripts = re.findall(r"<script[^>]*>", html.split("</header>", 1)[1])
    assert scripts == ['<script src="/static/annolab/autosubmit.js" defer>']


def test_dashboard_is_for_managers_only(client, scored):
    annotator = UserFactory(username="ann")
    Membership.objects.create(user=annotator, project=scored, role="annotator")
    client.force_login(annotator)
    assert client.get(reverse("bws-dashboard", args=["mt"])).status_code == 404


def test_rescore_queues_a_run_with_the_chosen_method(manager_client, scored, monkeypatch):
    sent = []
    monkeypatch.setattr(scheduling, "send_task", lambda task, *a, **k: sent.append(a) or True)
    response = manager_client.post(
        reverse("bws-rescore", args=["mt"]),
        {"scheme": "overall_quality", "method": "plackett_luce"},
    )
    assert response.status_code == 302 and "method=plackett_luce" in response.url
    run = ScoreRun.objects.latest("created_at")
    assert (run.method, run.status, run.trigger) == ("plackett_luce", "queued", "manual")
    assert sent == [(run.pk,)]
    html = manager_client.get(response.url).content.decode()
    assert "is queued" in html and 'http-equiv="refresh"' in html
    assert "No Plackett-Luce scores yet" in html


def test_downloads_give_the_score_table(manager_client):
    url = reverse("bws-download", args=["mt"])
    tsv = manager_client.get(url, {"scheme": "overall_quality", "format": "tsv"})
    assert tsv["Content-Type"].startswith("text/tab-separated-values")
    lines = tsv.content.decode().splitlines()
    assert lines[0].split("\t") == [
        "item_id",
        "text",
        "score",
        "ci_low",
        "ci_high",
        "best_count",
        "worst_count",
        "appearances",
        "rank",
    ]
    assert len(lines) == 7  # six systems
    csv = manager_client.get(url, {"scheme": "overall_quality", "format": "csv"})
    assert csv.content.decode().startswith("item_id,text,score")


def test_large_tables_paginate(manager_client, scored):
    html = manager_client.get(reverse("bws-dashboard", args=["mt"])).content.decode()
    assert "Page 1 of" not in html  # six items fit on one page
    from bws.charts import histogram

    chart = histogram([i / 1000 for i in range(100_000)])
    assert len(chart["bars"]) == 24 and chart["n"] == 100_000


def test_an_undefined_spearman_brown_reads_undefined_with_its_reason(manager_client, scored):
    """A negative split-half correlation has no Spearman-Brown figure: the dashboard says so
    instead of printing a blank."""
    run = ScoreRun.objects.filter(project=scored, status="ok").latest("pk")
    run.reliability = {
        **run.reliability,
        "mean": -0.2,
        "spearman_brown": None,
        "spearman_brown_reason": "undefined: the halves correlate negatively (r = -0.200)",
    }
    run.save(update_fields=["reliability"])
    html = manager_client.get(reverse("bws-dashboard", args=["mt"])).content.decode()
    figure = html.split('data-figure="split-half"', 1)[1].split("</p>", 2)[1]
    reason = "undefined: the halves correlate negatively (r = -0.200)"
    assert f'Spearman-Brown <span class="undefined">{reason}</span>' in figure
