"""Accessibility of the pages annotators and crowd participants work on: axe-core (vendored
in static/vendor/axe-core/, injected by this test only; no page loads it) checks each kind
of page against WCAG 2.0, 2.1 and 2.2 A and AA in Debian's chromium: the BWS choice page,
a page of radio, multiselect, likert and text questions, the demo's clip page (3D boxes,
segment timelines, tiers), and a participant's way from the link through the consent, the
instructions, the training and a unit to the completion code; a refused answer and a
phone's width too. No violation of impact
serious or critical may remain, but those listed in ALLOWED with their reason."""

import json

import pytest
from django.conf import settings
from django.core.management import call_command

from projects.models import Membership
from projects.services import import_project
from projects.tests.factories import UserFactory

from .test_browser import ARTIFACTS, log_in
from .test_browser_boxes3d import webgl_page  # noqa: F401 (fixture: the 3D view needs WebGL)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Injected from the site's own static files: the pages' Content-Security-Policy (script-src
# 'self') stays on and refuses inline scripts, so add_script_tag(path=...) cannot be used.
AXE = "vendor/axe-core/axe.min.js"
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]
BLOCKING = {"serious", "critical"}
# (page, rule id) pairs known and not yet fixed, each with its reason; empty when all pass.
ALLOWED: dict[tuple[str, str], str] = {}

FORMS = """task_name: Reply quality
data_files: [d.jsonl]
annotation_schemes:
  - {annotation_type: radio, name: polite, description: "Is this reply polite?",
     labels: [polite, not_polite]}
  - {annotation_type: multiselect, name: topics, description: "Which topics does it touch?",
     labels: [billing, delivery, refund]}
  - {annotation_type: likert, name: clarity, description: "How clear is it?", size: 5,
     min_label: unclear, max_label: very clear}
  - {annotation_type: text, name: note, description: "Anything else?"}
"""
STUDY = """task_name: Politeness study
data_files: [d.jsonl]
instructions: |
  # How to judge

  Read the reply, then say whether it is **polite**.
annotation_schemes:
  - {annotation_type: radio, name: polite, description: "Is this reply polite?",
     labels: [polite, not_polite]}
participants:
  open_link: true
  id_param: PROLIFIC_PID
  units_per_participant: 1
  completion_code: "C1A2B3"
  consent: |
    **Consent.** Your answers are stored without your name and used for research only.
gold:
  file: gold.jsonl
  attention_rate: 0
  training: {units: 1, pass_threshold: 1.0}
"""


class Axe:
    """Runs axe on the page in hand and keeps the blocking violations of each page."""

    def __init__(self, page, base: str):
        self.page, self.url = page, f"{base}{settings.STATIC_URL}{AXE}"
        self.found: dict[str, list[dict]] = {}

    def check(self, name: str) -> None:
        self.page.wait_for_load_state("networkidle")
        self.page.add_script_tag(url=self.url)
        result = self.page.evaluate(
            "tags => axe.run(document, {runOnly: {type: 'tag', values: tags}})", TAGS
        )
        self.page.screenshot(path=ARTIFACTS / f"a11y-{name}.png", full_page=True)
        self.found[name] = [
            v
            for v in result["violations"]
            if v["impact"] in BLOCKING and (name, v["id"]) not in ALLOWED
        ]

    def report(self) -> str:
        lines = []
        for name, violations in self.found.items():
            for v in violations:
                targets = [json.dumps(n["target"]) for n in v["nodes"][:3]]
                why = v["nodes"][0].get("failureSummary", "").replace("\n", " ")
                lines.append(
                    f"{name}: {v['id']} ({v['impact']}) {v['help']}; {len(v['nodes'])} nodes, "
                    f"first {', '.join(targets)}; {why}"
                )
        return "\n".join(lines)


def write_project(tmp_path, config: str, slug: str, *, gold: bool = False):
    (tmp_path / "d.jsonl").write_text(
        "".join(f'{{"id": "r{n}", "text": "Reply number {n}: thanks a lot!"}}\n' for n in range(4))
    )
    if gold:
        (tmp_path / "gold.jsonl").write_text(
            '{"instance": "r0", "answers": {"polite": "polite"}}\n'
        )
    (tmp_path / f"{slug}.yaml").write_text(config)
    return import_project(config_path=tmp_path / f"{slug}.yaml", slug=slug).project


def open_work(page, url: str, axe: Axe, name: str) -> None:
    """Open a project's work; its instructions, shown first once, are checked on the way."""
    page.goto(url)
    if "/instructions/" in page.url:
        axe.check(f"{name}-instructions")
        page.get_by_role("link", name="Start").click()
        page.wait_for_url("**/annotate/**")


def test_annotator_and_participant_pages_pass_axe(webgl_page, live_server, tmp_path):  # noqa: F811
    page, base = webgl_page, live_server.url
    page.set_default_timeout(20_000)
    axe = Axe(page, base)
    call_command("load_demo", stdout=open("/dev/null", "w"))
    forms = write_project(tmp_path, FORMS, "forms")
    anna = UserFactory._meta.model.objects.get(username="anna")
    Membership.objects.create(user=anna, project=forms, role="annotator")

    log_in(page, base, "anna", "annolab-anna")
    page.wait_for_url(f"{base}/")
    axe.check("home")
    open_work(page, f"{base}/projects/mt-ranking/annotate/", axe, "bws")
    page.wait_for_selector("#annotate-form")
    axe.check("bws-unit")
    # Half an answer is refused: the page comes back with its message beside the question.
    page.keyboard.press("1")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert page.locator(".field-error").count()
    axe.check("bws-unit-refused")
    # On a phone each item is a card with its choices under it.
    page.set_viewport_size({"width": 390, "height": 844})
    axe.check("bws-unit-phone")
    page.set_viewport_size({"width": 1280, "height": 900})
    for key in "1w3q":  # best and worst of both dimensions: the chosen states are drawn
        page.keyboard.press(key)
    assert page.locator("#annotate-form input[type=radio]:checked").count() == 4
    axe.check("bws-unit-chosen")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert page.locator("ul.messages").inner_text().strip() == "Saved."
    axe.check("bws-unit-saved")

    open_work(page, f"{base}/projects/forms/annotate/", axe, "forms")
    for kind in ("radio", "checkbox", "textarea"):
        assert page.locator(f"#annotate-form input[type={kind}], #annotate-form {kind}").count()
    axe.check("forms-unit")

    # The demo's clip: a lidar sweep to box in 3D, audio with segment and tier timelines.
    # anna has answered every clip: her done page lists them to open again.
    open_work(page, f"{base}/projects/agreement-demo/annotate/", axe, "clip")
    assert page.locator("#annotate-form").count() == 0
    axe.check("annotator-done")
    page.locator("a[href*='/projects/agreement-demo/annotate/']").first.click()
    page.wait_for_url("**/projects/agreement-demo/annotate/*/")
    page.wait_for_selector('.boxes3d[data-state="ready"]')
    page.locator(".timeline-wave canvas").first.wait_for()
    note = page.locator(".boxes3d-alternative")
    assert note.is_visible()
    assert "can be used instead of the 3D view" in note.inner_text()
    axe.check("clip-unit")

    # A crowd participant, from the panel's link to the completion code.
    write_project(tmp_path, STUDY, "study", gold=True)
    page.context.clear_cookies()
    page.goto(f"{base}/p/study/start?STUDY_ID=s7")
    axe.check("participant-missing-id")
    page.goto(f"{base}/p/study/start?PROLIFIC_PID=a11y")
    page.wait_for_url("**/p/study/consent/")
    axe.check("participant-consent")
    page.get_by_label("I have read the text above and agree to take part.").check()
    page.get_by_role("button", name="Continue").click()
    page.wait_for_url("**/projects/study/instructions/")
    axe.check("participant-instructions")
    page.get_by_role("link", name="Start").click()
    page.wait_for_url("**/projects/study/training/")
    axe.check("participant-training")
    page.get_by_label("polite", exact=True).check()
    page.get_by_role("button", name="Submit").click()
    page.wait_for_load_state("load")
    axe.check("participant-training-feedback")
    page.goto(f"{base}/p/study/")
    page.wait_for_url("**/projects/study/annotate/*/")
    axe.check("participant-unit")
    page.set_viewport_size({"width": 390, "height": 844})
    axe.check("participant-unit-phone")
    page.set_viewport_size({"width": 1280, "height": 900})
    page.get_by_label("polite", exact=True).check()
    page.get_by_role("button", name="Submit").click()
    page.wait_for_url("**/p/study/done/")
    assert page.locator("#completion-code").inner_text() == "C1A2B3"
    axe.check("participant-done")

    assert len(axe.found) >= 10, list(axe.found)
    report = axe.report()
    assert not report, f"serious or critical accessibility violations:\n{report}"
