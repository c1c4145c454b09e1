"""An annotator draws 3D boxes on a lidar sweep in Debian's chromium: drags a footprint in
the bird's-eye view, moves it, turns it and raises it with keys, stretches it by a handle,
sets its height in the side view, labels it, types one number in the table and submits; the
stored box has the geometry the mouse and the keys gave it. The sweep is a KITTI .bin
written here (a ground plane with a car, a truck and a pedestrian on it), imported with its
project like any other; one more test boxes the demo's car on its .pcd sweep. Also: turning
by the handle, deleting and undoing, selecting in the perspective view, a page without
WebGL and a cloud the server cannot read (the table still takes the boxes). Screenshots go
to test-artifacts/boxes3d-*.png."""

import importlib.util
import json
import math
import os
from pathlib import Path

import numpy as np
import pytest
from django.conf import settings

from annotation.models import Annotation
from projects.models import Membership
from projects.services import import_project
from projects.tests.factories import UserFactory

from .test_browser import ARTIFACTS, CHROMIUM, LAUNCH_ARGS, log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TOLERANCE = 0.15  # metres
YAW_TOLERANCE = math.radians(2)
GROUND = -1.7  # the road under a roof scanner, in its frame
OBJECTS = [  # label, centre x, y, length, width, height, yaw
    ("car", 12.0, 4.0, 4.2, 1.8, 1.5, 0.35),
    ("truck", 24.0, -5.0, 8.0, 2.5, 3.2, 0.0),
    ("pedestrian", 8.0, -3.0, 0.6, 0.6, 1.75, 0.0),
]
CONFIG = """annotation_task_name: Lidar boxes
data_files: [data.jsonl]
annotation_schemes:
  - {annotation_type: spatial_annotation, name: objects,
     description: "Box every road user (lidar frame, metres)", labels: [car, truck, pedestrian]}
"""


def sweep() -> np.ndarray:
    """Ground points strewn over a flat road at GROUND and the objects' boxes filled with
    points, (n, 4) float32 x, y, z, intensity."""
    rng = np.random.default_rng(3)
    n = 12000
    parts = [
        np.column_stack(
            [
                rng.uniform(-5, 40, n),
                rng.uniform(-15, 15, n),
                GROUND + rng.normal(0, 0.02, n),
                rng.uniform(0.05, 0.2, n),
            ]
        )
    ]
    for _, cx, cy, length, width, height, yaw in OBJECTS:
        local = rng.uniform(-0.5, 0.5, (800, 3)) * [length, width, height]
        c, s = math.cos(yaw), math.sin(yaw)
        x = cx + local[:, 0] * c - local[:, 1] * s
        y = cy + local[:, 0] * s + local[:, 1] * c
        z = GROUND + height / 2 + local[:, 2]
        parts.append(np.column_stack([x, y, z, rng.uniform(0.3, 0.9, len(x))]))
    return np.concatenate(parts).astype("<f4")


@pytest.fixture
def lidar_project(tmp_path):
    (tmp_path / "clouds").mkdir()
    (tmp_path / "clouds" / "scene_01.bin").write_bytes(sweep().tobytes())
    row = {"id": "scene_01", "text": "Scene 1", "pointcloud": "clouds/scene_01.bin"}
    (tmp_path / "data.jsonl").write_text(json.dumps(row) + "\n")
    (tmp_path / "config.yaml").write_text(CONFIG)
    project = import_project(config_path=tmp_path / "config.yaml", slug="lidar").project
    user = UserFactory(username="lina")
    Membership.objects.create(user=user, project=project, role="annotator")
    return project, user


def launch(extra_args):
    if not Path(CHROMIUM).exists():
        if os.environ.get("REQUIRE_SERVICES") == "1":
            pytest.fail("REQUIRE_SERVICES=1 but chromium is not installed", pytrace=False)
        pytest.skip("needs Debian's chromium (apt-get install chromium)")
    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=[*LAUNCH_ARGS, *extra_args]
        )
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.problems = []  # console errors (a CSP violation is one) and uncaught exceptions
        page.on(
            "console",
            lambda m: m.type == "error" and page.problems.append(f"console: {m.text}"),
        )
        page.on("pageerror", lambda e: page.problems.append(f"page error: {e}"))
        yield page
        browser.close()


@pytest.fixture
def webgl_page():
    """Chromium with WebGL drawn in software (SwiftShader): no GPU on a test machine."""
    yield from launch(["--use-angle=swiftshader", "--enable-unsafe-swiftshader"])


@pytest.fixture
def no_webgl_page():
    yield from launch(["--disable-webgl", "--disable-3d-apis"])


class BirdsEye:
    """The bird's-eye view's pixels <-> metres, read from the canvas's data attributes."""

    def __init__(self, page):
        canvas = page.locator(".boxes3d-bev")
        canvas.scroll_into_view_if_needed()  # the mouse acts on what the window shows
        box = canvas.bounding_box()
        self.page, self.left, self.top = page, box["x"], box["y"]
        self.width, self.height = box["width"], box["height"]
        self.mpp = float(canvas.get_attribute("data-metres-per-pixel"))
        self.cx = float(canvas.get_attribute("data-centre-x"))
        self.cy = float(canvas.get_attribute("data-centre-y"))

    def pixel(self, x, y):
        """Page coordinates of the ground point (x, y): x points up the screen, y left."""
        return (
            self.left + self.width / 2 - (y - self.cy) / self.mpp,
            self.top + self.height / 2 - (x - self.cx) / self.mpp,
        )

    def drag(self, start, end):
        mouse = self.page.mouse
        mouse.move(*self.pixel(*start))
        mouse.down()
        mouse.move(*self.pixel(*end), steps=10)
        mouse.up()


class SideView:
    """The side view of the selected box: metres along its heading from its centre, and
    height, <-> pixels."""

    def __init__(self, page):
        canvas = page.locator(".boxes3d-side")
        canvas.scroll_into_view_if_needed()
        box = canvas.bounding_box()
        self.page, self.left, self.top = page, box["x"], box["y"]
        self.width, self.height = box["width"], box["height"]
        self.mpp = float(canvas.get_attribute("data-metres-per-pixel"))
        self.cz = float(canvas.get_attribute("data-centre-z"))

    def pixel(self, u, z):
        return (
            self.left + self.width / 2 + u / self.mpp,
            self.top + self.height / 2 - (z - self.cz) / self.mpp,
        )

    def drag(self, start, end):
        mouse = self.page.mouse
        mouse.move(*self.pixel(*start))
        mouse.down()
        mouse.move(*self.pixel(*end), steps=10)
        mouse.up()


def row_values(page, n=0):
    row = page.locator('table[data-rows="objects"] tr.data-row').nth(n)
    values = {}
    for key in ("cx", "cy", "cz", "l", "w", "h", "yaw"):
        values[key] = float(row.locator(f'[name="objects__{key}"]').input_value())
    values["label"] = row.locator('[name="objects__label"]').input_value()
    return values


def assert_near(actual, expected):
    for key, value in expected.items():
        if isinstance(value, str):
            assert actual[key] == value, (key, actual)
        else:
            limit = YAW_TOLERANCE if key == "yaw" else TOLERANCE
            assert abs(actual[key] - value) <= limit, (key, actual[key], value, actual)


def open_viewer(page, url):
    page.goto(url)
    page.wait_for_selector('.boxes3d[data-state="ready"]')
    page.wait_for_function("Number(document.querySelector('.boxes3d').dataset.frames) > 0")
    page.locator(".boxes3d-views").scroll_into_view_if_needed()


def test_annotator_draws_turns_and_stores_a_box_with_the_mouse_and_keys(
    webgl_page, live_server, lidar_project
):
    page = webgl_page
    project, user = lidar_project
    log_in(page, live_server.url, "lina", "pw-for-tests-123")
    page.wait_for_url(f"{live_server.url}/")
    open_viewer(page, f"{live_server.url}/projects/lidar/annotate/")
    viewer = "window.annolabBoxes.objects"
    assert page.evaluate(f"{viewer}.pointCount()") == len(sweep())
    # the legend of shortcuts: the mouse's (a touch screen's wording is for touch screens)
    legend = page.locator(".boxes3d-keys")
    assert legend.locator("ul.mouse-help").get_by_text("drag on the ground:").is_visible()
    assert not legend.locator("ul.touch-help").is_visible()
    page.screenshot(path=ARTIFACTS / "boxes3d-empty.png", full_page=True)

    bev = BirdsEye(page)
    # the car stands at x 12, y 4: draw its footprint from one corner to the other
    bev.drag((14.2, 5.0), (9.8, 3.0))
    drawn = row_values(page)
    base = drawn["cz"] - drawn["h"] / 2
    assert_near(drawn, {"cx": 12.0, "cy": 4.0, "l": 4.4, "w": 2.0, "h": 1.5, "yaw": 0.0})
    assert abs(base - GROUND) <= TOLERANCE  # the base sits on the ground under the footprint
    assert drawn["label"] == "car"  # the toolbar's label, the first one
    page.screenshot(path=ARTIFACTS / "boxes3d-drawn.png", full_page=True)

    # drag the box 0.4 m forward by its inside, then nudge it back 0.1 m with a key
    bev.drag((12.0, 4.0), (12.4, 4.0))
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Control+z")  # undone: back where the drag left it
    assert_near(row_values(page), {"cx": 12.4, "cy": 4.0})
    page.keyboard.press("ArrowDown")
    # turn it 20 degrees left, raise its top 0.3 m (base kept), label it by number keys
    page.keyboard.press("Shift+Q")
    page.keyboard.press("Shift+Q")
    for _ in range(3):
        page.keyboard.press("PageUp")
    page.keyboard.press("2")
    assert row_values(page)["label"] == "truck"
    page.keyboard.press("1")
    yaw = math.radians(20)
    assert_near(row_values(page), {"cx": 12.3, "cy": 4.0, "h": 1.8, "yaw": yaw, "label": "car"})
    assert abs(row_values(page)["cz"] - 0.9 - base) <= 0.01

    # zoom in to it (Z) and stretch it 0.6 m forward by the handle in the middle of its
    # front edge (a box small on screen has corner handles only)
    page.keyboard.press("z")
    bev = BirdsEye(page)
    box = row_values(page)
    front = (box["cx"] + 2.2 * math.cos(yaw), box["cy"] + 2.2 * math.sin(yaw))
    bev.drag(front, (front[0] + 0.6 * math.cos(yaw), front[1] + 0.6 * math.sin(yaw)))
    stretched = {
        "cx": 12.3 + 0.3 * math.cos(yaw),
        "cy": 4.0 + 0.3 * math.sin(yaw),
        "l": 5.0,
        "w": 2.0,
        "yaw": yaw,
    }
    assert_near(row_values(page), stretched)

    # in the side view, pull its top up 0.3 m: the base stays on the ground
    side = SideView(page)
    top = base + 1.8
    side.drag((0.0, top), (0.0, top + 0.3))
    assert_near(row_values(page), {**stretched, "h": 2.1})
    assert abs(row_values(page)["cz"] - 1.05 - base) <= 0.05
    page.screenshot(path=ARTIFACTS / "boxes3d-selected.png", full_page=True)

    # the table is the exact-edit panel: a typed number moves the box in the views
    page.locator('[name="objects__cy"]').first.fill("3.5")
    shown = page.evaluate(f"{viewer}.drawn()")
    assert len(shown) == 1 and abs(shown[0]["cy"] - 3.5) < 1e-6
    assert abs(shown[0]["yaw"] - yaw) <= YAW_TOLERANCE and abs(shown[0]["l"] - 5.0) <= TOLERANCE

    with page.expect_navigation():
        page.get_by_role("button", name="Submit").click()
    answer = Annotation.objects.get(annotator=user, scheme="objects")
    (stored,) = answer.value
    assert stored["label"] == "car"
    expected_center = [stretched["cx"], 3.5, base + 1.05]
    assert all(
        abs(a - b) <= TOLERANCE for a, b in zip(stored["center"], expected_center, strict=True)
    ), stored
    assert all(
        abs(a - b) <= TOLERANCE for a, b in zip(stored["size"], [5.0, 2.0, 2.1], strict=True)
    ), stored
    assert abs(stored["yaw"] - yaw) <= YAW_TOLERANCE, stored

    # the stored box comes back drawn; on a phone the page does not scroll sideways
    url = f"{live_server.url}/projects/lidar/annotate/{answer.unit_id}/"
    page.set_viewport_size({"width": 390, "height": 844})
    open_viewer(page, url)
    assert len(page.evaluate(f"{viewer}.drawn()")) == 1
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    # a tap selects it, a button (no keyboard on a phone) zooms in to it
    phone = BirdsEye(page)
    page.mouse.click(*phone.pixel(*stored["center"][:2]))
    assert page.evaluate(f"{viewer}.selected()") == 0
    page.get_by_role("button", name="Zoom to box").click()
    assert BirdsEye(page).mpp < phone.mpp / 2
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.screenshot(path=ARTIFACTS / "boxes3d-phone.png", full_page=True)
    assert page.problems == []


def test_deleting_in_the_view_removes_the_row(webgl_page, live_server, lidar_project):
    page = webgl_page
    log_in(page, live_server.url, "lina", "pw-for-tests-123")
    page.wait_for_url(f"{live_server.url}/")
    open_viewer(page, f"{live_server.url}/projects/lidar/annotate/")
    bev = BirdsEye(page)
    bev.drag((26.0, -3.0), (22.0, -7.0))  # the truck
    page.keyboard.press("3")
    # turn it by its round handle, 30 px in front of it, to 30 degrees left
    ahead = 2.0 + 30 * bev.mpp
    turned = math.radians(30)
    bev.drag(
        (24.0 + ahead, -5.0), (24.0 + ahead * math.cos(turned), -5.0 + ahead * math.sin(turned))
    )
    assert_near(row_values(page), {"cx": 24.0, "cy": -5.0, "l": 4.0, "w": 4.0, "yaw": turned})
    bev.drag((8.5, -2.5), (7.5, -3.5))  # the pedestrian: a second row
    rows = page.locator('table[data-rows="objects"] tr.data-row')
    assert rows.count() == 2
    assert row_values(page, 0)["label"] == "pedestrian"  # "3" chose the label of new boxes
    assert_near(row_values(page, 1), {"cx": 8.0, "cy": -3.0, "l": 1.0, "w": 1.0})
    selected = "window.annolabBoxes.objects.selected()"
    page.keyboard.press("n")  # the next box, round to the first
    assert page.evaluate(selected) == 0
    page.keyboard.press("n")
    assert page.evaluate(selected) == 1
    page.keyboard.press("z")  # zoom in to the pedestrian
    near = BirdsEye(page)
    assert near.mpp < bev.mpp / 3 and near.pixel(8.0, -3.0) == pytest.approx(
        (near.left + near.width / 2, near.top + near.height / 2), abs=1
    )
    # Escape during a drag puts the box back where it was
    page.mouse.move(*near.pixel(8.0, -3.0))
    page.mouse.down()
    page.mouse.move(*near.pixel(9.0, -3.0), steps=5)
    assert_near(row_values(page, 1), {"cx": 9.0})
    page.keyboard.press("Escape")
    page.mouse.up()
    assert_near(row_values(page, 1), {"cx": 8.0, "cy": -3.0})
    page.keyboard.press("z")  # the whole cloud again
    assert BirdsEye(page).mpp == pytest.approx(bev.mpp)
    page.keyboard.press("Delete")
    assert rows.count() == 1
    page.keyboard.press("Control+z")  # undo brings the pedestrian back, in a row of its own
    assert rows.count() == 2
    assert_near(row_values(page, 1), {"cx": 8.0, "cy": -3.0, "l": 1.0, "label": "pedestrian"})
    page.keyboard.press("Delete")
    assert rows.count() == 1
    assert_near(row_values(page, 0), {"cx": 24.0, "cy": -5.0, "l": 4.0, "w": 4.0, "yaw": turned})
    # show the truck in the perspective view (F), deselect it, and click it there
    page.keyboard.press("n")
    page.keyboard.press("f")
    page.keyboard.press("Escape")
    assert page.evaluate(selected) is None
    at = page.evaluate("window.annolabBoxes.objects.perspectivePixel(24, -5, -1)")
    page.locator(".boxes3d-persp").click(position={"x": at["px"], "y": at["py"]})
    assert page.evaluate(selected) == 0
    page.locator('[name="objects__label"]').first.select_option("truck")
    with page.expect_navigation():
        page.get_by_role("button", name="Submit").click()
    (stored,) = Annotation.objects.get(scheme="objects").value
    assert stored["label"] == "truck"
    assert page.problems == []


def test_without_webgl_the_table_still_takes_the_box(no_webgl_page, live_server, lidar_project):
    page = no_webgl_page
    log_in(page, live_server.url, "lina", "pw-for-tests-123")
    page.wait_for_url(f"{live_server.url}/")
    page.goto(f"{live_server.url}/projects/lidar/annotate/")
    page.wait_for_selector('.boxes3d[data-state="unavailable"]')
    assert page.get_by_text("cannot draw the point cloud").is_visible()
    assert not page.locator(".boxes3d-bev").is_visible()
    page.get_by_role("button", name="Add box").click()  # the table starts with no row
    for key, value in zip(
        ("cx", "cy", "cz", "l", "w", "h", "yaw"),
        "12 4 -0.95 4.2 1.8 1.5 0.35".split(),
        strict=True,
    ):
        page.locator(f'[name="objects__{key}"]').fill(value)
    page.locator('[name="objects__label"]').select_option("car")
    page.screenshot(path=ARTIFACTS / "boxes3d-no-webgl.png", full_page=True)
    with page.expect_navigation():
        page.get_by_role("button", name="Submit").click()
    (stored,) = Annotation.objects.get(scheme="objects").value
    assert stored["center"] == [12, 4, -0.95] and stored["size"] == [4.2, 1.8, 1.5]
    assert page.problems == []


def demo_media():
    """examples/demo_media.py, which writes the demo's sweeps (examples is not a package)."""
    path = Path(settings.BASE_DIR) / "examples" / "demo_media.py"
    spec = importlib.util.spec_from_file_location("demo_media", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_annotator_boxes_the_demo_car_on_its_pcd_sweep(webgl_page, live_server, tmp_path):
    """The demo's clip 7: an ASCII .pcd sweep of rings on a road, a car seen from one side
    and its shadow. Its footprint drawn with the mouse and one turn by a key store the
    demo's own truth box."""
    media = demo_media()
    make_demo = media.load_make_demo()
    clips, _, truths = make_demo.build()
    item, truth = next((i, t) for i, t in zip(clips, truths, strict=True) if t["number"] == 7)
    files = media.clip_files(item, truth, make_demo.PCD_CLIPS.get(7))
    assert item["pointcloud"].endswith(".pcd")
    for name, content in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(content)
    row = {"id": item["id"], "text": item["text"], "pointcloud": item["pointcloud"]}
    (tmp_path / "data.jsonl").write_text(json.dumps(row) + "\n")
    (tmp_path / "config.yaml").write_text(CONFIG)
    project = import_project(config_path=tmp_path / "config.yaml", slug="lidar").project
    user = UserFactory(username="lina")
    Membership.objects.create(user=user, project=project, role="annotator")
    car = next(o for o in truth["objects"] if o["label"] == "car")
    (cx, cy, cz), (length, width, height), yaw = car["center"], car["size"], car["yaw"]
    assert -0.2 < yaw < -0.15  # about 10 degrees right: one Shift+E

    page = webgl_page
    log_in(page, live_server.url, "lina", "pw-for-tests-123")
    page.wait_for_url(f"{live_server.url}/")
    open_viewer(page, f"{live_server.url}/projects/lidar/annotate/")
    bev = BirdsEye(page)
    bev.drag((cx + length / 2, cy + width / 2), (cx - length / 2, cy - width / 2))
    page.keyboard.press("Shift+E")
    page.screenshot(path=ARTIFACTS / "boxes3d-demo-car.png", full_page=True)
    with page.expect_navigation():
        page.get_by_role("button", name="Submit").click()
    (stored,) = Annotation.objects.get(annotator=user, scheme="objects").value
    assert stored["label"] == "car"
    expected = [cx, cy, cz, length, width, height]
    assert all(
        abs(a - b) <= TOLERANCE
        for a, b in zip([*stored["center"], *stored["size"]], expected, strict=True)
    ), (stored, car)
    assert abs(stored["yaw"] - yaw) <= math.radians(1), (stored, car)
    assert page.problems == []


def test_a_cloud_that_cannot_be_read_is_named_and_typed_boxes_still_draw(
    webgl_page, live_server, lidar_project
):
    page = webgl_page
    page.route(
        "**/projects/lidar/points/**",
        lambda route: route.fulfill(
            status=422, content_type="text/plain", body="This point cloud cannot be read: test"
        ),
    )
    log_in(page, live_server.url, "lina", "pw-for-tests-123")
    page.wait_for_url(f"{live_server.url}/")
    page.goto(f"{live_server.url}/projects/lidar/annotate/")
    page.wait_for_selector('.boxes3d[data-state="error"]')
    assert page.get_by_text(
        "Could not load the point cloud (the server answered 422: This point cloud cannot be read"
    ).is_visible()
    page.get_by_role("button", name="Add box").click()
    for key, value in zip(("cx", "cy", "l", "w", "h"), "12 4 4.2 1.8 1.5".split(), strict=True):
        page.locator(f'[name="objects__{key}"]').fill(value)
    (shown,) = page.evaluate("window.annolabBoxes.objects.drawn()")
    assert (shown["cx"], shown["cy"], shown["l"]) == (12, 4, 4.2)
    # the browser's own line for the refused request is the only console error
    assert [p for p in page.problems if "Failed to load resource" not in p] == []
