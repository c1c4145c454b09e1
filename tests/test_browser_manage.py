"""A lab admin in Debian's chromium: invites someone from the members list and that person
sets a password with the link; the scores tab and the API docs as a manager sees them.
Screenshots go to test-artifacts/."""

from pathlib import Path

import pytest
from django.conf import settings

from bws import services as bws_services
from bws.models import ScoreRun
from bws.selectors import bws_scheme_names
from bws.tests.test_runs import annotate
from projects.services import add_lab_member, import_project
from projects.tests.factories import LabFactory, UserFactory

from .test_browser import ARTIFACTS, browser_page, log_in  # noqa: F401  (fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_invite_scores_tab_and_api_docs(browser_page, live_server):  # noqa: F811
    page = browser_page
    base = live_server.url
    lab = LabFactory(name="NLP Lab", slug="nlp")
    maria = UserFactory(username="maria")
    add_lab_member(lab=lab, user=maria, is_admin=True)
    config = Path(settings.BASE_DIR) / "examples" / "mt_bws" / "config.yaml"
    project = import_project(config_path=config, lab=lab, owner=maria, slug="mt").project
    scheme = bws_scheme_names(project)[0]
    annotate(project, [scheme], n_users=3, per_user=15)
    ScoreRun.objects.all().delete()
    run = bws_services.request_run(project=project, scheme=scheme, bootstrap=20)
    bws_services.execute_run(run.pk)
    annotate(project, [scheme], n_users=1, per_user=3, seed=9)  # newer than the scores
    ScoreRun.objects.exclude(pk=run.pk).delete()

    foreign = []
    local = (base, "blob:" + base, "data:")  # Redoc's search worker starts from a blob: URL
    page.on("request", lambda r: None if r.url.startswith(local) else foreign.append(r.url))
    log_in(page, base, "maria", "pw-for-tests-123")
    page.wait_for_url(f"{base}/")

    # Members: create an account and copy its link
    page.goto(f"{base}/projects/mt/#members")
    page.get_by_text("Create an account and invite someone").click()
    page.get_by_label("Username", exact=True).fill("zoe")
    page.get_by_label("E-mail address (optional)").fill("zoe@example.org")
    page.get_by_role("button", name="Create and invite").click()
    link_box = page.get_by_label("Invite link for zoe")
    link_box.wait_for()
    link = link_box.input_value()
    assert link.startswith(f"{base}/accounts/invite/")
    assert page.get_by_text("Created zoe as annotator").is_visible()
    assert page.get_by_role("button", name="Send a new invite link").is_visible()
    page.locator("#members").screenshot(path=ARTIFACTS / "members-invite.png")

    # Scores tab: method names for people, the out-of-date note, recent runs by scheme
    page.goto(f"{base}/projects/mt/bws/")
    note = page.locator("[data-stale]")
    assert note.is_visible() and "3 answers arrived" in note.inner_text()
    assert page.get_by_role("columnheader", name="Scheme").is_visible()
    assert "plackett_luce" not in page.locator("main").inner_text()
    page.screenshot(path=ARTIFACTS / "scores-tab.png", full_page=True)

    # API docs: Redoc renders the tagged operations from this site alone
    page.goto(f"{base}/api/docs/")
    page.get_by_role("heading", name="Annolab API", exact=True).wait_for()
    for tag in ("Auth", "Projects", "Queue", "Answers", "Scores", "Runs", "Agreement"):
        assert page.locator(".menu-content").get_by_text(tag, exact=True).count() >= 1
    page.wait_for_timeout(500)
    page.screenshot(path=ARTIFACTS / "api-docs.png")
    page.locator(".menu-content").get_by_text("Projects", exact=True).first.click()
    page.get_by_text("List your projects").first.click()
    page.wait_for_timeout(500)
    page.screenshot(path=ARTIFACTS / "api-docs-projects.png")
    # the site's header stays above the docs, with the way back to the projects
    page.get_by_role("link", name="Back to my projects").click()
    page.wait_for_url(f"{base}/")

    page.goto(f"{base}/")
    page.get_by_role("button", name="Log out maria").click()
    assert page.get_by_text("You have logged out.").is_visible()

    # The invited person sets a password with the link, then logs in
    page.goto(link)
    page.get_by_label("New password", exact=True).fill("a-long-new-password-42")
    page.get_by_label("New password confirmation").fill("a-long-new-password-42")
    page.screenshot(path=ARTIFACTS / "invite-set-password.png")
    page.get_by_role("button", name="Set my password").click()
    assert page.get_by_text("Your password is set. Log in as zoe.").is_visible()
    log_in(page, base, "zoe", "a-long-new-password-42")
    page.wait_for_url(f"{base}/")
    assert page.get_by_role("link", name=project.name).is_visible()
    assert foreign == [], foreign
