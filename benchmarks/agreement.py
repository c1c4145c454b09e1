"""Agreement benchmark: the report of a 3D box, a segment and a trace scheme at scale.

    python benchmarks/agreement.py [--items 10000] [--trace-steps 100000] [--seed 0]

Builds interchange records in memory (not timed), then times ``build_report`` on each
scheme from those records, as the worker and ``python -m agreement`` run it:
- 3D boxes: items x 3 annotators x 20 boxes, scenes of 80 x 80 m, each annotator's boxes
  the true ones with centre, size and yaw noise and 5% of labels switched;
- segments: items x 3 annotators x 30 segments on a 300 s clip, boundary noise;
- traces: steps x 3 annotators (100 steps per trace, 4 labels, the third a model judge).
Figures, not assertions.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agreement.core.report import build_report  # noqa: E402

ANNOTATORS = ("ann_1", "ann_2", "ann_3")
BOX_LABELS = ("car", "truck", "pedestrian", "cyclist")
SEGMENT_LABELS = ("speech", "music", "noise")
STEP_LABELS = ("correct", "minor_error", "major_error", "irrelevant")


def box_records(n_items: int, rng: np.random.Generator, boxes: int = 20) -> list[dict]:
    records = []
    for item in range(n_items):
        centres = rng.uniform(-40, 40, (boxes, 2))
        heights = rng.uniform(-0.5, 0.5, boxes)
        sizes = np.column_stack(
            [
                rng.uniform(3.5, 5.5, boxes),
                rng.uniform(1.6, 2.2, boxes),
                rng.uniform(1.4, 2.0, boxes),
            ]
        )
        yaws = rng.uniform(-np.pi, np.pi, boxes)
        labels = rng.integers(0, len(BOX_LABELS), boxes)
        for annotator in ANNOTATORS:
            centre = centres + rng.normal(0, 0.15, (boxes, 2))
            z = heights + rng.normal(0, 0.05, boxes)
            size = sizes * (1 + rng.normal(0, 0.05, (boxes, 3)))
            yaw = yaws + rng.normal(0, 0.05, boxes)
            label = np.where(rng.random(boxes) < 0.05, (labels + 1) % len(BOX_LABELS), labels)
            value = [
                {
                    "label": BOX_LABELS[label[k]],
                    "center": [float(centre[k, 0]), float(centre[k, 1]), float(z[k])],
                    "size": [float(s) for s in size[k]],
                    "yaw": float(yaw[k]),
                }
                for k in range(boxes)
            ]
            records.append(
                {"id": f"scan_{item}", "annotator": annotator, "annotations": {"boxes": value}}
            )
    return records


def segment_records(n_items: int, rng: np.random.Generator, segments: int = 30) -> list[dict]:
    records = []
    for item in range(n_items):
        starts = np.sort(rng.uniform(0, 290, segments))
        lengths = rng.uniform(2, 10, segments)
        labels = rng.integers(0, len(SEGMENT_LABELS), segments)
        for annotator in ANNOTATORS:
            start = starts + rng.normal(0, 0.3, segments)
            end = np.maximum(start, starts + lengths + rng.normal(0, 0.3, segments))
            label = np.where(rng.random(segments) < 0.05, (labels + 1) % 3, labels)
            value = [
                {"start": float(start[k]), "end": float(end[k]), "label": SEGMENT_LABELS[label[k]]}
                for k in range(segments)
            ]
            records.append(
                {"id": f"clip_{item}", "annotator": annotator, "annotations": {"segments": value}}
            )
    return records


def trace_records(n_steps: int, rng: np.random.Generator, per_trace: int = 100) -> list[dict]:
    records = []
    for trace in range(n_steps // per_trace):
        truth = rng.integers(0, len(STEP_LABELS), per_trace)
        for annotator in ANNOTATORS:
            noisy = np.where(
                rng.random(per_trace) < 0.2, rng.integers(0, len(STEP_LABELS), per_trace), truth
            )
            value = {str(step): STEP_LABELS[noisy[step]] for step in range(per_trace)}
            records.append(
                {"id": f"trace_{trace}", "annotator": annotator, "annotations": {"steps": value}}
            )
    return records


def timed(records: list[dict], scheme: dict, judges=()) -> tuple[float, float, dict]:
    """Wall and CPU seconds of the report (CPU time is steadier on a shared machine)."""
    start, cpu = time.perf_counter(), time.process_time()
    report = build_report(records, [scheme], model_annotators=judges)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    return wall, cpu, report["schemes"][scheme["name"]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--trace-steps", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    print(f"python {platform.python_version()}, numpy {np.__version__}, {os.cpu_count()} CPUs")

    labels = lambda names: [{"name": name, "key_value": None} for name in names]  # noqa: E731
    cases = [
        (
            f"3D boxes: {args.items} items x 3 annotators x 20 boxes",
            lambda: box_records(args.items, rng),
            {
                "name": "boxes",
                "type": "spatial_annotation",
                "options": {"labels": labels(BOX_LABELS)},
            },
            ("mean_agreement", "mean_object_count_diff", "n_items", "n_pairs"),
            (),
        ),
        (
            f"segments: {args.items} items x 3 annotators x 30 segments",
            lambda: segment_records(args.items, rng),
            {
                "name": "segments",
                "type": "temporal_grounding",
                "options": {"labels": labels(SEGMENT_LABELS)},
            },
            ("mean_agreement", "mean_object_count_diff", "n_items", "n_pairs"),
            (),
        ),
        (
            f"traces: {args.trace_steps} steps x 3 annotators (ann_3 a model judge)",
            lambda: trace_records(args.trace_steps, rng),
            {"name": "steps", "type": "process_reward", "options": {"labels": labels(STEP_LABELS)}},
            ("alpha_nominal", "cohen_kappa", "percent_agreement", "n_units"),
            ("ann_3",),
        ),
    ]
    for title, make, scheme, keys, judges in cases:
        start = time.perf_counter()
        records = make()
        built = time.perf_counter() - start
        seconds, cpu, report = timed(records, scheme, judges)
        figures = ", ".join(
            f"{key} {report[key]:.4f}" if isinstance(report[key], float) else f"{key} {report[key]}"
            for key in keys
        )
        print(
            f"{title}: report {seconds:.2f} s wall, {cpu:.2f} s CPU "
            f"(records built in {built:.1f} s, not timed); "
            f"{figures}"
        )
        if report.get("judge_disagreement"):
            print(f"  judge_disagreement: {report['judge_disagreement']}")


if __name__ == "__main__":
    main()
