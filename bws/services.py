"""Writes of the BWS app: a project's tuples (designed once when it is built) and its
scoring runs."""

import logging
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import connections, router, transaction
from django.db.models import BooleanField, Case, ExpressionWrapper, F, Max, Q, Value, When
from django.utils import timezone

from annotation.models import Annotation
from projects.models import Item
from projects.paths import PathRefused
from projects.services import project_folder

from . import selectors
from .core.advice import advice_for_judgments
from .core.convergence import convergence
from .core.diagnostics import diagnose
from .core.model_reliability import model_reliability_entry
from .core.reliability import split_half
from .core.scoring import METHODS
from .core.scoring_options import INTERVAL_METHODS
from .filemode import (
    ScoreRow,
    design_fit,
    design_kind,
    format_stats,
    scheme_scoring,
    score_judgments,
    score_table,
    write_score_table,
)
from .models import ItemScore, ScoreRun, ScoringState
from .rank_results import study_ranks
from .source_scores import ItemLabels, sources_summary, sources_table

log = logging.getLogger(__name__)


# --------------------------------------------------------------------------- scoring runs

SCORING_BASE_BYTES = 256 * 1024 * 1024


def scoring_memory(n_items: int, resamples: int) -> int:
    """Bytes a run's bootstrap needs at its peak, an upper estimate: its (items x resamples)
    float64 table of resampled scores, a sorted copy and the temporaries of its spread
    (benchmarks/limits.py: 2.0 GB measured for 100,000 items and 1000 resamples)."""
    return SCORING_BASE_BYTES + 3 * 8 * max(0, n_items) * max(0, resamples)


def most_resamples(n_items: int) -> int:
    """The most bootstrap resamples SCORING_MAX_MEMORY_MB and
    SCORING_MAX_BOOTSTRAP_ITERATIONS allow for a project of n_items."""
    budget = settings.SCORING_MAX_MEMORY_MB * 1024 * 1024 - SCORING_BASE_BYTES
    fits = budget // (3 * 8 * max(1, n_items))
    return max(0, min(settings.SCORING_MAX_BOOTSTRAP_ITERATIONS, fits))


def resamples_refusal(n_items: int, resamples: int) -> str | None:
    """Why ``resamples`` bootstrap resamples over n_items are refused, or None."""
    limit = settings.SCORING_MAX_BOOTSTRAP_ITERATIONS
    if resamples > limit:
        return f"{resamples} is above the limit of {limit} (SCORING_MAX_BOOTSTRAP_ITERATIONS)"
    need = scoring_memory(n_items, resamples)
    budget = settings.SCORING_MAX_MEMORY_MB
    if need > budget * 1024 * 1024:
        return (
            f"{resamples} resamples of {n_items} items need about {-(-need // 2**20)} MB, "
            f"above the limit of {budget} MB (SCORING_MAX_MEMORY_MB); at most "
            f"{most_resamples(n_items)} fit"
        )
    return None


def scoring_options(project, scheme: str) -> dict:
    """The scheme's scoring settings with defaults (method, intervals, resamples, output)."""
    for entry in project.settings.bws_schemes:
        if entry.name == scheme:
            return scheme_scoring(entry)
    raise ValueError(f"no best-worst scheme named {scheme!r} in {project.slug}")


def run_parameters(
    *,
    project,
    scheme: str,
    method: str | None = None,
    bootstrap: int | None = None,
    intervals: str | None = None,
) -> tuple[str, dict]:
    """The method and parameters a run of the scheme computes with (the scheme's scoring
    settings where not given); ValueError for an unknown method or a bootstrap past the
    limits."""
    options = scoring_options(project, scheme)
    intervals = intervals or options["intervals"]
    if intervals not in INTERVAL_METHODS:
        raise ValueError(f"unknown interval method {intervals!r}: {' or '.join(INTERVAL_METHODS)}")
    method = method or options["method"]
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}: choose one of {', '.join(METHODS)}")
    n_items = Item.objects.filter(project=project).count()
    if bootstrap is None:
        bootstrap = options["bootstrap_iterations"] if options["include_confidence"] else 0
        # A config stored before a limit was lowered runs with what the limits allow now.
        bootstrap = min(bootstrap, most_resamples(n_items))
    if bootstrap < 0:
        raise ValueError("bootstrap must be 0 or more resamples")
    refusal = resamples_refusal(n_items, bootstrap)
    if refusal:
        raise ValueError(f"bootstrap: {refusal}")
    return method, {
        "bootstrap": bootstrap,
        "seed": project.settings.seed,
        "resample_unit": "tuple",
        "interval_method": intervals,
        "shrinkage": "empirical_bayes",
    }


def request_run(
    *,
    project,
    scheme: str,
    method: str | None = None,
    bootstrap: int | None = None,
    trigger: str = ScoreRun.Trigger.AUTO,
    intervals: str | None = None,
    wait_turn: bool = False,
) -> ScoreRun:
    """Record a queued run with its parameters (the worker or the caller executes it).
    ``intervals`` (calibrated or bootstrap) defaults to the scheme's scoring.intervals.
    ``wait_turn``: the run waits in the database until its lab's turn on the scoring queue
    (bws.scheduling.dispatch_runs); otherwise its caller executes or sends it."""
    method, parameters = run_parameters(
        project=project, scheme=scheme, method=method, bootstrap=bootstrap, intervals=intervals
    )
    return ScoreRun.objects.create(
        project=project,
        scheme=scheme,
        method=method,
        trigger=trigger,
        parameters=parameters,
        dispatched_at=None if wait_turn else timezone.now(),
    )


def execute_run(run_id: int) -> ScoreRun:
    """Compute a run's scores, intervals, reliability and convergence and store them; on
    error the run is marked failed (and the error raised again for the task to retry).

    The worker and the command line compute alike, in their own process: what keeps a
    worker's run from slowing the web is its CPU quota (platform/DEPLOY.md, "Scoring
    beside annotators")."""
    started = timezone.now()
    # Marked running before its parameters are read: a queued run taken over by a manager's
    # request (bws.scheduling.ask_for_run) is changed only while it is still queued.
    claimed = (
        ScoreRun.objects.filter(pk=run_id)
        .exclude(status=ScoreRun.Status.OK)
        .update(
            status=ScoreRun.Status.RUNNING,
            started_at=started,
            attempts=F("attempts") + 1,
            error="",
        )
    )
    run = ScoreRun.objects.select_related("project").get(pk=run_id)
    if not claimed:
        return run  # a redelivered task: the work is done
    note_run_started(run, started)
    try:
        result = _compute(run)
    except SoftTimeLimitExceeded:
        _mark_failed(run, time_limit_message())
        raise
    except Exception as exc:
        _mark_failed(run, f"{type(exc).__name__}: {exc}"[:4000])
        raise
    run.refresh_from_db()
    _write_output_file(run, result)
    return run


def _mark_failed(run: ScoreRun, error: str) -> None:
    """Failed: the task retries it (a deterministic failure is not started again by the
    catch-up until new answers come)."""
    ScoreRun.objects.filter(pk=run.pk).update(
        status=ScoreRun.Status.FAILED, error=error, finished_at=timezone.now()
    )


def note_run_started(run: ScoreRun, started) -> None:
    """A run read the answers as of its start: when no run of the project is still queued,
    every answer older than the earliest of the newest starts of its automatic schemes is
    read, and counts as scored (the answers after it keep the project dirty)."""
    if ScoreRun.objects.filter(project_id=run.project_id, status=ScoreRun.Status.QUEUED).exists():
        return  # the queued run reads them when it starts
    auto = [
        entry.name
        for entry in run.project.settings.bws_schemes
        if scheme_scoring(entry)["auto_compute"]
    ]
    newest = dict(
        ScoreRun.objects.filter(
            project_id=run.project_id,
            scheme__in=auto,
            status__in=[ScoreRun.Status.RUNNING, ScoreRun.Status.OK],
            started_at__isnull=False,
        )
        .values("scheme")
        .annotate(at=Max("started_at"))
        .values_list("scheme", "at")
    )
    if any(name not in newest for name in auto):
        return  # a scheme has no run that read them
    read_until = min([started, *newest.values()])
    later = Q(last_answer_at__gt=read_until)
    ScoringState.objects.filter(project_id=run.project_id, unscored_since__lte=read_until).update(
        unscored_since=Case(When(later, then=Value(read_until)), default=None),
        dirty=ExpressionWrapper(later, output_field=BooleanField()),
    )


def time_limit_message() -> str:
    """What a run or report stopped by the worker's soft time limit says."""
    return (
        "stopped: the computation took longer than the limit of "
        f"{settings.CELERY_TASK_SOFT_TIME_LIMIT} seconds (CELERY_TASK_SOFT_TIME_LIMIT)"
    )


@dataclass
class _Computed:
    rows: list
    stats: str


def score_everything(
    judgments,
    method: str,
    params: dict,
    ids,
    texts,
    planned,
    scheme: str,
    model=None,
    design: str | None = None,
    labels: ItemLabels | None = None,
):
    """The numeric part of a run, with no database access: scores with intervals,
    split-half reliability, convergence, the advice on when to stop, the stats text and
    the systems ranked (``labels``: the items' groups and systems, ranks within groups).
    ``model``: an adaptive design's model split-half (model_reliability_entry), which
    makes the advice's projected reliability a range. ``design``: the adaptive strategy
    (filemode.design_kind: what chose the tuples, which also says how the prior is fitted,
    filemode.design_fit; bws.core.diagnostics marks intervals approximate under the
    designs where they were measured to miss). Last: each
    annotator's estimated sensitivity (bws.core.annotator_model), None for counting or
    bootstrap intervals; then the rank intervals (bws.rank_results), None without
    calibrated intervals."""
    report = score_judgments(
        judgments,
        method,
        bootstrap=params.get("bootstrap", 0),
        seed=params.get("seed", 0),
        unit=params.get("resample_unit", "tuple"),
        interval_method=params.get("interval_method", "bootstrap"),
        shrinkage=params.get("shrinkage", "fixed"),
        **design_fit(design),  # an adaptive design's batches follow the fit
    )
    labels = labels or ItemLabels()
    rows = score_table(ids, texts, report, labels)
    sources = sources_summary(sources_table(report.scores, labels, report.judgments), labels)
    reliability = split_half(judgments, seed=params.get("seed", 0))
    points = convergence(judgments, method) if judgments.n_judgments >= 10 else []
    advice = advice_for_judgments(
        judgments,
        reliability.mean,
        [{"fraction": p.fraction, "spearman": _finite(p.spearman)} for p in points],
        model_reliability=model,
    )
    stats = format_stats(
        scheme,
        n_items=len(ids),
        planned_tuples=planned,
        report=report,
        reliability=reliability,
        item_ids=ids,
        advice=advice,
        model_reliability=model,
        design=design,
        sources=sources,
        labels=labels,
    )
    annotators = getattr(report.intervals, "reliability", None)
    ranks = study_ranks(report, labels, seed=params.get("seed", 0))
    ranks = None if ranks is None else ranks.to_dict(list(ids))
    return rows, reliability, points, stats, advice, sources, annotators, ranks


def _compute(run: ScoreRun) -> _Computed:
    project = run.project
    changed = (
        Annotation.objects.filter(project=project, scheme=run.scheme)
        .order_by("-updated_at")
        .values_list("updated_at", flat=True)
        .first()
    )
    judgments, users = selectors.judgments_and_annotators(project, run.scheme)
    ids, texts = selectors.item_ids_and_texts(project)
    params = run.parameters
    figures = {
        "n_judgments": judgments.n_judgments,
        "n_annotators": judgments.n_annotators if judgments.n_judgments else 0,
        "n_tuples_annotated": judgments.n_tuples if judgments.n_judgments else 0,
        "data_changed_at": changed,
    }
    if judgments.n_judgments == 0:
        with transaction.atomic():
            ScoreRun.objects.filter(pk=run.pk).update(
                status=ScoreRun.Status.OK,
                finished_at=timezone.now(),
                stats_text="",
                reliability=None,
                convergence=[],
                **figures,
            )
        return _Computed(rows=[], stats="")
    work = (
        judgments,
        run.method,
        params,
        ids,
        texts,
        selectors.planned_tuples(project),
        run.scheme,
    )
    # An adaptive design: the split-half of a model fit beside the counting one, which
    # misreads tuples of close items (and the advice's projected reliability a range
    # between them).
    adaptive = selectors.adaptive_settings(project)
    model = None
    if adaptive is not None:
        model = model_reliability_entry(judgments, run.method, seed=params.get("seed", 0))
    design = design_kind(adaptive)
    labels = selectors.item_labels(project)
    rows, reliability, points, stats, advice, sources, annotators, ranks = score_everything(
        *work, model=model, design=design, labels=labels
    )
    diagnostics = _diagnostics(judgments, run.method, params, rows, ids, design=design)
    index_of = {item_id: n for n, item_id in enumerate(ids)}
    with transaction.atomic():
        write_item_scores(run, rows, index_of)
        ScoreRun.objects.filter(pk=run.pk).update(
            status=ScoreRun.Status.OK,
            finished_at=timezone.now(),
            stats_text=stats,
            diagnostics=diagnostics,
            reliability=_reliability_dict(reliability, model),
            advice=_json_ready(advice.to_dict()),
            annotator_reliability=_annotator_reliability_dict(annotators, users),
            sources=sources,
            ranks=ranks,
            convergence=[
                {
                    "fraction": p.fraction,
                    "judgments": p.judgments,
                    "items": p.items,
                    "spearman": _finite(p.spearman),
                    "mean_abs_change": _finite(p.mean_abs_change),
                }
                for p in points
            ],
            **figures,
        )
    return _Computed(rows=rows, stats=stats)


# Item rows a bulk_create builds and sends at once where COPY is not available (SQLite).
ITEM_SCORE_BATCH = 50_000
_ITEM_SCORE_FIELDS = (
    "run",
    "item_index",
    "item_id",
    "score",
    "ci_low",
    "ci_high",
    "best",
    "worst",
    "appearances",
    "rank",
    "design_group",
    "source",
)
# The longest group or system value an item row keeps (ItemScore's field length).
LABEL_LENGTH = 255


def write_item_scores(run: ScoreRun, rows, index_of: dict) -> None:
    """Replace the run's item rows with ``rows`` (filemode.ScoreRow), ``index_of`` giving each
    item id's index. Call inside the run's transaction: a failure stores nothing partial.

    PostgreSQL loads them with one COPY (1,000,000 rows in seconds, benchmarks/scale.py);
    other databases (SQLite) by bulk_create in batches of ITEM_SCORE_BATCH."""
    alias = router.db_for_write(ItemScore)
    with transaction.atomic(using=alias):
        ItemScore.objects.using(alias).filter(run=run).delete()  # a retried run starts clean
        values = (
            (
                run.pk,
                index_of[row.item_id],
                row.item_id,
                _finite(row.score),
                _finite(row.ci_low),
                _finite(row.ci_high),
                row.best_count,
                row.worst_count,
                row.appearances,
                row.rank,
                (row.group or "")[:LABEL_LENGTH],
                (row.source or "")[:LABEL_LENGTH],
            )
            for row in rows
        )
        fields = [ItemScore._meta.get_field(name) for name in _ITEM_SCORE_FIELDS]
        connection = connections[alias]
        if connection.vendor == "postgresql":
            columns = tuple(field.column for field in fields)
            _copy_rows(connection, ItemScore._meta.db_table, columns, values)
            return
        names = [field.attname for field in fields]
        batch: list[ItemScore] = []
        for value in values:
            batch.append(ItemScore(**dict(zip(names, value, strict=True))))
            if len(batch) == ITEM_SCORE_BATCH:
                ItemScore.objects.using(alias).bulk_create(batch)
                batch = []
        if batch:
            ItemScore.objects.using(alias).bulk_create(batch)


def _copy_rows(connection, table: str, columns: tuple[str, ...], values) -> None:
    """COPY ``values`` (tuples in ``columns`` order, None for NULL) into ``table``."""
    quote = connection.ops.quote_name
    statement = f"COPY {quote(table)} ({', '.join(quote(c) for c in columns)}) FROM STDIN"
    # The copy ends (and the database checks the rows) outside Django's cursor methods:
    # wrap it so its errors are Django's (IntegrityError), as a bulk_create's would be.
    with connection.wrap_database_errors, connection.cursor() as cursor:
        with cursor.copy(statement) as copy:
            for value in values:
                copy.write_row(value)


def _finite(value):
    return None if value is None or not math.isfinite(value) else float(value)


def _json_ready(figures: dict) -> dict:
    """A dict of figures with NaN and infinities as None (JSON has neither)."""
    return {
        key: _finite(value) if isinstance(value, float) else value for key, value in figures.items()
    }


def _reliability_dict(reliability, model: dict | None = None) -> dict | None:
    if reliability is None or not math.isfinite(reliability.mean):
        return None
    stored = {
        "mean": reliability.mean,
        "std": _finite(reliability.std),
        "spearman_brown": _finite(reliability.spearman_brown),
        "spearman_brown_reason": reliability.spearman_brown_reason,
        "trials": reliability.trials,
        "split": reliability.split,
    }
    if model is not None:  # adaptive designs (model_reliability_entry)
        stored["model"] = _json_ready(model)
    return stored


def _annotator_reliability_dict(reliability, users: list[int]) -> dict | None:
    """Each annotator's sensitivity, its interval and judgments, keyed by user id (JSON keys
    are strings), with whether the scores were fitted with them."""
    if reliability is None:
        return None
    per_user = {
        str(user): {
            "sensitivity": _finite(float(reliability.sensitivity[k])),
            "low": _finite(float(reliability.low[k])),
            "high": _finite(float(reliability.high[k])),
            "judgments": int(reliability.judgments[k]),
        }
        for k, user in enumerate(users)
        if k < reliability.sensitivity.size
    }
    return {
        "joint": bool(reliability.joint),
        "p_value": _finite(reliability.p_value),
        "level": reliability.level,
        "annotators": per_user,
    }


def _diagnostics(judgments, method: str, params: dict, rows, ids, *, design=None) -> dict:
    """The run's diagnostics (bws.core.diagnostics) in their stored JSON form, from the
    judgments and the intervals of the score table's rows (``design``: the adaptive
    strategy, if any)."""
    low = high = None
    if params.get("bootstrap", 0):
        index_of = {item_id: n for n, item_id in enumerate(ids)}
        low, high = np.full(len(ids), np.nan), np.full(len(ids), np.nan)
        for row in rows:
            if row.ci_low is not None and row.ci_high is not None:
                low[index_of[row.item_id]] = row.ci_low
                high[index_of[row.item_id]] = row.ci_high
    # The thresholds on appearances and clusters hold for bootstrap intervals only; a run
    # stored before runs recorded their interval method had bootstrap intervals.
    if params.get("interval_method", "bootstrap") == "bootstrap":
        kind, unit = "bootstrap", params.get("resample_unit", "tuple")
    else:
        kind, unit = "calibrated", "tuple" if method == "counting" else "model"
    return diagnose(
        judgments, method=method, low=low, high=high, unit=unit, interval_kind=kind, design=design
    ).to_dict()


def run_rows(run: ScoreRun) -> list:
    """The run's score table rows (filemode.ScoreRow), ranked, with item texts."""
    texts = dict(Item.objects.filter(project=run.project).values_list("item_id", "text"))
    items = selectors.ranked_items(run)
    return [
        ScoreRow(
            item_id=i.item_id,
            text=texts.get(i.item_id, ""),
            score=i.score,
            ci_low=i.ci_low,
            ci_high=i.ci_high,
            best_count=i.best,
            worst_count=i.worst,
            appearances=i.appearances,
            rank=i.rank,
            group=i.design_group or None,
            source=i.source or None,
        )
        for i in items
    ]


def write_run_table(run: ScoreRun, path) -> Path:
    """Write a stored run as the score table: one row per item (TSV, or CSV for .csv)."""
    return write_score_table(run_rows(run), path)


def _write_output_file(run: ScoreRun, result: _Computed) -> None:
    """Write the scheme's configured output_file inside the project's own folder.

    Confined again here, whatever the stored config says now: a path that leads outside
    is not written (the run keeps its scores; the log says why)."""
    output = scoring_options(run.project, run.scheme).get("output_file")
    if not output or not result.rows:
        return
    try:
        write_score_table(result.rows, output, inside=project_folder(run.project))
    except PathRefused as exc:
        log.warning("run %s: output file not written: %s", run.pk, exc)
