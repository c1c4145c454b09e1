"""File mode: score a study from its YAML config, data files and annotation directory.

``load_study`` reads the three (no database); ``score_judgments``, ``score_table``,
``write_score_table`` and ``format_stats`` turn judgment arrays into the score table and
the statistics text. The platform's dashboard and workers call the same
functions on judgments read from the database, so both give the same numbers.
"""

from __future__ import annotations

import json
import math
import textwrap
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from bws.configuration import scoring_of
from bws.configuration.adaptive import AdaptiveStrategy, AdaptiveTarget
from bws.core.advice import Advice, advice_for_judgments
from bws.core.bootstrap import Intervals, bootstrap_intervals
from bws.core.design import balanced_design
from bws.core.diagnostics import (
    APPROXIMATE_MARK,
    NO_INTERVAL,
    ZERO_SPREAD,
    Diagnostics,
    diagnose_report,
)
from bws.core.groups import item_groups
from bws.core.intervals import Intervals as CalibratedIntervals
from bws.core.intervals import counting_intervals, model_intervals
from bws.core.judgments import Judgments, build_judgments
from bws.core.model_reliability import model_reliability_entry, model_reliability_lines
from bws.core.reliability import SplitHalf, split_half
from bws.core.scores import Scores
from bws.core.scoring import (
    DEFAULT_ALPHA,
    DEFAULT_MAX_ITER,
    DEFAULT_TOLERANCE,
    METHOD_NAMES,
    METHODS,
    fit,
    score_ranks,
)
from bws.core.scoring_options import DEFAULT_RESAMPLES, INTERVAL_METHODS, SHRINKAGE
from bws.source_scores import (
    ItemLabels,
    groups_line,
    keys_of,
    labels_of,
    ranks_within_groups,
    row_order,
    sources_lines,
    sources_summary,
    sources_table,
)
from projects import spreadsheet
from projects.configuration import ProjectConfig, Scheme, load_config
from projects.datafiles import LoadedData, load_items
from projects.interchange import UnitRecord, answer_suffixes, read_directory
from projects.paths import write_inside

TABLE_COLUMNS = (
    "item_id",
    "text",
    "score",
    "ci_low",
    "ci_high",
    "best_count",
    "worst_count",
    "appearances",
    "rank",
)
# Written after TABLE_COLUMNS when the design has groups (rank is then within the group)
# or names each item's system.
GROUP_COLUMN, SYSTEM_COLUMN = "group", "system"
DEFAULT_SCORES_FILE = "bws_scores.tsv"
# The project's tuples, written by the platform beside the project's config: the guides'
# answer records name their tuple by id only, and are scored against this list.
TUPLES_FILE = "tuples.jsonl"


class StudyError(ValueError):
    """A study that file mode cannot score (no BWS scheme, an unknown scheme, no judgments)."""


@dataclass
class Study:
    """A project read from files: config, items (ids aggregated across instances), records."""

    config: ProjectConfig
    data: LoadedData
    records: list[UnitRecord]
    item_ids: list[str]
    texts: list[str]
    item_index: dict[str, int] = field(default_factory=dict)
    tuples: dict[str, list[str]] = field(default_factory=dict)

    def bws_scheme(self, name: str | None = None) -> Scheme:
        """The named BWS scheme, or the only one; StudyError if that is ambiguous or absent."""
        schemes = self.config.bws_schemes
        if not schemes:
            raise StudyError(f"{self.config.source}: no best-worst scheme to score")
        if name is None:
            if len(schemes) > 1:
                names = ", ".join(s.name for s in schemes)
                raise StudyError(
                    f"{self.config.source}: {len(schemes)} best-worst schemes ({names}); "
                    "choose one with --scheme"
                )
            return schemes[0]
        for scheme in schemes:
            if scheme.name == name:
                return scheme
        names = ", ".join(s.name for s in schemes)
        raise StudyError(f"{self.config.source}: no best-worst scheme {name!r} (schemes: {names})")

    def judgments(self, scheme: str) -> Judgments:
        """The scheme's judgments as arrays (JudgmentError naming file:line if any is bad)."""
        return build_judgments(
            self.records,
            self.item_index,
            scheme,
            n_items=len(self.item_ids),
            tuples=self.tuples,
        )

    def planned_tuples(self) -> int:
        """How many tuples the project's design holds: ceil(N r / T) per pool of N items.

        A pool is the whole item list, or each instance's list (items_key); an instance
        holding exactly T items is one pre-generated tuple.
        """
        if self.tuples:
            return len(self.tuples)
        design = self.config.bws
        size, r = design.tuple_size, design.appearances
        if design.items_key:
            pools = [len(i.items) for i in self.data.instances]
        elif design.group_key:
            values = [item.data.get(design.group_key) for item in self.data.items]
            groups = item_groups(values, self.item_ids, size, design.group_key)
            return sum(math.ceil(len(members) * r / size) for _, members in groups)
        else:
            pools = [len(self.item_ids)]
        if design.ensure_pair_coverage and not design.items_key:
            return len(
                balanced_design(
                    len(self.item_ids), size, r, seed=design.seed, ensure_pair_coverage=True
                ).tuples
            )
        return sum(1 if n == size else math.ceil(n * r / size) for n in pools)

    def labels(self) -> ItemLabels:
        """Each item's group and system, as the design's group_key and system_key name them."""
        keys = keys_of(self.config.bws)
        values = {key: [item.data.get(key) for item in self.data.items] for key in keys}
        return labels_of(self.config.bws, values)

    def default_output(self, scheme: Scheme) -> Path:
        if scoring_of(scheme).output_file:
            return Path(self.config.base_dir) / scoring_of(scheme).output_file
        return self.config.output_dir() / DEFAULT_SCORES_FILE


def load_study(config_path: str | Path) -> Study:
    """Read a project's config, data files and annotation output directory.

    Raise ConfigError, DataError or InterchangeError (each naming file and line) on bad
    input. Item ids that repeat across instances become one item (scores aggregate).
    """
    config = load_config(config_path)
    if config.bws is None:
        raise StudyError(f"{config.source}: no best-worst scheme to score")
    data = load_items(config)
    records = read_directory(
        config.output_dir(),
        suffixes=answer_suffixes(config.output_annotation_format),
        exclude=score_tables(config),
    )
    # As on the platform: gold units' answers and excluded annotators count toward no score.
    records = [record for record in records if not (record.gold or record.excluded)]
    item_ids = [item.item_id for item in data.items]
    texts = [item.text for item in data.items]
    index = {item_id: k for k, item_id in enumerate(item_ids)}
    tuples = read_tuple_file(Path(config.base_dir) / TUPLES_FILE)
    return Study(config, data, records, item_ids, texts, index, tuples)


def score_tables(config: ProjectConfig) -> tuple[Path, ...]:
    """The score tables scoring writes (each scheme's output_file and the default one):
    they may share the output directory with the answers, and are never read as answers."""
    tables = [config.output_dir() / DEFAULT_SCORES_FILE]
    for scheme in config.bws_schemes:
        if scoring_of(scheme).output_file:
            tables.append(Path(config.base_dir) / scoring_of(scheme).output_file)
    return tuple(tables)


def write_tuple_file(
    folder: str | Path, tuples: Iterable[tuple[str, list[str], str | None]]
) -> Path:
    """Write a project's tuples (tuple id, item ids, instance id or None) as TUPLES_FILE in
    its folder: one JSON object per line, atomically (projects.paths.write_inside)."""

    def write(stream) -> None:
        for tuple_id, items, instance in tuples:
            record = {"id": tuple_id, "items": list(items)}
            if instance is not None:
                record["instance"] = instance
            stream.write(json.dumps(record, ensure_ascii=False) + "\n")

    return write_inside(folder, TUPLES_FILE, write, key=TUPLES_FILE)


def read_tuple_file(path: str | Path) -> dict[str, list[str]]:
    """Tuple id -> item ids from a TUPLES_FILE; empty when the file does not exist.
    StudyError naming the line for a record without an id or a list of items."""
    path = Path(path)
    if not path.is_file():
        return {}
    tuples: dict[str, list[str]] = {}
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                tuple_id, items = str(record["id"]), [str(item) for item in record["items"]]
            except (ValueError, KeyError, TypeError):
                raise StudyError(
                    f'{path.name}:{number}: expected {{"id": ..., "items": [...]}}'
                ) from None
            tuples[tuple_id] = items
    return tuples


def scheme_scoring(scheme: Scheme) -> dict:
    """The scheme's scoring options (method, include_confidence, iterations, output file)."""
    return scoring_of(scheme).options()


# --------------------------------------------------------------------------- scoring


@dataclass(frozen=True, eq=False)
class ScoreReport:
    """Scores of one scheme by one method, with their intervals when asked for."""

    method: str
    scores: Scores
    intervals: Intervals | CalibratedIntervals | None
    judgments: Judgments


def score_judgments(
    judgments: Judgments,
    method: str,
    *,
    bootstrap: int = DEFAULT_RESAMPLES,
    unit: str = "tuple",
    seed: int = 0,
    alpha: float = DEFAULT_ALPHA,
    max_iter: int = DEFAULT_MAX_ITER,
    tolerance: float = DEFAULT_TOLERANCE,
    interval_method: str = "calibrated",
    shrinkage: str = "empirical_bayes",
    adaptive: bool = False,
    fixed_point: bool = False,
    stretch: bool = False,
) -> ScoreReport:
    """Fit ``method`` and, when ``bootstrap`` > 0, its 95% intervals (``adaptive``,
    ``fixed_point`` and ``stretch``: how the prior of a design whose batches follow the fit
    is estimated, bws.core.intervals.model_intervals and ``design_fit``).

    By default the model fits are empirical-Bayes (``shrinkage``) and the intervals
    calibrated; ``bootstrap`` then only says whether intervals are wanted. With
    ``interval_method="bootstrap"`` they are percentile intervals from ``bootstrap``
    cluster resamples by ``unit``; with ``shrinkage="fixed"`` the penalty is ``alpha``.
    """
    if method not in METHODS:
        raise StudyError(f"unknown scoring method {method!r}; choose from {', '.join(METHODS)}")
    if interval_method not in INTERVAL_METHODS:
        raise StudyError(
            f"unknown interval method {interval_method!r}; choose from "
            f"{', '.join(INTERVAL_METHODS)}"
        )
    if shrinkage not in SHRINKAGE:
        raise StudyError(f"unknown shrinkage {shrinkage!r}; choose from {', '.join(SHRINKAGE)}")
    if judgments.n_judgments == 0:
        raise StudyError("no best-worst judgments to score")
    model = method != "counting"
    if model and shrinkage == "empirical_bayes":
        scores, calibrated_intervals = model_intervals(
            judgments, method, adaptive=adaptive, fixed_point=fixed_point, stretch=stretch
        )
    else:
        options = {"alpha": alpha, "max_iter": max_iter, "tolerance": tolerance} if model else {}
        scores = fit(method, judgments, **options)
        calibrated_intervals = None
    intervals = None
    if bootstrap > 0 and interval_method == "bootstrap":
        if model and shrinkage == "empirical_bayes":
            # Percentile intervals bracket the plain penalised fit their resamples repeat,
            # not the calibrated path's integrated or annotator-weighted scores.
            options = {"alpha": scores.options.get("alpha", alpha), "max_iter": max_iter}
            scores = fit(method, judgments, tolerance=tolerance, **options)
        intervals = bootstrap_intervals(
            judgments,
            method,
            scores=scores,
            resamples=bootstrap,
            unit=unit,
            seed=seed,
            alpha=scores.options.get("alpha", alpha),
        )
    elif bootstrap > 0 and not model:
        intervals = counting_intervals(judgments, scores=scores)
    elif bootstrap > 0:
        intervals = (
            calibrated_intervals
            or model_intervals(
                judgments, method, adaptive=adaptive, fixed_point=fixed_point, stretch=stretch
            )[1]
        )
    return ScoreReport(method, scores, intervals, judgments)


@dataclass(frozen=True)
class ScoreRow:
    item_id: str
    text: str
    score: float | None
    ci_low: float | None
    ci_high: float | None
    best_count: int
    worst_count: int
    appearances: int
    rank: int | None
    group: str | None = None  # its group_key value; rank is then within the group
    source: str | None = None  # its system_key value


def score_table(
    item_ids: list[str], texts: list[str], report: ScoreReport, labels: ItemLabels | None = None
) -> list[ScoreRow]:
    """One row per item, sorted by score (highest first), rank 1 for the best.

    Items never shown have no score or rank and come last; scores tied within the fit's
    precision share a rank (bws.core.scoring.score_ranks). With groups (``labels``), rows
    come group by group in order of first appearance and rank within their group: scores
    of items never compared are not ranked against each other.
    """
    labels = labels or ItemLabels()
    scores = report.scores
    shown = scores.appearances > 0
    values = scores.scores
    within = ranks_within_groups(scores, labels)
    ranks = score_ranks(scores) if within is None else within
    group_of = labels.groups or [None] * len(item_ids)
    sources = labels.sources or [None] * len(item_ids)
    order = row_order(scores, labels)
    intervals = report.intervals
    rows = []
    for i in order:
        low = high = None
        if intervals is not None and shown[i]:
            low, high = float(intervals.low[i]), float(intervals.high[i])
        rows.append(
            ScoreRow(
                item_id=item_ids[i],
                text=texts[i],
                score=float(values[i]) if shown[i] else None,
                ci_low=low,
                ci_high=high,
                best_count=int(round(scores.best_counts[i])),
                worst_count=int(round(scores.worst_counts[i])),
                appearances=int(round(scores.appearances[i])),
                rank=int(ranks[i]) if shown[i] else None,
                group=group_of[i],
                source=sources[i],
            )
        )
    return rows


def write_score_table(
    rows: list[ScoreRow], path: str | Path, *, inside: str | Path | None = None
) -> Path:
    """Write the table: CSV when the path ends in .csv, TSV otherwise.

    With ``inside`` (the worker's way: a project's folder), ``path`` is relative to it and
    must stay in it; the write follows no link and is atomic (projects.paths.write_inside).
    """
    path = Path(path)
    delimiter = "," if path.suffix.lower() == ".csv" else "\t"

    def write(stream) -> None:
        _write_table(rows, stream, delimiter)

    if inside is not None:
        return write_inside(inside, path, write, key="scoring.output_file")
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as stream:
        write(stream)
    return path


def _write_table(rows: list[ScoreRow], stream, delimiter: str) -> None:
    # Formula-like cells are guarded, plain numbers stay numbers (projects/spreadsheet.py).
    writer = spreadsheet.writer(stream, delimiter=delimiter, lineterminator="\n")
    grouped = any(row.group is not None for row in rows)
    systems = any(row.source is not None for row in rows)
    extra = [GROUP_COLUMN] * grouped + [SYSTEM_COLUMN] * systems
    writer.writerow([*TABLE_COLUMNS, *extra])
    for row in rows:
        labels = [row.group or ""] * grouped + [row.source or ""] * systems
        writer.writerow(
            [
                row.item_id,
                " ".join(row.text.split()),
                _number(row.score),
                _number(row.ci_low),
                _number(row.ci_high),
                row.best_count,
                row.worst_count,
                row.appearances,
                "" if row.rank is None else row.rank,
                *labels,
            ]
        )


def _number(value: float | None) -> str:
    return "" if value is None or not math.isfinite(value) else f"{value:.6f}"


# --------------------------------------------------------------------------- statistics


def format_stats(
    scheme: str,
    *,
    n_items: int,
    planned_tuples: int,
    report: ScoreReport,
    reliability: SplitHalf | None,
    item_ids: list[str],
    top: int = 5,
    diagnostics: Diagnostics | None = None,
    advice: Advice | None = None,
    model_reliability: dict | None = None,
    design: str | None = None,
    sources: dict | None = None,
    labels: ItemLabels | None = None,
) -> str:
    """One scheme's block of the statistics text, without the title.

    ``sources``: the systems ranked (source_scores.sources_summary). With groups
    (``labels``) no top items are listed across groups: their scores were never compared.

    ``model_reliability``: an adaptive design's model split-half
    (``model_reliability.model_reliability_entry``), shown after the counting one.
    ``design``: the adaptive strategy, if any (``report_diagnostics``).

    Approximate intervals of the top items are marked APPROXIMATE_MARK (a zero-width one
    shows no number); the block ends with the diagnostics' warnings, if any.
    """
    judgments, scores = report.judgments, report.scores
    if diagnostics is None:
        diagnostics = report_diagnostics(report, design=design)
    annotated = judgments.n_tuples
    shown = scores.appearances > 0
    values = scores.scores[shown]
    lines = [
        f"Schema: {scheme}",
        f"Items: {n_items}",
        f"Tuples: {max(planned_tuples, annotated)} "
        f"(annotated: {annotated} / {max(planned_tuples, annotated)})",
        f"Annotations: {judgments.n_judgments} ({judgments.n_annotators} annotator"
        f"{'' if judgments.n_annotators == 1 else 's'})",
        "",
        f"Score Summary ({METHOD_NAMES[report.method]}):",
        f"  Mean:  {_tidy(values.mean()):5.2f}",
        f"  Std:   {_tidy(values.std()):5.2f}",
        f"  Range: {_tidy(values.min()):+.2f} to {_tidy(values.max()):+.2f}",
        "",
    ]
    best = [i for i in np.argsort(-scores.scores, kind="stable") if shown[i]][:top]
    if labels is not None and labels.grouped:
        best = []
        lines.append(groups_line(labels))
    else:
        lines.append(f"Top {min(top, int(shown.sum()))} Items:")
    width = max((len(item_ids[i]) for i in best), default=0) + 1
    for i in best:
        line = f"  {item_ids[i] + ':':<{width}} {scores.scores[i]:5.2f}"
        if report.intervals is not None:
            line += f" ({_half_width(report.intervals, diagnostics, i)})"
        lines.append(line)
    if sources:
        lines += ["", *sources_lines(sources), ""]
    if reliability is None or math.isnan(reliability.mean):
        lines.append("Split-Half Reliability: not available (too few judgments)")
    else:
        brown = reliability.spearman_brown
        lines.append(
            f"Split-Half Reliability: r = {reliability.mean:.2f} "
            f"(Spearman-Brown {'undefined, r < 0' if brown is None else f'{brown:.2f}'}; "
            f"sd {reliability.std:.2f} over {reliability.trials} splits)"
        )
        if reliability.splits_tuples:
            lines.append(
                "  One judgment per tuple: the tuples were split in two, not their judgments."
            )
    if model_reliability is not None:
        lines += model_reliability_lines(model_reliability)
    if advice is not None:
        lines += ["", *advice.lines()]
    if diagnostics.messages:
        lines += ["", "Warnings:"]
        for message in diagnostics.messages:
            lines += textwrap.wrap(
                message, width=88, initial_indent="  - ", subsequent_indent="    "
            )
    return "\n".join(lines)


def report_diagnostics(report: ScoreReport, *, design: str | None = None) -> Diagnostics:
    """The checks of a report's judgments, scores and intervals (bws.core.diagnostics);
    ``design``: the adaptive strategy that chose the tuples after the balanced start."""
    return diagnose_report(report.judgments, report.scores, report.intervals, design=design)


def design_fit(kind: str | None) -> dict:
    """The keywords of ``score_judgments`` for a design of this ``design_kind`` (None: a
    balanced design): whether its batches follow the fit, and whether they aim at a
    threshold, given as a score or a reference item (whose prior is the Laplace fixed
    point, corrected, bws.core.intervals, and stretched while items have few judgments:
    ``intervals.fixed_point_stretch``)."""
    threshold = kind in ("threshold", "reference")
    return {"adaptive": kind is not None, "fixed_point": threshold, "stretch": threshold}


def design_kind(adaptive) -> str | None:
    """What chose a design's tuples after its balanced start, from its adaptive settings:
    None for a balanced design, "iterative" (rounds), "adaptive" (batches over the whole
    ranking) or a narrow target's batches: "top_k", "threshold" (above a score),
    "reference" (above an item) or "comparisons". Intervals are marked approximate per
    kind where they were measured to miss (bws.core.coverage_limits.DESIGN_COVERAGE)."""
    if adaptive is None:
        return None
    if adaptive.strategy != AdaptiveStrategy.ADAPTIVE or adaptive.target == AdaptiveTarget.RANKING:
        return str(adaptive.strategy)
    if adaptive.target == AdaptiveTarget.THRESHOLD and adaptive.threshold is None:
        return "reference"
    return str(adaptive.target)


def design_strategy(study: Study) -> str | None:
    """What chose a study's tuples after its balanced start (``design_kind``), or None."""
    return design_kind(study.config.bws.adaptive if study.config.bws is not None else None)


def _half_width(intervals: Intervals, diagnostics: Diagnostics, item: int) -> str:
    """The half-width "±0.12"; marked approximate "≈±0.12", or "≈ no spread" at zero width."""
    flags = int(diagnostics.interval_flags[item])
    if not flags:
        return f"±{intervals.half_width[item]:.2f}"
    if flags & (ZERO_SPREAD | NO_INTERVAL):
        return f"{APPROXIMATE_MARK} no spread"
    return f"{APPROXIMATE_MARK}±{intervals.half_width[item]:.2f}"


def _tidy(value: float) -> float:
    """Rounded to two decimals for display, with no "-0.00"."""
    return round(float(value), 2) + 0.0


def _model_reliability(study: Study, judgments: Judgments, method: str, seed: int) -> dict | None:
    """For an adaptive design, the model split-half in a run's stored form; else None."""
    if design_strategy(study) is None:
        return None
    return model_reliability_entry(judgments, method, seed=seed)


def study_stats(study: Study, *, seed: int | None = None) -> str:
    """The statistics text of every BWS scheme of a study (title, then one block each)."""
    blocks = []
    seed = study.config.bws.seed if seed is None else seed
    labels = study.labels()
    for scheme in study.config.bws_schemes:
        judgments = study.judgments(scheme.name)
        if judgments.n_judgments == 0:
            blocks.append(
                f"Schema: {scheme.name}\nItems: {len(study.item_ids)}\n"
                f"Tuples: {study.planned_tuples()} (annotated: 0 / {study.planned_tuples()})\n"
                "Annotations: 0"
            )
            continue
        options = scheme_scoring(scheme)
        report = score_judgments(
            judgments,
            options["method"],
            bootstrap=options["bootstrap_iterations"] if options["include_confidence"] else 0,
            seed=seed,
            **design_fit(design_strategy(study)),
        )
        reliability = split_half(judgments, seed=seed)
        model = _model_reliability(study, judgments, options["method"], seed)
        blocks.append(
            format_stats(
                scheme.name,
                n_items=len(study.item_ids),
                planned_tuples=study.planned_tuples(),
                report=report,
                reliability=reliability,
                item_ids=study.item_ids,
                advice=advice_for_judgments(judgments, reliability.mean, model_reliability=model),
                model_reliability=model,
                design=design_strategy(study),
                sources=sources_summary(
                    sources_table(report.scores, labels, report.judgments), labels
                ),
                labels=labels,
            )
        )
    return "BWS Statistics\n==============\n" + "\n\n".join(blocks) + "\n"
