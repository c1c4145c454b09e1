"""``python -m agreement report``: the agreement report of a study from files, no database.

This module only builds the parser (standard library alone), so ``--help`` answers at
once; the command's handler imports ``agreement.cli_report``, which reads the
configuration and the answers and computes the report, when the command runs.
"""

from __future__ import annotations

import argparse


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m agreement",
        description="Inter-annotator agreement from a project's files (no database).",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    report = commands.add_parser("report", help="agreement figures per scheme")
    report.add_argument("--config", required=True, help="the project's YAML configuration")
    report.add_argument(
        "--annotations",
        help="an interchange .jsonl file or a directory of them "
        "(default: the configuration's output_annotation_dir)",
    )
    report.add_argument("--format", choices=("json", "text"), default="json")
    report.add_argument(
        "--model-annotator",
        action="append",
        default=[],
        metavar="NAME",
        help="an annotator that is a model judge (repeatable)",
    )
    report.set_defaults(handler=_report)
    return parser


def _report(args: argparse.Namespace) -> int:
    # numpy and the configuration schema are heavy: loaded only when this command runs
    from agreement.cli_report import run_report

    return run_report(args)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.handler(args)
