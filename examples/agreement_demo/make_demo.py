"""Write the agreement demo: 20 dashcam clips (data/items.jsonl) and the answers of three
people and one model judge (annotations.jsonl, the interchange format).

Deterministic (one seeded generator): run it again and the files are the same. Each
annotator sees a hidden truth through plausible noise: boxes jittered, some objects missed
or invented, labels flipped, segment boundaries shifted; the judge disagrees more with
people on the assistant's steps than people disagree among themselves.

    python examples/agreement_demo/make_demo.py
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
N_CLIPS = 20
PEOPLE = ("anna", "ben", "carla")
JUDGE = "judge-gpt"
SCENES = ("urban", "highway", "rural")
BOX_SIZES = {"car": (4.5, 1.8, 1.5), "truck": (8.0, 2.5, 3.2), "pedestrian": (0.6, 0.6, 1.7)}
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


def main() -> None:
    rng = np.random.default_rng(6)
    clips, records = [], []
    for n in range(1, N_CLIPS + 1):
        clip_id = f"clip_{n:02d}"
        truth = _truth(rng, n)
        clips.append(
            {
                "id": clip_id,
                "text": f"Dashcam clip {n}: {truth['scene']} drive, "
                f"{len(truth['objects'])} road users around the car.",
                "media_url": f"/static/demo/{clip_id}.mp4",
                "steps": truth["steps"],
            }
        )
        for person in PEOPLE:
            records.append(_record(clip_id, person, _person_answers(rng, truth, person, n)))
        judged = {
            str(i): _flip(rng, label, STEP_LABELS, 0.3)
            for i, label in enumerate(truth["step_labels"])
        }
        records.append(_record(clip_id, JUDGE, {"assistant_steps": judged}))
    _write(HERE / "data" / "items.jsonl", clips)
    _write(HERE / "annotations.jsonl", records)
    print(f"wrote {len(clips)} clips and {len(records)} answer records")


def _truth(rng: np.random.Generator, n: int) -> dict:
    scene = SCENES[n % 3]
    objects = []
    for _ in range(int(rng.integers(2, 6))):
        label = str(rng.choice(["car", "car", "truck", "pedestrian"]))
        length, width, height = BOX_SIZES[label]
        objects.append(
            {
                "label": label,
                "center": [float(rng.uniform(-30, 30)), float(rng.uniform(-15, 15)), height / 2],
                "size": [length, width, height],
                "yaw": float(rng.uniform(-math.pi, math.pi)),
            }
        )
    duration = float(rng.uniform(30, 60))
    events = []
    for start in np.sort(rng.uniform(0, duration - 6, int(rng.integers(2, 5)))):
        events.append(
            {
                "start": float(start),
                "end": float(start + rng.uniform(2, 6)),
                "label": str(rng.choice(EVENTS)),
            }
        )
    audio = []
    for tier in ("driver", "passenger"):
        for start in np.sort(rng.uniform(0, duration - 5, int(rng.integers(1, 4)))):
            label = "laughter" if rng.random() < 0.25 else "speech"
            audio.append(
                {
                    "start": float(start),
                    "end": float(start + rng.uniform(1, 5)),
                    "label": label,
                    "tier": tier,
                }
            )
    picks = rng.choice(len(ACTIONS), int(rng.integers(4, 7)), replace=False)
    steps = [{"action": ACTIONS[i][0], "observation": ACTIONS[i][1]} for i in picks]
    step_labels = [str(rng.choice(STEP_LABELS, p=[0.65, 0.25, 0.10])) for _ in steps]
    return {
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


def _record(clip_id: str, annotator: str, annotations: dict) -> dict:
    return {
        "id": clip_id,
        "annotations": annotations,
        "annotator": annotator,
        "timestamp": "2026-03-02T10:00:00Z",
    }


def _write(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row, sort_keys=True) + "\n" for row in rows))


if __name__ == "__main__":
    main()
