"""Data files: records read from .jsonl, .json, .csv and .tsv, then items and instances.

Pure Python (no Django). ``load_items`` checks everything before it returns, so a caller
that imports its result imports all of it or, on a DataError, nothing.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from projects.configuration import ProjectConfig
from projects.configuration.normal import ItemPool
from projects.limits import Limits
from projects.problems import FileProblem, FileProblemsError
from projects.schemes import scheme_type
from projects.storable import json_problem

MAX_PROBLEMS = 20


DataProblem = FileProblem


class DataError(FileProblemsError):
    """Data that cannot be imported. ``problems`` lists each one as file:line: reason."""


@dataclass(frozen=True)
class Record:
    """One object read from a data file, with where it came from (line 1 is the first)."""

    file: str
    line: int
    data: dict


@dataclass
class Item:
    """Something annotators compare in BWS tuples."""

    item_id: str
    text: str
    data: dict
    instance_id: str | None = None
    # For items_key data: the instances this item id appears in, in file order.
    instances: list[str] = field(default_factory=list)


@dataclass
class Instance:
    """A unit of data: a record with an id (non-BWS projects) or a list of items (items_key)."""

    instance_id: str
    context: dict
    items: list[Item]
    file: str
    line: int
    pregenerated: bool = False


@dataclass
class LoadedData:
    items: list[Item]
    instances: list[Instance]
    n_records: int

    def item(self, item_id: str) -> Item:
        for item in self.items:
            if item.item_id == item_id:
                return item
        raise KeyError(item_id)


class _Problems:
    """Collects problems, stopping the read once there are enough to be useful."""

    class Full(Exception):
        pass

    def __init__(self, limit: int = MAX_PROBLEMS):
        self.limit = limit
        self.problems: list[DataProblem] = []

    def add(self, file: str, line: int | None, reason: str) -> None:
        self.problems.append(DataProblem(file, line, reason))
        if len(self.problems) >= self.limit:
            raise self.Full

    def raise_if_any(self) -> None:
        if self.problems:
            raise DataError(self.problems)


# --------------------------------------------------------------------------- reading


def read_records(path: str | Path, name: str | None = None) -> list[Record]:
    """Every object in a data file; ``name`` (default: the path) is used in messages.

    .jsonl: one object per line, blank lines skipped. .json: a list of objects, each with
    the line it starts on. .csv/.tsv: a header row (line 1), then one record per row.
    """
    problems = _Problems()
    try:
        records = _read(Path(path), name or str(path), problems)
    except _Problems.Full:
        records = []
    problems.raise_if_any()
    return records


def _read(path: Path, name: str, problems: _Problems) -> list[Record]:
    suffix = path.suffix.lower()
    readers = {".jsonl": _read_jsonl, ".json": _read_json, ".csv": _read_table, ".tsv": _read_table}
    if suffix not in readers:
        problems.add(name, None, f"unsupported file type {suffix or '(none)'!r}")
        return []
    try:
        # Bytes decoded as they are: no newline translation, so quoted CSV fields and
        # line numbers stay exact.
        text = path.read_bytes().decode("utf-8-sig")
    except FileNotFoundError:
        problems.add(name, None, "file not found")
        return []
    except UnicodeDecodeError as exc:
        line = path.read_bytes()[: exc.start].count(b"\n") + 1
        problems.add(name, line, "not valid UTF-8 text")
        return []
    except OSError as exc:
        problems.add(name, None, f"cannot read the file: {exc.strerror or type(exc).__name__}")
        return []
    if suffix == ".tsv":
        return _read_table(text, name, problems, delimiter="\t")
    return readers[suffix](text, name, problems)


# Records are read with the standard parser; one nested deeper than it can recurse is
# refused rather than crashing the import.
DATA_MAX_DEPTH = 64
_TOO_DEEP = f"nested too deeply (at most {DATA_MAX_DEPTH} levels of lists and objects)"


def _value_problem(value) -> str | None:
    """Why a parsed record cannot be stored: too deep, a NUL or a lone surrogate in a
    string, an infinite number."""
    return json_problem(value, max_depth=DATA_MAX_DEPTH, setting="records in data files")


def _read_jsonl(text: str, name: str, problems: _Problems) -> list[Record]:
    records = []
    # Split on "\n" only: str.splitlines also breaks at U+2028 and other separators
    # that may sit unescaped inside a JSON string.
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.add(name, number, f"not valid JSON: {exc.msg} (column {exc.colno})")
            continue
        except RecursionError:
            problems.add(name, number, _TOO_DEEP)
            continue
        if problem := _value_problem(value):
            problems.add(name, number, problem)
            continue
        if not isinstance(value, dict):
            problems.add(name, number, f"expected a JSON object, got {_json_type(value)}")
            continue
        records.append(Record(name, number, value))
    return records


def _read_json(text: str, name: str, problems: _Problems) -> list[Record]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        problems.add(name, exc.lineno, f"not valid JSON: {exc.msg} (column {exc.colno})")
        return []
    except RecursionError:
        problems.add(name, 1, _TOO_DEEP)
        return []
    if problem := _value_problem(value):
        problems.add(name, 1, problem)
        return []
    if not isinstance(value, list):
        problems.add(name, 1, f"expected a JSON list of objects, got {_json_type(value)}")
        return []
    lines = _element_lines(text, len(value))
    records = []
    for index, element in enumerate(value):
        line = lines[index] if lines else index + 1
        if not isinstance(element, dict):
            problems.add(name, line, f"expected a JSON object, got {_json_type(element)}")
            continue
        records.append(Record(name, line, element))
    return records


def _element_lines(text: str, count: int) -> list[int] | None:
    """The line each top-level element of a JSON array starts on (text already parsed)."""
    decoder = json.JSONDecoder()
    position = text.index("[") + 1
    lines: list[int] = []
    line = text.count("\n", 0, position) + 1
    for _ in range(count):
        while text[position] in " \t\r\n,":
            if text[position] == "\n":
                line += 1
            position += 1
        lines.append(line)
        _, end = decoder.raw_decode(text, position)
        line += text.count("\n", position, end)
        position = end
    return lines


def _read_table(text: str, name: str, problems: _Problems, delimiter: str = ",") -> list[Record]:
    # Lines end at "\n" (a "\r\n" ending included), as in every other format here.
    reader = csv.reader(io.StringIO(text, newline="\n"), delimiter=delimiter, strict=True)
    records = []
    try:
        header = next(reader, None)
    except csv.Error as exc:
        problems.add(name, 1, f"malformed header row: {exc}")
        return []
    if not header or not any(cell.strip() for cell in header):
        problems.add(name, 1, "missing header row (the first row names the columns)")
        return []
    header = [cell.strip() for cell in header]
    for index, cell in enumerate(header):
        if not cell:
            problems.add(name, 1, f"column {index + 1} has no name in the header row")
            return []
        if cell in header[:index]:
            problems.add(name, 1, f"column {cell!r} appears twice in the header row")
            return []
    start = reader.line_num + 1
    while True:
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            problems.add(name, start, f"malformed row: {exc}")
            start = reader.line_num + 1
            continue
        line, start = start, reader.line_num + 1
        if not row or not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            problems.add(name, line, f"expected {len(header)} fields, got {len(row)}")
            continue
        records.append(Record(name, line, dict(zip(header, row, strict=True))))
    return records


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object"


# --------------------------------------------------------------------------- items


def load_items(config: ProjectConfig, *, limits: Limits | None = None) -> LoadedData:
    """Read every data file of a project into items and instances.

    Without items_key each record is an item (BWS) or an instance (other schemes). With
    items_key each record is an instance holding a list of items; item ids may repeat
    across instances and aggregate by id. Raise DataError (up to 20 problems, each
    file:line: reason) if anything is wrong, or if the records or the items pooled from
    them pass PROJECT_MAX_ITEMS.
    """
    limits = limits or Limits()
    problems = _Problems()
    records: list[Record] = []
    result = LoadedData(items=[], instances=[], n_records=0)
    files = ", ".join(config.data_files)
    try:
        for name, path in zip(config.data_files, config.data_paths(), strict=True):
            records.extend(_read(path, name, problems))
            if len(records) > limits.items:
                problems.add(files, None, _too_many(limits, "records"))
                raise _Problems.Full
        if not records and not problems.problems:
            problems.add(files, None, "no records in the data files")
        pool = config.item_pool
        if pool is not None and pool.items_key:
            result = _instances_with_items(config, pool, records, problems)
        elif pool is not None:
            result = _items(config, pool, records, problems)
        else:
            result = _units(config, records, problems)
        if len(result.items) > limits.items:
            problems.add(files, None, _too_many(limits, "items"))
    except _Problems.Full:
        pass
    problems.raise_if_any()
    return result


def _too_many(limits: Limits, what: str) -> str:
    return (
        f"more than {limits.items} {what} (items or instances); a project holds at most "
        f"{limits.items} (PROJECT_MAX_ITEMS)"
    )


def _record_id(record: Record, key: str, problems: _Problems, what: str) -> str | None:
    if key not in record.data or record.data[key] is None:
        problems.add(record.file, record.line, f"missing {what} id (key {key!r})")
        return None
    return _as_id(record.data[key], record, problems, f"{what} id (key {key!r})")


def _as_id(value: Any, record: Record, problems: _Problems, what: str) -> str | None:
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        problems.add(record.file, record.line, f"{what} must be a string, got {_json_type(value)}")
        return None
    value = str(value).strip()
    if not value:
        problems.add(record.file, record.line, f"{what} is empty")
        return None
    return value


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _items(
    config: ProjectConfig, pool: ItemPool, records: list[Record], problems: _Problems
) -> LoadedData:
    id_key, text_key = config.id_key, config.text_key
    items: list[Item] = []
    seen: dict[str, Record] = {}
    for record in records:
        item_id = _record_id(record, id_key, problems, "item")
        if record.data.get(text_key) is None:
            problems.add(record.file, record.line, f"missing item text (key {text_key!r})")
            continue
        if item_id is None:
            continue
        if item_id in seen:
            first = seen[item_id]
            problems.add(
                record.file,
                record.line,
                f"duplicate item id {item_id!r} (first at {first.file}:{first.line})",
            )
            continue
        seen[item_id] = record
        items.append(Item(item_id, _text(record.data[text_key]), record.data))
    tuple_size = pool.unit_size
    if not problems.problems and len(items) < tuple_size:
        where = config.data_files[0] if config.data_files else config.source
        problems.add(
            where,
            None,
            f"only {len(items)} items; a tuple needs {tuple_size} (bws tuple_size)",
        )
    return LoadedData(items=items, instances=[], n_records=len(records))


def _instances_with_items(
    config: ProjectConfig, pool: ItemPool, records: list[Record], problems: _Problems
) -> LoadedData:
    id_key = config.id_key
    items_key, tuple_size = pool.items_key, pool.unit_size
    instances: list[Instance] = []
    seen: dict[str, Record] = {}
    pool: dict[str, Item] = {}
    for record in records:
        instance_id = _record_id(record, id_key, problems, "instance")
        raw_items = record.data.get(items_key)
        if raw_items is None:
            problems.add(record.file, record.line, f"missing item list (key {items_key!r})")
            continue
        if not isinstance(raw_items, list):
            problems.add(
                record.file,
                record.line,
                f"{items_key!r} must be a list of items, got {_json_type(raw_items)}",
            )
            continue
        if instance_id is None:
            continue
        if instance_id in seen:
            first = seen[instance_id]
            problems.add(
                record.file,
                record.line,
                f"duplicate instance id {instance_id!r} (first at {first.file}:{first.line})",
            )
            continue
        seen[instance_id] = record
        items = _instance_items(record, instance_id, raw_items, config, items_key, problems)
        if items is None:
            continue
        if len(items) < tuple_size:
            problems.add(
                record.file,
                record.line,
                f"{items_key!r} holds {len(items)} items, fewer than tuple_size {tuple_size}",
            )
            continue
        context = {k: v for k, v in record.data.items() if k not in (id_key, items_key)}
        instances.append(
            Instance(
                instance_id=instance_id,
                context=context,
                items=items,
                file=record.file,
                line=record.line,
                pregenerated=len(items) == tuple_size,
            )
        )
        for item in items:
            if item.item_id not in pool:
                pool[item.item_id] = Item(item.item_id, item.text, item.data)
            pool[item.item_id].instances.append(instance_id)
    return LoadedData(items=list(pool.values()), instances=instances, n_records=len(records))


def _instance_items(
    record: Record,
    instance_id: str,
    raw_items: list,
    config: ProjectConfig,
    items_key: str,
    problems: _Problems,
) -> list[Item] | None:
    """The items of one instance; None (with problems recorded) if any is unusable."""
    items: list[Item] = []
    positions: dict[str, int] = {}
    ok = True
    for index, raw in enumerate(raw_items):
        where = f"{items_key}[{index}]"
        if isinstance(raw, str):
            item_id = _as_id(raw, record, problems, f"{where}")
            text, data = raw, {"id": raw, "text": raw}
        elif isinstance(raw, dict):
            id_key = config.id_key if config.id_key in raw else "id"
            if raw.get(id_key) is None:
                problems.add(record.file, record.line, f"{where} has no id (key {id_key!r})")
                ok = False
                continue
            item_id = _as_id(raw[id_key], record, problems, f"{where} id")
            # Items carry their own text; text_key usually names the instance's text.
            text_key = "text" if "text" in raw else config.text_key
            if raw.get(text_key) is None:
                problems.add(record.file, record.line, f"{where} has no text (key 'text')")
                ok = False
                continue
            text, data = _text(raw[text_key]), raw
        else:
            problems.add(
                record.file,
                record.line,
                f"{where} must be an object with an id or a string, got {_json_type(raw)}",
            )
            ok = False
            continue
        if item_id is None:
            ok = False
            continue
        if item_id in positions:
            problems.add(
                record.file,
                record.line,
                f"item id {item_id!r} appears twice in instance {instance_id!r} "
                f"({items_key}[{positions[item_id]}] and {where})",
            )
            ok = False
            continue
        positions[item_id] = index
        items.append(Item(item_id, text, data, instance_id=instance_id))
    return items if ok else None


def _units(config: ProjectConfig, records: list[Record], problems: _Problems) -> LoadedData:
    """Non-BWS projects: every record is an instance annotated as a whole."""
    id_key = config.id_key
    checks = [(scheme_type(s.type), s.options) for s in config.schemes]
    instances: list[Instance] = []
    seen: dict[str, Record] = {}
    for record in records:
        instance_id = _record_id(record, id_key, problems, "instance")
        # Each scheme type's own needs (a trace's list of steps), each problem said once.
        found = (
            problem
            for kind, options in checks
            for problem in kind.data_problems(options, record.data)
        )
        for problem in dict.fromkeys(found):
            problems.add(record.file, record.line, problem)
        if instance_id is None:
            continue
        if instance_id in seen:
            first = seen[instance_id]
            problems.add(
                record.file,
                record.line,
                f"duplicate instance id {instance_id!r} (first at {first.file}:{first.line})",
            )
            continue
        seen[instance_id] = record
        context = {k: v for k, v in record.data.items() if k != id_key}
        instances.append(Instance(instance_id, context, [], record.file, record.line))
    return LoadedData(items=[], instances=instances, n_records=len(records))
