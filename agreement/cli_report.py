"""The ``report`` subcommand of ``python -m agreement``: the agreement report from files.

Reads the YAML configuration (projects.configuration) and the interchange records
(projects.interchange: every .jsonl under the configuration's output_annotation_dir, or
the file or directory given with --annotations) and prints the report of
agreement.core.report as JSON or text. Values the platform would not store as answers are
left out first (``answered``), so both give the same figures on the same answers. Its
parser is in ``agreement.cli``, which imports this module only when the command runs.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from agreement.core.report import AgreementInputError, build_report, format_text
from projects.configuration import ConfigError, load_config
from projects.interchange import InterchangeError, answer_suffixes, read_directory, read_file
from projects.schemes import scheme_type
from projects.validation import is_empty

EXIT_BAD_INPUT = 2


def run_report(args: argparse.Namespace) -> int:
    """Print the report; bad input is a message on stderr and exit code 2."""
    try:
        config = load_config(args.config, check_files=False)
        suffixes = answer_suffixes(config.output_annotation_format)
        records = _read_records(args.annotations, config.output_dir(), suffixes)
        # As on the platform: gold units' answers and excluded annotators count in no figure.
        records = [record for record in records if not (record.gold or record.excluded)]
        schemes = [
            {
                "name": scheme.name,
                "type": scheme.type,
                "options": scheme.options,
                "measure": scheme_type(scheme.type).measure,
            }
            for scheme in config.schemes
        ]
        records = answered(records, schemes)
        report = build_report(records, schemes, model_annotators=args.model_annotator)
    except (ConfigError, InterchangeError, AgreementInputError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.format == "text":
        sys.stdout.write(format_text(report))
    else:
        json.dump(report, sys.stdout, indent=2)
        sys.stdout.write("\n")
    return 0


def answered(records: list, schemes: list[dict]) -> list:
    """The records as the platform would store them: a configured scheme's value that is
    no answer there (projects.validation.is_empty: None, "", {}, and [] except for boxes
    and segments, where [] is "nothing to mark") is dropped, and a record left with no
    answer at all is not counted. So the report of a study's files and the platform's
    report of the same answers agree figure for figure."""
    kinds = {scheme["name"]: scheme_type(scheme["type"]) for scheme in schemes}
    kept = []
    for record in records:
        record.annotations = {
            name: value
            for name, value in record.annotations.items()
            if name not in kinds or not is_empty(value, kinds[name])
        }
        if record.annotations:
            kept.append(record)
    return kept


def _read_records(annotations: str | None, default_dir: Path, suffixes: tuple[str, ...]):
    if annotations is None:
        if not default_dir.is_dir():
            raise AgreementInputError(f"annotation directory not found: {default_dir}")
        return read_directory(default_dir, suffixes=suffixes)
    path = Path(annotations)
    if path.is_dir():
        return read_directory(path, suffixes=suffixes)
    if not path.exists():
        raise AgreementInputError(f"annotations not found: {path}")
    return read_file(path)
