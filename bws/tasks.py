"""Celery tasks of the BWS app: thin callers of the services.

Answers only mark their project dirty; the catch-up (beat, every SCORING_CHECK_INTERVAL
seconds, and each worker as it starts) queues one run per BWS scheme once the project has
been quiet for the session gap (SCORING_SESSION_GAP seconds), or while answers keep coming
before its oldest unscored answer is SCORING_MAX_STALENESS old, so a burst gives one run
and no message waits in the broker for the gap to pass. Runs go to the "scoring" queue
(CELERY_TASK_ROUTES) one lab's turn at a time, served by a worker at the lowest CPU weight.
"""

import logging

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from celery.signals import worker_ready
from django.conf import settings
from django.utils import timezone

from projects.configuration import DEFAULT_SEED
from projects.models import Project

from . import adaptive, scheduling, services
from .core.design import balanced_tuples, design_summary
from .models import ScoreRun, ScoringState

log = logging.getLogger(__name__)


@shared_task(name="bws.design_summary", ignore_result=False)
def design_summary_task(
    n_items: int, tuple_size: int, appearances: int, seed: int = DEFAULT_SEED
) -> dict:
    """Design tuples in a worker and return their summary (used to check workers end to end)."""
    tuples = balanced_tuples(n_items, tuple_size, appearances, seed=seed)
    summary = design_summary(tuples, n_items)
    return {
        "n_tuples": int(summary.n_tuples),
        "appearances_min": int(summary.appearances_min),
        "appearances_max": int(summary.appearances_max),
        "repeated_pairs": int(summary.repeated_pairs),
    }


@shared_task(
    name="bws.score_run",
    bind=True,
    acks_late=True,
    autoretry_for=(Exception,),
    retry_backoff=5,
    # Retries wait in the broker as delayed messages: kept well under its visibility
    # timeout, so a waiting retry is never delivered twice.
    retry_backoff_max=60,
    max_retries=4,
)
def score_run_task(self, run_id: int) -> str:
    """Compute one queued run (retried with backoff; a failure stays visible as failed).

    A run stopped by the soft time limit is marked failed with that reason and not
    retried: it would only take as long again."""
    lab_id = ScoreRun.objects.filter(pk=run_id).values_list("project__lab_id", flat=True).first()
    if lab_id is None:
        return "gone"
    try:
        run = services.execute_run(run_id)
        # A fresh fit: an adaptive design whose open tuples run low gets its next batch.
        adaptive.maybe_queue_batch(run.project_id)
        return run.status
    except SoftTimeLimitExceeded:
        log.warning("run %s: %s", run_id, services.time_limit_message())
        return ScoreRun.Status.FAILED
    finally:
        # The lab's next waiting run takes the turn this one leaves.
        scheduling.dispatch_runs(lab_id)


# It fits the answers first, so it is routed beside the scoring runs (CELERY_TASK_ROUTES).
@shared_task(name="bws.design_batch", acks_late=True)
def design_batch_task(project_id: int) -> str:
    """Design and store an adaptive project's next batch of tuples when its open tuples
    run low (idempotent: the margin is checked again under the project's lock)."""
    project = Project.objects.filter(pk=project_id).first()
    if project is None:
        return "gone"
    batch = None
    try:
        batch = adaptive.prepare_next_batch(project)
    finally:
        stored = batch is not None and batch.n_tuples > 0
        adaptive.done_designing(project_id, stored=stored)
    return "nothing to add" if batch is None else f"batch {batch.number}: {batch.n_tuples} tuples"


@shared_task(name="bws.recompute_project", acks_late=True)
def recompute_project_task(project_id: int, force: bool = False) -> str:
    """Queue one run per BWS scheme now (``force``, an annotator logged out) or once the
    project's annotation session has ended; before that the catch-up will."""
    state = ScoringState.objects.filter(project_id=project_id).first()
    if state is None or not state.dirty:
        return "clean"
    quiet_for = (timezone.now() - (state.last_answer_at or timezone.now())).total_seconds()
    if not force and quiet_for < settings.SCORING_SESSION_GAP:
        return "waiting"
    if not scheduling.claim_recompute(project_id):
        return "clean"
    return scheduling.start_recompute(Project.objects.get(pk=project_id))


@shared_task(name="bws.catch_up")
def catch_up_task() -> int:
    """Start scoring for projects whose session ended; retry what a fault left behind."""
    return scheduling.schedule_dirty_projects()


def _active_run_ids(app) -> set[int]:
    """Ids of the runs the live workers report as executing (none when none answer)."""
    replies = app.control.inspect(timeout=1.0).active() or {}
    return {
        int(task["args"][0])
        for tasks in replies.values()
        for task in tasks
        if task.get("name") == score_run_task.name and task.get("args")
    }


@worker_ready.connect(weak=False, dispatch_uid="bws-recover-runs")
def recover_runs_on_start(sender, **kwargs) -> None:
    """A worker that starts requeues the runs a dead worker left "running" (a SIGKILL, an
    out-of-memory kill, a crash), so their schemes are scored again at once."""
    try:
        scheduling.recover_runs_without_worker(_active_run_ids(sender.app))
    except Exception:  # never keep a worker from starting
        log.exception("could not look for runs left by a dead worker")
