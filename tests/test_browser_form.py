"""An annotator fills in every kind of field in Debian's chromium, leaves one box's width
empty and submits: the page comes back refused with everything typed still there and the
empty cell marked; filling it in and submitting again stores the answers. The refused page
is kept in test-artifacts/ for a person to look at."""

import json

import pytest

from annotation.models import Annotation
from annotation.tests.test_annotate_pages import ALL_SCHEMES
from projects.models import Membership
from projects.services import import_project
from projects.tests.factories import UserFactory

from .test_browser import ARTIFACTS, browser_page, log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
__all__ = ["browser_page"]  # the fixture, used below by name

BOXES = [  # as typed: x, y, z, length, width, height, yaw, label
    ("1.50", "0", "-2", "4", "2", "1.5", "0.1", "car"),
    ("7", "8", "9", "3", "", "1", "", "truck"),
]


def fill_everything(page):
    page.locator('input[name="topic"][value="politics"]').check()
    page.locator('input[name="tags"][value="funny"]').check()
    page.locator('input[name="tags"][value="long"]').check()
    page.locator('input[name="quality"][value="4"]').check()
    page.locator('textarea[name="note"]').fill("Two cars, one half hidden.\nSecond line.")
    page.locator('input[name="steps__step__0"][value="bad"]').check()
    page.locator('input[name="steps__step__1"][value="good"]').check()
    page.get_by_role("button", name="Add segment").click()  # the table starts with no row
    page.locator('input[name="speech__start"]').first.fill("0.5")
    page.locator('input[name="speech__end"]').first.fill("2.25")
    page.locator('select[name="speech__label"]').first.select_option("laugh")
    page.locator('select[name="speech__tier"]').first.select_option("B")
    for n, box in enumerate(BOXES):
        page.get_by_role("button", name="Add box").click()
        for key, text in zip(("cx", "cy", "cz", "l", "w", "h", "yaw"), box[:7], strict=True):
            page.locator(f'input[name="boxes__{key}"]').nth(n).fill(text)
        page.locator('select[name="boxes__label"]').nth(n).select_option(box[7])


def test_a_refused_form_keeps_everything_typed(browser_page, live_server, tmp_path):
    page = browser_page
    rows = [
        {"id": f"doc{n}", "text": f"Document {n}", "media_url": "/static/none.mp4",
         "steps": [{"action": "search", "result": "ok"}, {"action": "click"}]}
        for n in range(2)
    ]  # fmt: skip
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "c.yaml").write_text(ALL_SCHEMES)
    project = import_project(config_path=tmp_path / "c.yaml", slug="forms").project
    user = UserFactory(username="lena")
    Membership.objects.create(user=user, project=project, role="annotator")

    log_in(page, live_server.url, "lena", "pw-for-tests-123")
    page.wait_for_url(f"{live_server.url}/")
    page.goto(f"{live_server.url}/projects/forms/annotate/")
    # no empty row until one is added
    assert page.locator('input[name="boxes__cx"]').count() == 0
    assert page.locator('table[data-rows="boxes"]').is_hidden()
    fill_everything(page)
    with page.expect_navigation() as navigation:
        page.get_by_role("button", name="Submit").click()
    assert navigation.value.status == 400
    assert not Annotation.objects.exists()

    # the message, on top and under the row at fault, which is marked
    assert page.get_by_role("alert").is_visible()
    message = page.locator("#boxes-row-2-error")
    assert message.is_visible()
    assert message.inner_text() == "Box 2: the width is empty; fill in a number"
    rows = page.locator('table[data-rows="boxes"] tr.data-row')
    assert rows.count() == 2  # the two typed, and no empty one
    bad = rows.nth(1)
    assert bad.get_attribute("aria-invalid") == "true"
    assert "row-invalid" in bad.get_attribute("class")
    assert bad.get_attribute("aria-describedby") == "boxes-row-2-error"
    assert rows.nth(0).get_attribute("aria-invalid") is None
    # the message sits right under its row
    below = bad.locator("xpath=following-sibling::tr[1]")
    assert below.get_attribute("class") == "row-error-message"
    assert below.bounding_box()["y"] >= bad.bounding_box()["y"] + bad.bounding_box()["height"] - 1
    width = page.locator('input[name="boxes__w"]').nth(1)
    assert width.get_attribute("aria-invalid") == "true"
    assert width.get_attribute("aria-describedby") == "boxes-row-2-error"
    assert page.locator('[aria-invalid="true"]').count() == 2  # the row and its cell
    page.screenshot(path=ARTIFACTS / "annotate-refused-row-marked.png", full_page=True)

    # nothing typed was lost
    page.screenshot(path=ARTIFACTS / "annotate-refused-keeps-input.png", full_page=True)
    assert page.locator('input[name="topic"][value="politics"]').is_checked()
    assert [c.is_checked() for c in page.locator('input[name="tags"]').all()] == [
        True,
        False,
        True,
    ]
    assert page.locator('input[name="quality"][value="4"]').is_checked()
    assert page.locator('textarea[name="note"]').input_value() == (
        "Two cars, one half hidden.\nSecond line."
    )
    assert page.locator('input[name="steps__step__0"][value="bad"]').is_checked()
    assert page.locator('input[name="steps__step__1"][value="good"]').is_checked()
    assert page.locator('input[name="speech__start"]').first.input_value() == "0.5"
    assert page.locator('input[name="speech__end"]').first.input_value() == "2.25"
    assert page.locator('select[name="speech__label"]').first.input_value() == "laugh"
    assert page.locator('select[name="speech__tier"]').first.input_value() == "B"
    assert page.locator('select[name="boxes__label"]').count() == 2  # the two typed
    for n, box in enumerate(BOXES):
        for key, text in zip(("cx", "cy", "cz", "l", "w", "h", "yaw"), box[:7], strict=True):
            assert page.locator(f'input[name="boxes__{key}"]').nth(n).input_value() == text
        assert page.locator('select[name="boxes__label"]').nth(n).input_value() == box[7]

    # the missing width, and the page takes the answers
    width.fill("2.5")
    with page.expect_navigation() as navigation:
        page.get_by_role("button", name="Submit").click()
    assert navigation.value.status == 200
    stored = dict(Annotation.objects.filter(annotator=user).values_list("scheme", "value"))
    assert [box["size"] for box in stored["boxes"]] == [[4.0, 2.0, 1.5], [3.0, 2.5, 1.0]]
    assert stored["speech"] == [{"start": 0.5, "end": 2.25, "label": "laugh", "tier": "B"}]
    # (a browser sends a textarea's line breaks as CR LF)
    assert stored["note"].replace("\r\n", "\n") == "Two cars, one half hidden.\nSecond line."
    assert stored["topic"] == "politics" and stored["steps"] == {"0": "bad", "1": "good"}
