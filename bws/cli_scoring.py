"""The ``score`` and ``stats`` subcommands of ``python -m bws`` (file mode, no database).

    python -m bws score --config config.yaml [--method counting|bradley_terry|plackett_luce]
        [--scheme NAME] [--output PATH] [--bootstrap N] [--max-iter N --tolerance X]
    python -m bws stats --config config.yaml

Bad input (config, data, annotation files, arguments) exits with status 2 and a message
naming file and line, without a traceback.
"""

from __future__ import annotations

import argparse
import sys

from bws.core.bootstrap import UNITS
from bws.core.judgments import JudgmentError
from bws.core.scoring import (
    DEFAULT_ALPHA,
    DEFAULT_MAX_ITER,
    DEFAULT_TOLERANCE,
    METHOD_NAMES,
    METHODS,
)
from bws.filemode import (
    INTERVAL_METHODS,
    SHRINKAGE,
    StudyError,
    design_strategy,
    load_study,
    report_diagnostics,
    scheme_scoring,
    score_judgments,
    score_table,
    study_stats,
    write_score_table,
)
from projects.configuration import ConfigError
from projects.datafiles import DataError
from projects.interchange import InterchangeError

INPUT_ERRORS = (ConfigError, DataError, InterchangeError, JudgmentError, StudyError)


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


def add_score_parser(subparsers) -> argparse.ArgumentParser:
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
        default="calibrated",
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
    parser.set_defaults(handler=run_score)
    return parser


def add_stats_parser(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "stats",
        help="print BWS statistics per scheme",
        description="Print items, tuples, annotations, a score summary, the top items and "
        "split-half reliability for every best-worst scheme.",
    )
    parser.add_argument("--config", required=True, help="project YAML configuration")
    parser.add_argument("--seed", type=_count, help="bootstrap and split seed")
    parser.set_defaults(handler=run_stats)
    return parser


def register(subparsers) -> None:
    """Add ``score`` and ``stats`` to a ``python -m bws`` subcommand registry."""
    add_score_parser(subparsers)
    add_stats_parser(subparsers)


def run_score(args: argparse.Namespace) -> int:
    try:
        study = load_study(args.config)
        scheme = study.bws_scheme(args.scheme)
        options = scheme_scoring(scheme)
        method = args.method or options["method"]
        resamples = args.bootstrap
        if resamples is None:
            resamples = options["bootstrap_iterations"] if options["include_confidence"] else 0
        judgments = study.judgments(scheme.name)
        if judgments.n_judgments == 0:
            raise StudyError(
                f"no judgments for scheme {scheme.name!r} in {study.config.output_dir()}"
            )
        report = score_judgments(
            judgments,
            method,
            bootstrap=resamples,
            unit=args.resample_by,
            seed=study.config.bws.seed if args.seed is None else args.seed,
            alpha=args.alpha,
            max_iter=args.max_iter,
            tolerance=args.tolerance,
            interval_method=args.intervals,
            shrinkage=args.shrinkage,
        )
        path = write_score_table(
            score_table(study.item_ids, study.texts, report),
            args.output or study.default_output(scheme),
        )
    except INPUT_ERRORS as exc:
        return _fail(exc)
    except OSError as exc:
        return _fail(f"cannot write the score table: {exc}")
    if not resamples:
        interval = ""
    elif args.intervals == "bootstrap":
        interval = f", {resamples} bootstrap resamples by {args.resample_by}"
    else:
        interval = ", calibrated 95% intervals"
    if method != "counting" and args.shrinkage == "empirical_bayes":
        interval += ", empirical-Bayes shrinkage"
    note = (
        ""
        if report.scores.converged
        else f" (the fit did not converge: utilities may be off by {report.scores.step:.1g};"
        " raise --max-iter)"
    )
    print(
        f"Scored {int((report.scores.appearances > 0).sum())} items of scheme {scheme.name!r} "
        f"from {judgments.n_judgments} judgments ({METHOD_NAMES[method]}{interval}){note}"
    )
    print(f"Wrote {path}")
    for message in report_diagnostics(report, design=design_strategy(study)).messages:
        print(f"warning: {message}", file=sys.stderr)
    return 0


def run_stats(args: argparse.Namespace) -> int:
    try:
        text = study_stats(load_study(args.config), seed=args.seed)
    except INPUT_ERRORS as exc:
        return _fail(exc)
    sys.stdout.write(text)
    return 0


def _fail(problem) -> int:
    print(f"error: {problem}", file=sys.stderr)
    return 2


def main(argv: list[str] | None = None) -> int:
    """Run ``score`` or ``stats`` on their own (``python -m bws`` hooks in ``register``)."""
    parser = argparse.ArgumentParser(prog="python -m bws")
    subparsers = parser.add_subparsers(dest="command", required=True)
    register(subparsers)
    args = parser.parse_args(argv)
    return args.handler(args)
