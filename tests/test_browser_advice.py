"""The BWS tab's advice on when to stop, as a manager sees it in chromium (Playwright);
screenshots in test-artifacts/."""

import shutil
from pathlib import Path

import numpy as np
import pytest
from django.conf import settings

from bws import services
from bws.tests.test_runs import annotate
from projects.models import Membership
from projects.services import import_project
from projects.tests.factories import UserFactory

from .test_browser import ARTIFACTS, browser_page, log_in  # noqa: F401  (fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def open_as_manager(page, live_server, project, query=""):
    """Log in as a manager of ``project`` and open its BWS tab (``query``: "?method=...")."""
    manager = UserFactory(username="lead")
    Membership.objects.create(user=manager, project=project, role="manager")
    log_in(page, live_server.url, "lead", "pw-for-tests-123")
    page.goto(f"{live_server.url}/projects/{project.slug}/bws/{query}")


def test_the_advice_card_states_when_to_stop_and_how(browser_page, live_server, tmp_path):  # noqa: F811
    page = browser_page
    shutil.copytree(Path(settings.BASE_DIR) / "examples" / "mt_bws", tmp_path / "mt")
    project = import_project(config_path=tmp_path / "mt" / "config.yaml", slug="mt").project
    annotate(project, ["overall_quality"], n_users=3, per_user=60)
    run = services.execute_run(
        services.request_run(project=project, scheme="overall_quality", bootstrap=0).pk
    )
    open_as_manager(page, live_server, project)
    card = page.locator("[data-advice]")
    assert card.get_attribute("data-advice") == run.advice["verdict"]
    assert card.locator("[data-statement]").inner_text() == run.advice["statement"]
    how = card.locator("details")
    assert not how.locator("li").first.is_visible()
    how.locator("summary").click()
    assert how.locator("li").first.is_visible()
    assert "Spearman-Brown" in how.inner_text()
    card.screenshot(path=ARTIFACTS / "bws-advice-card.png")
    page.screenshot(path=ARTIFACTS / "bws-dashboard-advice.png", full_page=True)


def annotated_adaptive_project(tmp_path, monkeypatch, slug, extra, *, answers):
    """An adaptive project (its ADAPTIVE block plus ``extra`` lines) answered by 3
    annotators up to ``answers`` units or the end of its design, batches designed at once."""
    from annotation.queue import next_unit
    from bws import adaptive
    from bws.tests.test_adaptive_platform import ADAPTIVE, answer, run_now, write_study

    monkeypatch.setattr(adaptive, "send_task", run_now)
    config, truth = write_study(tmp_path / "study", adaptive_block=ADAPTIVE + extra)
    project = import_project(config_path=config, slug=slug).project
    project.truth = truth
    rng = np.random.default_rng(1)
    users = [UserFactory(username=f"a{n}") for n in range(3)]
    for n in range(answers):
        unit = next_unit(project=project, user=users[n % 3])
        if unit is None:
            break  # the design is complete
        answer(project, users[n % 3], unit, rng)
    return project


def test_the_adaptive_design_card_lists_its_batches(
    browser_page,  # noqa: F811
    live_server,
    tmp_path,
    monkeypatch,
):
    from bws.models import TupleBatch

    page = browser_page
    project = annotated_adaptive_project(tmp_path, monkeypatch, "adaptive", "", answers=60)
    run = services.execute_run(
        services.request_run(project=project, scheme="quality", bootstrap=0).pk
    )
    open_as_manager(page, live_server, project)
    card = page.locator("[data-adaptive]")
    card.locator("summary").click()
    rows = card.locator("tr[data-batch]")
    assert rows.count() == TupleBatch.objects.filter(project=project).count() >= 2
    assert rows.first.inner_text().startswith("0")
    card.screenshot(path=ARTIFACTS / "bws-adaptive-card.png")
    # the advice's reliability is a range between the two split-halves' projections
    advice = page.locator("[data-advice]")
    assert advice.locator("[data-statement]").inner_text() == run.advice["statement"]
    figure = advice.locator("[data-range]")
    assert figure.is_visible()
    low, high = run.advice["reliability_next_low"], run.advice["reliability_next_high"]
    assert f"projected reliability between {low:.3f} and {high:.3f}" in figure.inner_text()
    advice.locator("summary").click()
    assert "reads low" in advice.locator("details").inner_text()
    advice.screenshot(path=ARTIFACTS / "bws-advice-card-adaptive.png")


def test_intervals_under_iterative_rounds_are_marked_approximate_on_the_page(
    browser_page,  # noqa: F811
    live_server,
    tmp_path,
    monkeypatch,
):
    page = browser_page
    project = annotated_adaptive_project(
        tmp_path, monkeypatch, "rounds", "        strategy: iterative\n", answers=80
    )
    services.execute_run(
        services.request_run(project=project, scheme="quality", method="plackett_luce").pk
    )
    open_as_manager(page, live_server, project, "?method=plackett_luce")
    assert "drawn inside score buckets (iterative rounds)" in page.content()
    marks = page.locator("td[data-approximate] abbr.undefined")
    assert marks.count() == 40
    assert "score buckets" in marks.first.get_attribute("title")
    page.screenshot(path=ARTIFACTS / "bws-dashboard-iterative.png", full_page=True)
    # Counting's intervals came out too wide there: marked too, with its own range.
    services.execute_run(
        services.request_run(project=project, scheme="quality", method="counting").pk
    )
    page.goto(f"{live_server.url}/projects/rounds/bws/?method=counting")
    said = " ".join(page.locator("body").inner_text().split())
    assert "Counting calibrated intervals called 95% covered 0.96-0.98" in said
    assert "missing the 0.93-0.97 band" in said
    assert page.locator("td[data-approximate] abbr.undefined").count() == 40
    page.screenshot(path=ARTIFACTS / "bws-dashboard-iterative-counting.png", full_page=True)


def test_a_top_k_target_says_its_answer_and_how_likely_it_is_right(
    browser_page,  # noqa: F811
    live_server,
    tmp_path,
    monkeypatch,
):
    page = browser_page
    project = annotated_adaptive_project(
        tmp_path, monkeypatch, "top", "        target: top_k\n        k: 0.1\n", answers=60
    )
    services.execute_run(services.request_run(project=project, scheme="quality").pk)
    open_as_manager(page, live_server, project)
    line = page.locator("[data-target='top_k']")
    said = " ".join(line.inner_text().split())
    assert said.startswith("Aimed at the top 4 items. Of the answer,")
    assert "Another 12 judgments aimed at it would raise these to about" in said
    answer = page.locator("[data-answer]")
    answer.locator("summary").click()
    rows = answer.locator("tbody tr")
    assert rows.count() == 4
    chances = [float(rows.nth(i).locator("td.num").inner_text()) for i in range(4)]
    assert chances == sorted(chances, reverse=True) and all(0 <= p <= 1 for p in chances)
    page.locator("[data-adaptive]").screenshot(path=ARTIFACTS / "bws-adaptive-top-k.png")


@pytest.mark.parametrize(
    "slug, extra, words, measured",
    [
        ("above", "        threshold: 0.5\n", "above a score", "0.94-0.97"),
        ("over", "        reference: i05\n", "above a reference item", "0.18-0.98"),
    ],
)
def test_intervals_after_a_threshold_target_are_marked_with_its_measured_coverage(
    browser_page,  # noqa: F811
    live_server,
    tmp_path,
    monkeypatch,
    slug,
    extra,
    words,
    measured,
):
    page = browser_page
    project = annotated_adaptive_project(
        tmp_path, monkeypatch, slug, "        target: threshold\n" + extra, answers=80
    )
    services.execute_run(
        services.request_run(project=project, scheme="quality", method="plackett_luce").pk
    )
    open_as_manager(page, live_server, project, "?method=plackett_luce")
    said = " ".join(page.locator("body").inner_text().split())
    assert f"aimed at the items {words} (adaptive batches)" in said
    assert f"Plackett-Luce calibrated intervals called 95% covered {measured}" in said
    marks = page.locator("td[data-approximate] abbr.undefined")
    assert marks.count() == 40
    assert words in marks.first.get_attribute("title")
    page.screenshot(path=ARTIFACTS / f"bws-dashboard-threshold-{slug}.png", full_page=True)
    page.locator("[data-adaptive]").screenshot(path=ARTIFACTS / f"bws-adaptive-{slug}.png")


def test_chosen_pairs_show_each_pairs_order_and_their_measured_coverage(
    browser_page,  # noqa: F811
    live_server,
    tmp_path,
    monkeypatch,
):
    """Six chosen pairs (enough for the pairs' own prior): the design tab lists each pair in
    the fit's order with the probability that the order is right, and the intervals are
    marked approximate with the coverage measured after linked pair batches."""
    page = browser_page
    pairs = "[[i01, i02], [i03, i30], [i04, i05], [i10, i11], [i20, i22], [i31, i33]]"
    project = annotated_adaptive_project(
        tmp_path, monkeypatch, "pairs",
        f"        target: comparisons\n        comparisons: {pairs}\n", answers=80,
    )  # fmt: skip
    services.execute_run(
        services.request_run(project=project, scheme="quality", method="plackett_luce").pk
    )
    open_as_manager(page, live_server, project, "?method=plackett_luce")
    said = " ".join(page.locator("body").inner_text().split())
    assert "aimed at chosen comparisons (adaptive batches)" in said
    assert "Plackett-Luce calibrated intervals called 95% covered 0.14-0.98" in said
    answer = page.locator("[data-answer]")
    answer.locator("summary").click()
    rows = answer.locator("tbody tr")
    assert rows.count() == 6
    shown = set()
    for n in range(6):
        first, second, chance = (c.inner_text() for c in rows.nth(n).locator("td").all())
        shown.add(frozenset((first, second)))
        assert 0.5 <= float(chance) <= 1.0  # the order shown is the likelier one
    assert shown == {
        frozenset(p) for p in [("i01", "i02"), ("i03", "i30"), ("i04", "i05"), ("i10", "i11"),
                               ("i20", "i22"), ("i31", "i33")]
    }  # fmt: skip
    trust = page.locator("[data-sure-pairs]")
    assert trust.is_visible()  # under the pairs, once they are open
    said = " ".join(trust.inner_text().split())
    assert "only 65-90% when they lay close" in said and "(20 pairs a study)" in said
    page.locator("[data-adaptive]").screenshot(path=ARTIFACTS / "bws-adaptive-pairs.png")


def test_a_threshold_the_scores_cannot_place_yet_gets_no_odds(
    browser_page,  # noqa: F811
    live_server,
    tmp_path,
    monkeypatch,
):
    from bws import adaptive

    page = browser_page
    project = annotated_adaptive_project(
        tmp_path, monkeypatch, "floor", "        target: threshold\n        threshold: 0.5\n",
        answers=40,
    )  # fmt: skip
    services.execute_run(services.request_run(project=project, scheme="quality").pk)
    # the prior at its floor: every score near 0, every sd near 0.13
    monkeypatch.setattr(adaptive, "fit_arrays", lambda run, n: (np.zeros(n), np.full(n, 0.13)))
    open_as_manager(page, live_server, project)
    line = " ".join(page.locator("[data-target='threshold']").inner_text().split())
    assert "The scores cannot yet place the items against the threshold" in line
    assert page.locator("[data-answer]").count() == 0
    page.locator("[data-adaptive]").screenshot(path=ARTIFACTS / "bws-adaptive-unplaced.png")


def test_a_participant_waits_for_the_next_batch_and_goes_on_by_itself(
    browser_page,  # noqa: F811
    live_server,
    tmp_path,
    settings,
    monkeypatch,
):
    """The queue of an adaptive study is empty while its next batch is being designed: a
    participant arriving then is asked to wait, not sent away, and the page goes on to a
    unit by itself once the batch is there."""
    from bws import adaptive, tasks
    from bws.tests.test_adaptive_waiting import annotator, answer_all, study

    page = browser_page
    sent = []
    monkeypatch.setattr(adaptive, "send_task", lambda name, *args, **kw: sent.append(name) or 1)
    project = study(tmp_path, settings)
    answer_all(project, [annotator(project, "first")], np.random.default_rng(1))
    assert sent  # the next batch was asked for; no worker has taken it yet
    page.goto(f"{live_server.url}/p/{project.slug}/start?PID=p9")
    assert page.locator("[data-waiting] h1").inner_text() == "One moment"
    page.screenshot(path=ARTIFACTS / "adaptive-waiting.png", full_page=True)
    tasks.design_batch_task.run(project.pk)
    page.wait_for_url("**/annotate/**", timeout=15_000)  # the Refresh header, no script
    assert page.locator("form").count() >= 1
    page.screenshot(path=ARTIFACTS / "adaptive-waiting-went-on.png", full_page=True)


@pytest.mark.paced
def test_the_design_card_says_when_a_fast_crowd_has_batches_designed_earlier(
    browser_page,  # noqa: F811
    live_server,
    tmp_path,
    monkeypatch,
):
    from django.core.cache import cache

    from bws import adaptive

    page = browser_page
    cache.clear()  # no lead or pace of another run's project (the cache outlives tests)
    project = annotated_adaptive_project(tmp_path, monkeypatch, "paced", "", answers=20)
    # the last batches took a minute from the request; 20 answers in the last minute would
    # use up 0.33 * 60 * 1.5 = 30 tuples meanwhile: the next batches are designed now
    cache.set(adaptive._lead_key(project.pk), 60.0)
    assert adaptive.maybe_queue_batch(project.pk)  # as the next answer asks: 20 open < 30
    open_as_manager(page, live_server, project)
    card = page.locator("[data-adaptive]")
    said = " ".join(card.inner_text().split())
    open_now = int(said.split("); ")[1].split(" still open")[0])
    assert open_now >= 30 and "tuples in 1 batch " not in said  # designed up to the margin
    # the batch just made counts half of the lead: half a minute and the design's own
    # seconds (0.25 tuple each), 15 tuples and a few more on a loaded machine now
    now = adaptive.design_status(project)["margin"]
    assert 15 <= now <= 18
    assert (
        f"designed from the latest scores when fewer than {now} are open (more than the 6 set, "
        "as the crowd answers faster than a batch is made)"
    ) in said
    card.screenshot(path=ARTIFACTS / "bws-adaptive-paced.png")
