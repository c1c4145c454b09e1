"""The participants of a project as their managers read them: in pages, filtered by where
they stand and by the start of their panel id, with the ordinary units each answered and
their outcome (the members page, the API and the CSV download share these)."""

from __future__ import annotations

import io
from dataclasses import dataclass

from django.core.paginator import Page, Paginator
from django.db.models import Count, IntegerField, OuterRef, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce

from annotation.models import Assignment
from crowds.models import Participant
from crowds.participants import EXTERNAL_ID, stage
from projects import spreadsheet
from projects.models import Project

PAGE_SIZE = 50
# Where a participant stands, as a filter: still going, or how their part ended.
STATES = {
    "active": "Still taking part",
    "completed": "Completed",
    "partial": "No more work",
    "screened_out": "Screened out",
}


def with_answered(participants: QuerySet[Participant]) -> QuerySet[Participant]:
    """The participants, each with ``answered_count``: the ordinary units they answered
    (gold units, the training's and the attention checks, not counted), in the same query."""
    done = (
        Assignment.objects.filter(
            project=OuterRef("project_id"),
            annotator=OuterRef("user_id"),
            status=Assignment.Status.COMPLETED,
            unit__is_gold=False,
        )
        .order_by()
        .values("annotator")
        .annotate(n=Count("id"))
        .values("n")
    )
    return participants.annotate(
        answered_count=Coalesce(Subquery(done, output_field=IntegerField()), Value(0))
    )


def filtered(project: Project, state: str = "", id_prefix: str = "") -> QuerySet[Participant]:
    """The project's participants in the order they came, with their answered units; only
    those in ``state`` (a key of STATES) and whose panel id starts with ``id_prefix``."""
    participants = Participant.objects.filter(project=project)
    if state == "active":
        participants = participants.filter(outcome=Participant.Outcome.NONE)
    elif state in STATES:
        participants = participants.filter(outcome=state)
    if id_prefix:
        participants = participants.filter(external_id__startswith=id_prefix)
    return with_answered(participants.select_related("user", "project")).order_by(
        "created_at", "id"
    )


@dataclass(frozen=True)
class ParticipantQuery:
    """A manager's filter of the participants list, read from the page's query string."""

    state: str = ""
    id_prefix: str = ""

    @classmethod
    def of(cls, query) -> ParticipantQuery:
        state = query.get("participant_state", "")
        prefix = query.get("participant_id", "").strip()
        return cls(
            state=state if state in STATES else "",
            id_prefix=prefix if EXTERNAL_ID.fullmatch(prefix) else "",
        )

    def query_string(self) -> str:
        parts = []
        if self.state:
            parts.append(f"participant_state={self.state}")
        if self.id_prefix:
            parts.append(f"participant_id={self.id_prefix}")
        return "&".join(parts)


def page_of_rows(project: Project, query, number) -> tuple[Page, list[dict]]:
    """One page of the members list's participants: id, when they came, where they stand
    (with the units answered), and the link's other parameters (for managers only)."""
    chosen = ParticipantQuery.of(query)
    page = Paginator(filtered(project, chosen.state, chosen.id_prefix), PAGE_SIZE).get_page(number)
    rows = [{"participant": p, "stage": stage(p), "username": p.user.username} for p in page]
    return page, rows


CSV_COLUMNS = [
    "external_id",
    "username",
    "outcome",
    "outcome_at",
    "outcome_reason",
    "answered",
    "quota",
    "training",
    "arrived_at",
    "last_seen_at",
    "consent_at",
    "params",
]


def csv_text(project: Project) -> str:
    """Every participant of the project, one row each, with their outcome and the ordinary
    units they answered (the managers' download)."""
    block = project.settings.participants
    quota = block.units_per_participant if block is not None else None
    out = io.StringIO()
    writer = spreadsheet.writer(out)
    writer.writerow(CSV_COLUMNS)
    for p in filtered(project).iterator(chunk_size=500):
        writer.writerow(
            [
                p.external_id,
                p.user.username,
                p.outcome,
                p.outcome_at.isoformat() if p.outcome_at else "",
                p.outcome_reason,
                p.answered_count,
                "" if quota is None else quota,
                p.training,
                p.created_at.isoformat(),
                p.last_seen_at.isoformat() if p.last_seen_at else "",
                p.consent_at.isoformat() if p.consent_at else "",
                "&".join(f"{key}={value}" for key, value in p.params.items()),
            ]
        )
    return out.getvalue()


def state_choices() -> list[tuple[str, str]]:
    return [("", "Everyone"), *STATES.items()]
