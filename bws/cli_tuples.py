"""The ``generate-tuples`` subcommand of ``python -m bws``: design tuples for a data file.

Its parser is in ``bws.cli``, which imports this module only when the command runs.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from bws.cli_errors import CliError
from bws.core.design import DesignError, balanced_design, design_summary, random_tuples
from projects.datafiles import DataError, read_records


def read_item_ids(path: Path, id_key: str) -> list[str]:
    """Item ids in file order; a missing, empty or repeated id is an error naming file:line."""
    records = read_records(path)
    ids: list[str] = []
    first_line: dict[str, int] = {}
    problems = []
    for record in records:
        value = record.data.get(id_key)
        where = f"{record.file}:{record.line}"
        if value is None or (isinstance(value, str) and not value.strip()):
            problems.append(f"{where}: no {id_key!r} value")
            continue
        if isinstance(value, (dict, list, bool)):
            problems.append(f"{where}: {id_key!r} must be a string or a number")
            continue
        item_id = str(value).strip()
        if item_id in first_line:
            problems.append(f"{where}: id {item_id!r} repeats line {first_line[item_id]}")
            continue
        first_line[item_id] = record.line
        ids.append(item_id)
    if problems:
        shown = problems[:20]
        if len(problems) > 20:
            shown.append(f"... and {len(problems) - 20} more")
        raise CliError("\n".join(shown))
    if not ids:
        raise CliError(f"{path}: no items")
    return ids


def generate_tuples(args: argparse.Namespace) -> int:
    """Write the tuples and print the design summary; bad input raises ``CliError``."""
    try:
        return _generate_tuples(args)
    except (DesignError, DataError) as exc:
        raise CliError(str(exc)) from None


def _generate_tuples(args: argparse.Namespace) -> int:
    ids = read_item_ids(args.items, args.id_key)
    n = len(ids)
    asked = -(-n * args.tuples_per_item // args.tuple_size)
    if args.method == "random":
        if args.ensure_pair_coverage:
            raise CliError("--ensure-pair-coverage needs --method balanced_incomplete")
        tuples = random_tuples(n, args.tuple_size, args.tuples_per_item, seed=args.seed)
        notes: list[str] = []
    else:
        tuples, notes = balanced_design(
            n,
            args.tuple_size,
            args.tuples_per_item,
            seed=args.seed,
            ensure_pair_coverage=args.ensure_pair_coverage,
        )
    try:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        with args.output.open("w", encoding="utf-8") as out:
            for number, row in enumerate(tuples.tolist(), start=1):
                line = {"id": f"tuple_{number:06d}", "items": [ids[i] for i in row]}
                out.write(json.dumps(line, ensure_ascii=False) + "\n")
    except OSError as exc:
        raise CliError(f"{args.output}: cannot write: {exc.strerror or exc}") from None
    summary = design_summary(tuples, n, notes=notes, added_tuples=len(tuples) - asked)
    print(f"method: {args.method}, seed {args.seed}")
    for line in summary.lines():
        print(line)
    print(f"wrote {len(tuples):,} tuples to {args.output}")
    return 0
