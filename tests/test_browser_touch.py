"""On a touch screen (a phone: Playwright's has_touch and is_mobile) the annotator pages
speak of tapping and dragging a finger, not of keys and clicks; with a mouse and keys the
key hints are there and the touch wording is not. Screenshots in test-artifacts/touch-*.png."""

import os
import shutil
from pathlib import Path

import pytest
from django.conf import settings

from projects.models import Membership
from projects.services import import_project
from projects.tests.factories import UserFactory

from .test_browser import ARTIFACTS, CHROMIUM, LAUNCH_ARGS, log_in
from .test_browser_timeline import timeline_project

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
__all__ = ["timeline_project"]  # the fixture, used below by name

DEVICES = {
    "desk": {"viewport": {"width": 1280, "height": 900}},
    "touch": {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True},
}


@pytest.fixture
def browser():
    if not Path(CHROMIUM).exists():
        if os.environ.get("REQUIRE_SERVICES") == "1":
            pytest.fail("REQUIRE_SERVICES=1 but chromium is not installed", pytrace=False)
        pytest.skip("needs Debian's chromium (apt-get install chromium)")
    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=LAUNCH_ARGS)
        yield browser
        browser.close()


def shown(page, selector: str) -> list[bool]:
    return [
        page.locator(selector).nth(n).is_visible() for n in range(page.locator(selector).count())
    ]


def open_as(browser, device, live_server, username, path):
    page = browser.new_context(**DEVICES[device]).new_page()
    log_in(page, live_server.url, username, "pw-for-tests-123")
    page.wait_for_url(f"{live_server.url}/")
    page.goto(f"{live_server.url}{path}")
    if "/instructions/" in page.url:  # a project's instructions come first, once
        page.get_by_role("link", name="Start").click()
    page.wait_for_selector("#annotate-form")
    return page


def test_best_worst_hints_by_device(browser, live_server, tmp_path):
    shutil.copytree(settings.BASE_DIR / "examples" / "mt_two_dims", tmp_path / "mt")
    config = tmp_path / "mt" / "config.yaml"
    project = import_project(config_path=config, slug="touch").project
    Membership.objects.create(user=UserFactory(username="tia"), project=project, role="annotator")
    path = "/projects/touch/annotate/"

    desk = open_as(browser, "desk", live_server, "tia", path)
    assert shown(desk, ".key-help") == [True]
    assert all(shown(desk, ".choice-label kbd")) and desk.locator(".choice-label kbd").count()
    assert not any(shown(desk, ".touch-help"))
    assert desk.get_by_text("Enter submits", exact=True).is_visible()

    phone = open_as(browser, "touch", live_server, "tia", path)
    assert phone.evaluate("matchMedia('(hover: none) and (pointer: coarse)').matches")
    assert not any(shown(phone, ".key-help")) and not any(shown(phone, ".choice-label kbd"))
    assert not phone.get_by_text("Enter submits", exact=True).is_visible()
    hint = phone.locator(".touch-help")
    assert hint.is_visible() and hint.inner_text().startswith(
        "Tap the best and the worst item for each question"
    )
    # and tapping chooses
    phone.locator('label[for="fluency-best-1"]').tap()
    assert phone.locator("#fluency-best-1").is_checked()
    # the screen only: a full-page capture drops the touch emulation while it draws
    phone.screenshot(path=ARTIFACTS / "touch-bws.png")


def test_timeline_hints_by_device(browser, live_server, timeline_project):
    desk = open_as(browser, "desk", live_server, "tess", "/projects/speech/annotate/")
    keys = desk.locator(".timeline-keys").first
    assert "Space" in keys.inner_text() and "click it to select it" in keys.inner_text()
    assert "finger" not in keys.inner_text()
    events = '.segment-timeline[data-for="events"]'
    desk.locator(f"{events} .timeline-play-segment").click()  # nothing selected yet
    assert "click it on the timeline" in desk.locator(f"{events} .timeline-status").inner_text()

    phone = open_as(browser, "touch", live_server, "tess", "/projects/speech/annotate/")
    keys = phone.locator(".timeline-keys").first
    words = keys.inner_text()
    assert (
        keys.is_visible()
        and "Hold a finger on the timeline a moment, then slide" in words
        and "tap it to select" in words
    )
    assert "Space" not in words and "click" not in words
    phone.locator(f"{events} .timeline-play-segment").tap()
    assert "tap it on the timeline" in phone.locator(f"{events} .timeline-status").inner_text()
    # as it says: a finger held a moment, then slid along the lane, marks a segment
    wave = phone.locator('.segment-timeline[data-for="events"] .timeline-wave').first
    wave.locator("canvas").first.wait_for()
    wave.scroll_into_view_if_needed()
    box = wave.locator('[part="wrapper"]').bounding_box()
    y, x0, x1 = box["y"] + box["height"] / 2, box["x"] + 10, box["x"] + box["width"] * 0.6
    touch = phone.context.new_cdp_session(phone)
    touch.send(
        "Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": x0, "y": y}]}
    )
    phone.wait_for_timeout(200)  # the timeline tells a slide from a page scroll by a hold
    for k in range(1, 13):
        point = {"x": x0 + (x1 - x0) * k / 12, "y": y}
        touch.send("Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": [point]})
    touch.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
    regions = phone.locator('.segment-timeline[data-for="events"] [part~="region"]')
    regions.first.wait_for()
    assert regions.count() == 1
    phone.screenshot(path=ARTIFACTS / "touch-timeline.png")  # the screen, as for touch-bws
