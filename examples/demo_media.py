"""Make the agreement demo's media from each clip's hidden truth (agreement_demo/make_demo.py):
a lidar sweep (KITTI .bin, or PCD for a few clips) and the cabin audio (16 kHz mono WAV).

Seeded by the clip number, so the same bytes every time. The files are not in the
repository: ``manage.py load_demo`` writes them before it imports the demo, and so does

    .venv/bin/python examples/demo_media.py            # into examples/agreement_demo/media
    .venv/bin/python examples/make_data.py --demo-media

A file already there with the right bytes is left alone. No video: Debian's ffmpeg is not on
a fresh machine and the demo must build offline, so clips carry audio and point clouds only.

The sweep: a flat road (z = 0) seen by a roof scanner 1.73 m up, in rings that thin out with
distance up to 40 m, dashed lane markings brighter than the asphalt, shadows behind road
users, the faces of every truth box the scanner sees (car body and cabin, truck cab and
cargo box, a pedestrian's body and head, turned by the box's yaw), street lights and house
fronts. The audio: background hum and hiss, speech where the truth has a speech segment
(voiced syllables, a pitch contour, formants of changing vowels, consonant noise) and
laughter where it has laughter (breathy bursts); the driver's voice is lower.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import io
import json
import math
import os
import wave
from pathlib import Path
from typing import NamedTuple

import numpy as np
from scipy.signal import lfilter

HERE = Path(__file__).resolve().parent
DEMO = HERE / "agreement_demo"
SAMPLE_RATE = 16_000
SEED = 2026
SENSOR_HEIGHT = 1.73
MAX_RANGE = 40.0


def load_make_demo():
    """examples/agreement_demo/make_demo.py as a module (examples is not a package)."""
    spec = importlib.util.spec_from_file_location("agreement_make_demo", DEMO / "make_demo.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def clip_rng(number: int, kind: str) -> np.random.Generator:
    return np.random.default_rng([SEED, number, {"cloud": 1, "audio": 2}[kind]])


# --- point clouds -------------------------------------------------------------------------


def point_cloud(truth: dict) -> np.ndarray:
    """The clip's sweep: an (n, 4) float32 array of x, y, z (metres) and intensity (0-1)."""
    rng = clip_rng(truth["number"], "cloud")
    fixtures = _fixtures(rng, truth["objects"])
    parts = [_ground(rng, truth["objects"] + fixtures)]
    parts.extend(_road_user(rng, box) for box in truth["objects"])
    parts.extend(_fixture(rng, fixture) for fixture in fixtures)
    points = np.concatenate(parts).astype(np.float32)
    return points[np.argsort(np.arctan2(points[:, 1], points[:, 0]), kind="stable")]


def _ground(rng: np.random.Generator, objects: list[dict]) -> np.ndarray:
    """Scan rings on the road, without the points a box hides or stands on."""
    angles = np.radians(np.linspace(26.0, 2.5, 30))
    radii = SENSOR_HEIGHT / np.tan(angles)
    azimuth = np.radians(np.arange(0, 360, 0.5))
    r = (radii[:, None] + rng.normal(0, 0.02, (len(radii), len(azimuth)))).ravel()
    a = (azimuth[None, :] + rng.normal(0, 0.001, (len(radii), len(azimuth)))).ravel()
    x, y = r * np.cos(a), r * np.sin(a)
    z = rng.normal(0, 0.02, len(r))
    # asphalt, with dashed lane lines (every 3.5 m across, 3 m painted of every 9 m)
    intensity = rng.uniform(0.05, 0.2, len(r))
    marked = (
        (np.abs(np.abs(y) - np.round(np.abs(y) / 3.5) * 3.5) < 0.08)
        & (np.abs(y) < 7.1)
        & ((x % 9.0) < 3.0)
    )
    intensity[marked] = rng.uniform(0.6, 0.85, int(marked.sum()))
    keep = np.ones(len(r), dtype=bool)
    for box in objects:
        local = _to_local(np.column_stack([x, y]), box)
        half = np.array(box["size"][:2]) / 2
        keep &= ~(np.abs(local) <= half).all(axis=1)
        # shadow: behind the box, inside the angle it spans as seen from the scanner
        corners = _footprint(box)
        span = np.arctan2(corners[:, 1], corners[:, 0])
        middle = math.atan2(box["center"][1], box["center"][0])
        offsets = np.angle(np.exp(1j * (span - middle)))
        near = np.hypot(corners[:, 0], corners[:, 1]).min()
        seen = np.angle(np.exp(1j * (a - middle)))
        keep &= ~((seen > offsets.min()) & (seen < offsets.max()) & (r > near))
    points = np.column_stack([x, y, z, intensity])[keep]
    return points[np.hypot(points[:, 0], points[:, 1]) <= MAX_RANGE]


def _road_user(rng: np.random.Generator, box: dict) -> np.ndarray:
    """Points on the faces of the box's shape that face the scanner, in the lidar frame."""
    length, width, height = box["size"]
    if box["label"] == "pedestrian":
        local = np.concatenate(
            [
                _cylinder(rng, box, 0.2, 0.0, 0.82 * height, 260),  # legs and body
                _cylinder(rng, box, 0.11, 0.86 * height, height, 50),  # head
            ]
        )
        intensity = rng.uniform(0.15, 0.4, len(local))
    else:
        if box["label"] == "car":  # body, then the cabin, shorter and narrower
            blocks = [
                ((-length / 2, length / 2), (-width / 2, width / 2), (0.15, 0.55 * height)),
                (
                    (-0.3 * length, 0.22 * length),
                    (-0.45 * width, 0.45 * width),
                    (0.55 * height, height),
                ),
            ]
        else:  # truck: cargo box behind a lower cab
            blocks = [
                ((-length / 2, 0.22 * length), (-width / 2, width / 2), (0.3, height)),
                ((0.25 * length, length / 2), (-width / 2, width / 2), (0.3, 0.8 * height)),
            ]
        local = np.concatenate([_block(rng, box, *block) for block in blocks])
        intensity = rng.uniform(0.25, 0.6, len(local))
        plates = (np.abs(np.abs(local[:, 0]) - length / 2) < 0.02) & (np.abs(local[:, 1]) < 0.3)
        intensity[plates & (local[:, 2] < 0.7)] = 0.95  # number plates shine
    local = local + rng.normal(0, 0.01, local.shape)
    world = _to_world(local, box)
    return np.column_stack([world, intensity])


def _density(box: dict) -> float:
    """Points per square metre at the box's distance (as a spinning scanner thins out)."""
    distance = max(math.hypot(*box["center"][:2]), 1.0)
    return float(np.clip(5000 / distance**2, 25, 400))


def _block(rng, box, xs, ys, zs) -> np.ndarray:
    """Points on the faces of a block (box frame) that the scanner sees: sides and top."""
    sensor = _to_local(np.array([[0.0, 0.0]]), box)[0]
    (x0, x1), (y0, y1), (_, z1) = xs, ys, zs
    faces = []
    # (fixed axis, its value, outward sign)
    for axis, value, outward in ((0, x0, -1), (0, x1, 1), (1, y0, -1), (1, y1, 1)):
        if outward * (sensor[axis] - value) <= 0:
            continue
        other = (1, ys) if axis == 0 else (0, xs)
        faces.append((axis, value, other, zs))
    density = _density(box)
    parts = []
    for axis, value, (other_axis, (u0, u1)), (w0, w1) in faces:
        n = max(20, int(density * (u1 - u0) * (w1 - w0)))
        face = np.empty((n, 3))
        face[:, axis] = value
        face[:, other_axis] = rng.uniform(u0, u1, n)
        face[:, 2] = rng.uniform(w0, w1, n)
        parts.append(face)
    if z1 < SENSOR_HEIGHT + 0.5:  # a roof below or near the scanner's height shows
        n = max(20, int(density * 0.5 * (x1 - x0) * (y1 - y0)))
        parts.append(
            np.column_stack([rng.uniform(x0, x1, n), rng.uniform(y0, y1, n), np.full(n, z1)])
        )
    return np.concatenate(parts)


def _cylinder(rng, box, radius, z0, z1, minimum) -> np.ndarray:
    """The half of an upright cylinder (box frame) turned towards the scanner."""
    sensor = _to_local(np.array([[0.0, 0.0]]), box)[0]
    facing = math.atan2(sensor[1], sensor[0])
    n = max(minimum, int(_density(box) * math.pi * radius * (z1 - z0)))
    angle = facing + rng.uniform(-math.pi / 2, math.pi / 2, n)
    return np.column_stack([radius * np.cos(angle), radius * np.sin(angle), rng.uniform(z0, z1, n)])


def _fixtures(rng: np.random.Generator, objects: list[dict]) -> list[dict]:
    """Street lights along the pavements and house fronts beyond them, clear of road users,
    as boxes (centre, size, yaw) like the road users'."""
    fixtures = []
    wanted = int(rng.integers(4, 9))
    while len(fixtures) < wanted:
        x, y = rng.uniform(-38, 38), rng.choice([-1, 1]) * rng.uniform(7.6, 8.2)
        if any(math.hypot(x - o["center"][0], y - o["center"][1]) < 2.5 for o in objects):
            continue
        height = rng.uniform(4, 7)
        fixtures.append(
            {
                "label": "pole",
                "center": [x, y, height / 2],
                "size": [0.24, 0.24, height],
                "yaw": 0.0,
            }
        )
    for _ in range(int(rng.integers(1, 4))):
        y = rng.choice([-1, 1]) * rng.uniform(16, 20)
        x0 = rng.uniform(-38, 20)
        x1 = min(x0 + rng.uniform(8, 20), 38)
        height = rng.uniform(2.5, 6)
        fixtures.append(
            {
                "label": "wall",
                "center": [(x0 + x1) / 2, y, height / 2],
                "size": [x1 - x0, 0.3, height],
                "yaw": 0.0,
            }
        )
    return fixtures


def _fixture(rng: np.random.Generator, fixture: dict) -> np.ndarray:
    """A pole's near half, or a house front's face towards the road."""
    (x, y, _), (length, _, height) = fixture["center"], fixture["size"]
    if fixture["label"] == "pole":
        n = int(rng.integers(120, 220))
        angle = math.atan2(-y, -x) + rng.uniform(-math.pi / 2, math.pi / 2, n)
        return np.column_stack(
            [
                x + 0.12 * np.cos(angle),
                y + 0.12 * np.sin(angle),
                rng.uniform(0, height, n),
                rng.uniform(0.4, 0.6, n),
            ]
        )
    n = int(min(3000, 12 * length * height))
    face = y - math.copysign(0.15, y)
    wall = np.column_stack(
        [
            x + rng.uniform(-length / 2, length / 2, n),
            np.full(n, face) + rng.normal(0, 0.02, n),
            rng.uniform(0, height, n),
            rng.uniform(0.2, 0.45, n),
        ]
    )
    return wall[np.hypot(wall[:, 0], wall[:, 1]) <= MAX_RANGE]


def _rotation(yaw: float) -> np.ndarray:
    return np.array([[math.cos(yaw), -math.sin(yaw)], [math.sin(yaw), math.cos(yaw)]])


def _to_local(xy: np.ndarray, box: dict) -> np.ndarray:
    """Lidar-frame x, y into the box's frame (x along its length)."""
    return (xy - np.array(box["center"][:2])) @ _rotation(box["yaw"])


def _to_world(local: np.ndarray, box: dict) -> np.ndarray:
    xy = local[:, :2] @ _rotation(box["yaw"]).T + np.array(box["center"][:2])
    return np.column_stack([xy, local[:, 2]])


def _footprint(box: dict) -> np.ndarray:
    half_l, half_w = box["size"][0] / 2, box["size"][1] / 2
    corners = np.array([[half_l, half_w], [half_l, -half_w], [-half_l, -half_w], [-half_l, half_w]])
    return corners @ _rotation(box["yaw"]).T + np.array(box["center"][:2])


def points_in_box(points: np.ndarray, box: dict) -> int:
    """How many points lie inside the box (centre, size, yaw about z)."""
    local = _to_local(points[:, :2].astype(np.float64), box)
    half = np.array(box["size"]) / 2
    inside = (np.abs(local) <= half[:2]).all(axis=1)
    inside &= np.abs(points[:, 2] - box["center"][2]) <= half[2]
    return int(inside.sum())


def kitti_bin(points: np.ndarray) -> bytes:
    return np.ascontiguousarray(points, dtype="<f4").tobytes()


def pcd(points: np.ndarray, data: str) -> bytes:
    """A PCD v0.7 file, fields x y z intensity (float32), DATA ascii or binary."""
    header = (
        "# .PCD v0.7 - Point Cloud Data file format\n"
        "VERSION 0.7\n"
        "FIELDS x y z intensity\n"
        "SIZE 4 4 4 4\n"
        "TYPE F F F F\n"
        "COUNT 1 1 1 1\n"
        f"WIDTH {len(points)}\n"
        "HEIGHT 1\n"
        "VIEWPOINT 0 0 0 1 0 0 0\n"
        f"POINTS {len(points)}\n"
        f"DATA {data}\n"
    ).encode("ascii")
    if data == "binary":
        return header + kitti_bin(points)
    rows = "".join(f"{x:.3f} {y:.3f} {z:.3f} {i:.3f}\n" for x, y, z, i in points.tolist())
    return header + rows.encode("ascii")


# --- audio ----------------------------------------------------------------------------------

# First three formants (Hz) of five vowels, for an adult male voice.
VOWELS = {
    "a": (730, 1090, 2440),
    "e": (530, 1840, 2480),
    "i": (300, 2250, 2900),
    "o": (570, 840, 2410),
    "u": (320, 900, 2240),
}
BANDWIDTHS = (80, 100, 140)
VOICES = {"driver": (115.0, 1.0), "passenger": (205.0, 1.15)}  # pitch (Hz), formant scale


def cabin_audio(truth: dict) -> np.ndarray:
    """The clip's cabin audio as float samples in [-1, 1] at SAMPLE_RATE."""
    rng = clip_rng(truth["number"], "audio")
    n = int(round(truth["duration"] * SAMPLE_RATE))
    t = np.arange(n) / SAMPLE_RATE
    hiss = rng.normal(0, 1, n)
    rumble = lfilter([0.02], [1, -0.98], rng.normal(0, 1, n))
    signal = 0.0015 * hiss + 0.01 * rumble + 0.0015 * np.sin(2 * np.pi * 38 * t)
    for segment in truth["audio"]:
        start = int(round(segment["start"] * SAMPLE_RATE))
        length = int(round(segment["end"] * SAMPLE_RATE)) - start
        pitch, scale = VOICES[segment["tier"]]
        if segment["label"] == "laughter":
            sound = _laughter(rng, length, pitch * 1.6, scale)
        else:
            sound = _speech(rng, length, pitch, scale)
        signal[start : start + length] += sound[: n - start]
    return np.clip(signal, -1, 1)


def _speech(rng: np.random.Generator, length: int, pitch: float, scale: float) -> np.ndarray:
    """Syllables of a phrase: consonant noise, then a voiced vowel, with pauses between
    words; the pitch falls over the phrase and rises on stressed syllables."""
    out = np.zeros(length)
    position = int(0.03 * SAMPLE_RATE)
    end = length - int(0.03 * SAMPLE_RATE)
    while True:
        syllable = int(rng.uniform(0.14, 0.3) * SAMPLE_RATE)
        if position + syllable > end:
            break
        progress = position / length
        f0 = pitch * (1.12 - 0.22 * progress) * (1.15 if rng.random() < 0.3 else 1.0)
        vowel = VOWELS[str(rng.choice(list(VOWELS)))]
        formants = tuple(f * scale for f in vowel)
        onset = int(rng.uniform(0.02, 0.06) * SAMPLE_RATE) if rng.random() < 0.7 else 0
        if onset:
            out[position : position + onset] += _consonant(rng, onset)
        voiced = syllable - onset
        drift = f0 * (1 + np.linspace(0.04, -0.06, voiced) + rng.normal(0, 0.004, voiced))
        sound = _normal(_formant_filter(_glottal(drift), formants))
        sound *= _envelope(voiced, attack=0.2, power=0.7) * rng.uniform(0.6, 1.0)
        out[position + onset : position + syllable] += sound
        position += syllable
        position += int(rng.uniform(0.12, 0.25) * SAMPLE_RATE) if rng.random() < 0.25 else 0
    return 0.35 * out / max(1e-9, np.abs(out).max()) * _fade(length)


def _laughter(rng: np.random.Generator, length: int, pitch: float, scale: float) -> np.ndarray:
    """'Ha-ha-ha': breathy bursts of about a tenth of a second, each weaker than the last,
    then a breath in, again."""
    out = np.zeros(length)
    position = int(0.03 * SAMPLE_RATE)
    loudness = 1.0
    formants = tuple(f * scale for f in VOWELS["a"])
    while True:
        burst = int(rng.uniform(0.08, 0.14) * SAMPLE_RATE)
        if position + burst > length - int(0.03 * SAMPLE_RATE):
            break
        f0 = pitch * rng.uniform(0.9, 1.1) * np.linspace(1.05, 0.95, burst)
        voiced = _glottal(f0)
        breath = rng.normal(0, 1, burst) * 2
        sound = _normal(_formant_filter(voiced + breath, formants))
        out[position : position + burst] += (
            sound * _envelope(burst, attack=0.1, power=1.5) * loudness
        )
        position += burst + int(rng.uniform(0.06, 0.12) * SAMPLE_RATE)
        loudness *= rng.uniform(0.8, 0.95)
        if loudness < 0.45:  # breath in
            position += int(rng.uniform(0.2, 0.4) * SAMPLE_RATE)
            loudness = rng.uniform(0.85, 1.0)
    return 0.3 * out / max(1e-9, np.abs(out).max()) * _fade(length)


def _glottal(f0: np.ndarray) -> np.ndarray:
    """Harmonics of a varying fundamental up to 4 kHz, falling 6 dB per octave (the glottal
    pulse's 12 dB, less the 6 dB the lips add back)."""
    phase = 2 * np.pi * np.cumsum(f0) / SAMPLE_RATE
    out = np.zeros(len(f0))
    for k in range(1, int(4000 / f0.max()) + 1):
        out += np.sin(k * phase) / k
    return out


def _formant_filter(source: np.ndarray, formants: tuple, bandwidths=BANDWIDTHS) -> np.ndarray:
    """Two-pole resonators in cascade, one per formant."""
    out = source
    for frequency, bandwidth in zip(formants, bandwidths[: len(formants)], strict=True):
        r = math.exp(-math.pi * bandwidth / SAMPLE_RATE)
        theta = 2 * math.pi * frequency / SAMPLE_RATE
        a = [1, -2 * r * math.cos(theta), r * r]
        out = lfilter([sum(a)], a, out)
    return out


def _consonant(rng: np.random.Generator, length: int) -> np.ndarray:
    """A hiss (s, sh, f) or a short burst (p, t, k): noise in the band of its sound."""
    kind = rng.choice(["s", "sh", "f", "burst"])
    centre, width, level = {
        "s": (5500, 2500, 0.25),
        "sh": (3000, 1500, 0.25),
        "f": (4000, 4000, 0.08),
        "burst": (1800, 2500, 0.3),
    }[str(kind)]
    sounding = min(length, int(0.015 * SAMPLE_RATE)) if kind == "burst" else length
    noise = _formant_filter(rng.normal(0, 1, sounding), (centre,), (width,))
    out = np.zeros(length)
    out[:sounding] = level * noise / max(1e-9, np.abs(noise).max()) * np.hanning(sounding)
    return out


def _normal(sound: np.ndarray) -> np.ndarray:
    """Peak at 1."""
    return sound / max(1e-9, float(np.abs(sound).max()))


def _envelope(length: int, attack: float, power: float) -> np.ndarray:
    """Rises over the first ``attack`` of the sound, then falls to zero."""
    rise = max(1, int(attack * length))
    shape = np.concatenate([np.linspace(0, 1, rise), np.linspace(1, 0, length - rise)])
    return np.sin(shape * np.pi / 2) ** power


def _fade(length: int) -> np.ndarray:
    """Ten milliseconds in and out, so a segment starts and ends in silence."""
    ramp = min(length // 2, int(0.01 * SAMPLE_RATE))
    fade = np.ones(length)
    fade[:ramp] = np.linspace(0, 1, ramp)
    fade[length - ramp :] = np.linspace(1, 0, ramp)
    return fade


def wav(samples: np.ndarray) -> bytes:
    """16-bit mono PCM WAV bytes."""
    pcm = np.round(np.clip(samples, -1, 1) * 32767).astype("<i2")
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(SAMPLE_RATE)
        out.writeframes(pcm.tobytes())
    return buffer.getvalue()


# --- files ----------------------------------------------------------------------------------


def clip_files(item: dict, truth: dict, pcd_data: str | None = None) -> dict[str, bytes]:
    """The clip's media files by the relative names its item gives them."""
    cloud = point_cloud(truth)
    name = item["pointcloud"]
    if name.endswith(".pcd"):
        content = pcd(cloud, pcd_data or "binary")
    else:
        content = kitti_bin(cloud)
    return {item["media_url"]: wav(cabin_audio(truth)), name: content}


def demo_files(names: set[str] | None = None) -> dict[str, bytes]:
    """The agreement demo's media files by their names relative to the config's folder:
    every clip's, or only those of the clips that name one of ``names``."""
    make_demo = load_make_demo()
    clips, _, truths = make_demo.build()
    files = {}
    for item, truth in zip(clips, truths, strict=True):
        if names is not None and not {item["media_url"], item["pointcloud"]} & names:
            continue
        files.update(clip_files(item, truth, make_demo.PCD_CLIPS.get(truth["number"])))
    return files


class Written(NamedTuple):
    written: list[Path]
    unchanged: list[Path]


MANIFEST = "media/.demo_media.json"


def summary(result: Written) -> str:
    """'40 files written' or '1 file written, 39 already there'."""
    counts = ((len(result.written), "written"), (len(result.unchanged), "already there"))
    parts = [f"{n} file{'s' if n != 1 else ''} {what}" for n, what in counts if n]
    return ", ".join(parts) or "no files"


def write_demo_media(root: Path | str = DEMO) -> Written:
    """Write the demo's media under ``root`` (the folder of the demo's config); a file that
    already holds the right bytes is not written again. A record of the files written
    (MANIFEST: their SHA-256, and a key of the code and libraries that made them) lets a
    later run check the files without making them again, and make again only the clips
    whose files are missing or changed."""
    root = Path(root)
    key = _source_key()
    record = root / MANIFEST
    known = _manifest(record, key)
    stale = {name for name, digest in known.items() if _digest(root / name) != digest}
    if known and not stale:
        return Written([], [root / name for name in known])
    made = demo_files(stale if known else None)
    result = Written([], [root / name for name in known if name not in made])
    digests = dict(known)
    for name, content in made.items():
        path = root / name
        digests[name] = hashlib.sha256(content).hexdigest()
        if _digest(path) == digests[name]:
            result.unchanged.append(path)
            continue
        _write(path, content)
        result.written.append(path)
    _write(record, json.dumps({"key": key, "files": digests}, indent=1).encode())
    return result


def _source_key() -> str:
    """What the files depend on: this file, make_demo.py and the numpy and scipy versions."""
    import scipy

    digest = hashlib.sha256(f"{np.__version__} {scipy.__version__}".encode())
    for path in (Path(__file__).resolve(), DEMO / "make_demo.py"):
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _manifest(record: Path, key: str) -> dict[str, str]:
    """The files and digests the record lists when this code made them; {} otherwise."""
    try:
        manifest = json.loads(record.read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(manifest, dict) or manifest.get("key") != key:
        return {}
    files = manifest.get("files")
    return files if isinstance(files, dict) else {}


def _digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _write(path: Path, content: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.part")  # one per process
    partial.write_bytes(content)
    partial.replace(path)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--root",
        type=Path,
        default=DEMO,
        help="the folder of the demo's config; the files go to its media/ folder",
    )
    args = parser.parse_args(argv)
    result = write_demo_media(args.root)
    size = sum(p.stat().st_size for p in result.written + result.unchanged)
    print(f"demo media: {summary(result)} ({size / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()
