"""The BWS command line: ``python -m bws COMMAND ...``, no database or server needed.

This module only builds the parser, from the standard library and
``bws.core.scoring_options``, so ``--help`` answers at once. Each command's handler
imports its implementation when the command runs: ``bws.cli_tuples`` for
``generate-tuples`` (numpy, scipy, the data file reader) and ``bws.cli_scoring`` for
``score`` and ``stats`` (scipy and the configuration schema as well). A ``CliError``
from a handler becomes a message and exit code 2.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from bws.cli_errors import CliError
from bws.core.scoring_options import (
    DEFAULT_ALPHA,
    DEFAULT_INTERVALS,
    DEFAULT_MAX_ITER,
    DEFAULT_TOLERANCE,
    INTERVAL_METHODS,
    METHODS,
    SHRINKAGE,
    UNITS,
)

Registrar = Callable[[argparse._SubParsersAction], None]


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


def _positive_int(text: str) -> int:
    value = _integer(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _count(text: str) -> int:
    value = _integer(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text}")
    return value


# --------------------------------------------------------------------------- generate-tuples


def add_generate_tuples_parser(subparsers: argparse._SubParsersAction) -> None:
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


def _generate_tuples(args: argparse.Namespace) -> int:
    # numpy and scipy are heavy: the design code loads only when this command runs
    from bws.cli_tuples import generate_tuples

    return generate_tuples(args)


# --------------------------------------------------------------------------- score, stats


def add_score_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "score",
        help="score a BWS scheme from the annotation files",
        description="Score a best-worst scheme from the config's data files and the "
        "annotation files in its output_annotation_dir, and write the score table.",
    )
    parser.add_argument("--config", required=True, help="project YAML configuration")
    parser.add_argument(
        "--method",
        choices=METHODS,
        help="scoring method (default: the scheme's scoring.method)",
    )
    parser.add_argument("--scheme", help="BWS scheme name (needed when there are several)")
    parser.add_argument(
        "--output",
        help="score table path: TSV, or CSV for a .csv path (default: the scheme's "
        "scoring.output_file, else <output_annotation_dir>/bws_scores.tsv)",
    )
    parser.add_argument(
        "--intervals",
        choices=INTERVAL_METHODS,
        default=DEFAULT_INTERVALS,
        help="how the 95%% intervals are made: calibrated (default; posterior intervals of "
        "the empirical-Bayes fit, moderated t for counting) or bootstrap (cluster percentile "
        "intervals, which cover too rarely at few appearances per item)",
    )
    parser.add_argument(
        "--shrinkage",
        choices=SHRINKAGE,
        default="empirical_bayes",
        help="penalty of the model fits: empirical_bayes (default; the prior variance of the "
        "utilities estimated from the data) or fixed (--alpha)",
    )
    parser.add_argument(
        "--alpha",
        type=_positive_float,
        default=DEFAULT_ALPHA,
        help="the fixed penalty alpha * sum(u**2), with --shrinkage fixed "
        f"(default {DEFAULT_ALPHA})",
    )
    parser.add_argument(
        "--bootstrap",
        type=_count,
        help="intervals at all (any positive number) and, with --intervals bootstrap, the "
        "resamples; 0 for none (default: the scheme's bootstrap_iterations, or 0 when "
        "include_confidence is false)",
    )
    parser.add_argument(
        "--resample-by",
        choices=UNITS,
        default="tuple",
        help="bootstrap cluster (default: tuple)",
    )
    parser.add_argument("--seed", type=_count, help="bootstrap seed (default: the design seed)")
    parser.add_argument("--max-iter", type=_positive_int, default=DEFAULT_MAX_ITER)
    parser.add_argument("--tolerance", type=_positive_float, default=DEFAULT_TOLERANCE)
    _add_rank_arguments(parser)
    parser.add_argument(
        "--compare",
        metavar="ID,ID,...",
        help="is A above B? for every pair of these item ids (at most 20), Holm-adjusted",
    )
    parser.set_defaults(handler=_score)


def _add_rank_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--ranks",
        action="store_true",
        help="print each item's rank with a 95%% interval (marginal and simultaneous, within "
        "its group) and the items surely among the top k",
    )
    parser.add_argument(
        "--top-k",
        type=_positive_int,
        help="the k of the top-k statement (default: 10%% of the items, 1 to 10)",
    )


def add_stats_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "stats",
        help="print BWS statistics per scheme",
        description="Print items, tuples, annotations, a score summary, the top items and "
        "split-half reliability for every best-worst scheme.",
    )
    parser.add_argument("--config", required=True, help="project YAML configuration")
    parser.add_argument("--seed", type=_count, help="bootstrap and split seed")
    _add_rank_arguments(parser)
    parser.set_defaults(handler=_stats)


def _score(args: argparse.Namespace) -> int:
    # scipy and the configuration schema are heavy: loaded only when this command runs
    from bws.cli_scoring import run_score

    return run_score(args)


def _stats(args: argparse.Namespace) -> int:
    # scipy and the configuration schema are heavy: loaded only when this command runs
    from bws.cli_scoring import run_stats

    return run_stats(args)


# --------------------------------------------------------------------------- entry point

# Command name -> the function that adds its subparser (which sets ``handler``).
REGISTRY: dict[str, Registrar] = {
    "generate-tuples": add_generate_tuples_parser,
    "score": add_score_parser,
    "stats": add_stats_parser,
}


def build_parser(commands: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser with the given commands' subparsers (all of them when None)."""
    parser = argparse.ArgumentParser(
        prog="python -m bws", description="BWS tools that need no database or server."
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, registrar in REGISTRY.items():
        if commands is None or name in commands:
            registrar(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    try:
        return args.handler(args)
    except CliError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
