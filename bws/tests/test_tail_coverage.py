"""The items estimated in the outer tenths carry the coverage measured for such items:
a mark and a note on the dashboard's ranked table, a field of the API's score rows."""

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from bws.core import tail_coverage
from bws.core.tail_coverage import Measured, OuterCuts

from .test_run_diagnostics import manager, row_of, scored_run, split_study  # noqa: F401
from .test_runs import study  # noqa: F401  (fixture)

FAKE = Measured(estimate=(0.411, 0.422), truth=(0.433, 0.444), heavy=(0.455, 0.466))


def test_the_outer_tenths_are_marked_with_the_module_figures(monkeypatch):
    monkeypatch.setitem(tail_coverage.MEASURED, "plackett_luce", {4: FAKE, 16: FAKE})
    cuts = OuterCuts.of("plackett_luce", [float(s) for s in range(20)] + [None])
    assert (cuts.low, cuts.high) == (1.0, 18.0)  # two of 20 on each side
    low, high = cuts.mark(0.0, 15), cuts.mark(19.0, 15)
    assert (low.side, high.side) == ("lowest", "highest")
    assert high.appearances == 16 and cuts.mark(1.0, 5).appearances == 4  # the nearest
    assert "covered 0.42" in high.note and "covered 0.44 (0.47 with heavy-tailed" in high.note
    assert "covered 0.41" in low.note and "covered 0.43 (0.46" in low.note
    assert high.as_dict()["coverage_by_truth"] == 0.444
    for middle in (2.0, 10.0, 17.0):
        assert cuts.mark(middle, 15) is None
    assert cuts.mark(None, 15) is None
    # Too few items for a tenth, or a method without figures: no mark.
    assert OuterCuts.of("plackett_luce", [1.0] * 9).mark(1.0, 8) is None
    assert OuterCuts.of("bootstrap_only", range(20)).mark(0.0, 8) is None


def test_every_method_has_figures_at_every_simulated_appearance():
    for method in ("counting", "bradley_terry", "plackett_luce"):
        assert set(tail_coverage.MEASURED[method]) == set(tail_coverage.APPEARANCES)
        for found in tail_coverage.MEASURED[method].values():
            assert all(0.5 < x <= 1.0 for x in found.estimate + found.truth + found.heavy)


@pytest.mark.django_db
def test_dashboard_and_api_mark_the_outer_items_only(split_study, client, monkeypatch):  # noqa: F811
    monkeypatch.setitem(tail_coverage.MEASURED, "bradley_terry", {8: FAKE})
    project, run = scored_run(split_study)  # 12 items: one a side is in the outer tenth
    ranked = list(run.item_scores.order_by("score").values_list("item_id", flat=True))
    lowest, highest, middle = ranked[0], ranked[-1], ranked[1:-1]
    user = manager(project)
    client.force_login(user)
    html = client.get(reverse("bws-dashboard", args=["mt"])).content.decode()
    assert 'data-tail="highest"' in row_of(html, highest) and "†" in row_of(html, highest)
    assert 'data-tail="lowest"' in row_of(html, lowest)
    assert "covered 0.42; those of the 10% most extreme in truth covered 0.44" in html
    for item in middle:
        assert "†" not in row_of(html, item) and "data-tail=" not in row_of(html, item)
    note = html.split("data-tail-note>", 1)[1].split("</p>", 1)[0]
    assert "covered 0.41 and 0.42" in note and "0.43 and 0.44 (0.46 and 0.47" in note

    api = APIClient()
    api.force_authenticate(user)
    items = api.get("/api/v1/projects/mt/scores/", {"scheme": "overall_quality"}).json()
    by_id = {item["item_id"]: item for item in items["items"]}
    assert by_id[highest]["interval_tail"]["side"] == "highest"
    assert by_id[highest]["interval_tail"]["coverage_by_truth"] == 0.444
    assert by_id[lowest]["interval_tail"]["coverage_by_truth_heavy_tailed"] == 0.455
    assert all(by_id[item]["interval_tail"] is None for item in middle)
