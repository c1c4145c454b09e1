"""An annotator of the MT demo reads the instructions, presses Start and sees the source
sentence above the tuple it compares (chromium via Playwright; screenshots in
test-artifacts/)."""

from pathlib import Path

import pytest
from django.conf import settings

from projects.models import Membership
from projects.services import import_project
from projects.tests.factories import UserFactory
from tests.test_browser import ARTIFACTS, browser_page, log_in  # noqa: F401 - the fixture

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

INSTRUCTIONS = """
instructions: |
  # How to rank the translations

  Each tuple shows **four French translations** of one English sentence.

  1. *Fluency*: which reads most naturally in French? Ignore the English.
  2. *Meaning preservation*: which says what the source sentence says? The source is
     shown above the tuple.

  Keys: `1`-`4` choose the best, `q` `w` `e` `r` the worst, `Enter` submits.

  <script>alert("never runs")</script>
"""


def test_instructions_then_a_tuple_with_its_source(browser_page, live_server, tmp_path):  # noqa: F811
    page = browser_page
    example = Path(settings.BASE_DIR) / "examples" / "mt_two_dims"
    (tmp_path / "data").mkdir()
    for data in (example / "data").iterdir():
        (tmp_path / "data" / data.name).write_bytes(data.read_bytes())
    demo = (example / "config.yaml").read_text()
    # the demo's own instructions replaced by these (with a script tag in them)
    start, end = demo.index("instructions: |"), demo.index("\noutput_annotation_dir")
    config = demo[:start] + demo[end + 1 :] + INSTRUCTIONS
    (tmp_path / "config.yaml").write_text(config)
    project = import_project(config_path=tmp_path / "config.yaml", slug="mt").project
    user = UserFactory(username="kim")
    Membership.objects.create(user=user, project=project, role="annotator")
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))

    log_in(page, live_server.url, "kim", "pw-for-tests-123")
    page.wait_for_url(f"{live_server.url}/")
    page.goto(f"{live_server.url}/projects/mt/annotate/")
    page.wait_for_url("**/projects/mt/instructions/")
    assert page.get_by_role("heading", name="How to rank the translations").is_visible()
    assert page.get_by_text('<script>alert("never runs")</script>').is_visible()
    page.screenshot(path=ARTIFACTS / "instructions.png", full_page=True)

    page.get_by_role("link", name="Start").click()
    page.wait_for_url("**/projects/mt/annotate/")
    page.wait_for_selector("#annotate-form")
    source = page.locator(".bws-source .context-value")
    assert source.count() == 1 and source.is_visible()
    sentence = source.inner_text()
    english = {item.data["source"] for item in project.items.all()}
    assert sentence in english
    assert page.locator(".bws-item").count() == 4
    assert page.get_by_role("link", name="Instructions").is_visible()
    page.screenshot(path=ARTIFACTS / "unit-source-context.png", full_page=True)
    assert dialogs == []
