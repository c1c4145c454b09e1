"""The ``score`` and ``stats`` subcommands of ``python -m bws`` (file mode, no database).

    python -m bws score --config config.yaml [--method counting|bradley_terry|plackett_luce]
        [--scheme NAME] [--output PATH] [--bootstrap N] [--max-iter N --tolerance X]
        [--ranks [--top-k K]] [--compare ID,ID,...]
    python -m bws stats --config config.yaml [--ranks [--top-k K]]

Bad input (config, data, annotation files, arguments) exits with status 2 and a message
naming file and line, without a traceback. The parsers are in ``bws.cli``, which imports
this module only when one of the two commands runs.
"""

from __future__ import annotations

import argparse
import sys

from bws.core.judgments import JudgmentError
from bws.core.scoring_options import METHOD_NAMES
from bws.filemode import (
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
from bws.rank_results import compare, comparison_lines, rank_lines, study_ranks
from bws.source_scores import groups_line, sources_lines, sources_summary, sources_table
from projects.configuration import ConfigError
from projects.datafiles import DataError
from projects.interchange import InterchangeError

INPUT_ERRORS = (ConfigError, DataError, InterchangeError, JudgmentError, StudyError)


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
        labels = study.labels()
        path = write_score_table(
            score_table(study.item_ids, study.texts, report, labels),
            args.output or study.default_output(scheme),
        )
        systems = sources_summary(sources_table(report.scores, labels, report.judgments), labels)
        asked = _compared(args.compare, study.item_ids)
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
    if labels.grouped:
        print(groups_line(labels))
    for line in sources_lines(systems):
        print(line)
    print(f"Wrote {path}")
    if args.ranks:
        _print_ranks(report, study, labels, args.top_k)
    if asked:
        try:
            found = compare(report, asked)
        except ValueError as exc:
            return _fail(exc)
        print("\n".join(comparison_lines(found, study.item_ids, 0.95)))
    for message in report_diagnostics(report, design=design_strategy(study)).messages:
        print(f"warning: {message}", file=sys.stderr)
    return 0


def run_stats(args: argparse.Namespace) -> int:
    try:
        study = load_study(args.config)
        text = study_stats(study, seed=args.seed)
    except INPUT_ERRORS as exc:
        return _fail(exc)
    sys.stdout.write(text)
    if args.ranks:
        labels = study.labels()
        for scheme in study.config.bws_schemes:
            judgments = study.judgments(scheme.name)
            if judgments.n_judgments == 0:
                continue
            report = score_judgments(judgments, scheme_scoring(scheme)["method"], bootstrap=1)
            print(f"\n{scheme.name}:")
            _print_ranks(report, study, labels, args.top_k)
    return 0


def _compared(text: str | None, ids: list[str]) -> list[int]:
    """The item indices of --compare's ids; StudyError naming an unknown id."""
    if not text:
        return []
    index = {item_id: n for n, item_id in enumerate(ids)}
    asked = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [item_id for item_id in asked if item_id not in index]
    if unknown:
        raise StudyError(f"--compare: no item {unknown[0]!r} in the data files")
    if len(asked) < 2:
        raise StudyError("--compare: give at least two item ids, separated by commas")
    return [index[item_id] for item_id in dict.fromkeys(asked)]


def _print_ranks(report, study, labels, k) -> None:
    table = study_ranks(report, labels, k=k)
    if table is None:
        print(
            "Ranks: no rank intervals (they need calibrated intervals and 2 to 20,000 items "
            "shown; 2,000 with groups)"
        )
        return
    print("\n".join(rank_lines(table, study.item_ids, report.scores.scores)))


def _fail(problem) -> int:
    print(f"error: {problem}", file=sys.stderr)
    return 2
