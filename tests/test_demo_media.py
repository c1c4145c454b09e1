"""The agreement demo's media, made by examples/demo_media.py from each clip's hidden truth
(examples/agreement_demo/make_demo.py): the same bytes on every run, point clouds the
server's reader decodes with points on every truth box, cabin audio that sounds where the
truth says someone speaks or laughs and is near silent elsewhere."""

import importlib.util
import io
import math
import re
import wave
from pathlib import Path

import numpy as np
import pytest

from projects.pointclouds import parse_points

ROOT = Path(__file__).resolve().parents[1]


def _module(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


demo_media = _module("demo_media_under_test", ROOT / "examples" / "demo_media.py")
make_demo = demo_media.load_make_demo()
CLIPS, _, TRUTHS = make_demo.build()


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """The demo's media written once into a scratch folder: (folder, what was written)."""
    root = tmp_path_factory.mktemp("agreement_demo")
    return root, demo_media.write_demo_media(root)


def test_items_name_the_files_written_and_nothing_else(written):
    root, result = written
    named = {item[key] for item in CLIPS for key in ("media_url", "pointcloud")}
    assert {p.relative_to(root).as_posix() for p in result.written} == named
    assert not result.unchanged
    assert all(name.startswith("media/") for name in named)
    # The committed items are the ones make_demo builds, with the same relative names.
    committed = (ROOT / "examples/agreement_demo/data/items.jsonl").read_text().splitlines()
    assert len(committed) == len(CLIPS) and all("media/clip_" in line for line in committed)
    total = sum(p.stat().st_size for p in result.written)
    assert 5e6 < total < 20e6, total


@pytest.mark.parametrize("number", [3, 7, 14])
def test_the_generator_makes_the_same_bytes_again(written, number):
    root, _ = written
    item, truth = CLIPS[number - 1], TRUTHS[number - 1]
    again = demo_media.clip_files(item, truth, make_demo.PCD_CLIPS.get(number))
    assert set(again) == {item["media_url"], item["pointcloud"]}
    for name, content in again.items():
        assert (root / name).read_bytes() == content, name


def test_a_second_run_keeps_the_files_and_repairs_a_damaged_one(written):
    root, first = written
    again = demo_media.write_demo_media(root)
    assert again.written == [] and sorted(again.unchanged) == sorted(first.written)
    damaged, lost = root / "media" / "clip_03.wav", root / "media" / "clip_09.bin"
    good = damaged.read_bytes()
    damaged.write_bytes(good[:1000])
    lost.unlink()
    repaired = demo_media.write_demo_media(root)
    assert sorted(repaired.written) == [damaged, lost]
    assert len(repaired.unchanged) == len(first.written) - 2
    assert damaged.read_bytes() == good


def test_both_point_cloud_formats_are_exercised(written):
    root, _ = written
    suffixes = [Path(item["pointcloud"]).suffix for item in CLIPS]
    assert suffixes.count(".pcd") == 2 and suffixes.count(".bin") == len(CLIPS) - 2
    modes = set()
    for item in CLIPS:
        if item["pointcloud"].endswith(".pcd"):
            header = (root / item["pointcloud"]).read_bytes()[:400].decode("ascii", "replace")
            modes.add(header.split("DATA ", 1)[1].split()[0])
    assert modes == {"ascii", "binary"}


def _inside(points: np.ndarray, box: dict) -> int:
    """Points inside the box turned by its yaw about z."""
    cos, sin = math.cos(box["yaw"]), math.sin(box["yaw"])
    dx = points[:, 0] - box["center"][0]
    dy = points[:, 1] - box["center"][1]
    along, across = dx * cos + dy * sin, -dx * sin + dy * cos
    length, width, height = box["size"]
    return int(
        (
            (np.abs(along) <= length / 2)
            & (np.abs(across) <= width / 2)
            & (np.abs(points[:, 2] - box["center"][2]) <= height / 2)
        ).sum()
    )


@pytest.mark.parametrize("number", [1, 7, 12, 14, 20])
def test_cloud_parses_and_has_points_on_every_truth_box(written, number):
    root, _ = written
    item, truth = CLIPS[number - 1], TRUTHS[number - 1]
    path = root / item["pointcloud"]
    points = parse_points(path.read_bytes(), path.suffix)
    assert 20_000 <= len(points) <= 40_000
    assert np.hypot(points[:, 0], points[:, 1]).max() <= 40.01
    ground = np.abs(points[:, 2]) < 0.1
    assert ground.mean() > 0.6  # mostly road
    assert 0 <= points[:, 3].min() and points[:, 3].max() <= 1 and points[:, 3].std() > 0.05
    for box in truth["objects"]:
        assert _inside(points, box) >= 50, box
        # The same box turned a quarter turn holds fewer points (yaw is respected) unless
        # it is a pedestrian's square box.
        if box["label"] != "pedestrian":
            turned = {**box, "yaw": box["yaw"] + math.pi / 2}
            assert _inside(points, turned) < _inside(points, box)
    # An empty stretch of road the size of a car, far from every box, holds only road.
    empty = {"center": [0.0, 0.0, 0.75], "size": [3.0, 1.8, 1.5], "yaw": 0.0}
    assert _inside(points[~ground], empty) == 0


def _read_wav(data: bytes) -> tuple[np.ndarray, int]:
    with wave.open(io.BytesIO(data)) as clip:
        assert (clip.getnchannels(), clip.getsampwidth()) == (1, 2)
        rate = clip.getframerate()
        samples = np.frombuffer(clip.readframes(clip.getnframes()), dtype="<i2")
    return samples.astype(float) / 32768, rate


def _rms(samples: np.ndarray) -> float:
    return float(np.sqrt(np.mean(samples**2)))


@pytest.mark.parametrize("number", range(1, len(CLIPS) + 1))
def test_audio_sounds_in_the_truth_segments_and_is_quiet_elsewhere(written, number):
    root, _ = written
    item, truth = CLIPS[number - 1], TRUTHS[number - 1]
    assert item["media_url"].endswith(".wav")
    samples, rate = _read_wav((root / item["media_url"]).read_bytes())
    assert rate == 16_000
    assert 10 <= len(samples) / rate <= 20
    assert abs(len(samples) / rate - truth["duration"]) < 0.001
    # The events (braking...) are marked on the same time axis: they fit in the clip.
    assert all(event["end"] <= truth["duration"] for event in truth["events"])
    assert truth["audio"]
    quiet = np.ones(len(samples), dtype=bool)
    for segment in truth["audio"]:
        quiet[int((segment["start"] - 0.05) * rate) : int((segment["end"] + 0.05) * rate)] = False
    background = _rms(samples[quiet])
    assert background < 0.01  # under -40 dBFS
    for segment in truth["audio"]:
        inside = samples[int(segment["start"] * rate) : int(segment["end"] * rate)]
        assert _rms(inside) > 8 * background, segment
        # sound over most of the segment, not one click: 100 ms windows above the background
        windows = inside[: len(inside) // 1600 * 1600].reshape(-1, 1600)
        loud = np.sqrt((windows**2).mean(axis=1)) > 4 * background
        assert loud.mean() > 0.5, segment


@pytest.mark.django_db
def test_load_demo_stores_the_media_and_serves_them_to_a_member(client):
    from django.utils import timezone

    from annotation.models import Annotation
    from demo.management.commands.load_demo import AGREEMENT_DEMO, Command, demo_lab_and_users
    from projects.models import Project, Unit
    from projects.services import project_folder

    lab, users = demo_lab_and_users()
    Command(stdout=io.StringIO()).load_agreement_demo(lab, users["admin"])
    project = Project.objects.get(slug=AGREEMENT_DEMO[0])
    # Every file an item names is stored in the project's own folder, as generated.
    stored = project_folder(project) / "media"
    source = ROOT / "examples" / "agreement_demo"
    for item in CLIPS:
        for key in ("media_url", "pointcloud"):
            assert (stored / item[key]).read_bytes() == (source / item[key]).read_bytes()
    # The answers read as recent: the newest from the moment the demo was loaded.
    stamps = Annotation.objects.filter(project=project).values_list("created_at", flat=True)
    now = timezone.now()
    assert now - max(stamps) < timezone.timedelta(minutes=5)
    assert now - min(stamps) < timezone.timedelta(days=3)
    # A member opening a clip gets a page whose audio and point cloud load.
    client.force_login(users["anna"])
    unit = Unit.objects.get(project=project, external_id="clip_07")
    page = client.get(f"/projects/{project.slug}/annotate/{unit.pk}/")
    assert page.status_code == 200
    html = page.content.decode()
    urls = set(re.findall(r'(?:src|data-points-url)="(/projects/agreement-demo/[^"]+)"', html))
    assert any(url.endswith("clip_07.wav") for url in urls), urls
    assert any("points" in url and "clip_07.pcd" in url for url in urls), urls
    for url in urls:
        response = client.get(url)
        assert response.status_code == 200, url
        body = b"".join(response.streaming_content) if response.streaming else response.content
        assert len(body) > 1000, url
    # Someone outside the project gets nothing.
    client.force_login(users["ben"].__class__.objects.create(username="outsider"))
    assert all(client.get(url).status_code == 404 for url in urls)
