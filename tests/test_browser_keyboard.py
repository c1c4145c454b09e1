"""The pages annotators and participants work on, used with the keyboard alone and read by a
screen reader (Debian's chromium): Tab reaches every control of the page in turn, each shows
a focus ring that stands out from what is around it and every field's edge does too (WCAG 2.2
non-text contrast, 3:1), and the
controls carry the names and roles a screen reader announces: each best-worst choice says
which question and which item it is, every question's options form a named group, every cell
of a segments or boxes table says its column and its row."""

import re

import pytest
from django.core.management import call_command

from projects.models import Membership
from projects.tests.factories import UserFactory

from .test_browser import ARTIFACTS, log_in
from .test_browser_a11y import FORMS, STUDY, write_project
from .test_browser_boxes3d import webgl_page  # noqa: F401 (fixture: the 3D view needs WebGL)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Marks every control in the page's <main> a person must be able to reach, and returns them.
# Radio buttons sharing a name are one stop (the arrow keys move within the group).
MARK = """() => {
  const selector = 'a[href], button, input:not([type=hidden]), select, textarea, '
    + 'audio[controls], video[controls], [tabindex]:not([tabindex="-1"])';
  const seen = new Set(), stops = [];
  document.querySelectorAll('main ' + selector.split(', ').join(', main ')).forEach((el) => {
    if (el.disabled || el.closest('[hidden], template, [inert]')) return;
    if (!el.getClientRects().length || getComputedStyle(el).visibility === 'hidden') return;
    const key = el.type === 'radio' ? 'radio:' + el.name : 'el:' + stops.length;
    if (seen.has(key)) return;
    seen.add(key);
    el.dataset.kbStop = key;
    stops.push(key + ' ' + el.outerHTML.slice(0, 90));
  });
  return stops;
}"""

# What the focused element looks like: its ring (a hidden best-worst radio shows it on its
# label) and the colour of what the ring is drawn on (the element's own box for a ring drawn
# inside it, else what lies behind the element).
FOCUSED = """() => {
  const el = document.activeElement;
  if (!el || el === document.body) return null;
  const ring = el.matches('input.choice') ? el.nextElementSibling : el;
  const style = getComputedStyle(ring);
  const inside = parseFloat(style.outlineOffset) < 0;
  let under = inside ? ring : ring.parentElement, background = 'rgb(255, 255, 255)';
  for (; under; under = under.parentElement) {
    const colour = getComputedStyle(under).backgroundColor;
    const clear = colour === 'transparent' || /rgba\\(.*, 0\\)$/.test(colour);
    if (!clear) { background = colour; break; }
  }
  const key = el.type === 'radio' ? 'radio:' + el.name : el.dataset.kbStop || '';
  // A field one types into is found by its edge: that edge's colour, where it has one.
  const typed = el.matches('input:not([type=radio]):not([type=checkbox]), select, textarea');
  const edge = typed && parseFloat(style.borderBottomWidth) > 0 ? style.borderBottomColor : null;
  return {
    edge: edge,
    key: key, tag: el.tagName.toLowerCase(), html: el.outerHTML.slice(0, 90),
    inMain: !!el.closest('main'),
    style: style.outlineStyle, width: parseFloat(style.outlineWidth),
    colour: style.outlineColor, background: background,
  };
}"""


def rgb(text: str) -> tuple[float, ...]:
    return tuple(float(v) for v in re.findall(r"[\d.]+", text)[:3])


def contrast(a: str, b: str) -> float:
    """WCAG's contrast ratio of two CSS rgb() colours."""

    def luminance(colour):
        parts = [c / 255 for c in rgb(colour)]
        lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in parts]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    light, dark = sorted((luminance(a), luminance(b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def tab_through(page, name: str, limit: int = 300) -> list[str]:
    """Tabs from the page's top through all of it; returns what went wrong (empty: nothing)."""
    page.wait_for_load_state("networkidle")
    stops = page.evaluate(MARK)
    assert stops, f"{name}: no control found in <main>"
    page.evaluate("() => { document.activeElement && document.activeElement.blur(); }")
    page.evaluate("() => window.scrollTo(0, 0)")
    reached, problems, first = set(), [], None
    for _ in range(limit):
        page.keyboard.press("Tab")
        now = page.evaluate(FOCUSED)
        if now is None:
            continue
        if now["html"] == first:
            break  # round to the start again
        first = first or now["html"]
        reached.add(now["key"])
        if now["edge"] and contrast(now["edge"], now["background"]) < 3:
            ratio = contrast(now["edge"], now["background"])
            problems.append(
                f"{name}: the edge of a field, {now['edge']} on {now['background']}, is "
                f"{ratio:.2f}:1 (at least 3:1) on {now['html']}"
            )
        if now["style"] in ("none", "hidden") or now["width"] < 2:
            problems.append(f"{name}: no focus ring on {now['html']}")
        elif now["style"] != "auto" and contrast(now["colour"], now["background"]) < 3:
            ratio = contrast(now["colour"], now["background"])
            problems.append(
                f"{name}: focus ring {now['colour']} on {now['background']} is {ratio:.2f}:1 "
                f"(at least 3:1) on {now['html']}"
            )
    missed = [stop for stop in stops if stop.split(" ", 1)[0] not in reached]
    problems += [f"{name}: Tab never reaches {stop}" for stop in missed]
    page.screenshot(path=ARTIFACTS / f"keyboard-{name}.png", full_page=True)
    return problems


def test_every_control_is_reached_by_tab_with_a_ring_that_stands_out(
    webgl_page,  # noqa: F811
    live_server,
    tmp_path,
):
    page, base = webgl_page, live_server.url
    page.set_default_timeout(20_000)
    call_command("load_demo", stdout=open("/dev/null", "w"))
    forms = write_project(tmp_path, FORMS, "forms")
    anna = UserFactory._meta.model.objects.get(username="anna")
    Membership.objects.create(user=anna, project=forms, role="annotator")
    log_in(page, base, "anna", "annolab-anna")
    page.wait_for_url(f"{base}/")
    problems = tab_through(page, "home")

    page.goto(f"{base}/projects/mt-ranking/annotate/")
    if "/instructions/" in page.url:
        problems += tab_through(page, "bws-instructions")
        page.get_by_role("link", name="Start").click()
    page.wait_for_selector("#annotate-form")
    problems += tab_through(page, "bws-unit")

    page.goto(f"{base}/projects/forms/annotate/")
    page.wait_for_selector("#annotate-form textarea")
    problems += tab_through(page, "forms-unit")

    # The clip: 3D views, the boxes table, two timelines with their tables and buttons.
    page.goto(f"{base}/projects/agreement-demo/annotate/")
    page.locator("a[href*='/projects/agreement-demo/annotate/']").first.click()
    page.wait_for_url("**/projects/agreement-demo/annotate/*/")
    page.wait_for_selector('.boxes3d[data-state="ready"]')
    page.locator(".timeline-wave canvas").first.wait_for()
    problems += tab_through(page, "clip-unit")

    write_project(tmp_path, STUDY, "study", gold=True)
    page.context.clear_cookies()
    page.goto(f"{base}/p/study/start?PROLIFIC_PID=keys")
    page.wait_for_url("**/p/study/consent/")
    problems += tab_through(page, "participant-consent")
    # The consent is given by keyboard alone: Tab to the box, Space ticks it, Enter sends.
    box = page.get_by_label("I have read the text above and agree to take part.")
    for _ in range(40):
        if box.evaluate("el => el === document.activeElement"):
            break
        page.keyboard.press("Tab")
    page.keyboard.press("Space")
    assert box.is_checked()
    with page.expect_navigation():
        page.keyboard.press("Enter")
    page.wait_for_url("**/projects/study/instructions/")
    problems += tab_through(page, "participant-instructions")

    assert not problems, "\n".join(problems)


def test_screen_readers_are_told_which_question_item_and_row_each_control_is(
    webgl_page,  # noqa: F811
    live_server,
    tmp_path,
):
    from playwright.sync_api import expect

    page, base = webgl_page, live_server.url
    page.set_default_timeout(20_000)
    call_command("load_demo", stdout=open("/dev/null", "w"))
    forms = write_project(tmp_path, FORMS, "forms")
    anna = UserFactory._meta.model.objects.get(username="anna")
    Membership.objects.create(user=anna, project=forms, role="annotator")
    log_in(page, base, "anna", "annolab-anna")
    page.wait_for_url(f"{base}/")

    # Best-worst, two questions: each radio is named by its question, its kind and its item's
    # letter, and described by the item's text; no two share a name.
    page.goto(f"{base}/projects/mt-ranking/annotate/")
    if "/instructions/" in page.url:
        page.get_by_role("link", name="Start").click()
    page.wait_for_selector("#annotate-form")
    radios = page.locator("#annotate-form input.choice")
    names = [radios.nth(i).evaluate("el => el.labels[0].innerText") for i in range(radios.count())]
    schemes = page.locator(".bws-scheme-head[data-scheme]")
    questions = [schemes.nth(i).get_attribute("data-scheme") for i in range(schemes.count())]
    assert len(questions) == 2 and radios.count() >= 8
    assert len(set(names)) == len(names), names
    texts = page.locator(".bws-item .item-text")
    first_text = texts.first.inner_text().strip()
    firsts = set()
    for question in questions:
        best = page.locator(f'#annotate-form input[name="{question}__best"]').first
        expect(best).to_have_accessible_name(re.compile(r"\S.* 1 \(A\)$"))
        expect(best).to_have_accessible_description(first_text)
        expect(best).to_have_role("radio")
        firsts.add(best.evaluate("el => el.labels[0].innerText"))
    assert len(firsts) == 2, f"both questions' first choices read alike: {firsts}"
    worst = page.locator(f'#annotate-form input[name="{questions[0]}__worst"]').nth(1)
    expect(worst).to_have_accessible_name(re.compile(r"\S.* w \(B\)$"))
    expect(worst).to_have_accessible_description(texts.nth(1).inner_text().strip())

    # Radio, multiselect, likert and text: each question a named group or a named field.
    page.goto(f"{base}/projects/forms/annotate/")
    page.wait_for_selector("#annotate-form textarea")
    expect(page.get_by_role("radiogroup", name="Is this reply polite?")).to_be_visible()
    expect(page.get_by_role("radio", name="not_polite", exact=True)).to_be_visible()
    expect(page.get_by_role("radiogroup", name="How clear is it?")).to_be_visible()
    expect(page.get_by_role("radio", name="3", exact=True)).to_be_visible()
    expect(page.get_by_role("group", name="Which topics does it touch?")).to_be_visible()
    expect(page.get_by_role("checkbox", name="refund")).to_be_visible()
    expect(page.get_by_role("textbox", name="Anything else?")).to_be_visible()

    # The clip: the 3D views are named applications that point to their keys and to the
    # table beside them; the timelines are named groups; every row's cells name their row.
    page.goto(f"{base}/projects/agreement-demo/annotate/")
    page.locator("a[href*='/projects/agreement-demo/annotate/']").first.click()
    page.wait_for_url("**/projects/agreement-demo/annotate/*/")
    page.wait_for_selector('.boxes3d[data-state="ready"]')
    page.locator(".timeline-wave canvas").first.wait_for()
    views = page.get_by_role("application")
    assert views.count() == 3
    for i in range(3):
        expect(views.nth(i)).to_have_accessible_name(re.compile(r"view", re.I))
        expect(views.nth(i)).to_have_accessible_description(re.compile(r"\w"))
    assert "instead of the 3D view" in page.locator(".boxes3d-alternative").inner_text()
    expect(page.get_by_role("group", name=re.compile("Timeline")).first).to_be_visible()

    add = page.get_by_role("button", name="Add box")
    boxes = page.locator(f'table[data-rows="{add.get_attribute("data-for")}"] tr.data-row')
    before = boxes.count()
    add.click()
    expect(boxes).to_have_count(before + 1)
    row = before + 1
    expect(page.get_by_role("spinbutton", name=f"center x, row {row}")).to_be_focused()
    expect(page.get_by_role("combobox", name=f"label, row {row}").first).to_be_visible()
    remove = page.get_by_role("button", name=f"Remove row {row}")
    expect(remove.first).to_be_visible()
    if before:  # the rows below a removed one are numbered again
        page.get_by_role("button", name="Remove row 1").first.click()
        expect(page.get_by_role("spinbutton", name=f"center x, row {row - 1}")).to_be_visible()
        expect(page.get_by_role("spinbutton", name=f"center x, row {row}")).to_have_count(0)
    page.screenshot(path=ARTIFACTS / "keyboard-names-clip.png", full_page=True)
