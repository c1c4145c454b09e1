"""A lab manager opens the demo's agreement report in Debian's chromium; the screenshot is
kept in test-artifacts/agreement_iaa.png for a person to look at."""

from io import StringIO

import pytest
from django.core.management import call_command

from tests.test_browser import ARTIFACTS, browser_page, log_in  # noqa: F401

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_manager_reads_and_recomputes_the_demo_report(browser_page, live_server):  # noqa: F811
    call_command("load_demo", stdout=StringIO())
    page = browser_page
    log_in(page, live_server.url, "admin", "annolab-admin")
    page.goto(f"{live_server.url}/projects/agreement-demo/admin/iaa")
    assert page.get_by_role("heading", name="Inter-annotator agreement").is_visible()
    assert page.get_by_text("Model judge against people").is_visible()
    page.screenshot(path=ARTIFACTS / "agreement_iaa.png", full_page=True)
    page.get_by_role("button", name="Recompute now").click()
    assert page.get_by_text("Agreement recomputed").is_visible()
