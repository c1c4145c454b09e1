"""A crowd participant on a phone: the panel's link, the consent to tick, the instructions,
two units, the completion code and the way back to the panel; the same link again resumes.
The two other endings too: no more work before the quota (the partial code, never the
completion code) and screened out by a failed training (the screen-out code); the manager
sees each outcome in the participants list (chromium via Playwright; screenshots at 390 px
and 1280 px in test-artifacts/)."""

import pytest

from annotation.models import Annotation
from crowds.models import Participant
from projects.models import Membership
from projects.services import import_project
from projects.tests.factories import UserFactory
from tests.test_browser import ARTIFACTS, browser_page, log_in  # noqa: F401 - the fixture

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CONFIG = """task_name: Politeness of replies
data_files: [d.jsonl]
instructions: |
  # How to judge

  Read the reply, then say whether it is **polite**.
annotation_schemes:
  - annotation_type: radio
    name: polite
    description: Is this reply polite?
    labels: [polite, not_polite]
participants:
  open_link: true
  id_param: PROLIFIC_PID
  units_per_participant: 2
  completion_code: "C1A2B3"
  completion_url: "{base}/panel-complete?cc=C1A2B3"
  consent: |
    **Consent.** Your answers are stored without your name and used for research only.
    You may stop at any time.
"""
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}


def as_manager(page, live_server, project) -> None:
    """Log the browser in as a new manager of the project and open its participants list."""
    manager = UserFactory(username="mona")
    Membership.objects.create(user=manager, project=project, role=Membership.Role.MANAGER)
    page.context.clear_cookies()
    log_in(page, live_server.url, "mona", "pw-for-tests-123")
    page.wait_for_url(f"{live_server.url}/")
    page.goto(f"{live_server.url}/projects/{project.slug}/#participants")


def shoot(page, name: str) -> None:
    """The page at phone width and at desktop width, nothing wider than the window."""
    for size, suffix in ((PHONE, "390"), (DESKTOP, "1280")):
        page.set_viewport_size(size)
        wide = page.evaluate("document.documentElement.scrollWidth")
        assert wide <= size["width"], f"{name} is {wide} px wide at {size['width']} px"
        page.screenshot(path=ARTIFACTS / f"participant-{name}-{suffix}.png", full_page=True)
    page.set_viewport_size(PHONE)


def test_a_participant_from_the_panel_to_the_completion_code(browser_page, live_server, tmp_path):  # noqa: F811
    page = browser_page
    page.set_viewport_size(PHONE)
    (tmp_path / "d.jsonl").write_text(
        "".join(f'{{"id": "r{n}", "text": "Reply number {n}: thanks a lot!"}}\n' for n in range(4))
    )
    (tmp_path / "c.yaml").write_text(CONFIG.replace("{base}", live_server.url))
    project = import_project(config_path=tmp_path / "c.yaml", slug="polite").project
    link = f"{live_server.url}/p/polite/start?PROLIFIC_PID=5f1e9a&STUDY_ID=s7&SESSION_ID=q1"

    page.goto(f"{live_server.url}/p/polite/start?STUDY_ID=s7")
    assert page.get_by_role("heading", name="Your participant id is missing").is_visible()
    shoot(page, "missing-id")

    page.goto(link)
    page.wait_for_url("**/p/polite/consent/")
    assert page.get_by_text("Your answers are stored without your name").is_visible()
    assert page.get_by_role("link", name="My projects").count() == 0
    shoot(page, "consent")
    page.get_by_label("I have read the text above and agree to take part.").check()
    page.get_by_role("button", name="Continue").click()

    page.wait_for_url("**/projects/polite/instructions/")
    assert page.get_by_role("heading", name="How to judge").is_visible()
    shoot(page, "instructions")
    page.get_by_role("link", name="Start").click()

    page.wait_for_url("**/projects/polite/annotate/*/")
    shoot(page, "unit")
    first_unit = page.url
    page.get_by_label("polite", exact=True).check()
    page.get_by_role("button", name="Submit").click()
    page.wait_for_url(lambda url: url != first_unit and "/annotate/" in url)
    # Straight on to the next unit, which says the answer was kept.
    assert page.locator("ul.messages").inner_text().strip() == "Saved."
    shoot(page, "unit-saved")

    # The same link again (another tab, a reload from the panel) resumes at the unit in hand.
    second_unit = page.url
    page.goto(link)
    page.wait_for_url(second_unit)
    assert Participant.objects.count() == 1

    # Other pages of the site lead back to the study.
    page.goto(f"{live_server.url}/")
    page.wait_for_url(lambda url: "/projects/polite/annotate/" in url)

    page.get_by_label("not_polite").check()
    page.get_by_role("button", name="Submit").click()
    page.wait_for_url("**/p/polite/done/")
    assert page.locator("#completion-code").inner_text() == "C1A2B3"
    back = page.get_by_role("link", name="Return to the panel")
    assert back.get_attribute("href") == f"{live_server.url}/panel-complete?cc=C1A2B3"
    shoot(page, "done")

    participant = Participant.objects.get()
    assert participant.params == {"STUDY_ID": "s7", "SESSION_ID": "q1"}
    assert Annotation.objects.filter(annotator=participant.user).count() == 2

    # The project's manager sees the participant, their state and the link's parameters.
    as_manager(page, live_server, project)
    row = page.locator("table.participants tbody tr")
    assert row.count() == 1
    assert "5f1e9a" in row.inner_text() and "Completed (2 units)" in row.inner_text()
    for size, suffix in ((PHONE, "390"), (DESKTOP, "1280")):
        page.set_viewport_size(size)
        members = page.locator("#members")
        members.screenshot(path=ARTIFACTS / f"participant-members-{suffix}.png")
        box = members.bounding_box()
        assert box["x"] + box["width"] <= size["width"], "the members card is wider than the page"


ENDINGS = """task_name: Endings
data_files: [d.jsonl]
annotation_schemes:
  - annotation_type: radio
    name: polite
    description: Is this reply polite?
    labels: [polite, not_polite]
participants:
  open_link: true
  units_per_participant: 3
  completion_code: "C1A2B3"
  completion_url: "{base}/panel-complete?cc=C1A2B3"
  partial:
    code: "PART-42"
    url: "{base}/panel-complete?cc=PART-42"
    message: "This study has no more replies for you to judge. Thank you!"
  screen_out:
    code: "SCR-7"
    url: "{base}/panel-complete?cc=SCR-7"
gold:
  file: gold.jsonl
  attention_rate: 0
  training: {{units: 1, pass_threshold: 1.0}}
"""


def test_no_more_work_and_screened_out_show_their_own_codes(
    browser_page,  # noqa: F811
    live_server,
    tmp_path,
):
    page = browser_page
    page.set_viewport_size(PHONE)
    (tmp_path / "d.jsonl").write_text(
        "".join(f'{{"id": "r{n}", "text": "Reply number {n}: thanks!"}}\n' for n in range(3))
    )
    (tmp_path / "gold.jsonl").write_text('{"instance": "r0", "answers": {"polite": "polite"}}\n')
    (tmp_path / "c.yaml").write_text(ENDINGS.format(base=live_server.url))
    project = import_project(config_path=tmp_path / "c.yaml", slug="endings").project
    start = f"{live_server.url}/p/endings/start?PROLIFIC_PID="

    # Screened out: the training answered wrong ends the study with the screen-out code.
    page.goto(start + "careless1")
    page.wait_for_url("**/projects/endings/training/")
    page.get_by_label("not_polite").check()
    page.get_by_role("button", name="Submit").click()
    page.goto(f"{live_server.url}/p/endings/")
    page.wait_for_url("**/p/endings/done/")
    assert page.get_by_role("heading", name="Thank you for your time").is_visible()
    assert page.locator("#outcome-code").inner_text() == "SCR-7"
    assert page.locator("#completion-code").count() == 0
    assert "C1A2B3" not in page.content()
    back = page.get_by_role("link", name="Return to the panel")
    assert back.get_attribute("href") == f"{live_server.url}/panel-complete?cc=SCR-7"
    shoot(page, "screened-out")

    # No more work: two ordinary units for a quota of three.
    page.context.clear_cookies()
    page.goto(start + "keen2")
    page.wait_for_url("**/projects/endings/training/")
    page.get_by_label("polite", exact=True).check()
    page.get_by_role("button", name="Submit").click()
    page.goto(f"{live_server.url}/p/endings/")
    for _ in range(2):
        page.wait_for_url("**/projects/endings/annotate/*/")
        unit = page.url
        page.get_by_label("polite", exact=True).check()
        page.get_by_role("button", name="Submit").click()
        page.wait_for_url(lambda url, unit=unit: url != unit)
    page.wait_for_url("**/p/endings/done/")
    assert page.get_by_role("heading", name="No more work for you").is_visible()
    assert page.get_by_text("This study has no more replies for you to judge.").is_visible()
    assert page.get_by_text("You answered 2 of 3 units.").is_visible()
    assert page.locator("#outcome-code").inner_text() == "PART-42"
    assert "C1A2B3" not in page.content()
    shoot(page, "no-more-work")

    by_id = {p.external_id: p.outcome for p in Participant.objects.all()}
    assert by_id == {"careless1": "screened_out", "keen2": "partial"}

    as_manager(page, live_server, project)
    rows = page.locator("table.participants tbody tr")
    assert rows.count() == 2
    assert "Screened out: failed the training" in rows.nth(0).inner_text()
    assert "No more work (2 of 3)" in rows.nth(1).inner_text()
    page.get_by_label("Where they stand").select_option("partial")
    page.get_by_role("button", name="Show").click()
    page.wait_for_url("**participant_state=partial**")
    assert page.locator("table.participants tbody tr").count() == 1
    for size, suffix in ((PHONE, "390"), (DESKTOP, "1280")):
        page.set_viewport_size(size)
        members = page.locator("#members")
        members.screenshot(path=ARTIFACTS / f"participant-outcomes-members-{suffix}.png")
        box = members.bounding_box()
        assert box["x"] + box["width"] <= size["width"], "the members card is wider than the page"
