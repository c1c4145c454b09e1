"""The scores tab as a manager reads it: methods by their names, a note when answers arrived
after the scores shown, and a list of recent runs that says which scheme each scored."""

import re

import pytest
from django.urls import reverse

from bws import services
from bws.models import ScoreRun
from projects.models import Membership
from projects.tests.factories import UserFactory

from .test_runs import annotate, study  # noqa: F401  (fixture)

pytestmark = pytest.mark.django_db
RAW_NAMES = ("plackett_luce", "bradley_terry")


@pytest.fixture
def scored(study):  # noqa: F811
    from projects.services import import_project

    project = import_project(config_path=study / "config.yaml", slug="mt").project
    annotate(project, ["overall_quality"], n_users=3, per_user=20)
    ScoreRun.objects.all().delete()  # runs the answers queued: this test makes its own
    run = services.request_run(project=project, scheme="overall_quality", bootstrap=20)
    services.execute_run(run.pk)
    return project


@pytest.fixture
def page(client, scored):
    user = UserFactory(username="boss")
    Membership.objects.create(user=user, project=scored, role="manager")
    client.force_login(user)

    def get(**query):
        url = reverse("bws-dashboard", args=["mt"])
        return client.get(url, {"scheme": "overall_quality", **query}).content.decode()

    return get


def visible_text(html: str) -> str:
    """The page's text as a reader sees it: no tags, attributes or URLs."""
    body = html.split("<main>", 1)[1]
    body = re.sub(r"<(script|style)[^>]*>.*?</\1>", " ", body, flags=re.S)
    return re.sub(r"<[^>]+>", " ", body)


def test_methods_are_named_for_people(page):
    shown = visible_text(page())
    assert "Bradley-Terry" in shown
    missing = visible_text(page(method="plackett_luce"))
    assert "No Plackett-Luce scores yet for overall_quality" in missing
    for raw in RAW_NAMES:
        assert raw not in shown and raw not in missing


def test_a_queued_run_is_named_for_people(page, scored):
    services.request_run(project=scored, scheme="overall_quality", method="plackett_luce")
    text = visible_text(page())
    assert "A Plackett-Luce run is queued" in text
    assert "plackett_luce" not in text


def test_out_of_date_note_counts_the_answers_since_and_goes_after_a_run(page, scored):
    assert "data-stale" not in page()
    annotate(scored, ["overall_quality"], n_users=1, per_user=4, seed=5)
    ScoreRun.objects.exclude(status=ScoreRun.Status.OK).delete()  # nothing queued yet
    html = page()
    assert "data-stale" in html
    text = " ".join(visible_text(html).split())
    assert "Out of date: 4 answers arrived or changed since these Bradley-Terry scores" in text
    assert "Re-score to include them." in text

    queued = services.request_run(project=scored, scheme="overall_quality")
    text = " ".join(visible_text(page()).split())
    assert "Out of date: 4 answers" in text and "A Bradley-Terry run is queued." in text

    services.execute_run(queued.pk)
    assert "data-stale" not in page()


def test_recent_runs_name_their_scheme_and_align_their_counts(page):
    html = page()
    table = html.split("<h2>Recent runs</h2>", 1)[1].split("</table>", 1)[0]
    heads = re.findall(r"<th[^>]*>([^<]+)</th>", table)
    assert heads == ["Queued", "Scheme", "Method", "Trigger", "Status", "Judgments", "Finished"]
    assert '<th class="num">Judgments</th>' in table
    first_row = re.search(r"<tbody><tr>(.*?)</tr>", table, re.S).group(1)
    cells = re.findall(r"<td[^>]*>(.*?)</td>", first_row)
    assert cells[1] == "overall_quality" and cells[2] == "Bradley-Terry"
    assert re.search(r'<td class="num">60</td>', first_row)
