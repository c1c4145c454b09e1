"""A manager and an annotator use the site in Debian's chromium (Playwright); screenshots are
kept in test-artifacts/ for a person to look at."""

import os
import shutil
from pathlib import Path

import pytest
from django.conf import settings

from annotation.models import Annotation
from projects.models import Membership, Unit
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


def test_annotator_works_three_tuples_with_the_keyboard(browser_page, live_server, tmp_path):
    page = browser_page
    example = Path(settings.BASE_DIR) / "examples" / "mt_two_dims"
    config = (example / "config.yaml").read_text()
    (tmp_path / "data").mkdir()
    for data in (example / "data").iterdir():
        (tmp_path / "data" / data.name).write_bytes(data.read_bytes())
    (tmp_path / "config.yaml").write_text(config + "\nmax_annotations_per_user: 3\n")
    project = import_project(config_path=tmp_path / "config.yaml", slug="two").project
    user = UserFactory(username="kim")
    Membership.objects.create(user=user, project=project, role="annotator")

    page.goto(f"{live_server.url}/accounts/login/?next=/projects/two/annotate/")
    page.keyboard.press("Tab")
    page.get_by_label("Username").focus()
    page.keyboard.type("kim")
    page.keyboard.press("Tab")
    page.keyboard.type("pw-for-tests-123")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    # The project's instructions come first, once; Start leads to the work.
    page.wait_for_url("**/projects/two/instructions/**")
    assert page.get_by_text("four machine translations").is_visible()
    page.get_by_role("link", name="Start").focus()
    with page.expect_navigation():
        page.keyboard.press("Enter")
    page.wait_for_url("**/projects/two/annotate/")

    seen = []
    for n in range(3):
        page.wait_for_selector("#annotate-form")
        seen.append(page.locator("#annotate-form").get_attribute("action"))
        page.keyboard.press("1")  # fluency: best A
        page.keyboard.press("w")  # fluency: worst B
        page.keyboard.press("3")  # adequacy: best C (the keys moved on by themselves)
        page.keyboard.press("q")  # adequacy: worst A
        if n == 0:
            page.screenshot(path=ARTIFACTS / "bws-keyboard.png", full_page=True)
        with page.expect_navigation():
            page.keyboard.press("Enter")
    assert page.get_by_role("heading", name="No more work for you here").is_visible()
    page.screenshot(path=ARTIFACTS / "bws-done.png", full_page=True)
    assert len(set(seen)) == 3

    answers = Annotation.objects.filter(annotator=user)
    assert answers.count() == 6
    for a in answers.select_related("unit__bws_tuple"):
        shown = a.unit.bws_tuple.item_ids  # randomize_order is off: stored order is shown
        expected = {"fluency": (shown[0], shown[1]), "adequacy": (shown[2], shown[0])}
        assert (a.value["best"], a.value["worst"]) == expected[a.scheme]

    # change the first answer: open it from the list, pick another best, save
    page.get_by_role(
        "link", name=Unit.objects.get(pk=seen[0].rstrip("/").split("/")[-1]).label
    ).click()
    page.wait_for_selector("text=changing an earlier answer")
    page.keyboard.press("4")  # with both schemes complete, keys act on the last one
    page.screenshot(path=ARTIFACTS / "bws-change.png", full_page=True)
    with page.expect_navigation():
        page.keyboard.press("Enter")
    first_unit = int(seen[0].rstrip("/").split("/")[-1])
    changed = Annotation.objects.get(annotator=user, unit_id=first_unit, scheme="adequacy")
    assert changed.value["best"] == changed.unit.bws_tuple.item_ids[3]
    assert Annotation.objects.filter(annotator=user).count() == 6


def test_bws_tab_draws_every_chart(browser_page, live_server, tmp_path):
    import shutil

    from bws import services
    from bws.tests.test_runs import annotate

    page = browser_page
    shutil.copytree(Path(settings.BASE_DIR) / "examples" / "mt_bws", tmp_path / "mt")
    project = import_project(config_path=tmp_path / "mt" / "config.yaml", slug="mt").project
    annotate(project, ["overall_quality"], n_users=4, per_user=100)
    services.execute_run(
        services.request_run(project=project, scheme="overall_quality", bootstrap=200).pk
    )
    manager = UserFactory(username="lead")
    Membership.objects.create(user=manager, project=project, role="manager")
    log_in(page, live_server.url, "lead", "pw-for-tests-123")
    page.goto(f"{live_server.url}/projects/mt/bws/")
    charts = page.locator("svg.chart-svg")
    assert charts.count() == 3
    for n, least in ((0, 4), (1, 1)):  # histogram and coverage: bars with a visible size
        boxes = charts.nth(n).locator("rect.bar")
        assert boxes.count() >= least
        assert boxes.first.bounding_box()["height"] > 0
    line = page.locator("svg[data-chart=convergence] polyline.line-rho")
    assert len(line.get_attribute("points").split()) == 10
    assert line.bounding_box()["width"] > 100
    assert page.locator("[data-figure=split-half]").inner_text().startswith("r = ")
    assert page.locator("table.ranked tbody tr").count() == 50
    assert page.locator("svg.ci").count() == 50
    page.screenshot(path=ARTIFACTS / "bws-dashboard.png", full_page=True)


def test_choosing_worst_on_the_best_item_says_what_happened(browser_page, live_server, tmp_path):
    """One item cannot be both: choosing it as worst moves it there and the page says so
    (a status line), rather than clearing best without a word."""
    page = browser_page
    example = Path(settings.BASE_DIR) / "examples" / "mt_bws"
    (tmp_path / "data").mkdir()
    for data in (example / "data").iterdir():
        (tmp_path / "data" / data.name).write_bytes(data.read_bytes())
    (tmp_path / "config.yaml").write_text((example / "config.yaml").read_text())
    project = import_project(config_path=tmp_path / "config.yaml", slug="moved").project
    user = UserFactory(username="lee")
    Membership.objects.create(user=user, project=project, role="annotator")
    page.goto(f"{live_server.url}/accounts/login/?next=/projects/moved/annotate/")
    page.get_by_label("Username").fill("lee")
    page.get_by_label("Password").fill("pw-for-tests-123")
    with page.expect_navigation():
        page.get_by_role("button", name="Log in").click()
    page.wait_for_selector("#annotate-form")
    page.keyboard.press("2")  # best: B
    page.keyboard.press("w")  # worst: B as well
    best = page.locator('input[name="overall_quality__best"]:checked')
    worst = page.locator('input[name="overall_quality__worst"]:checked')
    assert best.count() == 0 and worst.count() == 1
    status = page.locator("#choice-status")
    assert status.inner_text() == (
        "Item B was your best choice for overall_quality; it is now worst, so choose another best."
    )
    page.screenshot(path=ARTIFACTS / "bws-moved.png", full_page=True)
