"""A run's diagnostics reach the user: stored with the run, a warning box and marked
intervals on the dashboard, and the run and scores payloads of the API."""

import json
import re

import numpy as np
import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from bws import selectors, services
from bws.core.diagnostics import diagnose
from projects.models import Membership
from projects.services import import_project
from projects.tests.factories import UserFactory

from .test_runs import annotate, study  # noqa: F401  (fixture)

pytestmark = pytest.mark.django_db


@pytest.fixture
def split_study(study):  # noqa: F811
    """The MT example with every second sentence translated by other systems (alt_a ...
    alt_f): tuples are drawn within sentences, so the two sets of systems never meet."""
    path = study / "data" / "mt_tuples.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    for number, record in enumerate(records):
        if number % 2:
            for translation in record["translations"]:
                translation["id"] = translation["id"].replace("sys_", "alt_")
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    (study / "tuples.jsonl").unlink(missing_ok=True)
    return study


def scored_run(folder, method="bradley_terry"):
    project = import_project(config_path=folder / "config.yaml", slug="mt").project
    annotate(project, ["overall_quality"], n_users=3, per_user=40)
    run = services.request_run(
        project=project, scheme="overall_quality", method=method, bootstrap=100
    )
    return project, services.execute_run(run.pk)


def manager(project):
    user = UserFactory(username="boss")
    Membership.objects.create(user=user, project=project, role="manager")
    return user


GROUPS = (
    "2 separate groups of items (6 and 6 items): no tuple links one group to another, "
    "so scores (and ranks) are comparable only within a group."
)


def test_a_disconnected_design_warns_on_the_dashboard_and_in_the_api(split_study, client):
    project, run = scored_run(split_study)
    assert run.diagnostics["component_sizes"] == [6, 6]
    assert GROUPS in run.diagnostics["messages"]
    assert GROUPS in " ".join(run.stats_text.split())  # wrapped in the stats text
    user = manager(project)
    client.force_login(user)
    html = client.get(reverse("bws-dashboard", args=["mt"])).content.decode()
    box = html.split("data-diagnostics", 1)[1].split("</section>", 1)[0]
    assert "Read these scores with care" in box and GROUPS in box
    # The box comes before the charts and the ranked table.
    assert html.index("data-diagnostics") < html.index("Ranked items")
    assert html.index("data-diagnostics") < html.index('data-chart="bars"')
    # Each ranked item names its group; the two sets of systems are in different ones.
    table = html.split("Ranked items", 1)[1]
    assert "<th title=" in table and ">Group</th>" in table
    found = re.findall(r"<td>(\d)</td>\s*<td><code>(\w+)</code>", table)
    groups = {item: int(group) for group, item in found}
    assert len(groups) == 12
    assert len({groups[f"sys_{c}"] for c in "abcdef"}) == 1
    assert {groups["sys_a"], groups["alt_a"]} == {1, 2}

    api = APIClient()
    api.force_authenticate(user)
    data = api.get("/api/v1/projects/mt/scores/", {"scheme": "overall_quality"}).json()
    assert GROUPS in data["diagnostics"]["messages"]
    assert data["diagnostics"]["group_sizes"] == [6, 6]
    by_id = {item["item_id"]: item for item in data["items"]}
    assert {by_id["sys_b"]["group"], by_id["alt_b"]["group"]} == {1, 2}
    polled = api.get(f"/api/v1/projects/mt/scores/runs/{run.pk}/").json()
    assert polled["diagnostics"]["messages"] == data["diagnostics"]["messages"]


def row_of(html, item_id):
    return html.split(f"<code>{item_id}</code>", 1)[1].split("</tr>", 1)[0]


def test_separated_items_and_zero_width_intervals_read_as_approximate(study, client):  # noqa: F811
    # annotate() prefers sys_a to every other system and sys_f least: sys_a is chosen
    # best every time it is shown, sys_f worst.
    project, run = scored_run(study, method="counting")
    user = manager(project)
    client.force_login(user)
    url = reverse("bws-dashboard", args=["mt"])
    html = client.get(url, {"method": "counting"}).content.decode()
    assert "1 item was chosen best and 1 item was chosen worst every time" in html
    assert "(+1 or -1)" in html
    row = row_of(html, "sys_a")
    assert '<abbr class="undefined" title="Approximate interval: ' in row
    assert 'chosen best every time it was shown.">≈' in row
    # An item with a proper interval shows its range, unmarked.
    row = row_of(html, "sys_c")
    assert " to " in row and "≈" not in row

    # A zero-width interval (what a bootstrap gives when every resample agrees) is shown
    # as approximate, never as a range from a number to itself.
    c = run.item_scores.get(item_id="sys_c")
    run.item_scores.filter(pk=c.pk).update(ci_low=c.score, ci_high=c.score)
    ends = run.item_scores.values_list("item_index", "ci_low", "ci_high")
    low, high = np.full(6, np.nan), np.full(6, np.nan)
    for index, lo, hi in ends:
        low[index], high[index] = lo, hi
    judgments = selectors.judgments_for(project, "overall_quality")
    run.diagnostics = diagnose(judgments, method="counting", low=low, high=high).to_dict()
    run.save(update_fields=["diagnostics"])
    html = client.get(url, {"method": "counting"}).content.decode()
    row = row_of(html, "sys_c")
    note = "Approximate interval: zero width, which is not certainty."
    assert f'<abbr class="undefined" title="{note}">≈ no spread</abbr>' in row
    assert f"{c.score:.2f} to {c.score:.2f}" not in row

    api = APIClient()
    api.force_authenticate(user)
    data = api.get("/api/v1/projects/mt/scores/", {"method": "counting"}).json()
    by_id = {item["item_id"]: item for item in data["items"]}
    assert by_id["sys_a"]["interval_approximate"] is True
    assert "chosen best every time" in by_id["sys_a"]["interval_note"]
    assert by_id["sys_a"]["separated"] == "best" and by_id["sys_f"]["separated"] == "worst"
    assert by_id["sys_c"]["interval_approximate"] is True
    assert by_id["sys_c"]["interval_note"] == note
    assert by_id["sys_b"]["interval_approximate"] is False
    assert by_id["sys_b"]["interval_note"] is None and by_id["sys_b"]["group"] is None
