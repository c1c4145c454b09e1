"""The interchange format: one JSON Lines record per annotator and unit.

The one reader and writer of annotation files: the annotation output directory, the
``python -m bws`` and ``python -m agreement`` commands, and the platform's export and
import all go through here. CSV and TSV flatten the same records (one column per
field, one column per key where the scheme type splits its answers, as
``<scheme>.best``/``<scheme>.worst`` for best-worst answers, JSON for other lists and
objects). Pure Python, no Django. Every error names file and line.

An answer is a scheme's value in ``annotations``; a scheme absent there, or null, is not
answered. ``[]`` is a value like any other: for boxes and segments it is the answer
"nothing to mark" (projects.schemes), written ``[]`` in JSON Lines and as the cell ``[]``
in a table, where an empty cell is "not answered"; both read back as written.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from projects import spreadsheet
from projects.problems import FileProblem, FileProblemsError
from projects.schemes import scheme_type, table_types

MAX_PROBLEMS = 20
FIELDS = ("id", "items", "instance", "annotations", "annotator", "timestamp", "gold", "excluded")
TABLE_FIELDS = ("id", "items", "instance", "annotator", "timestamp")
# Marks an export adds where they apply (crowds.gold): a gold unit's answer, an answer of
# an annotator a manager left out. Read back, they are kept and change nothing else.
MARK_FIELDS = ("gold", "excluded")
DIRECTORY_SUFFIXES = (".jsonl",)


InterchangeProblem = FileProblem


class InterchangeError(FileProblemsError):
    """Annotation records that cannot be read. ``problems`` lists each one as file:line: reason."""


@dataclass
class UnitRecord:
    """One annotator's answers on one unit: a BWS tuple (with items and instance) or an instance.

    ``annotations`` maps scheme name to value (a best-worst answer is
    ``{"best": ITEM_ID, "worst": ITEM_ID}``). ``file`` and ``line`` say where it was read.
    """

    id: str
    annotations: dict[str, Any] = field(default_factory=dict)
    annotator: str | None = None
    timestamp: str | None = None
    items: list[str] | None = None
    instance: str | None = None
    file: str = ""
    line: int | None = None
    gold: bool = False
    excluded: bool = False

    def to_dict(self) -> dict[str, Any]:
        """The record as the JSON object of the format (keys in the documented order)."""
        data: dict[str, Any] = {"id": self.id}
        if self.items is not None:
            data["items"] = list(self.items)
        if self.instance is not None:
            data["instance"] = self.instance
        data["annotations"] = dict(self.annotations)
        if self.annotator is not None:
            data["annotator"] = self.annotator
        if self.timestamp is not None:
            data["timestamp"] = self.timestamp
        for mark in MARK_FIELDS:
            if getattr(self, mark):
                data[mark] = True
        return data


class _Problems:
    class Full(Exception):
        pass

    def __init__(self) -> None:
        self.problems: list[InterchangeProblem] = []

    def add(self, file: str, line: int | None, reason: str) -> None:
        self.problems.append(InterchangeProblem(file, line, reason))
        if len(self.problems) >= MAX_PROBLEMS:
            raise self.Full

    def raise_if_any(self) -> None:
        if self.problems:
            raise InterchangeError(self.problems)


# --------------------------------------------------------------------------- records


def parse_record(data: Any, file: str = "<records>", line: int | None = None) -> UnitRecord:
    """Check one decoded JSON object and return it as a UnitRecord (InterchangeError if bad)."""
    problems = _Problems()
    try:
        record = _parse(data, file, line, problems)
    except _Problems.Full:
        record = None
    problems.raise_if_any()
    return record


def _parse(data: Any, file: str, line: int | None, problems: _Problems) -> UnitRecord | None:
    if not isinstance(data, Mapping):
        problems.add(file, line, f"a record must be a JSON object, got {_type(data)}")
        return None
    unknown = [key for key in data if key not in FIELDS]
    if unknown:
        known = ", ".join(FIELDS)
        problems.add(file, line, f"unknown field {unknown[0]!r} (fields: {known})")
        return None
    unit_id = _identifier(data.get("id"), "id", file, line, problems, required=True)
    annotations = data.get("annotations")
    if not isinstance(annotations, Mapping):
        got = "missing" if annotations is None else f"got {_type(annotations)}"
        problems.add(file, line, f"'annotations' must be an object of scheme: value ({got})")
        annotations = None
    items = data.get("items")
    if items is not None:
        if not isinstance(items, list) or not items:
            problems.add(file, line, f"'items' must be a non-empty list of ids, got {_type(items)}")
            items = None
        else:
            checked = [_identifier(item, "items[]", file, line, problems) for item in items]
            items = None if None in checked else checked
    instance = _identifier(data.get("instance"), "instance", file, line, problems)
    annotator = _identifier(data.get("annotator"), "annotator", file, line, problems)
    timestamp = data.get("timestamp")
    if timestamp is not None and not isinstance(timestamp, str):
        problems.add(file, line, f"'timestamp' must be an ISO 8601 string, got {_type(timestamp)}")
        timestamp = None
    if unit_id is None or annotations is None:
        return None
    return UnitRecord(
        id=unit_id,
        annotations=dict(annotations),
        annotator=annotator,
        timestamp=timestamp,
        items=items,
        instance=instance,
        file=file,
        line=line,
        gold=data.get("gold") is True,
        excluded=data.get("excluded") is True,
    )


def _identifier(
    value: Any, name: str, file: str, line: int | None, problems: _Problems, required=False
) -> str | None:
    if value is None:
        if required:
            problems.add(file, line, f"missing {name!r}")
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int)) or str(value) == "":
        problems.add(file, line, f"{name!r} must be a non-empty string, got {_type(value)}")
        return None
    return str(value)


def _type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    if isinstance(value, str):
        return f"the string {value!r}" if len(value) < 40 else "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__


# --------------------------------------------------------------------------- reading


def read_file(path: str | Path, name: str | None = None) -> list[UnitRecord]:
    """Records of one file: .jsonl (one record per line), or a flattened .csv/.tsv table."""
    path = Path(path)
    name = name or str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InterchangeError([InterchangeProblem(name, None, "file not found")]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InterchangeError([InterchangeProblem(name, None, f"cannot read: {exc}")]) from None
    suffix = path.suffix.lower()
    if suffix in (".csv", ".tsv"):
        return read_table_text(text, name, delimiter="\t" if suffix == ".tsv" else ",")
    return read_jsonl_text(text, name)


def read_jsonl_text(text: str, name: str = "<records>") -> list[UnitRecord]:
    """Records from JSON Lines text (blank lines skipped); InterchangeError names file:line."""
    problems = _Problems()
    records: list[UnitRecord] = []
    try:
        for number, raw in enumerate(text.splitlines(), start=1):
            if not raw.strip():
                continue
            try:
                data = json.loads(raw)
            except json.JSONDecodeError as exc:
                problems.add(name, number, f"not valid JSON: {exc.msg} (column {exc.colno})")
                continue
            record = _parse(data, name, number, problems)
            if record is not None:
                records.append(record)
    except _Problems.Full:
        pass
    problems.raise_if_any()
    return records


def answer_suffixes(output_format: str) -> tuple[str, ...]:
    """Suffixes of the answer files in an output directory: JSON Lines (the guides' files)
    and the project's output_annotation_format when that is a table (csv or tsv)."""
    return tuple(dict.fromkeys((".jsonl", f".{output_format}")))


def read_directory(
    directory: str | Path,
    *,
    suffixes: tuple[str, ...] = DIRECTORY_SUFFIXES,
    exclude: tuple[str | Path, ...] = (),
) -> list[UnitRecord]:
    """Records of every annotation file under ``directory``, files in name order.

    Only files with these suffixes are read, JSON Lines by default, and never the files in
    ``exclude`` (such as score tables). A missing directory holds no records. Messages name
    files as ``<directory name>/<relative path>``.
    """
    directory = Path(directory)
    if not directory.is_dir():
        return []
    skipped = {Path(path).resolve() for path in exclude}
    paths = sorted(
        (
            path
            for path in directory.rglob("*")
            if path.is_file()
            and path.suffix.lower() in suffixes
            and path.resolve() not in skipped
            and not any(part.startswith(".") for part in path.relative_to(directory).parts)
        ),
        key=lambda path: path.relative_to(directory).as_posix(),
    )
    problems: list[InterchangeProblem] = []
    records: list[UnitRecord] = []
    for path in paths:
        name = f"{directory.name}/{path.relative_to(directory).as_posix()}"
        try:
            records.extend(read_file(path, name))
        except InterchangeError as exc:
            problems.extend(exc.problems)
            if len(problems) >= MAX_PROBLEMS:
                break
    if problems:
        raise InterchangeError(problems[:MAX_PROBLEMS])
    return records


# --------------------------------------------------------------------------- writing


def dumps(record: UnitRecord) -> str:
    """One record as a line of JSON (no newline)."""
    return json.dumps(record.to_dict(), ensure_ascii=False)


def write_jsonl(records: Iterable[UnitRecord], target: str | Path | IO[str]) -> int:
    """Write records as JSON Lines to a path or an open text stream; return how many."""
    if isinstance(target, (str, Path)):
        with open(target, "w", encoding="utf-8", newline="\n") as stream:
            return write_jsonl(records, stream)
    count = 0
    for record in records:
        target.write(dumps(record) + "\n")
        count += 1
    return count


# --------------------------------------------------------------------------- tables


def table_columns(
    records: Iterable[UnitRecord], schemes: Mapping[str, str] | None = None
) -> list[str]:
    """Columns of the flattened table: the record fields, then the columns of each scheme.

    ``schemes`` (scheme name -> stored type) lets a scheme's type give its columns
    (SchemeType.export_columns). A scheme not named there, as in a file read without its
    configuration, is split when every value of it fits the table keys of a type (an
    object of best and worst), and is one column otherwise."""
    records = list(records)
    columns = list(TABLE_FIELDS)
    columns += [mark for mark in MARK_FIELDS if any(getattr(r, mark) for r in records)]
    types = dict(schemes or {})
    fitting: dict[str, list] = {}
    for record in records:
        for scheme, value in record.annotations.items():
            kinds = fitting.setdefault(scheme, table_types())
            fitting[scheme] = [kind for kind in kinds if kind.fits_table_keys(value)]
    for scheme, kinds in fitting.items():
        if scheme in types:
            columns.extend(scheme_type(types[scheme]).export_columns(scheme))
        elif kinds:
            columns.extend(kinds[0].export_columns(scheme))
        else:
            columns.append(scheme)
    return columns


def flatten(record: UnitRecord, columns: list[str]) -> dict[str, str]:
    """One record as table cells: strings as they are, lists and objects as JSON."""
    row = {
        "id": record.id,
        "items": json.dumps(record.items, ensure_ascii=False) if record.items is not None else "",
        "instance": record.instance or "",
        "annotator": record.annotator or "",
        "timestamp": record.timestamp or "",
    }
    for mark in MARK_FIELDS:
        if mark in columns:
            row[mark] = "true" if getattr(record, mark) else ""
    for column in columns[len(TABLE_FIELDS) :]:
        if column in MARK_FIELDS:
            continue
        if _split_column(column, columns):
            scheme, _, key = column.rpartition(".")
            value = record.annotations.get(scheme)
            value = value.get(key) if isinstance(value, Mapping) else None
        else:
            value = record.annotations.get(column)
        row[column] = _cell(value)
    return row


def write_table(
    records: Iterable[UnitRecord],
    target: str | Path | IO[str],
    *,
    delimiter: str | None = None,
    schemes: Mapping[str, str] | None = None,
) -> int:
    """Write the flattened records as CSV (or TSV: by ``delimiter`` or a .tsv path);
    ``schemes`` (name -> stored type) as for table_columns.

    Cells a spreadsheet would run as a formula are guarded (projects/spreadsheet.py).
    """
    records = list(records)
    if isinstance(target, (str, Path)):
        if delimiter is None:
            delimiter = "\t" if str(target).lower().endswith(".tsv") else ","
        with open(target, "w", encoding="utf-8", newline="") as stream:
            return write_table(records, stream, delimiter=delimiter, schemes=schemes)
    columns = table_columns(records, schemes)
    writer = spreadsheet.DictWriter(target, fieldnames=columns, delimiter=delimiter or ",")
    writer.writeheader()
    for record in records:
        writer.writerow(flatten(record, columns))
    return len(records)


def read_table_text(text: str, name: str = "<table>", *, delimiter: str = ",") -> list[UnitRecord]:
    """Records from a flattened CSV/TSV table (header on line 1; empty cells are no answer,
    a ``[]`` cell is the empty list, as JSON Lines writes it).

    The formula guard an export adds is taken off, so an exported table reads back exactly.
    """
    problems = _Problems()
    records: list[UnitRecord] = []
    reader = csv.reader(io.StringIO(text), delimiter=delimiter)
    try:
        header = [spreadsheet.unguard(cell) for cell in next(reader, None) or []]
        if not header:
            problems.add(name, 1, "no header row")
            raise _Problems.Full
        if "id" not in header:
            problems.add(name, 1, "the header has no 'id' column")
            raise _Problems.Full
        for row in reader:
            line = reader.line_num
            if not any(cell.strip() for cell in row):
                continue
            if len(row) != len(header):
                problems.add(name, line, f"{len(row)} cells, the header has {len(header)}")
                continue
            row = [spreadsheet.unguard(cell) for cell in row]
            data = _unflatten(dict(zip(header, row, strict=True)), header, name, line, problems)
            if data is not None:
                record = _parse(data, name, line, problems)
                if record is not None:
                    records.append(record)
    except _Problems.Full:
        pass
    problems.raise_if_any()
    return records


def _unflatten(
    row: dict[str, str], header: list[str], name: str, line: int, problems: _Problems
) -> dict[str, Any] | None:
    data: dict[str, Any] = {}
    for key in TABLE_FIELDS:
        if row.get(key, "") != "":
            data[key] = row[key]
    for mark in MARK_FIELDS:
        if row.get(mark, "") == "true":
            data[mark] = True
    if "items" in data:
        try:
            data["items"] = json.loads(data["items"])
        except json.JSONDecodeError:
            problems.add(name, line, "'items' must be a JSON list of item ids")
            return None
    annotations: dict[str, Any] = {}
    for column in header:
        if column in TABLE_FIELDS or column in MARK_FIELDS or row[column] == "":
            continue
        if _split_column(column, header):
            scheme, _, key = column.rpartition(".")
            annotations.setdefault(scheme, {})[key] = row[column]
        else:
            annotations[column] = _uncell(row[column])
    data["annotations"] = annotations
    return data


def _split_column(column: str, columns: list[str]) -> bool:
    """Whether a column is one of a split answer's columns (``<scheme>.<key>`` for every key
    of a scheme type's table keys, such as best and worst, all present)."""
    scheme, dot, key = column.rpartition(".")
    if not dot:
        return False
    return any(
        key in kind.table_keys and all(f"{scheme}.{k}" in columns for k in kind.table_keys)
        for kind in table_types()
    )


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _uncell(cell: str) -> Any:
    """A cell back to its value: JSON lists, objects and integers decode; text stays text."""
    stripped = cell.strip()
    if stripped[:1] in "[{" or stripped.lstrip("-").isdigit():
        try:
            return json.loads(stripped)
        except json.JSONDecodeError:
            return cell
    return cell
