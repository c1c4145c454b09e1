"""Writes of the BWS app: a project's tuples (designed once when it is built) and its
scoring runs."""

import logging
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import connections, router, transaction
from django.db.models import F
from django.utils import timezone

from annotation.models import Annotation
from projects.configuration import ProjectConfig
from projects.datafiles import LoadedData
from projects.models import Item, Unit
from projects.paths import PathRefused
from projects.services import project_folder, store_units

from . import selectors
from .core import design
from .core.advice import advice_for_judgments
from .core.convergence import convergence
from .core.diagnostics import diagnose
from .core.groups import item_groups
from .core.model_reliability import model_reliability_entry
from .core.reliability import split_half
from .core.scoring import METHODS
from .filemode import (
    ScoreRow,
    format_stats,
    scheme_scoring,
    score_judgments,
    score_table,
    write_score_table,
    write_tuple_file,
)
from .models import BwsTuple, ItemScore, ScoreRun, TupleBatch

log = logging.getLogger(__name__)


@dataclass
class TupleBuild:
    n_tuples: int = 0
    notes: list[str] = field(default_factory=list)
    summary: list[str] = field(default_factory=list)


def _instance_seed(seed: int, position: int) -> int:
    """A seed per instance that depends only on the project seed and the instance's place."""
    return int(np.random.SeedSequence([seed, position]).generate_state(1)[0])


def design_for(n_items: int, bws, seed: int) -> tuple[np.ndarray, list[str]]:
    """Tuples (as local item indices) for one pool of items under the project's design."""
    if bws.method == "random":
        return design.random_tuples(n_items, bws.tuple_size, bws.appearances, seed=seed), []
    return design.balanced_design(
        n_items,
        bws.tuple_size,
        bws.appearances,
        seed=seed,
        ensure_pair_coverage=bws.ensure_pair_coverage,
    )


def build_tuples(*, project, config: ProjectConfig, data: LoadedData, instances) -> TupleBuild:
    """Design and store the project's tuples: from the whole pool, or within each instance
    (pre-generated tuples used as they are). Called once, inside the project's import."""
    bws = config.bws
    if bws is None or not config.bws_schemes:
        return TupleBuild()
    if bws.adaptive is not None:
        # The balanced start (batch 0); later batches come from the fit (bws.adaptive).
        bws = bws.model_copy(update={"appearances": bws.adaptive.initial_appearances})
    index_of = {item.item_id: i for i, item in enumerate(data.items)}
    rows: list[tuple[int | None, list[str]]] = []
    notes: list[str] = []
    if not bws.items_key and bws.group_key:
        rows, notes, summary = _grouped_rows(data, bws)
    elif not bws.items_key:
        ids = [item.item_id for item in data.items]
        tuples, notes = design_for(len(ids), bws, bws.seed)
        summary = design.design_summary(tuples, len(ids)).lines()
        id_array = np.asarray(ids, dtype=object)
        rows = [(None, list(row)) for row in id_array[tuples]]
    else:
        per_instance: list[design.DesignSummary] = []
        n_given = 0
        for position, (inst, record) in enumerate(zip(instances, data.instances, strict=True)):
            local_ids = [item.item_id for item in record.items]
            if record.pregenerated:
                rows.append((inst, local_ids))
                n_given += 1
                continue
            try:
                tuples, inst_notes = design_for(
                    len(local_ids), bws, _instance_seed(bws.seed, position)
                )
            except design.DesignError as exc:
                raise design.DesignError(
                    f"instance {record.instance_id} ({record.file}:{record.line}): {exc}"
                ) from exc
            notes.extend(f"instance {record.instance_id}: {note}" for note in inst_notes)
            per_instance.append(design.design_summary(tuples, len(local_ids)))
            id_array = np.asarray(local_ids, dtype=object)
            rows.extend((inst, list(row)) for row in id_array[tuples])
        summary = _instances_summary(per_instance, n_given)
    # Each tuple is shown by a queue unit that lists its items; written a batch at a time,
    # so a large design holds no model object per tuple.
    unit_pks = store_units(
        project=project,
        kind=Unit.Kind.TUPLE,
        rows=[
            (f"tuple_{n + 1:06d}", inst, item_ids, [index_of[i] for i in item_ids])
            for n, (inst, item_ids) in enumerate(rows)
        ],
        seed=bws.seed,
    )
    batch = None
    if bws.adaptive is not None:
        batch = TupleBatch.objects.create(
            project=project, number=0, strategy="balanced", seed=bws.seed, n_tuples=len(rows)
        )
    for start in range(0, len(rows), 5000):
        BwsTuple.objects.bulk_create(
            [
                BwsTuple(
                    project=project,
                    tuple_id=f"tuple_{n + 1:06d}",
                    position=n,
                    instance=inst,
                    unit_id=unit_pks[n],
                    batch=batch,
                )
                for n, (inst, _) in enumerate(rows[start : start + 5000], start=start)
            ]
        )
    _keep_tuple_file(project, rows)
    if len(notes) > 20:
        notes = notes[:20] + [f"... and {len(notes) - 20} more design notes"]
    return TupleBuild(n_tuples=len(rows), notes=notes, summary=summary)


def design_groups(data: LoadedData, bws) -> list[tuple[str, np.ndarray]]:
    """The groups of items a design keeps apart (tuple_generation.group_key), each with its
    items' indices; DesignError when an item has no value or a group is too small."""
    ids = [item.item_id for item in data.items]
    values = [item.data.get(bws.group_key) for item in data.items]
    return item_groups(values, ids, bws.tuple_size, bws.group_key)


def _grouped_rows(data: LoadedData, bws) -> tuple[list, list[str], list[str]]:
    """Tuples designed inside each group of items sharing the group_key value, seeded per
    group as instances are: no tuple mixes two groups."""
    id_array = np.asarray([item.item_id for item in data.items], dtype=object)
    rows: list[tuple[None, list[str]]] = []
    notes: list[str] = []
    designed = []
    for position, (value, members) in enumerate(design_groups(data, bws)):
        tuples, group_notes = design_for(len(members), bws, _instance_seed(bws.seed, position))
        notes.extend(f"group {value}: {note}" for note in group_notes)
        designed.append(design.design_summary(tuples, len(members)))
        rows.extend((None, list(row)) for row in id_array[members][tuples])
    return rows, notes, _instances_summary(designed, 0, pools="groups")


def _keep_tuple_file(project, rows) -> None:
    """Once the import commits, write the tuples in the project's folder (tuples.jsonl,
    beside an uploaded config), where ``python -m bws score --config`` looks up the tuple
    of an answer record that names it by id only."""
    listing = [
        (f"tuple_{n + 1:06d}", item_ids, inst.instance_id if inst is not None else None)
        for n, (inst, item_ids) in enumerate(rows)
    ]
    folder = project_folder(project)
    transaction.on_commit(lambda: write_tuple_file(folder, listing))


def _instances_summary(designed: list, n_given: int, pools: str = "instances") -> list[str]:
    """Summary lines for tuples drawn within instances (or groups): the worst figures of any
    one of them."""
    lines = []
    if n_given:
        lines.append(f"pre-generated tuples used as given: {n_given:,}")
    if designed:
        lines += [
            f"tuples designed within {len(designed):,} {pools}: "
            f"{sum(d.n_tuples for d in designed):,}",
            f"appearances per item within {'a group' if pools == 'groups' else 'an instance'}: "
            f"min {min(d.appearances_min for d in designed)}, "
            f"max {max(d.appearances_max for d in designed)}",
            f"pairs covered within {pools}: "
            f"{sum(d.pairs_covered for d in designed):,} of "
            f"{sum(d.pairs_total_possible for d in designed):,}",
            f"largest pair count in {'a group' if pools == 'groups' else 'an instance'}: "
            f"{max(d.max_pair_count for d in designed)}",
            "position balance: largest spread within an item "
            f"{max(d.position_spread for d in designed)}",
        ]
    return lines


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


def request_run(
    *,
    project,
    scheme: str,
    method: str | None = None,
    bootstrap: int | None = None,
    trigger: str = ScoreRun.Trigger.AUTO,
    intervals: str | None = None,
) -> ScoreRun:
    """Record a queued run with its parameters (the worker or the caller executes it).
    ``intervals`` (calibrated or bootstrap) defaults to the scheme's scoring.intervals."""
    options = scoring_options(project, scheme)
    intervals = intervals or options["intervals"]
    if intervals not in ("calibrated", "bootstrap"):
        raise ValueError(f"unknown interval method {intervals!r}: calibrated or bootstrap")
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
    seed = project.settings.seed
    return ScoreRun.objects.create(
        project=project,
        scheme=scheme,
        method=method,
        trigger=trigger,
        parameters={
            "bootstrap": bootstrap,
            "seed": seed,
            "resample_unit": "tuple",
            "interval_method": intervals,
            "shrinkage": "empirical_bayes",
        },
    )


def execute_run(run_id: int) -> ScoreRun:
    """Compute a run's scores, intervals, reliability and convergence and store them; on
    error the run is marked failed (and the error raised again for the task to retry).

    The worker and the command line compute alike, in their own process: what keeps a
    worker's run from slowing the web is its CPU quota (platform/DEPLOY.md, "Scoring
    beside annotators")."""
    run = ScoreRun.objects.select_related("project").get(pk=run_id)
    if run.status == ScoreRun.Status.OK:
        return run  # a redelivered task: the work is done
    ScoreRun.objects.filter(pk=run.pk).update(
        status=ScoreRun.Status.RUNNING,
        started_at=timezone.now(),
        attempts=F("attempts") + 1,
        error="",
    )
    try:
        result = _compute(run)
    except SoftTimeLimitExceeded:
        ScoreRun.objects.filter(pk=run.pk).update(
            status=ScoreRun.Status.FAILED,
            error=time_limit_message(),
            finished_at=timezone.now(),
        )
        raise
    except Exception as exc:
        ScoreRun.objects.filter(pk=run.pk).update(
            status=ScoreRun.Status.FAILED,
            error=f"{type(exc).__name__}: {exc}"[:4000],
            finished_at=timezone.now(),
        )
        raise
    run.refresh_from_db()
    _write_output_file(run, result)
    return run


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
):
    """The numeric part of a run, with no database access: scores with intervals,
    split-half reliability, convergence, the advice on when to stop and the stats text.
    ``model``: an adaptive design's model split-half (model_reliability_entry), which
    makes the advice's projected reliability a range. ``design``: the adaptive strategy
    (bws.core.diagnostics marks intervals under iterative rounds approximate)."""
    report = score_judgments(
        judgments,
        method,
        bootstrap=params.get("bootstrap", 0),
        seed=params.get("seed", 0),
        unit=params.get("resample_unit", "tuple"),
        interval_method=params.get("interval_method", "bootstrap"),
        shrinkage=params.get("shrinkage", "fixed"),
    )
    rows = score_table(ids, texts, report)
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
    )
    return rows, reliability, points, stats, advice


def _compute(run: ScoreRun) -> _Computed:
    project = run.project
    changed = (
        Annotation.objects.filter(project=project, scheme=run.scheme)
        .order_by("-updated_at")
        .values_list("updated_at", flat=True)
        .first()
    )
    judgments = selectors.judgments_for(project, run.scheme)
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
    design = None if adaptive is None else str(adaptive.strategy)
    rows, reliability, points, stats, advice = score_everything(*work, model=model, design=design)
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
)


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
