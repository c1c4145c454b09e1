"""``python -m agreement report`` in file mode: config and interchange files, no database."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agreement.cli import main

ROOT = Path(__file__).resolve().parents[2]

CONFIG = """\
annotation_task_name: "Agreement pilot"
data_files: ["data/items.jsonl"]
item_properties: {id_key: id, text_key: text}
output_annotation_dir: "annotation_output/"
annotation_schemes:
  - annotation_type: radio
    name: sentiment
    description: "Sentiment"
    labels: [positive, negative]
  - annotation_type: spatial_annotation
    name: cars
    description: "Boxes around cars"
    labels: [car, truck]
  - annotation_type: process_reward
    name: steps
    description: "Label each step"
    labels: [good, bad]
"""

BOX = {"label": "car", "center": [0, 0, 0], "size": [1, 1, 1], "yaw": 0}
SHIFTED = {"label": "car", "center": [0.1, 0.1, 0.1], "size": [1, 1, 1], "yaw": 0}
RECORDS_A = [
    {"id": "i1", "annotator": "ann1",
     "annotations": {"sentiment": "positive", "cars": [BOX], "steps": {"0": "good", "1": "bad"}}},
    {"id": "i2", "annotator": "ann1", "annotations": {"sentiment": "negative"}},
]  # fmt: skip
RECORDS_B = [
    {"id": "i1", "annotator": "ann2",
     "annotations": {"sentiment": "positive", "cars": [SHIFTED],
                     "steps": {"0": "good", "1": "good"}}},
    {"id": "i2", "annotator": "ann2", "annotations": {"sentiment": "positive"}},
    {"id": "i1", "annotator": "gpt", "annotations": {"steps": {"0": "bad", "1": "bad"}}},
]  # fmt: skip


def write_study(root: Path) -> Path:
    (root / "annotation_output").mkdir(parents=True)
    (root / "config.yaml").write_text(CONFIG)
    for name, records in (("a.jsonl", RECORDS_A), ("b.jsonl", RECORDS_B)):
        lines = "\n".join(json.dumps(r) for r in records) + "\n"
        (root / "annotation_output" / name).write_text(lines)
    return root / "config.yaml"


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_json_report_from_the_output_directory(tmp_path, capsys):
    config = write_study(tmp_path)
    code, out, err = run(capsys, "report", "--config", str(config), "--model-annotator", "gpt")
    assert code == 0, err
    report = json.loads(out)
    assert report["n_records"] == 5
    cars = report["schemes"]["cars"]
    assert cars["mean_agreement"] == pytest.approx(729 / 1271)
    steps = report["schemes"]["steps"]
    assert steps["n_units"] == 2
    # gpt (bad, bad) against ann1 (good, bad) and ann2 (good, good): 3 of 4 differ.
    assert steps["judge_disagreement"]["gpt"]["rate"] == pytest.approx(3 / 4)


def test_text_report_and_an_annotations_file(tmp_path, capsys):
    config = write_study(tmp_path)
    one_file = tmp_path / "annotation_output" / "a.jsonl"
    code, out, _ = run(
        capsys, "report", "--config", str(config), "--annotations", str(one_file), "--format",
        "text",
    )  # fmt: skip
    assert code == 0
    assert "sentiment (radio)" in out and "undefined" in out  # one annotator: no units


def test_a_bad_line_exits_2_naming_file_and_line(tmp_path, capsys):
    config = write_study(tmp_path)
    with open(tmp_path / "annotation_output" / "b.jsonl", "a") as handle:
        handle.write("{not json\n")
    code, out, err = run(capsys, "report", "--config", str(config))
    assert code == 2 and out == ""
    assert "annotation_output/b.jsonl:4" in err


def test_bad_values_and_missing_files_exit_2(tmp_path, capsys):
    config = write_study(tmp_path)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"id": "i1", "annotator": "x", "annotations": {"cars": "a car"}}))
    code, _, err = run(capsys, "report", "--config", str(config), "--annotations", str(bad))
    assert code == 2 and "'cars'" in err and "expected a list" in err
    code, _, err = run(capsys, "report", "--config", str(tmp_path / "missing.yaml"))
    assert code == 2 and "file not found" in err
    code, _, err = run(
        capsys, "report", "--config", str(config), "--annotations", str(tmp_path / "nope")
    )
    assert code == 2 and "not found" in err


def test_runs_as_a_module(tmp_path):
    config = write_study(tmp_path)
    result = subprocess.run(
        [sys.executable, "-m", "agreement", "report", "--config", str(config), "--format", "text"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "cars (spatial_annotation)" in result.stdout
