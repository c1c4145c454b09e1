"""How old a scheme's scores are, for the dashboard: the newest answer the shown run read,
the oldest answer no run has read yet, and by when a run that reads it starts."""

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from .models import ScoreRun, ScoringState


@dataclass(frozen=True)
class Freshness:
    """``age``: seconds from the newest answer the run read to now (None without one);
    ``unscored_since``: the oldest answer no queued or started run reads; ``due_by``:
    when a run reading it starts at the latest; ``automatic``: the scheme is scored after
    answers by itself (scoring.auto_compute)."""

    age: float | None
    read_until: datetime | None
    unscored_since: datetime | None
    due_by: datetime | None
    max_staleness: float
    automatic: bool


def scores_freshness(project, run: ScoreRun | None, *, automatic: bool) -> Freshness:
    """The freshness of ``run``, the scores shown (a due time only when ``automatic``)."""
    now = timezone.now()
    read_until = run.data_changed_at or run.finished_at if run is not None else None
    unscored = (
        ScoringState.objects.filter(project=project)
        .values_list("unscored_since", flat=True)
        .first()
    )
    bound = settings.SCORING_MAX_STALENESS
    due = unscored + timedelta(seconds=bound) if unscored and automatic else None
    return Freshness(
        age=(now - read_until).total_seconds() if read_until else None,
        read_until=read_until,
        unscored_since=unscored,
        due_by=due,
        max_staleness=bound,
        automatic=automatic,
    )
