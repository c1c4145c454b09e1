"""generate-tuples --help states what each design method guarantees about
--tuples-per-item, and the designs keep to it."""

import json
from collections import Counter

import pytest

from bws.cli import main


def help_text(capsys) -> str:
    with pytest.raises(SystemExit):
        main(["generate-tuples", "--help"])
    return " ".join(capsys.readouterr().out.split())


def appearances(path) -> Counter:
    lines = path.read_text().splitlines()
    return Counter(item for line in lines for item in json.loads(line)["items"])


@pytest.fixture
def items(tmp_path):
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps({"id": f"i{k}"}) + "\n" for k in range(300)))
    return path


def generate(items, output, method, capsys):
    argv = ["generate-tuples", "--items", str(items), "--tuple-size", "4"]
    argv += ["--tuples-per-item", "6", "--output", str(output), "--method", method]
    assert main(argv) == 0
    return capsys.readouterr().out


def test_random_designs_reach_the_number_only_on_average_and_the_help_says_so(
    items, tmp_path, capsys
):
    summary = generate(items, tmp_path / "random.jsonl", "random", capsys)
    counts = appearances(tmp_path / "random.jsonl")
    low = min(counts.get(f"i{k}", 0) for k in range(300))
    high = max(counts.values())
    assert low < 6 < high  # the help used to call the number a minimum
    assert sum(counts.values()) / 300 == pytest.approx(6, abs=0.02)
    assert f"appearances per item: min {low}, max {high}" in summary
    text = help_text(capsys)
    assert "a minimum" not in text
    assert "random: R is only the average" in text
    assert "appear far fewer times (even never)" in text


def test_balanced_designs_keep_the_number_as_a_minimum_as_the_help_says(items, tmp_path, capsys):
    generate(items, tmp_path / "balanced.jsonl", "balanced_incomplete", capsys)
    counts = appearances(tmp_path / "balanced.jsonl")
    assert set(counts.values()) <= {6, 7} and len(counts) == 300
    assert "balanced_incomplete: every item appears R or R + 1 times" in help_text(capsys)
