"""When the BWS app scores: answers mark a project dirty, a session's end (a quiet gap or
a logout) queues one run per scheme, and runs lost with their worker or their message are
queued again. Nothing here computes; bws.services does (in the worker)."""

import logging
from datetime import timedelta

from django.conf import settings
from django.core.cache import cache
from django.db.models import Q
from django.utils import timezone

from annotation.models import Annotation
from projects import events
from projects.models import Project
from projects.queueing import send_task

from .models import ScoreRun, ScoringState
from .services import request_run, scoring_options

log = logging.getLogger(__name__)

# The tasks queued from here, by their registered names (bws.tasks, which imports this).
SCORE_RUN_TASK = "bws.score_run"
RECOMPUTE_PROJECT_TASK = "bws.recompute_project"


def queue_run(run: ScoreRun) -> bool:
    """Send a recorded run to the scoring queue; False when the broker cannot be reached
    (the run stays queued, and the catch-up sends it again)."""
    return send_task(SCORE_RUN_TASK, run.pk)


def note_answers(project_id: int) -> None:
    """Record that a project's answers changed. Called after an answer is committed; costs
    at most one small UPDATE and never touches the broker: the catch-up (every
    SCORING_CHECK_INTERVAL seconds) queues the recomputation once the session has ended."""
    now = timezone.now()
    # Within a burst the row was just written: skip the write (one indexed UPDATE that
    # matches nothing) unless the last write is older than a quarter of the session gap.
    recent = now - timedelta(seconds=min(5.0, settings.SCORING_SESSION_GAP / 4))
    ScoringState.objects.filter(project_id=project_id).filter(
        Q(dirty=False) | Q(last_answer_at__isnull=True) | Q(last_answer_at__lt=recent)
    ).update(last_answer_at=now, dirty=True)


def end_session(user) -> None:
    """An annotator logged out: score their projects now instead of waiting for the gap."""
    since = timezone.now() - timedelta(hours=12)
    project_ids = set(
        Annotation.objects.filter(annotator=user, updated_at__gte=since)
        .values_list("project_id", flat=True)
        .distinct()
    )
    for state in ScoringState.objects.filter(project_id__in=project_ids, dirty=True):
        send_task(RECOMPUTE_PROJECT_TASK, state.project_id, force=True)


def start_recompute(project) -> str:
    """Clear the project's dirty flag and queue one run per BWS scheme and the agreement
    report (answers arriving from now on set the flag again).

    A run that cannot be queued (the broker is down) is marked failed and the flag is set
    again, so the catch-up starts over once the broker is back: nothing is left stale."""
    now = timezone.now()
    ScoringState.objects.filter(project=project).update(dirty=False, scheduled_at=now)
    schemes = [s.name for s in project.settings.bws_schemes]
    auto = [name for name in schemes if scoring_options(project, name)["auto_compute"]]
    for name in auto:
        run = request_run(project=project, scheme=name, trigger=ScoreRun.Trigger.AUTO)
        if not send_task(SCORE_RUN_TASK, run.pk):
            ScoreRun.objects.filter(pk=run.pk).update(
                status=ScoreRun.Status.FAILED,
                error="the task queue could not be reached; scored again when it is back",
                finished_at=timezone.now(),
            )
            ScoringState.objects.filter(project=project).update(
                dirty=True, scheduled_at=None, broker_failed_at=now
            )
            return "the task queue could not be reached"
    # The other apps (agreement) bring their own figures up to date on this signal.
    events.answers_settled.send(sender=type(project), project=project)
    return f"queued {len(auto)} runs"


def schedule_dirty_projects() -> int:
    """The catch-up, run by beat every SCORING_CHECK_INTERVAL seconds and when a worker
    starts: recompute every dirty project whose session has ended (no answer for
    SCORING_SESSION_GAP seconds); queue again runs whose message was lost; requeue runs
    whose worker is gone (past SCORING_RUN_TIMEOUT). Returns the projects started."""
    now = timezone.now()
    ended = now - timedelta(seconds=settings.SCORING_SESSION_GAP)
    count = 0
    for project_id in (
        ScoringState.objects.filter(dirty=True)
        .filter(Q(last_answer_at__isnull=True) | Q(last_answer_at__lt=ended))
        .values_list("project_id", flat=True)
    ):
        project = Project.objects.filter(pk=project_id).first()
        if project is not None and claim_recompute(project_id):
            start_recompute(project)
            count += 1
    resend_stale_runs(now)
    lost = now - timedelta(seconds=settings.SCORING_RUN_TIMEOUT)
    requeue_lost_runs(
        ScoreRun.objects.filter(status=ScoreRun.Status.RUNNING, started_at__lt=lost),
        "no result after SCORING_RUN_TIMEOUT",
    )
    return count


def claim_recompute(project_id: int) -> bool:
    """Take the project's dirty flag (one caller wins when beat and a starting worker
    look at the same time)."""
    return bool(ScoringState.objects.filter(project_id=project_id, dirty=True).update(dirty=False))


def resend_stale_runs(now) -> None:
    """A run queued more than SCORING_SCHEDULE_STALE seconds ago is sent again, at most
    once per that period (a broker restarted without its data loses messages). A
    duplicate costs nothing: a run already done is not computed again."""
    stale = now - timedelta(seconds=settings.SCORING_SCHEDULE_STALE)
    for run_id in ScoreRun.objects.filter(
        status=ScoreRun.Status.QUEUED, created_at__lt=stale
    ).values_list("pk", flat=True):
        try:
            fresh = cache.add(f"bws:resent:{run_id}", 1, timeout=settings.SCORING_SCHEDULE_STALE)
        except Exception:  # the cache lives in Redis: resend when it cannot say
            fresh = True
        if fresh:
            send_task(SCORE_RUN_TASK, run_id)


def requeue_lost_runs(runs, why: str) -> int:
    """Queue again runs whose worker died during them (SIGKILL, out of memory, a host
    restart); after SCORING_RUN_ATTEMPTS starts a run is marked failed instead, so a run
    that kills its worker does not loop. The last good run stays the one shown meanwhile.
    Runs of the command line are not the workers' to requeue."""
    runs = runs.exclude(trigger=ScoreRun.Trigger.COMMAND)
    ScoreRun.objects.filter(
        pk__in=list(
            runs.filter(attempts__gte=settings.SCORING_RUN_ATTEMPTS).values_list("pk", flat=True)
        )
    ).update(
        status=ScoreRun.Status.FAILED,
        error=f"the worker stopped during this run ({why}), {settings.SCORING_RUN_ATTEMPTS} times",
        finished_at=timezone.now(),
    )
    requeued = list(
        runs.filter(attempts__lt=settings.SCORING_RUN_ATTEMPTS).values_list("pk", flat=True)
    )
    ScoreRun.objects.filter(pk__in=requeued).update(
        status=ScoreRun.Status.QUEUED, error=f"requeued: the worker stopped during it ({why})"
    )
    for run_id in requeued:
        log.warning("run %s: its worker stopped (%s); queued again", run_id, why)
        send_task(SCORE_RUN_TASK, run_id)
    return len(requeued)


def recover_runs_without_worker(active: set[int]) -> int:
    """When a worker starts: every run marked running that no live worker is executing
    (``active``, the run ids the workers report) lost its worker; queue it again."""
    orphans = ScoreRun.objects.filter(status=ScoreRun.Status.RUNNING).exclude(pk__in=active)
    return requeue_lost_runs(orphans, "found when a worker started")
