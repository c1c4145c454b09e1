"""The interchange format: reading, writing, CSV/TSV flattening, errors naming file:line,
and building judgment arrays from its records."""

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bws.core.judgments import JudgmentError, build_judgments
from projects import interchange
from projects.interchange import InterchangeError, UnitRecord

GUIDE_EXAMPLE = {
    "id": "tuple_001",
    "items": ["sys_a", "sys_b", "sys_c", "sys_d"],
    "instance": "sent_001",
    "annotations": {
        "fluency": {"best": "sys_d", "worst": "sys_c"},
        "adequacy": {"best": "sys_a", "worst": "sys_c"},
    },
    "annotator": "user_1",
    "timestamp": "2026-03-01T14:22:00Z",
}

OTHER_UNIT = {
    "id": "scene_7",
    "annotations": {
        "sentiment": "positive",
        "quality": 4,
        "tags": ["a", "b"],
        "note": "fine, really",
        "boxes": [{"label": "car", "center": [1, 2, 0.5], "size": [4, 2, 1.5], "yaw": 0.1}],
        "steps": {"0": "good", "1": "bad"},
    },
    "annotator": "user_2",
    "timestamp": "2026-03-01T14:25:00Z",
}


def test_reads_the_spec_example_and_writes_it_back_identically(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_text(json.dumps(GUIDE_EXAMPLE) + "\n\n" + json.dumps(OTHER_UNIT) + "\n")
    records = interchange.read_file(path, "a.jsonl")
    assert [r.line for r in records] == [1, 3]
    first = records[0]
    assert first.id == "tuple_001" and first.instance == "sent_001"
    assert first.items == ["sys_a", "sys_b", "sys_c", "sys_d"]
    assert first.annotations["fluency"] == {"best": "sys_d", "worst": "sys_c"}
    assert first.annotator == "user_1" and first.timestamp == "2026-03-01T14:22:00Z"
    assert records[1].items is None and records[1].instance is None
    stream = io.StringIO()
    assert interchange.write_jsonl(records, stream) == 2
    lines = stream.getvalue().splitlines()
    assert [json.loads(line) for line in lines] == [GUIDE_EXAMPLE, OTHER_UNIT]
    assert list(json.loads(lines[0])) == list(GUIDE_EXAMPLE)


@pytest.mark.parametrize("suffix", [".csv", ".tsv"])
def test_tables_flatten_the_same_records_and_read_back(tmp_path, suffix):
    records = [interchange.parse_record(GUIDE_EXAMPLE), interchange.parse_record(OTHER_UNIT)]
    path = tmp_path / f"export{suffix}"
    interchange.write_table(records, path)
    text = path.read_text()
    header = text.splitlines()[0].split("\t" if suffix == ".tsv" else ",")
    assert header[:5] == ["id", "items", "instance", "annotator", "timestamp"]
    assert "fluency.best" in header and "fluency.worst" in header and "sentiment" in header
    back = interchange.read_file(path)
    assert [r.to_dict() for r in back] == [GUIDE_EXAMPLE, OTHER_UNIT]
    assert [r.line for r in back] == [2, 3]


def test_a_directory_is_read_in_file_name_order_and_only_its_jsonl_files(tmp_path):
    out = tmp_path / "annotation_output"
    (out / "user_b").mkdir(parents=True)
    for name, unit in [("b.jsonl", "t2"), ("a.jsonl", "t1"), ("user_b/c.jsonl", "t3")]:
        record = dict(GUIDE_EXAMPLE, id=unit)
        (out / name).write_text(json.dumps(record) + "\n")
    (out / "bws_scores.tsv").write_text("item_id\tscore\nx\t1\n")
    (out / ".hidden.jsonl").write_text("not json\n")
    records = interchange.read_directory(out)
    assert [r.id for r in records] == ["t1", "t2", "t3"]
    assert [r.file for r in records] == [
        "annotation_output/a.jsonl",
        "annotation_output/b.jsonl",
        "annotation_output/user_b/c.jsonl",
    ]
    assert interchange.read_directory(tmp_path / "missing") == []


@pytest.mark.parametrize(
    "line, reason",
    [
        ('{"id": "t1", "annotations": {}', "not valid JSON"),
        ("[1, 2]", "must be a JSON object"),
        ('{"annotations": {}}', "missing 'id'"),
        ('{"id": "t1"}', "'annotations' must be an object"),
        ('{"id": "t1", "annotations": [], "annotator": "u"}', "'annotations' must be an object"),
        ('{"id": "t1", "items": "a b", "annotations": {}}', "'items' must be a non-empty list"),
        ('{"id": "t1", "annotations": {}, "timestamp": 5}', "'timestamp' must be"),
        ('{"id": "t1", "annotations": {}, "anotator": "u"}', "unknown field 'anotator'"),
    ],
)
def test_a_bad_line_is_an_error_naming_file_and_line(tmp_path, line, reason):
    out = tmp_path / "out"
    out.mkdir()
    good = json.dumps(GUIDE_EXAMPLE)
    (out / "a.jsonl").write_text(good + "\n")
    (out / "b.jsonl").write_text(good + "\n" + good + "\n" + line + "\n")
    with pytest.raises(InterchangeError) as caught:
        interchange.read_directory(out)
    assert str(caught.value).startswith("out/b.jsonl:3: ")
    assert reason in str(caught.value)
    assert caught.value.problems[0].line == 3


def test_table_errors_name_file_and_line(tmp_path):
    path = tmp_path / "export.csv"
    path.write_text('id,items,annotator\nt1,"[""a"", ""b""]",u\nt2,not-json,u\n')
    with pytest.raises(InterchangeError, match=r"export.csv:3: 'items' must be a JSON list"):
        interchange.read_file(path, "export.csv")


# --------------------------------------------------------------------------- judgments


INDEX = {"sys_a": 0, "sys_b": 1, "sys_c": 2, "sys_d": 3, "sys_e": 4}


def record(line, answer, items=("sys_a", "sys_b", "sys_c", "sys_d"), **fields):
    values = {"id": f"t{line}", "annotator": "u1", "timestamp": None}
    values.update(fields)
    return UnitRecord(
        annotations={"fluency": answer},
        items=list(items),
        file="out/a.jsonl",
        line=line,
        **values,
    )


def test_judgments_from_records_hold_positions_tuples_annotators_and_time_order():
    records = [
        record(1, {"best": "sys_d", "worst": "sys_c"}, id="t1", timestamp="2026-03-01T14:22:00Z"),
        record(
            2,
            {"best": "sys_a", "worst": "sys_b"},
            id="t1",
            annotator="u2",
            timestamp="2026-03-01T14:00:00+00:00",
        ),  # fmt: skip
        record(
            3,
            {"best": "sys_e", "worst": "sys_a"},
            ("sys_e", "sys_a", "sys_b", "sys_c"),
            id="t2",
            timestamp="2026-03-01T15:00:00Z",
        ),  # fmt: skip
        UnitRecord(id="t3", annotations={"other": "x"}, file="out/a.jsonl", line=4),
    ]
    judgments = build_judgments(records, INDEX, "fluency")
    assert judgments.n_judgments == 3 and judgments.n_items == 5
    np.testing.assert_array_equal(judgments.items, [[0, 1, 2, 3], [0, 1, 2, 3], [4, 0, 1, 2]])
    assert judgments.best.tolist() == [3, 0, 0] and judgments.worst.tolist() == [2, 1, 1]
    assert judgments.best_items.tolist() == [3, 0, 4]
    assert judgments.tuple_ids.tolist() == [0, 0, 1]
    assert judgments.annotators.tolist() == [0, 1, 0]
    assert judgments.order.tolist() == [1, 0, 2]


@pytest.mark.parametrize(
    "answer, items, reason",
    [
        ({"best": "sys_e", "worst": "sys_a"}, None, "best 'sys_e' is not in the tuple"),
        ({"best": "sys_a", "worst": "sys_x"}, None, "worst 'sys_x' is not in the tuple"),
        ({"best": "sys_a", "worst": "sys_a"}, None, "best and worst are the same item 'sys_a'"),
        ({"best": "sys_a"}, None, "missing 'worst'"),
        (
            {"best": "sys_a", "worst": "sys_b"},
            ("sys_a", "sys_b", "nope", "sys_d"),
            "unknown item id 'nope'",
        ),  # fmt: skip
        ({"best": "sys_a", "worst": "sys_b"}, ("sys_a", "sys_b", "sys_a", "sys_d"), "twice"),
        ({"best": "sys_a", "worst": "sys_b"}, ("sys_a", "sys_b", "sys_c"), "tuple of 3 items"),
        ("sys_a", None, "expected {'best': ..., 'worst': ...}"),
    ],
)
def test_bad_best_worst_answers_name_file_and_line(answer, items, reason):
    good = record(1, {"best": "sys_a", "worst": "sys_b"})
    bad = record(7, answer, **({} if items is None else {"items": items}))
    with pytest.raises(JudgmentError) as caught:
        build_judgments([good, bad], INDEX, "fluency")
    message = str(caught.value)
    assert message.startswith("out/a.jsonl:7: ")
    assert reason in message


def test_every_bad_record_is_reported_not_only_the_first():
    records = [record(k, {"best": "sys_a", "worst": "sys_a"}) for k in range(1, 4)]
    with pytest.raises(JudgmentError) as caught:
        build_judgments(records, INDEX, "fluency")
    assert [p.line for p in caught.value.problems] == [1, 2, 3]


def test_item_ids_repeated_across_instances_aggregate_to_one_index():
    records = [
        record(1, {"best": "sys_a", "worst": "sys_b"}, id="s1-t1", instance="s1"),
        record(2, {"best": "sys_a", "worst": "sys_c"}, id="s2-t1", instance="s2"),
    ]
    judgments = build_judgments(records, INDEX, "fluency")
    assert judgments.best_items.tolist() == [0, 0]
    assert judgments.n_tuples == 2


def test_the_scoring_core_and_the_interchange_module_import_no_django():
    code = (
        "import sys; import bws.core.judgments, bws.core.scoring, bws.core.bootstrap, "
        "bws.core.reliability, bws.core.convergence, projects.interchange; "
        "sys.exit(any(name.split('.')[0] == 'django' for name in sys.modules))"
    )
    env = {key: value for key, value in os.environ.items() if key != "DJANGO_SETTINGS_MODULE"}
    root = Path(__file__).resolve().parents[2]
    assert subprocess.run([sys.executable, "-c", code], cwd=root, env=env).returncode == 0
