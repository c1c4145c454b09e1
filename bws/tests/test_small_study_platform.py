"""Where a method's intervals were measured to miss the band below an item count
(coverage_limits; none is now, so the former limits are patched in), a small study's
intervals read as approximate wherever scores are shown: the run's stored warnings and
statistics text, the dashboard's ≈ mark, the API's interval_approximate and the file-mode
score and stats commands. Without a limit, a study of 6 items is shown plain."""

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from bws import cli
from bws.core import coverage_limits
from bws.core.coverage_limits import SMALL_STUDY_COVERAGE, small_study_message

from .test_cli_scoring import make_study
from .test_run_diagnostics import manager, row_of, scored_run
from .test_runs import study  # noqa: F401  (fixture)

SYSTEMS = [f"sys_{c}" for c in "abcdef"]


@pytest.fixture
def limited(monkeypatch):
    """The limits measured before the prior's variance was integrated out."""
    for method, items, measured in (
        ("bradley_terry", 40, "0.809-0.945"),
        ("plackett_luce", 20, "0.833-0.950"),
    ):
        monkeypatch.setitem(coverage_limits.SMALL_STUDY_ITEMS, method, items)
        monkeypatch.setitem(coverage_limits.SMALL_STUDY_COVERAGE, method, measured)


@pytest.mark.django_db
def test_a_project_of_6_items_shows_every_interval_approximate(study, client, limited):  # noqa: F811
    project, run = scored_run(study, method="bradley_terry")
    assert run.parameters["interval_method"] == "calibrated"
    message = small_study_message(6, "bradley_terry")
    assert message in run.diagnostics["messages"]
    assert message in " ".join(run.stats_text.split())  # wrapped in the stats text
    measured = SMALL_STUDY_COVERAGE["bradley_terry"]

    user = manager(project)
    client.force_login(user)
    html = client.get(reverse("bws-dashboard", args=["mt"])).content.decode()
    box = html.split("data-diagnostics", 1)[1].split("</section>", 1)[0]
    assert message in box
    for item_id in SYSTEMS:
        row = row_of(html, item_id)
        assert '<abbr class="undefined" title="Approximate interval: ' in row
        assert "only 6 items" in row and measured in row and "\u2248" in row

    api = APIClient()
    api.force_authenticate(user)
    data = api.get("/api/v1/projects/mt/scores/", {"scheme": "overall_quality"}).json()
    assert message in data["diagnostics"]["messages"]
    assert data["diagnostics"]["n_approximate"] == 6
    assert len(data["items"]) == 6
    for item in data["items"]:
        assert item["interval_approximate"] is True
        assert "only 6 items" in item["interval_note"] and measured in item["interval_note"]


@pytest.mark.django_db
def test_a_counting_run_of_the_same_project_is_not_marked_for_its_size(study, client, limited):  # noqa: F811
    project, run = scored_run(study, method="counting")
    assert not any("simulations of studies" in m for m in run.diagnostics["messages"])
    user = manager(project)
    client.force_login(user)
    html = client.get(reverse("bws-dashboard", args=["mt"]), {"method": "counting"})
    row = row_of(html.content.decode(), "sys_c")
    assert " to " in row and "\u2248" not in row


def test_the_score_and_stats_commands_warn_of_a_study_of_10_items(tmp_path, capsys, limited):
    config, _, _ = make_study(tmp_path, n_items=10, method="plackett_luce")
    assert cli.main(["score", "--config", str(config)]) == 0
    err = capsys.readouterr().err
    assert f"warning: {small_study_message(10, 'plackett_luce')}" in err.splitlines()
    assert cli.main(["stats", "--config", str(config)]) == 0
    text = capsys.readouterr().out
    top = [line for line in text.splitlines() if line.startswith("  item_")]
    assert len(top) == 5 and all("(\u2248\u00b1" in line for line in top)
    warnings = " ".join(text.split("Warnings:\n", 1)[1].split())
    assert small_study_message(10, "plackett_luce") in warnings


@pytest.mark.django_db
def test_without_a_limit_a_project_of_6_items_is_shown_plain(study, client):  # noqa: F811
    project, run = scored_run(study, method="bradley_terry")
    assert not any("simulations of studies" in m for m in run.diagnostics["messages"])
    user = manager(project)
    client.force_login(user)
    html = client.get(reverse("bws-dashboard", args=["mt"])).content.decode()
    for item_id in SYSTEMS:
        row = row_of(html, item_id)
        assert " to " in row and "only 6 items" not in row
