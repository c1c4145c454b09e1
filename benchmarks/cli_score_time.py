"""The wall time of ``python -m bws score`` on a file-mode study, start-up included.

    python benchmarks/cli_score_time.py [--items 2000] [--appearances 8] [--runs 5]
                                        [--method plackett_luce]

Writes a study in a temporary directory: ``--items`` items, a balanced design of tuples of
4 with ``--appearances`` per item, each tuple judged by two annotators from the MaxDiff
model (utilities ~ N(0, 1)), so 2,000 items and 8,000 judgments by default. Then runs the
whole command (calibrated 95% intervals, the default) ``--runs`` times in a fresh
interpreter and prints the median, fastest and slowest wall time beside a bare
``python -c "import numpy, scipy.sparse"``. Figures, not assertions.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bws.core.choice_models import sample_maxdiff  # noqa: E402
from bws.core.design import balanced_tuples  # noqa: E402

CONFIG = """\
annotation_task_name: "Timing"
data_files: ["data/items.jsonl"]
item_properties: {{id_key: id, text_key: text}}
bws_config:
  tuple_size: 4
  min_item_appearances: {appearances}
  seed: 1
  scoring: {{method: {method}}}
annotation_schemes:
  - annotation_type: bws
    name: quality
    description: "Pick the best and the worst"
output_annotation_dir: "annotation_output/"
"""
ANNOTATORS = ("user_1", "user_2")


def write_study(root: Path, n_items: int, appearances: int, method: str) -> Path:
    """A dialect A study with simulated answers; returns its config's path."""
    (root / "data").mkdir()
    ids = [f"item_{k:05d}" for k in range(n_items)]
    with open(root / "data" / "items.jsonl", "w") as stream:
        for item_id in ids:
            stream.write(json.dumps({"id": item_id, "text": f"text of {item_id}"}) + "\n")
    config = root / "config.yaml"
    config.write_text(CONFIG.format(appearances=appearances, method=method))
    rng = np.random.default_rng(1)
    truth = rng.normal(size=n_items)
    tuples = balanced_tuples(n_items, 4, appearances, seed=1)
    out = root / "annotation_output"
    out.mkdir()
    for annotator in ANNOTATORS:
        best, worst = sample_maxdiff(tuples, truth, rng)
        with open(out / f"{annotator}.jsonl", "w") as stream:
            for t, row in enumerate(tuples):
                clock = f"{10 + t // 3600:02d}:{t // 60 % 60:02d}:{t % 60:02d}"
                items = [ids[i] for i in row]
                record = {
                    "id": f"tuple_{t:05d}",
                    "items": items,
                    "annotations": {"quality": {"best": items[best[t]], "worst": items[worst[t]]}},
                    "annotator": annotator,
                    "timestamp": f"2026-03-01T{clock}Z",
                }
                stream.write(json.dumps(record) + "\n")
    return config


def wall_times(args: list[str], runs: int, cwd: Path) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, *args],
            cwd=cwd,
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=300,
        )
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--appearances", type=int, default=8)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--method", default="plackett_luce")
    args = parser.parse_args()
    runs = min(max(args.runs, 1), 50)
    with tempfile.TemporaryDirectory(prefix="bws-score-time-") as work:
        config = write_study(Path(work), args.items, args.appearances, args.method)
        judgments = args.items * args.appearances // 4 * len(ANNOTATORS)
        env_note = f"load {os.getloadavg()[0]:.2f}"
        print(
            f"{args.items} items, {judgments} judgments, {args.method}, calibrated intervals, "
            f"{runs} runs, {env_note}"
        )
        baseline = wall_times(["-c", "import numpy, scipy.sparse"], runs, REPO)
        command = ["-m", "bws", "score", "--config", str(config), "--method", args.method]
        timed = wall_times(command, runs, REPO)
        for name, times in (("python -c 'import numpy, scipy.sparse'", baseline), ("score", timed)):
            print(
                f"{name:<40} median {statistics.median(times):.3f} s, "
                f"min {min(times):.3f} s, max {max(times):.3f} s"
            )


if __name__ == "__main__":
    main()
