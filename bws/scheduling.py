"""When the BWS app scores: answers mark a project dirty, a session's end (a quiet gap or
a logout) or answers left unscored for SCORING_MAX_STALENESS queue one run per scheme (none
while the scheme has one queued), runs go to the scoring queue one lab at a time, and runs
lost with their worker or their message are queued again. Nothing here computes;
bws.services does (in the worker)."""

import logging
from datetime import timedelta

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.db.models import DateTimeField, F, Q, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from annotation.models import Annotation
from projects import events
from projects.models import Lab, Project
from projects.queueing import send_task
from projects.rate_limits import Refused, admit_or_refuse

from .models import ScoreRun, ScoringState
from .services import request_run, run_parameters, scoring_options

log = logging.getLogger(__name__)

# The tasks queued from here, by their registered names (bws.tasks, which imports this).
SCORE_RUN_TASK = "bws.score_run"
RECOMPUTE_PROJECT_TASK = "bws.recompute_project"


def queue_run(run: ScoreRun) -> bool:
    """Let a recorded run take its lab's turn on the scoring queue; False when the broker
    cannot be reached (the run stays queued, and the catch-up sends it when it is back)."""
    return all(ok for _, ok in dispatch_runs(run.project.lab_id))


def dispatch_runs(lab_id: int) -> list[tuple[int, bool]]:
    """Send the lab's oldest waiting runs to the scoring queue while it holds fewer than
    SCORING_LAB_SLOTS runs sent and not finished; the (run id, sent) pairs.

    A lab's backlog waits here, in the database, not in the broker: another lab's run
    queues behind at most the runs each lab holds, not behind 40 runs of one lab. The
    worker that finishes a run calls this for its lab, and the catch-up for every lab."""
    with transaction.atomic():
        # One dispatcher per lab at a time (beat, workers, requests).
        Lab.objects.select_for_update().filter(pk=lab_id).first()
        runs = ScoreRun.objects.filter(project__lab_id=lab_id).exclude(
            trigger=ScoreRun.Trigger.COMMAND
        )
        held = runs.filter(
            dispatched_at__isnull=False,
            status__in=[ScoreRun.Status.QUEUED, ScoreRun.Status.RUNNING],
        ).count()
        free = settings.SCORING_LAB_SLOTS - held
        if free <= 0:
            return []
        picks = list(
            runs.filter(status=ScoreRun.Status.QUEUED, dispatched_at__isnull=True)
            .order_by("created_at", "pk")
            .values_list("pk", flat=True)[:free]
        )
        ScoreRun.objects.filter(pk__in=picks).update(dispatched_at=timezone.now())
    sent = []
    for run_id in picks:
        ok = send_task(SCORE_RUN_TASK, run_id)
        if not ok:  # its turn comes again at the next catch-up
            ScoreRun.objects.filter(pk=run_id, status=ScoreRun.Status.QUEUED).update(
                dispatched_at=None
            )
        sent.append((run_id, ok))
    return sent


def dispatch_waiting() -> None:
    """Every lab with a run waiting for its turn gets its turn (runs whose lab lost a
    worker's message or whose finish was not followed by a dispatch)."""
    labs = (
        ScoreRun.objects.filter(status=ScoreRun.Status.QUEUED, dispatched_at__isnull=True)
        .values_list("project__lab_id", flat=True)
        .distinct()
    )
    for lab_id in list(labs):
        dispatch_runs(lab_id)


# A manager's request for a run, refused: ask again in ``retry_after`` seconds.
RunRefused = Refused


def ask_for_run(
    *,
    project,
    scheme: str,
    trigger: str = ScoreRun.Trigger.AUTO,
    method: str | None = None,
    bootstrap: int | None = None,
    intervals: str | None = None,
) -> tuple[ScoreRun, bool]:
    """The scheme's queued run, or a new one waiting for its lab's turn: (run, created).

    At most one run of a scheme is queued: it reads the answers as of its start, so a
    trigger (a session's end, a logout, an exclusion, a tick) while it waits adds none. A
    manager's request asking for other parameters changes the queued run to them (the
    newest request wins: it has not started); a request that would add a run past
    SCORING_MANUAL_RUNS_PER_HOUR in the project is refused (RunRefused, with a retry time).
    ValueError for parameters past the limits."""
    manual = trigger == ScoreRun.Trigger.MANUAL
    method, parameters = run_parameters(
        project=project, scheme=scheme, method=method, bootstrap=bootstrap, intervals=intervals
    )
    with transaction.atomic():
        # Requests for the same project queue one after another.
        ScoringState.objects.select_for_update().filter(project=project).first()
        queued = (
            ScoreRun.objects.filter(project=project, scheme=scheme, status=ScoreRun.Status.QUEUED)
            .exclude(trigger=ScoreRun.Trigger.COMMAND)
            .order_by("created_at", "pk")
            .first()
        )
        if queued is not None:
            if not manual or (queued.method, queued.parameters) == (method, parameters):
                return queued, False
            taken = ScoreRun.objects.filter(pk=queued.pk, status=ScoreRun.Status.QUEUED)
            if taken.update(method=method, parameters=parameters, trigger=trigger):
                return ScoreRun.objects.get(pk=queued.pk), False
        if manual:
            admit_or_refuse(
                "bws-manual-runs",
                project.pk,
                settings.SCORING_MANUAL_RUNS_PER_HOUR,
                "SCORING_MANUAL_RUNS_PER_HOUR",
                "runs",
            )
        run = request_run(
            project=project,
            scheme=scheme,
            method=method,
            bootstrap=parameters["bootstrap"],
            trigger=trigger,
            intervals=parameters["interval_method"],
            wait_turn=True,
        )
    return run, True


def note_answers(project_id: int) -> None:
    """Record that a project's answers changed. Called after an answer is committed; costs
    at most one small UPDATE and never touches the broker: the catch-up (every
    SCORING_CHECK_INTERVAL seconds) queues the recomputation once the session has ended,
    or once the oldest unscored answer is nearly SCORING_MAX_STALENESS old."""
    now = timezone.now()
    # Within a burst the row was just written: skip the write (one indexed UPDATE that
    # matches nothing) unless the last write is older than a quarter of the session gap.
    recent = now - timedelta(seconds=min(5.0, settings.SCORING_SESSION_GAP / 4))
    ScoringState.objects.filter(project_id=project_id).filter(
        Q(dirty=False)
        | Q(last_answer_at__isnull=True)
        | Q(last_answer_at__lt=recent)
        | Q(unscored_since__isnull=True)
    ).update(
        last_answer_at=now,
        dirty=True,
        unscored_since=Coalesce(F("unscored_since"), Value(now, output_field=DateTimeField())),
    )


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
    """Clear the project's dirty flag and make sure each automatic BWS scheme has a run
    queued (a scheme with one queued already gets none), then queue the agreement report
    (answers arriving from now on set the flag again).

    When the broker cannot be reached the runs stay queued and the flag is set again, so
    the catch-up starts over once the broker is back: nothing is left stale."""
    now = timezone.now()
    ScoringState.objects.filter(project=project).update(
        dirty=False, unscored_since=None, scheduled_at=now
    )
    schemes = [s.name for s in project.settings.bws_schemes]
    auto = [name for name in schemes if scoring_options(project, name)["auto_compute"]]
    new = []
    for name in auto:
        run, created = ask_for_run(project=project, scheme=name, trigger=ScoreRun.Trigger.AUTO)
        if created:
            new.append(run.pk)
    if not all(ok for _, ok in dispatch_runs(project.lab_id)):
        # The runs wait in the database; the catch-up starts over (the agreement report
        # included) once the broker is back, finding the runs queued.
        ScoringState.objects.filter(project=project).update(
            dirty=True,
            scheduled_at=None,
            broker_failed_at=now,
            unscored_since=Coalesce(F("unscored_since"), Value(now, output_field=DateTimeField())),
        )
        return "the task queue could not be reached"
    # The other apps (agreement) bring their own figures up to date on this signal.
    events.answers_settled.send(sender=type(project), project=project)
    return f"queued {len(new)} runs"


def due_projects(now) -> list[int]:
    """Dirty projects whose session ended (no answer for SCORING_SESSION_GAP seconds) or
    whose oldest unscored answer would otherwise be SCORING_MAX_STALENESS old before a run
    that reads it has finished: the run starts two catch-up intervals (the catch-up's tick)
    plus the duration of the project's last runs (run_seconds) ahead of the bound."""
    ended = now - timedelta(seconds=settings.SCORING_SESSION_GAP)
    lead = max(0.0, settings.SCORING_MAX_STALENESS - 2 * settings.SCORING_CHECK_INTERVAL)
    dirty = ScoringState.objects.filter(dirty=True)
    due = set(
        dirty.filter(
            Q(last_answer_at__isnull=True)
            | Q(last_answer_at__lt=ended)
            | Q(unscored_since__lte=now - timedelta(seconds=lead))
        ).values_list("project_id", flat=True)
    )
    # The others: due sooner by the time their runs take.
    waiting = dict(
        dirty.exclude(project_id__in=due)
        .filter(unscored_since__isnull=False)
        .values_list("project_id", "unscored_since")
    )
    for project_id, seconds in run_seconds(list(waiting), now).items():
        if waiting[project_id] <= now - timedelta(seconds=max(0.0, lead - seconds)):
            due.add(project_id)
    return sorted(due)


def run_seconds(project_ids: list[int], now) -> dict[int, float]:
    """How long bringing each project's scores up to date takes, from its last finished
    automatic runs: the sum over its schemes of the newest run's duration (a lab's runs go
    to the scoring queue one at a time). Projects without a finished run are left out."""
    if not project_ids:
        return {}
    newest: dict[tuple[int, str], float] = {}
    since = now - timedelta(hours=6)
    finished = (
        ScoreRun.objects.filter(
            project_id__in=project_ids,
            trigger=ScoreRun.Trigger.AUTO,
            status=ScoreRun.Status.OK,
            started_at__isnull=False,
            finished_at__gte=since,
        )
        .order_by("-finished_at")
        .values_list("project_id", "scheme", "started_at", "finished_at")
    )
    for project_id, scheme, started, done in finished[: 20 * len(project_ids)]:
        newest.setdefault((project_id, scheme), (done - started).total_seconds())
    totals: dict[int, float] = {}
    for (project_id, _), seconds in newest.items():
        totals[project_id] = totals.get(project_id, 0.0) + seconds
    return totals


def schedule_dirty_projects() -> int:
    """The catch-up, run by beat every SCORING_CHECK_INTERVAL seconds and when a worker
    starts: recompute every due project (due_projects); give waiting runs their lab's
    turn; queue again runs whose message was lost; requeue runs whose worker is gone (past
    SCORING_RUN_TIMEOUT). Returns the projects started."""
    now = timezone.now()
    count = 0
    for project_id in due_projects(now):
        project = Project.objects.filter(pk=project_id).first()
        if project is not None and claim_recompute(project_id):
            start_recompute(project)
            count += 1
    dispatch_waiting()
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
    return bool(
        ScoringState.objects.filter(project_id=project_id, dirty=True).update(
            dirty=False, unscored_since=None
        )
    )


def resend_stale_runs(now) -> None:
    """A run sent more than SCORING_SCHEDULE_STALE seconds ago and not started is sent
    again, at most once per that period (a broker restarted without its data loses
    messages). A duplicate costs nothing: a run already done is not computed again."""
    stale = now - timedelta(seconds=settings.SCORING_SCHEDULE_STALE)
    for run_id in ScoreRun.objects.filter(
        status=ScoreRun.Status.QUEUED, dispatched_at__lt=stale
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
    # Sent again at once: they keep their lab's turn.
    ScoreRun.objects.filter(pk__in=requeued).update(
        status=ScoreRun.Status.QUEUED,
        error=f"requeued: the worker stopped during it ({why})",
        dispatched_at=timezone.now(),
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
