"""Write the agreement demo: 20 dashcam clips (data/items.jsonl) and the answers of three
people and one model judge (annotations.jsonl, the interchange format).

Deterministic (one seeded generator): run it again and the files are the same. Each
annotator sees a hidden truth through plausible noise: boxes jittered, some objects missed
or invented, labels flipped, segment boundaries shifted; the judge disagrees more with
people on the assistant's steps than people disagree among themselves.

Each clip names two media files beside the config (media/clip_NN.wav, the cabin audio, and
media/clip_NN.bin or .pcd, the lidar sweep). They are not in the repository:
examples/demo_media.py makes them from the same hidden truth (``build()`` below), and
``manage.py load_demo`` runs it. The clips have no video: Debian's ffmpeg is not on a fresh
machine, so the demo carries audio and point clouds only.

    python examples/agreement_demo/make_demo.py
"""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
N_CLIPS = 20
PEOPLE = ("anna", "ben", "carla")
JUDGE = "judge-gpt"
SCENES = ("urban", "highway", "rural")
BOX_SIZES = {"car": (4.5, 1.8, 1.5), "truck": (8.0, 2.5, 3.2), "pedestrian": (0.6, 0.6, 1.7)}
LANES = (-5.25, -1.75, 1.75, 5.25)  # lane centres, metres left of the ego car
EVENTS = ("braking", "lane_change", "stop")
STEP_LABELS = ("correct", "incorrect", "unclear")
ACTIONS = [
    ("read_speed_limit", "Sign detected: 50 km/h"),
    ("check_mirror", "Cyclist in the right mirror"),
    ("plan_lane_change", "Gap of 18 m in the left lane"),
    ("signal_left", "Indicator on"),
    ("slow_down", "Speed reduced from 54 to 41 km/h"),
    ("announce_route", "Said: 'Turn right in 300 metres'"),
    ("detect_pedestrian", "Pedestrian at the crossing, 12 m ahead"),
    ("stop_at_light", "Stopped 2 m before the line"),
]


# Media files, relative to the config's folder (examples/demo_media.py writes them there).
MEDIA_DIR = "media"
# Most sweeps are KITTI .bin files; these clips are PCD files, so both readers are used.
PCD_CLIPS = {7: "ascii", 14: "binary"}
# The answers' times: each person works through the clips one by one from a session start
# (load_demo moves every time by one offset so the newest answer is from the moment it runs).
SESSIONS = {
    "anna": datetime(2026, 3, 2, 9, 0, tzinfo=UTC),
    "ben": datetime(2026, 3, 2, 13, 30, tzinfo=UTC),
    "carla": datetime(2026, 3, 3, 10, 15, tzinfo=UTC),
    JUDGE: datetime(2026, 3, 3, 16, 0, tzinfo=UTC),
}
MINUTES_PER_CLIP = {"anna": 6, "ben": 5, "carla": 7, JUDGE: 0.25}


def media_names(n: int) -> dict[str, str]:
    """The clip's audio and point cloud, as the item names them."""
    cloud = ".pcd" if n in PCD_CLIPS else ".bin"
    return {
        "media_url": f"{MEDIA_DIR}/clip_{n:02d}.wav",
        "pointcloud": f"{MEDIA_DIR}/clip_{n:02d}{cloud}",
    }


def build() -> tuple[list[dict], list[dict], list[dict]]:
    """The clips (items), the answer records and each clip's hidden truth, in clip order."""
    rng = np.random.default_rng(6)
    clips, records, truths = [], [], []
    for n in range(1, N_CLIPS + 1):
        clip_id = f"clip_{n:02d}"
        truth = _truth(rng, n)
        truths.append(truth)
        clips.append(
            {
                "id": clip_id,
                "text": f"Dashcam clip {n}: {truth['scene']} drive, "
                f"{len(truth['objects'])} road users around the car.",
                **media_names(n),
                "steps": truth["steps"],
            }
        )
        for person in PEOPLE:
            answers = _person_answers(rng, truth, person, n)
            records.append(_record(clip_id, person, answers, n))
        judged = {
            str(i): _flip(rng, label, STEP_LABELS, 0.3)
            for i, label in enumerate(truth["step_labels"])
        }
        records.append(_record(clip_id, JUDGE, {"assistant_steps": judged}, n))
    return clips, records, truths


def main() -> None:
    clips, records, _ = build()
    _write(HERE / "data" / "items.jsonl", clips)
    _write(HERE / "annotations.jsonl", records)
    print(f"wrote {len(clips)} clips and {len(records)} answer records")


def _truth(rng: np.random.Generator, n: int) -> dict:
    scene = SCENES[n % 3]
    objects = []
    for _ in range(int(rng.integers(2, 6))):
        label = str(rng.choice(["car", "car", "truck", "pedestrian"]))
        length, width, height = BOX_SIZES[label]
        while True:  # a free spot: no two road users overlap, none on the ego car
            if label == "pedestrian":  # on a pavement
                x, y = rng.uniform(-30, 30), rng.choice([-1, 1]) * rng.uniform(8.5, 14)
                yaw = rng.uniform(-math.pi, math.pi)
            else:  # in one of four lanes 3.5 m wide, driving along the road
                x, y = rng.uniform(-30, 30), rng.choice(LANES) + rng.normal(0, 0.3)
                yaw = rng.choice([0.0, math.pi]) + rng.normal(0, 0.1)
            reach = math.hypot(length, width) / 2
            if math.hypot(x, y) > reach + 3 and all(
                math.hypot(x - o["center"][0], y - o["center"][1])
                > reach + math.hypot(*o["size"][:2]) / 2 + 0.5
                for o in objects
            ):
                break
        objects.append(
            {
                "label": label,
                "center": [float(x), float(y), height / 2],
                "size": [length, width, height],
                "yaw": float(math.remainder(yaw, 2 * math.pi)),
            }
        )
    # 10 to 16 s: the cabin audio of a clip is a small file (16 kHz, 16 bits, mono).
    duration = float(rng.uniform(10, 16))
    events = []
    for start in np.sort(rng.uniform(0, duration - 4, int(rng.integers(2, 5)))):
        events.append(
            {
                "start": float(start),
                "end": float(start + rng.uniform(1.5, 4)),
                "label": str(rng.choice(EVENTS)),
            }
        )
    audio = []
    for tier in ("driver", "passenger"):
        # One voice says one thing at a time: a tier's segments follow each other.
        moment = float(rng.uniform(0.3, 2.5))
        for _ in range(int(rng.integers(1, 4))):
            label = "laughter" if rng.random() < 0.25 else "speech"
            end = moment + float(rng.uniform(1, 3.5))
            if end > duration - 0.3:
                break
            audio.append({"start": moment, "end": end, "label": label, "tier": tier})
            moment = end + float(rng.uniform(0.6, 3))
    picks = rng.choice(len(ACTIONS), int(rng.integers(4, 7)), replace=False)
    steps = [{"action": ACTIONS[i][0], "observation": ACTIONS[i][1]} for i in picks]
    step_labels = [str(rng.choice(STEP_LABELS, p=[0.65, 0.25, 0.10])) for _ in steps]
    return {
        "number": n,
        "duration": duration,
        "scene": scene,
        "difficulty": int(rng.integers(1, 6)),
        "objects": objects,
        "events": events,
        "audio": audio,
        "steps": steps,
        "step_labels": step_labels,
    }


def _person_answers(rng: np.random.Generator, truth: dict, person: str, n: int) -> dict:
    answers = {
        "objects": _boxes(rng, truth["objects"]),
        "events": _segments(rng, truth["events"], EVENTS),
        "cabin_audio": _segments(rng, truth["audio"], ("speech", "laughter")),
        "assistant_steps": {
            str(i): _flip(rng, label, STEP_LABELS, 0.1)
            for i, label in enumerate(truth["step_labels"])
        },
        "scene": _flip(rng, truth["scene"], SCENES, 0.1),
    }
    # carla skipped the difficulty question on two clips, so raters per clip vary there.
    if not (person == "carla" and n in (4, 11)):
        shift = int(rng.choice([-1, 0, 0, 0, 1]))
        answers["difficulty"] = int(min(5, max(1, truth["difficulty"] + shift)))
    return answers


def _boxes(rng: np.random.Generator, objects: list[dict]) -> list[dict]:
    drawn = []
    for box in objects:
        if rng.random() < 0.1:  # missed
            continue
        size = np.array(box["size"])
        center = np.array(box["center"]) + rng.normal(0, 0.05, 3) * size
        label = box["label"]
        if label != "pedestrian":
            label = _flip(rng, label, ("car", "truck"), 0.08)
        drawn.append(
            {
                "label": label,
                "center": _round(center),
                "size": _round(size * rng.normal(1, 0.05, 3)),
                "yaw": round(box["yaw"] + float(rng.normal(0, 0.05)), 3),
            }
        )
    if rng.random() < 0.1:  # a parked car nobody else drew
        drawn.append(
            {
                "label": "car",
                "center": _round(rng.uniform(-30, 30, 3) * [1, 0.5, 0] + [0, 0, 0.75]),
                "size": [4.4, 1.8, 1.5],
                "yaw": 0.0,
            }
        )
    return drawn


def _segments(rng: np.random.Generator, segments: list[dict], labels: tuple) -> list[dict]:
    marked = []
    for segment in segments:
        if rng.random() < 0.1:
            continue
        start = max(0.0, segment["start"] + float(rng.normal(0, 0.4)))
        end = max(start + 0.2, segment["end"] + float(rng.normal(0, 0.4)))
        out = {
            "start": round(start, 2),
            "end": round(end, 2),
            "label": _flip(rng, segment["label"], labels, 0.1),
        }
        if "tier" in segment:
            out["tier"] = segment["tier"]
        marked.append(out)
    return marked


def _flip(rng: np.random.Generator, label: str, labels: tuple, p: float) -> str:
    if rng.random() >= p:
        return label
    return str(rng.choice([other for other in labels if other != label]))


def _round(values) -> list[float]:
    return [round(float(v), 3) for v in values]


def _record(clip_id: str, annotator: str, annotations: dict, n: int) -> dict:
    moment = SESSIONS[annotator] + timedelta(minutes=MINUTES_PER_CLIP[annotator] * (n - 1))
    return {
        "id": clip_id,
        "annotations": annotations,
        "annotator": annotator,
        "timestamp": moment.isoformat().replace("+00:00", "Z"),
    }


def _write(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row, sort_keys=True) + "\n" for row in rows))


if __name__ == "__main__":
    main()
