"""A crowd participant's walk in German (the browser's language) and in Arabic (the
project's `language:`, right to left): consent, instructions, two units and the completion
code, each page translated, with no sideways scroll at 390 px and 1280 px (chromium via
Playwright; screenshots in test-artifacts/lang-*.png)."""

import pytest

from annotation.models import Annotation
from crowds.models import Participant
from projects.services import import_project
from tests.test_browser import ARTIFACTS, browser_page  # noqa: F401 - the fixture

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CONFIG = """task_name: Politeness of replies
{language}data_files: [d.jsonl]
instructions:
  en: "# How to judge\\n\\nSay whether the reply is **polite**."
  de: "# So urteilen Sie\\n\\nSagen Sie, ob die Antwort **höflich** ist."
  ar: "# كيف تحكم\\n\\nقل هل الرد **مهذب**."
annotation_schemes:
  - annotation_type: radio
    name: polite
    description:
      en: Is this reply polite?
      de: Ist diese Antwort höflich?
      ar: هل هذا الرد مهذب؟
    labels: [polite, not_polite]
participants:
  open_link: true
  id_param: PROLIFIC_PID
  units_per_participant: 2
  completion_code: "C1A2B3"
  consent:
    en: "Your answers are stored without your name."
    de: "Ihre Antworten werden ohne Ihren Namen gespeichert."
    ar: "تُحفظ إجاباتك دون اسمك."
"""
SIZES = (({"width": 390, "height": 844}, "390"), ({"width": 1280, "height": 900}, "1280"))


def shoot(page, name: str) -> None:
    for size, suffix in SIZES:
        page.set_viewport_size(size)
        wide = page.evaluate("document.documentElement.scrollWidth")
        assert wide <= size["width"], f"{name} is {wide} px wide at {size['width']} px"
        page.screenshot(path=ARTIFACTS / f"lang-{name}-{suffix}.png", full_page=True)
    page.set_viewport_size(SIZES[0][0])


def _project(tmp_path, language: str = ""):
    (tmp_path / "d.jsonl").write_text(
        "".join(f'{{"id": "r{n}", "text": "Reply number {n}: thanks a lot!"}}\n' for n in range(4))
    )
    (tmp_path / "c.yaml").write_text(CONFIG.replace("{language}", language))
    return import_project(config_path=tmp_path / "c.yaml", slug="polite").project


def _walk(page, base, *, words: dict, name: str, direction: str) -> None:
    page.goto(f"{base}/p/polite/start?PROLIFIC_PID=5f1e9a")
    page.wait_for_url("**/p/polite/consent/")
    html = page.locator("html")
    assert html.get_attribute("dir") == direction
    assert page.get_by_role("heading", name=words["consent"]).is_visible()
    assert page.get_by_text(words["consent_text"]).is_visible()
    shoot(page, f"{name}-consent")
    page.get_by_role("button", name=words["continue"]).click()  # not ticked: refused
    page.get_by_label(words["agree"]).check()
    page.get_by_role("button", name=words["continue"]).click()

    page.wait_for_url("**/projects/polite/instructions/")
    assert page.get_by_role("heading", name=words["instructions"]).is_visible()
    shoot(page, f"{name}-instructions")
    page.get_by_role("link", name=words["start"]).click()

    for label in ("polite", "not_polite"):
        page.wait_for_url("**/projects/polite/annotate/*/")
        assert page.get_by_text(words["question"]).first.is_visible()
        # The scripts' catalogue loaded (as a file: the CSP allows no inline script).
        said = page.evaluate("window.gettext('Loading the point cloud…')")
        assert said == words["script"]
        shoot(page, f"{name}-unit")
        page.get_by_label(label, exact=True).check()
        page.get_by_role("button", name=words["submit"]).click()
        if label == "polite":
            page.wait_for_selector("ul.messages")
            assert page.locator("ul.messages").inner_text().strip() == words["saved"]

    page.wait_for_url("**/p/polite/done/")
    assert page.locator("#completion-code").inner_text() == "C1A2B3"
    assert page.get_by_role("heading", name=words["done"]).is_visible()
    shoot(page, f"{name}-done")
    participant = Participant.objects.get()
    assert Annotation.objects.filter(annotator=participant.user).count() == 2


def test_a_participant_walk_in_the_browsers_german(browser_page, live_server, tmp_path):  # noqa: F811
    _project(tmp_path)
    context = browser_page.context.browser.new_context(locale="de-DE")
    page = context.new_page()
    _walk(
        page,
        live_server.url,
        name="de",
        direction="ltr",
        words={
            "consent": "Bevor Sie beginnen",
            "consent_text": "Ihre Antworten werden ohne Ihren Namen gespeichert.",
            "agree": "Ich habe den Text oben gelesen und bin mit der Teilnahme einverstanden.",
            "continue": "Weiter",
            "instructions": "So urteilen Sie",
            "start": "Beginnen",
            "question": "Ist diese Antwort höflich?",
            "script": "Punktwolke wird geladen …",
            "submit": "Absenden",
            "saved": "Gespeichert.",
            "done": "Vielen Dank, Sie sind fertig",
        },
    )
    context.close()


def test_a_participant_walk_in_the_projects_arabic_right_to_left(
    browser_page,  # noqa: F811
    live_server,
    tmp_path,
):
    _project(tmp_path, language="language: ar\n")
    _walk(
        browser_page,
        live_server.url,
        name="ar",
        direction="rtl",
        words={
            "consent": "قبل أن تبدأ",
            "consent_text": "تُحفظ إجاباتك دون اسمك.",
            "agree": "قرأت النص أعلاه وأوافق على المشاركة.",
            "continue": "متابعة",
            "instructions": "كيف تحكم",
            "start": "ابدأ",
            "question": "هل هذا الرد مهذب؟",
            "script": "جارٍ تحميل سحابة النقاط…",
            "submit": "إرسال",
            "saved": "تم الحفظ.",
            "done": "شكرًا لك، لقد انتهيت",
        },
    )
    # Right to left: the page's text starts at the right edge.
    heading = browser_page.locator("h1").first.bounding_box()
    width = browser_page.viewport_size["width"]
    assert heading["x"] + heading["width"] > width * 0.6
