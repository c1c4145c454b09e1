"""Data files: every format read with its line numbers; bad data named by file and line."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from projects.configuration import load_config, parse_config
from projects.datafiles import DataError, Record, load_items, read_records

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def jsonl(*records) -> str:
    return "".join(json.dumps(record) + "\n" for record in records)


def problems(call, *args) -> list[str]:
    with pytest.raises(DataError) as caught:
        call(*args)
    return [str(problem) for problem in caught.value.problems]


def config_for(tmp_path: Path, files: list[str], schemes: list[dict], **top):
    data = {"data_files": files, "annotation_schemes": schemes, **top}
    return parse_config(data, "config.yaml", tmp_path)


BWS = [{"annotation_type": "bws", "name": "quality"}]


def bws_b(tuple_size: int = 4) -> list[dict]:
    return [
        {
            "annotation_type": "best_worst_scaling",
            "name": "quality",
            "items_key": "translations",
            "tuple_size": tuple_size,
        }
    ]


def translations(*ids: str) -> list[dict]:
    return [{"id": item_id, "text": f"text of {item_id}"} for item_id in ids]


# --------------------------------------------------------------------------- read_records


def test_jsonl_skips_blank_lines_and_keeps_line_numbers(tmp_path):
    path = write(tmp_path, "d.jsonl", '{"id": "a"}\n\n   \n{"id": "b"}\n')
    assert read_records(path, "d.jsonl") == [
        Record("d.jsonl", 1, {"id": "a"}),
        Record("d.jsonl", 4, {"id": "b"}),
    ]


def test_jsonl_errors_name_each_bad_line(tmp_path):
    path = write(tmp_path, "d.jsonl", '{"id": "a"}\n{"id": \n["a list"]\n{"id": "ok"}\n')
    assert problems(read_records, path, "d.jsonl") == [
        "d.jsonl:2: not valid JSON: Expecting value (column 8)",
        "d.jsonl:3: expected a JSON object, got a list",
    ]


def test_json_list_records_carry_the_line_they_start_on(tmp_path):
    text = '[\n  {"id": "a",\n   "text": "x"},\n\n  {"id": "b"}, {"id": "c"}\n]\n'
    records = read_records(write(tmp_path, "d.json", text), "d.json")
    assert [(r.line, r.data["id"]) for r in records] == [(2, "a"), (5, "b"), (5, "c")]


def test_json_must_be_a_list_of_objects(tmp_path):
    assert problems(read_records, write(tmp_path, "a.json", '{"id": 1}'), "a.json") == [
        "a.json:1: expected a JSON list of objects, got an object"
    ]
    assert problems(read_records, write(tmp_path, "b.json", '[{"id": 1},\n 7]'), "b.json") == [
        "b.json:2: expected a JSON object, got a number"
    ]
    assert problems(read_records, write(tmp_path, "c.json", '[\n{"id": 1,}\n]'), "c.json") == [
        "c.json:2: not valid JSON: Expecting property name enclosed in double quotes (column 10)"
    ]


def test_csv_counts_the_header_as_line_one(tmp_path):
    text = 'id,text\na,"first, with comma"\n\nb,"two\nlines"\nc,third\n'
    records = read_records(write(tmp_path, "d.csv", text), "d.csv")
    assert records == [
        Record("d.csv", 2, {"id": "a", "text": "first, with comma"}),
        Record("d.csv", 4, {"id": "b", "text": "two\nlines"}),
        Record("d.csv", 6, {"id": "c", "text": "third"}),
    ]


def test_tsv_reads_tabs_and_tolerates_a_byte_order_mark(tmp_path):
    path = tmp_path / "d.tsv"
    path.write_bytes("\ufeffid\ttext\na\tLe chat, assis.\n".encode())
    assert read_records(path) == [Record(str(path), 2, {"id": "a", "text": "Le chat, assis."})]


def test_table_rows_with_the_wrong_number_of_fields(tmp_path):
    path = write(tmp_path, "d.tsv", "id\ttext\na\tx\ty\nb\n")
    assert problems(read_records, path, "d.tsv") == [
        "d.tsv:2: expected 2 fields, got 3",
        "d.tsv:3: expected 2 fields, got 1",
    ]


def test_table_header_must_name_every_column_once(tmp_path):
    assert problems(read_records, write(tmp_path, "a.csv", "id,id\n1,2\n"), "a.csv") == [
        "a.csv:1: column 'id' appears twice in the header row"
    ]
    assert problems(read_records, write(tmp_path, "b.csv", "id,,text\n"), "b.csv") == [
        "b.csv:1: column 2 has no name in the header row"
    ]
    assert problems(read_records, write(tmp_path, "c.csv", "\n"), "c.csv") == [
        "c.csv:1: missing header row (the first row names the columns)"
    ]


def test_unreadable_files(tmp_path):
    assert problems(read_records, tmp_path / "none.jsonl", "none.jsonl") == [
        "none.jsonl: file not found"
    ]
    assert problems(read_records, write(tmp_path, "d.txt", "x"), "d.txt") == [
        "d.txt: unsupported file type '.txt'"
    ]
    path = tmp_path / "latin.jsonl"
    path.write_bytes(b'{"id": "a"}\n{"id": "caf\xe9"}\n')
    assert problems(read_records, path, "latin.jsonl") == ["latin.jsonl:2: not valid UTF-8 text"]


def test_problems_stop_at_twenty(tmp_path):
    path = write(tmp_path, "d.jsonl", "not json\n" * 50)
    found = problems(read_records, path, "d.jsonl")
    assert len(found) == 20 and found[-1].startswith("d.jsonl:20: ")


# Text a database can store: no lone surrogates, no NUL (both are refused at import).
cell_text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
    max_size=12,
)


@settings(max_examples=60, deadline=None)
@given(
    rows=st.lists(st.tuples(cell_text, cell_text), min_size=1, max_size=6),
    delimiter=st.sampled_from([",", "\t"]),
)
def test_tables_written_by_the_csv_module_read_back_with_their_lines(
    tmp_path_factory, rows, delimiter
):
    rows = [row for row in rows if any(cell.strip() for cell in row)]
    out = io.StringIO()
    writer = csv.writer(out, delimiter=delimiter)
    writer.writerow(["id", "text"])
    starts = []
    for row in rows:
        starts.append(out.getvalue().count("\n") + 1)
        writer.writerow(row)
    suffix = ".csv" if delimiter == "," else ".tsv"
    path = tmp_path_factory.mktemp("t") / f"d{suffix}"
    path.write_text(out.getvalue(), encoding="utf-8", newline="")
    records = read_records(path, "d")
    assert [(r.line, r.data) for r in records] == [
        (line, {"id": a, "text": b}) for line, (a, b) in zip(starts, rows, strict=True)
    ]


@settings(max_examples=60, deadline=None)
@given(
    objects=st.lists(st.dictionaries(st.sampled_from(["id", "text", "n"]), cell_text), max_size=6),
    indent=st.sampled_from([None, 0, 1, 4]),
)
def test_json_lists_read_back_with_the_line_each_object_starts_on(
    tmp_path_factory, objects, indent
):
    text = json.dumps(objects, indent=indent)
    path = tmp_path_factory.mktemp("j") / "d.json"
    path.write_text(text, encoding="utf-8")
    records = read_records(path, "d.json")
    assert [r.data for r in records] == objects
    lines = text.split("\n")
    for record in records:
        assert "{" in lines[record.line - 1]


# --------------------------------------------------------------------------- one item per line


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("items.jsonl", jsonl(*[{"id": f"i{n}", "text": f"t{n}"} for n in range(5)])),
        ("items.json", json.dumps([{"id": f"i{n}", "text": f"t{n}"} for n in range(5)])),
        ("items.csv", "id,text\n" + "".join(f"i{n},t{n}\n" for n in range(5))),
        ("items.tsv", "id\ttext\n" + "".join(f"i{n}\tt{n}\n" for n in range(5))),
    ],
)
def test_each_record_is_an_item_in_every_format(tmp_path, name, text):
    write(tmp_path, name, text)
    data = load_items(config_for(tmp_path, [name], BWS))
    assert [(item.item_id, item.text) for item in data.items] == [
        (f"i{n}", f"t{n}") for n in range(5)
    ]
    assert data.n_records == 5 and data.instances == []
    assert data.item("i3").data == {"id": "i3", "text": "t3"}


def test_items_use_the_configured_keys_and_string_ids(tmp_path):
    write(tmp_path, "d.jsonl", jsonl(*[{"key": n, "body": f"t{n}", "x": 1} for n in range(4)]))
    config = config_for(
        tmp_path, ["d.jsonl"], BWS, item_properties={"id_key": "key", "text_key": "body"}
    )
    data = load_items(config)
    assert [item.item_id for item in data.items] == ["0", "1", "2", "3"]
    assert data.items[0].data == {"key": 0, "body": "t0", "x": 1}


def test_items_from_several_files_with_a_duplicate_across_them(tmp_path):
    write(tmp_path, "a.jsonl", jsonl(*[{"id": f"i{n}", "text": "t"} for n in range(4)]))
    write(tmp_path, "b.csv", "id,text\ni9,t\ni2,t\n")
    config = config_for(tmp_path, ["a.jsonl", "b.csv"], BWS)
    assert problems(load_items, config) == ["b.csv:3: duplicate item id 'i2' (first at a.jsonl:3)"]


def test_item_without_id_or_text(tmp_path):
    records = [{"id": "a", "text": "t"}, {"text": "no id"}, {"id": "c"}, {"id": "", "text": "t"}]
    write(tmp_path, "d.jsonl", jsonl(*records, {"id": ["x"], "text": "t"}))
    assert problems(load_items, config_for(tmp_path, ["d.jsonl"], BWS)) == [
        "d.jsonl:2: missing item id (key 'id')",
        "d.jsonl:3: missing item text (key 'text')",
        "d.jsonl:4: item id (key 'id') is empty",
        "d.jsonl:5: item id (key 'id') must be a string, got a list",
    ]


def test_fewer_items_than_a_tuple_needs(tmp_path):
    write(tmp_path, "d.jsonl", jsonl({"id": "a", "text": "t"}, {"id": "b", "text": "t"}))
    assert problems(load_items, config_for(tmp_path, ["d.jsonl"], BWS)) == [
        "d.jsonl: only 2 items; a tuple needs 4 (bws tuple_size)"
    ]


def test_empty_data_is_an_error(tmp_path):
    write(tmp_path, "d.jsonl", "\n")
    schemes = [{"annotation_type": "text", "name": "c"}]
    assert problems(load_items, config_for(tmp_path, ["d.jsonl"], schemes)) == [
        "d.jsonl: no records in the data files"
    ]


def test_a_malformed_line_in_a_later_file_stops_the_whole_import(tmp_path):
    write(tmp_path, "a.jsonl", jsonl(*[{"id": f"i{n}", "text": "t"} for n in range(4)]))
    write(tmp_path, "b.jsonl", '{"id": "i9", "text": "t"}\n{oops\n')
    assert problems(load_items, config_for(tmp_path, ["a.jsonl", "b.jsonl"], BWS)) == [
        "b.jsonl:2: not valid JSON: Expecting property name enclosed in double quotes (column 2)"
    ]


# --------------------------------------------------------------------------- items_key instances


def test_instances_hold_items_and_ids_aggregate_across_instances(tmp_path):
    write(
        tmp_path,
        "d.jsonl",
        jsonl(
            {
                "id": "s1",
                "source": "The cat.",
                "translations": translations("a", "b", "c", "d", "e"),
            },
            {"id": "s2", "source": "The dog.", "translations": translations("b", "a", "c", "d")},
        ),
    )
    data = load_items(config_for(tmp_path, ["d.jsonl"], bws_b()))
    first, second = data.instances
    assert (first.instance_id, first.context, first.file, first.line) == (
        "s1",
        {"source": "The cat."},
        "d.jsonl",
        1,
    )
    assert [item.item_id for item in first.items] == ["a", "b", "c", "d", "e"]
    assert {item.instance_id for item in second.items} == {"s2"}
    assert not first.pregenerated and second.pregenerated
    assert [item.item_id for item in data.items] == ["a", "b", "c", "d", "e"]
    assert data.item("a").instances == ["s1", "s2"]
    assert data.item("e").instances == ["s1"]
    assert data.item("a").text == "text of a"
    assert data.n_records == 2


def test_item_lists_may_hold_plain_strings(tmp_path):
    write(tmp_path, "d.json", json.dumps([{"id": "s1", "translations": ["w", "x", "y"]}]))
    data = load_items(config_for(tmp_path, ["d.json"], bws_b(3)))
    assert [(item.item_id, item.text) for item in data.instances[0].items] == [
        ("w", "w"),
        ("x", "x"),
        ("y", "y"),
    ]


def test_short_item_list_is_an_error(tmp_path):
    write(
        tmp_path,
        "d.jsonl",
        jsonl(
            {"id": "s1", "translations": translations("a", "b", "c", "d")},
            {"id": "s2", "translations": translations("a", "b", "c")},
        ),
    )
    assert problems(load_items, config_for(tmp_path, ["d.jsonl"], bws_b())) == [
        "d.jsonl:2: 'translations' holds 3 items, fewer than tuple_size 4"
    ]


def test_bad_instances_are_each_named(tmp_path):
    good = translations("a", "b", "c")
    write(
        tmp_path,
        "d.jsonl",
        jsonl(
            {"id": "s1", "translations": good},
            {"id": "s1", "translations": good},
            {"id": "s3"},
            {"id": "s4", "translations": "a b c"},
            {"id": "s5", "translations": translations("a", "b", "a")},
            {"id": "s6", "translations": [{"text": "no id"}, *good]},
            {"id": "s7", "translations": [{"id": "x"}, *good]},
            {"id": "s8", "translations": [7, *good]},
            {"translations": good},
        ),
    )
    assert problems(load_items, config_for(tmp_path, ["d.jsonl"], bws_b(3))) == [
        "d.jsonl:2: duplicate instance id 's1' (first at d.jsonl:1)",
        "d.jsonl:3: missing item list (key 'translations')",
        "d.jsonl:4: 'translations' must be a list of items, got a string",
        "d.jsonl:5: item id 'a' appears twice in instance 's5' "
        "(translations[0] and translations[2])",
        "d.jsonl:6: translations[0] has no id (key 'id')",
        "d.jsonl:7: translations[0] has no text (key 'text')",
        "d.jsonl:8: translations[0] must be an object with an id or a string, got a number",
        "d.jsonl:9: missing instance id (key 'id')",
    ]


def test_reference_example_with_items_key():
    data = load_items(load_config(EXAMPLES / "mt_tuples" / "config.yaml"))
    assert len(data.instances) == 30
    assert [item.item_id for item in data.items] == [f"sys_{c}" for c in "abcdef"]
    assert all(len(item.instances) == 30 for item in data.items)
    assert all(
        len(instance.items) == 6 and not instance.pregenerated for instance in data.instances
    )


@pytest.mark.parametrize("example", ["mt_bws", "mt_two_dims"])
def test_reference_examples_one_item_per_line(example):
    data = load_items(load_config(EXAMPLES / example / "config.yaml"))
    assert len(data.items) == 200 == data.n_records
    assert data.items[0].item_id == "mt_0001" and data.items[-1].item_id == "mt_0200"
    assert {item.data["system"] for item in data.items} == {f"sys_{c}" for c in "abcde"}


# --------------------------------------------------------------------------- non-BWS units


def test_non_bws_records_are_instances(tmp_path):
    write(tmp_path, "d.csv", "id,text,extra\nu1,hello,1\nu2,world,2\n")
    schemes = [{"annotation_type": "radio", "name": "s", "labels": ["pos", "neg"]}]
    data = load_items(config_for(tmp_path, ["d.csv"], schemes))
    assert data.items == []
    assert [(i.instance_id, i.context, i.line) for i in data.instances] == [
        ("u1", {"text": "hello", "extra": "1"}, 2),
        ("u2", {"text": "world", "extra": "2"}, 3),
    ]


def test_non_bws_duplicate_and_missing_ids(tmp_path):
    write(tmp_path, "d.tsv", "id\ttext\nu1\ta\n\tb\nu1\tc\n")
    schemes = [{"annotation_type": "text", "name": "c"}]
    assert problems(load_items, config_for(tmp_path, ["d.tsv"], schemes)) == [
        "d.tsv:3: instance id (key 'id') is empty",
        "d.tsv:4: duplicate instance id 'u1' (first at d.tsv:2)",
    ]


def test_traces_need_a_list_of_steps(tmp_path):
    steps = [{"action": "click"}, {"action": "type"}]
    write(
        tmp_path,
        "d.jsonl",
        jsonl({"id": "t1", "steps": steps}, {"id": "t2"}, {"id": "t3", "steps": "click"}),
    )
    schemes = [{"annotation_type": "process_reward", "name": "p", "labels": ["good", "bad"]}]
    assert problems(load_items, config_for(tmp_path, ["d.jsonl"], schemes)) == [
        "d.jsonl:2: a trace needs a list of steps under 'steps' (missing)",
        "d.jsonl:3: a trace needs a list of steps under 'steps' (got a string)",
    ]
