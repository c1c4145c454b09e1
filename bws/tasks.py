"""Celery tasks of the BWS app: thin callers of the services.

After answers arrive, `recompute_project_task` waits until the project has been quiet for
the session gap (SCORING_SESSION_GAP seconds), then queues one run per BWS scheme (and the
agreement report); answers during the wait push it back, so a burst gives one run.
"""

import logging

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.utils import timezone

from projects.models import Project

from . import services
from .core.design import balanced_tuples, design_summary
from .models import ScoreRun, ScoringState

log = logging.getLogger(__name__)


@shared_task(name="bws.design_summary", ignore_result=False)
def design_summary_task(n_items: int, tuple_size: int, appearances: int, seed: int = 42) -> dict:
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
    retry_backoff_max=300,
    max_retries=4,
)
def score_run_task(self, run_id: int) -> str:
    """Compute one queued run (retried with backoff; a failure stays visible as failed).

    A run stopped by the soft time limit is marked failed with that reason and not
    retried: it would only take as long again."""
    if not ScoreRun.objects.filter(pk=run_id).exists():
        return "gone"
    try:
        return services.execute_run(run_id, paced=True).status
    except SoftTimeLimitExceeded:
        log.warning("run %s: %s", run_id, services.time_limit_message())
        return ScoreRun.Status.FAILED


@shared_task(name="bws.recompute_project", acks_late=True)
def recompute_project_task(project_id: int, force: bool = False) -> str:
    """Queue one run per BWS scheme once the project's annotation session has ended."""
    gap = settings.SCORING_SESSION_GAP
    state = ScoringState.objects.filter(project_id=project_id).first()
    if state is None or not state.dirty:
        ScoringState.objects.filter(project_id=project_id).update(scheduled_at=None)
        return "clean"
    quiet_for = (timezone.now() - state.last_answer_at).total_seconds()
    if not force and quiet_for < gap:
        services.send_task(recompute_project_task, project_id, countdown=gap - quiet_for + 0.5)
        return "waiting"
    return services.start_recompute(Project.objects.get(pk=project_id))


@shared_task(name="bws.catch_up")
def catch_up_task() -> int:
    """Queue recomputation for projects left dirty (a broker outage, a lost task)."""
    return services.schedule_dirty_projects()
