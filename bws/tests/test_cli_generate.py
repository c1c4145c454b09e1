"""``python -m bws generate-tuples``: files in, tuples and a summary out, clean errors."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bws.cli import main

REPO = Path(__file__).resolve().parents[2]


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "bws", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )


def generate(items: Path, output: Path, *extra: str) -> subprocess.CompletedProcess:
    return run_cli(
        "generate-tuples",
        "--items",
        str(items),
        "--tuple-size",
        "4",
        "--tuples-per-item",
        "5",
        "--output",
        str(output),
        "--seed",
        "42",
        *extra,
    )


def read_tuples(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture
def items_jsonl(tmp_path: Path) -> Path:
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps({"id": f"i{k}", "text": f"t{k}"}) + "\n" for k in range(30)))
    return path


def test_writes_one_line_per_tuple_with_item_ids_and_prints_the_summary(items_jsonl, tmp_path):
    output = tmp_path / "out" / "tuples.jsonl"
    result = generate(items_jsonl, output)
    assert result.returncode == 0, result.stderr
    tuples = read_tuples(output)
    assert len(tuples) == 30 * 5 // 4 + 1  # ceil(150 / 4) = 38
    assert [t["id"] for t in tuples[:2]] == ["tuple_000001", "tuple_000002"]
    ids = {f"i{k}" for k in range(30)}
    counts = dict.fromkeys(ids, 0)
    for t in tuples:
        assert len(t["items"]) == 4 and len(set(t["items"])) == 4
        assert set(t["items"]) <= ids
        for item in t["items"]:
            counts[item] += 1
    assert min(counts.values()) == 5 and max(counts.values()) <= 6
    for phrase in [
        "tuples: 38",
        "appearances per item: min 5, max 6",
        "pairs covered:",
        "repeated pairs:",
        "position balance:",
    ]:
        assert phrase in result.stdout


def test_same_seed_same_file(items_jsonl, tmp_path):
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    assert generate(items_jsonl, first).returncode == 0
    assert generate(items_jsonl, second).returncode == 0
    assert first.read_text() == second.read_text()


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("items.csv", "key,text\na,x\nb,y\nc,z\nd,w\ne,v\n"),
        ("items.tsv", "key\ttext\na\tx\nb\ty\nc\tz\nd\tw\ne\tv\n"),
        ("items.json", json.dumps([{"key": k} for k in "abcde"])),
    ],
)
def test_reads_csv_tsv_and_json_with_another_id_key(tmp_path, name, text):
    items = tmp_path / name
    items.write_text(text)
    output = tmp_path / "tuples.jsonl"
    result = generate(items, output, "--id-key", "key")
    assert result.returncode == 0, result.stderr
    seen = {item for t in read_tuples(output) for item in t["items"]}
    assert seen == set("abcde")


def test_random_method_and_pair_coverage(items_jsonl, tmp_path):
    output = tmp_path / "random.jsonl"
    result = generate(items_jsonl, output, "--method", "random")
    assert result.returncode == 0, result.stderr
    assert len(read_tuples(output)) == 38
    covered = tmp_path / "covered.jsonl"
    result = generate(items_jsonl, covered, "--ensure-pair-coverage")
    assert result.returncode == 0, result.stderr
    pairs = {
        frozenset((a, b)) for t in read_tuples(covered) for a in t["items"] for b in t["items"]
    }
    assert sum(len(p) == 2 for p in pairs) == 30 * 29 // 2
    assert "pair coverage needs at least" in result.stdout
    assert "tuples added:" in result.stdout


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"id": "a"}\n{"id": \n', "items.jsonl:2: not valid JSON"),
        ('{"id": "a"}\n{"name": "b"}\n', "items.jsonl:2: no 'id' value"),
        ('{"id": "a"}\n{"id": "b"}\n{"id": "a"}\n', "items.jsonl:3: id 'a' repeats line 1"),
        ('{"id": "a"}\n{"id": "b"}\n', "2 items cannot fill tuples of 4"),
        ("", "no items"),
    ],
)
def test_bad_items_exit_2_with_a_message(tmp_path, capsys, text, message):
    items = tmp_path / "items.jsonl"
    items.write_text(text)
    code = main(
        [
            "generate-tuples",
            "--items",
            str(items),
            "--tuple-size",
            "4",
            "--tuples-per-item",
            "5",
            "--output",
            str(tmp_path / "out.jsonl"),
        ]
    )
    assert code == 2
    assert message in capsys.readouterr().err


def test_a_missing_file_exits_2_without_a_traceback(tmp_path):
    missing = generate(tmp_path / "nope.jsonl", tmp_path / "out.jsonl")
    assert missing.returncode == 2 and "file not found" in missing.stderr
    assert "Traceback" not in missing.stderr


@pytest.mark.parametrize(
    ("flag", "value"), [("--tuple-size", "1"), ("--tuples-per-item", "0"), ("--method", "nope")]
)
def test_bad_arguments_exit_2(items_jsonl, tmp_path, capsys, flag, value):
    args = {"--tuple-size": "4", "--tuples-per-item": "5", "--method": "random", flag: value}
    argv = ["generate-tuples", "--items", str(items_jsonl), "--output", str(tmp_path / "o")]
    for name, given in args.items():
        argv += [name, given]
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    assert flag in capsys.readouterr().err


def test_generate_tuples_imports_no_django(items_jsonl, tmp_path):
    code = (
        "import sys; from bws.cli import main; "
        f"main(['generate-tuples', '--items', {str(items_jsonl)!r}, '--tuple-size', '3', "
        f"'--tuples-per-item', '2', '--output', {str(tmp_path / 'o.jsonl')!r}]); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'django'))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "[]"
