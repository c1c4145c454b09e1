"""The dashboard's rank inference in a browser: the top-k card and the rank ranges in the
table, with no sideways scroll at 390 px (screenshots in test-artifacts/ranks-*.png)."""

import pytest

from bws.tests.test_dashboard import scored  # noqa: F401 - the fixture
from bws.tests.test_runs import study  # noqa: F401 - the fixture
from projects.models import Membership
from projects.tests.factories import UserFactory
from tests.test_browser import ARTIFACTS, browser_page, log_in  # noqa: F401 - the fixture

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_top_k_card_and_rank_ranges(browser_page, live_server, scored):  # noqa: F811
    page = browser_page
    user = UserFactory(username="rita")
    Membership.objects.create(user=user, project=scored, role=Membership.Role.MANAGER)
    log_in(page, live_server.url, "rita", "pw-for-tests-123")
    page.wait_for_url(f"{live_server.url}/")
    page.goto(f"{live_server.url}/projects/mt/bws/")
    card = page.locator("[data-top-k]")
    assert card.get_by_role("heading").inner_text().endswith("with 95% confidence")
    assert page.locator(".rank-span").count() >= 6
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        wide = page.evaluate("document.documentElement.scrollWidth")
        assert wide <= width, f"the dashboard is {wide} px wide at {width} px"
        card.screenshot(path=ARTIFACTS / f"ranks-top-k-{width}.png")
        page.locator("table.ranked").screenshot(path=ARTIFACTS / f"ranks-table-{width}.png")
    # a pairwise question from the card's form
    page.set_viewport_size({"width": 390, "height": 900})
    page.get_by_label("Is one item above another?", exact=False).fill("sys_a, sys_f, sys_c")
    page.get_by_role("button", name="Compare").click()
    table = page.get_by_role("table", name="Pairwise questions")
    assert table.locator("tbody tr").count() == 3
    assert "sys_a is above" in table.inner_text()
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.locator("[data-top-k]").screenshot(path=ARTIFACTS / "ranks-compare-390.png")
