"""Gold units in the browser: an annotator's training with feedback after each answer and
the result, and the managers' quality page with a likely random clicker and an
exclusion (chromium via Playwright; screenshots in test-artifacts/)."""

import json

import numpy as np
import pytest

from annotation.answers import submit_answers
from annotation.queue import next_unit
from crowds import gold
from projects.models import Membership
from projects.services import import_project
from projects.tests.factories import UserFactory
from tests.test_browser import ARTIFACTS, browser_page, log_in  # noqa: F401 - the fixture

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

N_ITEMS = 16
CONFIG = """task_name: Funniest headline
data_files: [items.jsonl]
annotation_schemes:
  - name: funny
    annotation_type: best_worst_scaling
    description: Which headline is the funniest, which the least funny?
    tuple_size: 4
    tuple_generation: {tuples_per_item: 12, seed: 3}
gold:
  file: gold.jsonl
  attention_rate: 0.1
  training:
    units: 3
    pass_threshold: 0.67
"""


def make_project(tmp_path):
    (tmp_path / "items.jsonl").write_text(
        "".join(f'{{"id": "h{n:02d}", "text": "Headline {n}"}}\n' for n in range(N_ITEMS))
    )
    records = []
    for k in range(8):
        ids = [f"h{(k + 3 * j) % N_ITEMS:02d}" for j in range(4)]
        records.append({"items": ids, "best": max(ids), "worst": min(ids)})
    (tmp_path / "gold.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (tmp_path / "c.yaml").write_text(CONFIG)
    return import_project(config_path=tmp_path / "c.yaml", slug="funny").project


def test_training_feedback_and_the_quality_page(browser_page, live_server, tmp_path):  # noqa: F811
    page = browser_page
    project = make_project(tmp_path)
    trainee = UserFactory(username="tess")
    Membership.objects.create(project=project, user=trainee, role="annotator")

    log_in(page, live_server.url, "tess", "pw-for-tests-123")
    page.goto(f"{live_server.url}/projects/funny/annotate/")
    page.wait_for_url("**/projects/funny/training/")
    assert page.get_by_text("Training 1 of 3").is_visible()
    page.screenshot(path=ARTIFACTS / "gold-training-question.png", full_page=True)
    for n in range(3):
        page.wait_for_selector("#annotate-form")
        page.keyboard.press("1")
        page.keyboard.press("w")
        with page.expect_navigation():
            page.keyboard.press("Enter")
        assert page.get_by_text("The best was").is_visible()
        if n == 0:
            page.screenshot(path=ARTIFACTS / "gold-training-feedback.png", full_page=True)
        page.locator("a.button").click()
        page.wait_for_load_state()
    status = gold.training_result(project, trainee).status
    verdict = "You passed" if status == gold.TrainingStatus.PASSED else "Thank you"
    assert page.get_by_text(verdict).is_visible()
    page.screenshot(path=ARTIFACTS / "gold-training-result.png", full_page=True)

    # Five more annotators: three attentive, one clicking at random, one answering backwards.
    rng = np.random.default_rng(5)
    project.config = {**project.config, "gold": {**project.config["gold"], "training_units": 0}}
    project.save()
    for name in ("ana", "ben", "cai", "dot", "eve"):
        user = UserFactory(username=name)
        Membership.objects.create(project=project, user=user, role="annotator")
        for turn in range(40):
            unit = next_unit(project=project, user=user)
            ids = sorted(unit.item_ids)
            if name == "dot":
                # In turn with the others and backwards: the agreement of chance, without
                # the luck of a random draw (which a 5% test flags wrongly one run in twenty).
                best, worst = (ids[-1], ids[0]) if turn % 2 else (ids[0], ids[-1])
            elif name == "eve":
                best, worst = ids[0], ids[-1]
            else:
                best, worst = ids[-1], ids[0]
            submit_answers(
                project=project,
                user=user,
                unit_id=unit.pk,
                answers={"funny": {"best": str(best), "worst": str(worst)}},
                time_taken_ms=int(rng.integers(2000, 9000)),
            )
    manager = UserFactory(username="mia")
    Membership.objects.create(project=project, user=manager, role="manager")
    page.context.clear_cookies()
    log_in(page, live_server.url, "mia", "pw-for-tests-123")
    page.goto(f"{live_server.url}/projects/funny/quality/")
    rows = page.locator("table.quality tbody tr")
    assert rows.count() == 7
    dot = rows.filter(has_text="dot")
    assert dot.get_by_text("likely random").is_visible()
    assert rows.filter(has_text="ana").get_by_text("likely random").count() == 0
    assert rows.filter(has_text="eve").get_by_text("reversed?").is_visible()
    page.screenshot(path=ARTIFACTS / "gold-quality.png", full_page=True)
    # Exclude is a row's quiet action, outlined, not the page's filled blue button
    exclude = dot.get_by_role("button", name="Exclude")
    style = "b => { const s = getComputedStyle(b); return [s.backgroundColor, s.borderTopWidth]; }"
    assert exclude.evaluate(style) == ["rgb(255, 255, 255)", "1px"]
    # It asks first: answering Cancel leaves everything as it was
    questions = []

    def answer(dialog, accept):
        questions.append(dialog.message)
        dialog.accept() if accept else dialog.dismiss()

    page.once("dialog", lambda dialog: answer(dialog, False))
    exclude.click()
    page.wait_for_timeout(300)
    assert questions and questions[0].startswith("Leave dot out?")
    assert not Membership.objects.get(user__username="dot").excluded
    page.once("dialog", lambda dialog: answer(dialog, True))
    with page.expect_navigation():
        exclude.click()
    assert page.get_by_text("dot is left out").is_visible()
    assert Membership.objects.get(user__username="dot").excluded
    page.screenshot(path=ARTIFACTS / "gold-quality-excluded.png", full_page=True)
