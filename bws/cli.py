"""The BWS command line: ``python -m bws COMMAND ...``, no database or server needed.

Subcommands live in ``REGISTRY``: command name -> a function that adds its subparser(s)
to argparse's subparsers and sets ``handler`` (a function of the parsed arguments that
returns the exit code). A registrar given as ``"module:function"`` is imported only when
its command runs (or for ``--help``), so ``generate-tuples`` loads nothing but numpy,
scipy and the data file reader. ``CliError``, ``DesignError`` and ``DataError`` from a
handler become a message and exit code 2.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from bws.core.design import (
    DesignError,
    balanced_design,
    design_summary,
    random_tuples,
)
from projects.datafiles import DataError, read_records

Registrar = Callable[[argparse._SubParsersAction], None]


class CliError(Exception):
    """Bad input on the command line: printed as a message, exit code 2."""


def _int_at_least(low: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, got {value}")
        return value

    return parse


# --------------------------------------------------------------------------- generate-tuples


def _register_generate_tuples(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "generate-tuples",
        help="design BWS tuples for the items of a data file",
        description="Design BWS tuples for the items of a data file and write them as"
        " .jsonl, one tuple per line; print a design summary.",
    )
    parser.set_defaults(handler=_generate_tuples)
    parser.add_argument("--items", required=True, type=Path, help=".jsonl, .json, .csv or .tsv")
    parser.add_argument("--tuple-size", required=True, type=_int_at_least(2))
    parser.add_argument(
        "--tuples-per-item",
        required=True,
        type=_int_at_least(1),
        metavar="R",
        help="appearances per item, R; ceil(items x R / tuple size) tuples are made."
        " balanced_incomplete: every item appears R or R + 1 times (R + 1 for a few items"
        " when items x R is not a multiple of the tuple size; more with"
        " --ensure-pair-coverage, which adds tuples). random: R is only the average, since"
        " tuples are drawn independently: an item can appear far fewer times (even never)"
        " or far more. The summary prints the smallest and largest count.",
    )
    parser.add_argument("--output", required=True, type=Path, help="tuples as .jsonl")
    parser.add_argument("--seed", type=int, default=42, help="random seed (default 42)")
    parser.add_argument(
        "--method",
        choices=["balanced_incomplete", "random"],
        default="balanced_incomplete",
        help="balanced_incomplete (default): appearances, positions and pairs kept even;"
        " random: independent uniform tuples, no balance guaranteed (no item twice in a"
        " tuple)",
    )
    parser.add_argument(
        "--ensure-pair-coverage",
        action="store_true",
        help="every pair of items shares a tuple (adds tuples if needed)",
    )
    parser.add_argument("--id-key", default="id", help="field holding the item id (default id)")


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


REGISTRY: dict[str, Registrar | str] = {
    "generate-tuples": _register_generate_tuples,
    "score": "bws.cli_scoring:register",
    "stats": "bws.cli_scoring:register",
}


# --------------------------------------------------------------------------- entry point


def _registrar(entry: Registrar | str) -> Registrar:
    if callable(entry):
        return entry
    module, _, name = entry.partition(":")
    return getattr(importlib.import_module(module), name)


def build_parser(commands: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser with the given commands' subparsers (all of them when None)."""
    parser = argparse.ArgumentParser(
        prog="python -m bws", description="BWS tools that need no database or server."
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    done: set[str] = set()
    for name, entry in REGISTRY.items():
        if commands is not None and name not in commands:
            continue
        key = entry if isinstance(entry, str) else f"{entry.__module__}.{entry.__qualname__}"
        if key not in done:
            done.add(key)
            _registrar(entry)(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # Load only the named command's registrar, unless the name is missing or unknown.
    named = [arg for arg in argv[:1] if arg in REGISTRY]
    args = build_parser(named or None).parse_args(argv)
    try:
        return args.handler(args)
    except (CliError, DesignError, DataError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
