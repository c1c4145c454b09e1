"""An annotator marks time segments on the waveform in Debian's chromium: a drag creates a
segment, a drag on its edge resizes it, the keys mark one at the playhead, a lane per tier
gives the tier; the stored times are the ones dragged. Any console error (a CSP violation
included) fails the test. Screenshots in test-artifacts/timeline-*.png."""

import io
import json
import wave

import numpy as np
import pytest

from annotation.models import Annotation
from projects.models import Membership
from projects.services import import_project
from projects.tests.factories import UserFactory

from .test_browser import ARTIFACTS, browser_page, log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
__all__ = ["browser_page"]  # the fixture, used below by name

RATE = 16_000
SECONDS = 4.0

CONFIG = """annotation_task_name: Speech timeline
data_files: [d.jsonl]
annotation_schemes:
  - {annotation_type: temporal_grounding, name: events, description: Sounds,
     labels: [speech, noise, music]}
  - {annotation_type: tiered_annotation, name: speakers, description: Who speaks,
     labels: [talk, laugh], tiers: [A, B]}
"""


def speech_like_wav() -> bytes:
    """Four seconds at 16 kHz: voiced bursts (a 140 Hz buzz with harmonics, syllable-rate
    envelope) and a noise burst, silence between them."""
    t = np.arange(int(RATE * SECONDS)) / RATE
    rng = np.random.default_rng(7)
    voiced = sum(np.sin(2 * np.pi * 140 * k * t) / k for k in range(1, 6))
    voiced *= 0.5 + 0.5 * np.sin(2 * np.pi * 4 * t) ** 2
    signal = np.zeros_like(t)
    for a, b in ((0.3, 1.2), (2.9, 3.7)):
        signal[(t >= a) & (t < b)] = voiced[(t >= a) & (t < b)]
    noisy = (t >= 1.7) & (t < 2.4)
    signal[noisy] = rng.normal(0, 0.4, noisy.sum())
    samples = np.clip(signal / np.abs(signal).max() * 0.8 * 32767, -32768, 32767).astype("<i2")
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(RATE)
        w.writeframes(samples.tobytes())
    return out.getvalue()


def watch_console(page) -> list[str]:
    problems = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    return problems


def wrapper_box(page, scheme, lane=0):
    """The waveform's drawing area (inside wavesurfer's shadow root) of one lane, scrolled
    into view."""
    waves = page.locator(f'.segment-timeline[data-for="{scheme}"] .timeline-wave')
    waves.nth(lane).scroll_into_view_if_needed()
    return waves.nth(lane).locator('[part="wrapper"]').bounding_box()


def x_at(box, seconds):
    return box["x"] + seconds / SECONDS * box["width"]


def seconds_at(box, x):
    return (x - box["x"]) / box["width"] * SECONDS


def drag(page, x0, x1, y, steps=12):
    page.mouse.move(x0, y)
    page.mouse.down()
    page.mouse.move(x1, y, steps=steps)
    page.mouse.up()


def cell(page, scheme, key, n):
    return page.locator(f'[name="{scheme}__{key}"]').nth(n)


def value(page, scheme, key, n):
    return float(cell(page, scheme, key, n).input_value())


def regions(page, scheme):
    return page.locator(f'.segment-timeline[data-for="{scheme}"] [part~="region"]')


def seek(page, scheme, box, seconds, y):
    """Click the waveform at ``seconds`` and wait until the player's clock is there and no
    media element is still seeking (the seek is asynchronous: a key pressed at once, or an
    earlier seek's late time update, could leave the playhead where it was)."""
    page.mouse.click(x_at(box, seconds), y)
    page.wait_for_function(
        """([scheme, seconds]) => {
          const clock = document.querySelector(
            `.segment-timeline[data-for="${scheme}"] .timeline-clock`);
          const settled = [...document.querySelectorAll("audio, video")].every(m => !m.seeking);
          return settled && clock && Math.abs(parseFloat(clock.textContent) - seconds) <= 0.011;
        }""",
        arg=[scheme, seconds],
    )


@pytest.fixture
def timeline_project(tmp_path):
    (tmp_path / "speech.wav").write_bytes(speech_like_wav())  # stored with the project
    rows = [{"id": "clip1", "text": "Clip one", "media_url": "speech.wav"}]
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "c.yaml").write_text(CONFIG)
    project = import_project(config_path=tmp_path / "c.yaml", slug="speech").project
    user = UserFactory(username="tess")
    Membership.objects.create(user=user, project=project, role="annotator")
    return user


def open_page(page, live_server):
    log_in(page, live_server.url, "tess", "pw-for-tests-123")
    page.wait_for_url(f"{live_server.url}/")
    page.goto(f"{live_server.url}/projects/speech/annotate/")
    for scheme in ("events", "speakers"):
        timeline = page.locator(f'.segment-timeline[data-for="{scheme}"]')
        timeline.locator(".timeline-wave canvas").first.wait_for()
        timeline.locator(".timeline-clock").filter(has_text="/ 4.00 s").wait_for()


def test_segments_made_and_resized_on_the_waveform_are_stored(
    browser_page, live_server, timeline_project
):
    page = browser_page
    problems = watch_console(page)
    open_page(page, live_server)
    assert problems == []  # a CSP violation (wavesurfer's style refused) shows here
    assert page.locator(".segment-timeline:not([hidden])").count() == 2
    assert page.locator("audio").first.get_attribute("src") == "/projects/speech/media/speech.wav"

    # drag on the empty waveform: a segment from where the mouse went down to where it rose
    box = wrapper_box(page, "events")
    y = box["y"] + box["height"] / 2
    a, b = x_at(box, 0.42), x_at(box, 1.31)
    drag(page, a, b, y)
    assert regions(page, "events").count() == 1
    assert value(page, "events", "start", 0) == pytest.approx(seconds_at(box, a), abs=0.011)
    assert value(page, "events", "end", 0) == pytest.approx(seconds_at(box, b), abs=0.011)
    assert "is-selected" in (page.locator("tr.data-row").first.get_attribute("class") or "")

    # drag its end edge further right: the end moves by the distance dragged
    end_before = value(page, "events", "end", 0)
    handle = regions(page, "events").first.locator('[part~="region-handle-right"]').bounding_box()
    grab = handle["x"] + handle["width"] / 2
    target = x_at(box, 1.62)
    drag(page, grab, target, y)
    expected_end = end_before + (target - grab) / box["width"] * SECONDS
    assert value(page, "events", "end", 0) == pytest.approx(expected_end, abs=0.011)
    assert value(page, "events", "start", 0) == pytest.approx(seconds_at(box, a), abs=0.011)
    region = regions(page, "events").first.bounding_box()
    assert region["x"] + region["width"] == pytest.approx(
        x_at(box, value(page, "events", "end", 0)), abs=2
    )

    # a label from the table is written on the region
    cell(page, "events", "label", 0).select_option("speech")
    regions(page, "events").first.get_by_text("speech").wait_for()
    page.screenshot(path=ARTIFACTS / "timeline-drag.png", full_page=True)

    # the keys: a click moves the playhead, [ and ] mark a second segment there
    seek(page, "events", box, 2.5, y)
    page.keyboard.press("[")
    seek(page, "events", box, 3.2, y)
    page.keyboard.press("]")
    page.keyboard.press("2")  # its label: the second one
    assert value(page, "events", "start", 1) == pytest.approx(2.5, abs=0.011)
    assert value(page, "events", "end", 1) == pytest.approx(3.2, abs=0.011)
    assert cell(page, "events", "label", 1).input_value() == "noise"
    assert regions(page, "events").count() == 2

    # typing a number moves the region
    cell(page, "events", "end", 1).fill("3.6")
    page.wait_for_function(
        """x => {
          const host = document.querySelector('[data-for="events"] .timeline-wave > div');
          const region = host.shadowRoot.querySelectorAll('[part~="region"]')[1];
          return Math.abs(region.getBoundingClientRect().right - x) < 2;
        }""",
        arg=x_at(box, 3.6),
    )

    # "Use current time" never writes over a typed value: both rows are full, so a new row
    # gets the playhead as its start
    page.get_by_role("button", name="Use current time").first.click()
    assert [cell(page, "events", "end", n).input_value() for n in (0, 1)] == [
        f"{expected_end:.2f}",
        "3.6",
    ]
    assert value(page, "events", "start", 2) == pytest.approx(3.2, abs=0.011)
    assert cell(page, "events", "end", 2).input_value() == ""
    page.locator('table[data-rows="events"] .remove-row').nth(2).click()
    assert page.locator('[name="events__start"]').count() == 2

    # a tier lane: a drag in lane B gives a tier-B segment
    lane_b = wrapper_box(page, "speakers", lane=1)
    yb = lane_b["y"] + lane_b["height"] / 2
    c, d = x_at(lane_b, 1.9), x_at(lane_b, 2.35)
    drag(page, c, d, yb)
    page.keyboard.press("1")  # the lanes keep the focus: first label
    assert cell(page, "speakers", "tier", 0).input_value() == "B"
    assert cell(page, "speakers", "label", 0).input_value() == "talk"
    assert value(page, "speakers", "start", 0) == pytest.approx(seconds_at(lane_b, c), abs=0.011)
    assert value(page, "speakers", "end", 0) == pytest.approx(seconds_at(lane_b, d), abs=0.011)
    lanes = page.locator('.segment-timeline[data-for="speakers"] .timeline-wave')
    assert lanes.nth(1).locator('[part~="region"]').count() == 1
    assert lanes.nth(0).locator('[part~="region"]').count() == 0
    # choosing tier A in the table moves the region to lane A
    cell(page, "speakers", "tier", 0).select_option("A")
    lanes.nth(0).locator('[part~="region"]').first.wait_for()
    assert lanes.nth(1).locator('[part~="region"]').count() == 0
    page.screenshot(path=ARTIFACTS / "timeline-tiers.png", full_page=True)

    with page.expect_navigation() as navigation:
        page.get_by_role("button", name="Submit").click()
    assert navigation.value.status == 200
    stored = dict(
        Annotation.objects.filter(annotator=timeline_project).values_list("scheme", "value")
    )
    events = stored["events"]
    assert [s["label"] for s in events] == ["speech", "noise"]
    assert events[0]["start"] == pytest.approx(seconds_at(box, a), abs=0.011)
    assert events[0]["end"] == pytest.approx(expected_end, abs=0.011)
    assert (events[1]["start"], events[1]["end"]) == (pytest.approx(2.5, abs=0.011), 3.6)
    (speaker,) = stored["speakers"]
    assert speaker["tier"] == "A" and speaker["label"] == "talk"
    assert speaker["start"] == pytest.approx(seconds_at(lane_b, c), abs=0.011)
    assert speaker["end"] == pytest.approx(seconds_at(lane_b, d), abs=0.011)
    assert problems == []


def test_stored_segments_drawn_and_deleted_by_key_and_narrow_screen_fits(
    browser_page, live_server, timeline_project
):
    page = browser_page
    problems = watch_console(page)
    open_page(page, live_server)
    assert problems == []  # a CSP violation (wavesurfer's style refused) shows here
    box = wrapper_box(page, "events")
    y = box["y"] + box["height"] / 2
    drag(page, x_at(box, 1.0), x_at(box, 2.0), y)
    drag(page, x_at(box, 2.6), x_at(box, 3.4), y)
    page.keyboard.press("Delete")  # the segment just made is the selected one
    assert regions(page, "events").count() == 1
    assert page.locator('[name="events__start"]').count() == 1  # its row went too
    assert value(page, "events", "start", 0) == pytest.approx(1.0, abs=0.011)
    cell(page, "events", "label", 0).select_option("music")
    page.locator('input[name="speakers__nothing"]').check()
    with page.expect_navigation():
        page.get_by_role("button", name="Submit").click()

    # the stored answer comes back drawn on the waveform
    unit = Annotation.objects.get(annotator=timeline_project, scheme="events").unit_id
    page.goto(f"{live_server.url}/projects/speech/annotate/{unit}/")
    page.locator('.segment-timeline[data-for="events"] [part~="region"]').first.wait_for()
    drawn = regions(page, "events").first.bounding_box()
    box = wrapper_box(page, "events")
    assert drawn["x"] == pytest.approx(x_at(box, 1.0), abs=3)
    assert drawn["x"] + drawn["width"] == pytest.approx(x_at(box, 2.0), abs=3)
    # click it, P: it plays from its start and stops at its end
    page.mouse.click(drawn["x"] + drawn["width"] / 2, drawn["y"] + drawn["height"] / 2)
    page.keyboard.press("p")
    page.wait_for_function("() => !document.querySelector('audio').paused")
    page.wait_for_function("() => document.querySelector('audio').paused", timeout=5000)
    stopped = page.evaluate("document.querySelector('audio').currentTime")
    assert stopped == pytest.approx(2.0, abs=0.1)

    page.set_viewport_size({"width": 390, "height": 844})
    page.reload()
    page.locator('.segment-timeline[data-for="events"] [part~="region"]').first.wait_for()
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    for scheme in ("events", "speakers"):
        timeline = page.locator(f'.segment-timeline[data-for="{scheme}"] .timeline-lanes')
        lane = timeline.bounding_box()
        assert lane["x"] >= 0 and lane["x"] + lane["width"] <= 390
    page.screenshot(path=ARTIFACTS / "timeline-narrow.png", full_page=True)
    assert problems == []


def test_a_video_gets_a_timeline_under_its_player(browser_page, live_server, tmp_path):
    """Media named by another site's URL plays in a <video> with a plain timeline under it
    (its sound is not fetched to draw it); a drag there marks a segment as on a waveform. A
    file that does not load leaves the table to type in, and says so."""
    page = browser_page
    video = "https://media.example.org/clips/street.mp4"
    rows = [
        {"id": "v1", "media_url": video},
        {"id": "v2", "media_url": "/nowhere/missing.mp4"},
    ]
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "c.yaml").write_text(
        "annotation_task_name: Street clips\ndata_files: [d.jsonl]\n"
        "assignment_strategy: fixed_order\nannotation_schemes:\n"
        "  - {annotation_type: temporal_grounding, name: events, labels: [braking, stop]}\n"
    )
    project = import_project(config_path=tmp_path / "c.yaml", slug="speech").project
    user = UserFactory(username="tess")
    Membership.objects.create(user=user, project=project, role="annotator")
    # the other site, answered here: a player sniffs the sound it is sent
    page.route(
        video,
        lambda route: route.fulfill(
            status=200, body=speech_like_wav(), headers={"Content-Type": "video/mp4"}
        ),
    )
    problems = watch_console(page)
    log_in(page, live_server.url, "tess", "pw-for-tests-123")
    page.wait_for_url(f"{live_server.url}/")
    page.goto(f"{live_server.url}/projects/speech/annotate/")
    assert page.locator("video").get_attribute("src") == video
    page.locator(".timeline-clock").filter(has_text="/ 4.00 s").wait_for()
    box = wrapper_box(page, "events")
    y = box["y"] + box["height"] / 2
    a, b = x_at(box, 0.8), x_at(box, 2.2)
    drag(page, a, b, y)
    page.keyboard.press("2")
    assert value(page, "events", "start", 0) == pytest.approx(seconds_at(box, a), abs=0.011)
    assert value(page, "events", "end", 0) == pytest.approx(seconds_at(box, b), abs=0.011)
    page.screenshot(path=ARTIFACTS / "timeline-video.png", full_page=True)

    # zoomed in twice (+ +) the lane shows a quarter of the clip; a drag maps as before
    page.keyboard.press("+")
    page.keyboard.press("+")
    lane = page.locator(".timeline-wave").bounding_box()
    page.wait_for_function(
        """width => document.querySelector('.timeline-wave > div').shadowRoot
            .querySelector('[part="wrapper"]').getBoundingClientRect().width > 3.9 * width""",
        arg=lane["width"],
    )
    zoomed = wrapper_box(page, "events")
    assert zoomed["width"] == pytest.approx(4 * box["width"], rel=0.01)
    c, d = x_at(zoomed, 0.25), x_at(zoomed, 0.6)
    drag(page, c, d, y)
    assert value(page, "events", "start", 1) == pytest.approx(seconds_at(zoomed, c), abs=0.005)
    assert value(page, "events", "end", 1) == pytest.approx(seconds_at(zoomed, d), abs=0.005)
    page.keyboard.press("1")
    page.screenshot(path=ARTIFACTS / "timeline-video-zoomed.png", full_page=True)
    assert problems == []
    with page.expect_navigation():
        page.get_by_role("button", name="Submit").click()
    stored = Annotation.objects.get(annotator=user, scheme="events").value
    assert [s["label"] for s in stored] == ["stop", "braking"]
    assert stored[0]["start"] == pytest.approx(seconds_at(box, a), abs=0.011)
    assert stored[1]["end"] == pytest.approx(seconds_at(zoomed, d), abs=0.005)

    # the next clip's file is missing: no timeline, the table and a message instead
    status = page.locator(".timeline-status")
    status.filter(has_text="could not be loaded").wait_for()
    assert not page.locator(".timeline-lanes").is_visible()
    assert page.get_by_role("button", name="Add segment").is_visible()
    assert page.locator('input[name="events__start"]').count() == 0  # no row until one is added
    page.get_by_role("button", name="Use current time").click()
    assert "has not loaded" in status.inner_text()
    starts = page.locator('input[name="events__start"]')
    assert all(start.input_value() == "" for start in starts.all())
    page.get_by_role("button", name="Add segment").click()
    assert starts.count() == 1 and starts.first.is_visible()


def test_without_scripts_the_table_is_the_whole_tool(browser_page, live_server, timeline_project):
    context = browser_page.context.browser.new_context(java_script_enabled=False)
    page = context.new_page()
    log_in(page, live_server.url, "tess", "pw-for-tests-123")
    page.wait_for_url(f"{live_server.url}/")
    page.goto(f"{live_server.url}/projects/speech/annotate/")
    assert page.locator("audio").first.is_visible()
    assert not page.locator(".segment-timeline").first.is_visible()
    assert not page.get_by_role("button", name="Use current time").first.is_visible()
    cell(page, "events", "start", 0).fill("0.5")
    cell(page, "events", "end", 0).fill("1.25")
    cell(page, "events", "label", 0).select_option("music")
    page.locator('input[name="speakers__nothing"]').check()
    with page.expect_navigation():
        page.get_by_role("button", name="Submit").click()
    stored = Annotation.objects.get(annotator=timeline_project, scheme="events").value
    assert stored == [{"start": 0.5, "end": 1.25, "label": "music"}]
    context.close()
