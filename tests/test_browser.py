"""A manager and an annotator use the site in Debian's chromium (Playwright); screenshots are
kept in test-artifacts/ for a person to look at."""

import os
import shutil
from pathlib import Path

import pytest
from django.conf import settings

from projects.models import Membership
from projects.services import add_lab_member, import_project
from projects.tests.factories import LabFactory, UserFactory

ARTIFACTS = Path(settings.BASE_DIR) / "test-artifacts"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def browser_page():
    if not Path(CHROMIUM).exists():
        if os.environ.get("REQUIRE_SERVICES") == "1":
            pytest.fail("REQUIRE_SERVICES=1 but chromium is not installed", pytrace=False)
        pytest.skip("needs Debian's chromium (apt-get install chromium)")
    # Playwright's sync API keeps an event loop in this thread; the ORM calls are still
    # plain synchronous calls made by the test itself.
    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=LAUNCH_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        yield page
        browser.close()


def log_in(page, base, username, password):
    page.goto(f"{base}/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()


def test_manager_and_annotator_pages(browser_page, live_server):
    page = browser_page
    lab = LabFactory(name="NLP Lab", slug="nlp")
    manager = UserFactory(username="maria")
    add_lab_member(lab=lab, user=manager, is_admin=True)
    annotator = UserFactory(username="anna")
    config = Path(settings.BASE_DIR) / "examples" / "mt_bws" / "config.yaml"
    project = import_project(config_path=config, lab=lab, owner=manager, slug="mt").project
    Membership.objects.create(user=annotator, project=project, role="annotator")

    log_in(page, live_server.url, "maria", "pw-for-tests-123")
    page.wait_for_url(f"{live_server.url}/")
    assert page.get_by_role("progressbar").count() == 1
    page.screenshot(path=ARTIFACTS / "home-manager.png", full_page=True)

    page.get_by_role("link", name=project.name).click()
    page.wait_for_url(f"{live_server.url}/projects/mt/")
    assert page.get_by_role("heading", name="Tuples").is_visible()
    assert page.get_by_text("tuple_000001").is_visible()
    page.screenshot(path=ARTIFACTS / "project-manager.png", full_page=True)

    page.goto(f"{live_server.url}/projects/new/")
    page.screenshot(path=ARTIFACTS / "project-create.png", full_page=True)
    page.get_by_role("button", name="Log out maria").click()

    log_in(page, live_server.url, "anna", "pw-for-tests-123")
    page.wait_for_url(f"{live_server.url}/")
    page.get_by_role("link", name=project.name).click()
    assert page.get_by_role("heading", name="What you will be asked").is_visible()
    assert page.get_by_text("tuple_000001").count() == 0
    page.screenshot(path=ARTIFACTS / "project-annotator.png", full_page=True)
