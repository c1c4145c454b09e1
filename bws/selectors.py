"""Reads of the BWS app: judgments as arrays in one query, the latest runs, their items."""

import numpy as np
from django.db.models import F, QuerySet
from django.db.models.fields.json import KeyTextTransform

from annotation.models import Annotation
from bws.configuration import design_of
from bws.configuration.adaptive import AdaptiveSettings
from projects.models import Item, Project
from projects.selectors import excluded_user_ids

from .core.diagnostics import StoredDiagnostics
from .core.judgments import Judgments
from .models import BwsTuple, ItemScore, ScoreRun
from .source_scores import ItemLabels, keys_of, labels_of


def bws_scheme_names(project: Project) -> list[str]:
    return [s.name for s in project.settings.bws_schemes]


def adaptive_settings(project: Project) -> AdaptiveSettings | None:
    """The project's adaptive block, or None when its design is balanced only. Its batch
    and margin were sized for the items at import (AdaptiveSettings.sized); a stored block
    without them is sized here."""
    bws = project.settings.bws
    adaptive = None if bws is None else bws.adaptive
    if adaptive is not None and (adaptive.batch_tuples is None or adaptive.ready_margin is None):
        adaptive = adaptive.sized(Item.objects.filter(project=project).count())
    return adaptive


def _scored_answers(project: Project, scheme: str) -> QuerySet[Annotation]:
    """The scheme's best-worst answers that count toward scores."""
    return (
        Annotation.objects.filter(project=project, scheme=scheme, best_index__isnull=False)
        # Gold units and the annotators a manager left out count toward no score.
        .exclude(unit__is_gold=True)
        .exclude(annotator_id__in=excluded_user_ids(project))
    )


def judgments_for(project: Project, scheme: str) -> Judgments:
    """The scheme's judgments as integer arrays (``judgments_and_annotators``)."""
    return judgments_and_annotators(project, scheme)[0]


def judgments_and_annotators(project: Project, scheme: str) -> tuple[Judgments, list[int]]:
    """The scheme's judgments as integer arrays, read in one query (time order: answer
    creation; clusters: tuples)."""
    rows = list(
        _scored_answers(project, scheme)
        .order_by("created_at", "id")
        .values_list("unit__item_indices", "best_index", "worst_index", "unit_id", "annotator_id")
    )
    n_items = Item.objects.filter(project=project).count()
    if not rows:
        size = design_of(project.settings).tuple_size
        empty = np.zeros(0, dtype=np.int64)
        return Judgments(
            items=np.zeros((0, size), dtype=np.int64),
            best=empty,
            worst=empty,
            tuple_ids=empty,
            annotators=empty,
            order=empty,
            n_items=n_items,
        ), []
    items_col, best_ix, worst_ix, units, annotators = zip(*rows, strict=True)
    size = max(len(r) for r in items_col)
    items = np.array([list(r) for r in items_col], dtype=np.int64).reshape(len(rows), size)
    best = np.argmax(items == np.asarray(best_ix, dtype=np.int64)[:, None], axis=1)
    worst = np.argmax(items == np.asarray(worst_ix, dtype=np.int64)[:, None], axis=1)
    _, tuple_ids = np.unique(np.asarray(units, dtype=np.int64), return_inverse=True)
    users, annotator_ids = np.unique(np.asarray(annotators, dtype=np.int64), return_inverse=True)
    judgments = Judgments(
        items=items,
        best=best,
        worst=worst,
        tuple_ids=tuple_ids,
        annotators=annotator_ids,
        order=np.arange(len(rows)),
        n_items=n_items,
    )
    return judgments, [int(user) for user in users]


def item_ids_and_texts(project: Project) -> tuple[list[str], list[str]]:
    rows = Item.objects.filter(project=project).order_by("index").values_list("item_id", "text")
    ids, texts = [], []
    for item_id, text in rows:
        ids.append(item_id)
        texts.append(text)
    return ids, texts


def item_labels(project: Project) -> ItemLabels:
    """Each item's group and system (the design's group_key and system_key), in index
    order, read in one query; empty labels when the design names neither."""
    design = project.settings.bws
    keys = keys_of(design)
    if not keys:
        return ItemLabels()
    fields = {f"label_{n}": KeyTextTransform(key, "data") for n, key in enumerate(keys)}
    items = Item.objects.filter(project=project).order_by("index").annotate(**fields)
    rows = list(items.values_list(*fields))
    columns = list(zip(*rows, strict=True)) if rows else [()] * len(keys)
    return labels_of(design, dict(zip(keys, columns, strict=True)))


def planned_tuples(project: Project) -> int:
    return BwsTuple.objects.filter(project=project).count()


def latest_good_run(project: Project, scheme: str, method: str | None = None) -> ScoreRun | None:
    runs = ScoreRun.objects.filter(project=project, scheme=scheme, status=ScoreRun.Status.OK)
    if method:
        runs = runs.filter(method=method)
    return runs.order_by("-finished_at", "-id").first()


def latest_annotator_reliability(project: Project, scheme: str) -> ScoreRun | None:
    """The scheme's newest finished run that estimated each annotator's reliability."""
    runs = ScoreRun.objects.filter(
        project=project,
        scheme=scheme,
        status=ScoreRun.Status.OK,
        annotator_reliability__isnull=False,
    )
    return runs.order_by("-finished_at", "-id").first()


def pending_runs(project: Project, scheme: str) -> QuerySet[ScoreRun]:
    return ScoreRun.objects.filter(
        project=project,
        scheme=scheme,
        status__in=[ScoreRun.Status.QUEUED, ScoreRun.Status.RUNNING],
    )


def latest_failed_run(project: Project, scheme: str) -> ScoreRun | None:
    """The newest run if it failed after the last good one (shown as a failure)."""
    newest = ScoreRun.objects.filter(project=project, scheme=scheme).order_by("-created_at").first()
    return newest if newest is not None and newest.status == ScoreRun.Status.FAILED else None


def ranked_items(run: ScoreRun) -> QuerySet[ItemScore]:
    """The run's item scores, best rank first; unranked items (no score) last, by index.
    With groups, group by group (ranks are within a group)."""
    order = (F("rank").asc(nulls_last=True), "item_index")
    return ItemScore.objects.filter(run=run).order_by("design_group", *order)


def run_diagnostics(run: ScoreRun | None) -> StoredDiagnostics:
    """What a run's scores cannot tell (separate groups, separated items, approximate
    intervals), for its messages and per-item lookups; empty for no run or an older run."""
    return StoredDiagnostics(run.diagnostics if run is not None else None)


def recent_runs(project: Project, scheme: str | None = None, limit: int = 8) -> QuerySet[ScoreRun]:
    """The newest runs of the scheme (of every scheme without one), for a list: without
    their large JSON fields."""
    runs = ScoreRun.objects.filter(project=project)
    if scheme is not None:
        runs = runs.filter(scheme=scheme)
    return runs.defer("diagnostics", "convergence", "stats_text")[:limit]


def answers_since(run: ScoreRun) -> int:
    """Answers to the run's scheme stored (new or changed) after the newest one it read."""
    answers = Annotation.objects.filter(project=run.project_id, scheme=run.scheme)
    if run.data_changed_at is not None:
        answers = answers.filter(updated_at__gt=run.data_changed_at)
    return answers.count()
