"""The queue's questions about crowd participants (annotation.people), answered here:
whether a person is a participant of the project, and a participant's requests taking turns.
Registered in crowds' AppConfig.ready()."""

from functools import cache

from django.db import connection

from annotation.models import Assignment
from projects import hot_sql
from projects.models import Project

from .models import Participant


def is_participant(project: Project, user) -> bool:
    """Whether the user is a participant of this project: as the participant middleware
    found it for this request (crowds.participants.ParticipantScope), else asked."""
    known = getattr(user, "participant_project_id", None)
    if known is not None:
        return known == project.pk
    return Participant.objects.filter(project=project, user=user).exists()


def take_turn(project: Project, user) -> int | None:
    """A participant's requests for a unit take turns: their participant row is locked
    until this transaction ends, so two requests at once cannot each reserve a unit (a
    participant holds one lease at a time). The same statement counts the units they were
    given (the cap's count, in the statement the lock costs). Only on PostgreSQL (SQLite
    serialises write transactions already) and only for a participant's own session (known
    without a query); None otherwise."""
    if connection.vendor != "postgresql":
        return None
    if getattr(user, "participant_project_id", None) != project.pk:
        return None
    with connection.cursor() as cursor:
        cursor.execute(_take_turn_sql(connection.vendor), [project.pk, user.pk])
        row = cursor.fetchone()
    return None if row is None else row[0]


@cache
def _take_turn_sql(vendor: str) -> str:
    q = hot_sql.quote
    return (
        f"SELECT (SELECT COUNT(*) FROM {q(Assignment._meta.db_table)} a "
        f"WHERE a.{q('project_id')} = p.{q('project_id')} "
        f"AND a.{q('annotator_id')} = p.{q('user_id')}) "
        f"FROM {q(Participant._meta.db_table)} p "
        f"WHERE p.{q('project_id')} = %s AND p.{q('user_id')} = %s FOR UPDATE OF p"
    )
