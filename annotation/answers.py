"""Storing answers, the one write path of the web pages, the API and the operator's import:
validated per scheme; from a person once per client submission id, on a unit they hold a
live lease on (completing it) or answered before (changing the answer); from an import all
or nothing, within each unit's cap and never over someone's live lease. Every store is
announced (projects.events.answers_changed) once it commits, so scoring and agreement see
the answers as new."""

import logging
import uuid
from dataclasses import dataclass
from functools import cache

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from annotation.models import Annotation, Assignment, Submission
from annotation.queue import person_cap
from projects import events, hot_sql
from projects.models import Instance, Project, Removal, Unit
from projects.schemes.base import AnswerLimits, UnitContext
from projects.validation import MAX_MILLISECONDS, AnswerError, validate_answers

security_log = logging.getLogger("annolab.security")

FINAL_ANSWER = "this answer is final: it cannot be changed once given; ask for the next unit"

REMOVED = (
    "you were removed from this project by its managers, so your answers are no longer "
    "taken; nothing was stored"
)
NOT_RESERVED = (
    "this unit is not reserved for you (its lease ran out or it was never handed out); "
    "ask for the next unit"
)


class SubmitRefused(ValueError):
    """An answer that cannot be stored for a reason other than its values (HTTP 409).
    When a client id was used before, names the answers stored under it."""

    def __init__(self, message: str, *, stored: list[Annotation] | None = None):
        super().__init__(message)
        self.stored = stored or []

    def log(self, project, user, unit_id) -> None:
        """Say who tried what, for a refusal that is an attempt rather than a mishap."""

    def details(self) -> dict:
        body: dict = {"detail": str(self)}
        if self.stored:
            body["annotation_ids"] = [a.pk for a in self.stored]
            body["unit_id"] = self.stored[0].unit_id
            body["unit"] = self.stored[0].unit.external_id
        return body


class FinalAnswerRefused(SubmitRefused):
    """A change to a final answer (answer_is_final)."""

    def log(self, project, user, unit_id) -> None:
        security_log.warning(
            "refused: %s (user %s) tried to change their final answer to unit %s of project %s",
            user.get_username(),
            user.pk,
            unit_id,
            project.slug,
        )


def answer_is_final(project: Project, unit: Unit) -> bool:
    """Whether an answer given to this unit may no longer change. A gold unit's answer was
    graded (the training's feedback may have shown the expected one), so a change would pass
    what the first answer failed; and where attention checks are mixed in, every answer is
    final, so that refusing a check's change does not tell the check apart."""
    if unit.is_gold:
        return True
    checks = project.settings.gold
    return checks is not None and checks.attention_rate > 0


@dataclass(frozen=True)
class SubmitResult:
    unit: Unit
    annotations: list[Annotation]
    replayed: bool  # True when the client id was seen before: nothing new was stored


def unit_context(unit: Unit) -> UnitContext:
    if unit.item_ids:
        return UnitContext(items=list(unit.item_ids), data=_instance_data(unit))
    return UnitContext(data=_instance_data(unit))


def answer_limits() -> AnswerLimits:
    return AnswerLimits(
        max_text=settings.ANSWER_MAX_TEXT_LENGTH,
        max_objects=settings.ANSWER_MAX_OBJECTS,
        max_depth=settings.ANSWER_MAX_DEPTH,
        max_bytes=settings.ANSWER_MAX_BYTES,
    )


def _instance_data(unit: Unit) -> dict:
    return dict(unit.instance.data) if unit.instance_id is not None else {}


def _stored(unit: Unit, user) -> list[Annotation]:
    return list(
        Annotation.objects.filter(unit=unit, annotator=user)
        .select_related("annotator", "unit")
        .order_by("scheme")
    )


def submit_answers(
    *,
    project: Project,
    user,
    unit_id: int,
    answers: dict,
    client_id: uuid.UUID | str | None = None,
    time_taken_ms: int | None = None,
    source: str = "web",
) -> SubmitResult:
    """Validate and store one submission on a unit the person holds a live lease on, or
    changes their own earlier answer to. A repeated client_id with the same answers on the
    same unit returns the stored answers; with other answers or another unit it is refused."""
    if client_id is not None and not isinstance(client_id, uuid.UUID):
        try:
            client_id = uuid.UUID(str(client_id))
        except ValueError:
            raise AnswerError({"client_id": "must be a UUID"}) from None
    if time_taken_ms is not None and not (
        isinstance(time_taken_ms, int)
        and not isinstance(time_taken_ms, bool)
        and 0 <= time_taken_ms <= MAX_MILLISECONDS
    ):
        raise AnswerError(
            {"time_taken_ms": f"give a whole number of milliseconds from 0 to {MAX_MILLISECONDS}"}
        )
    try:
        return _submit(project, user, unit_id, answers, client_id, time_taken_ms, source)
    except IntegrityError:
        # Two copies of one submission raced: the other stored it; answer as a retry would.
        if client_id is None:
            raise
        previous = (
            Submission.objects.filter(annotator=user, client_id=client_id)
            .select_related("unit__instance")
            .first()
        )
        if previous is None:
            raise
        return _replay(project, previous, user, unit_id, answers)


def _replay(project, previous: Submission, user, unit_id, answers) -> SubmitResult:
    """A client id seen before: the stored answers when this is the same submission again."""
    unit = previous.unit
    stored = _stored(unit, user)
    if str(unit.pk) != str(unit_id):
        raise SubmitRefused(
            f"this client_id was already used for an answer to unit {unit.pk}; "
            "send a new client_id with each new answer",
            stored=stored,
        )
    try:
        cleaned = validate_answers(
            project.schemes, answers, unit_context(unit), limits=answer_limits()
        )
    except AnswerError:
        cleaned = None
    if cleaned != {a.scheme: a.value for a in stored}:
        raise SubmitRefused(
            "this client_id was already used for different answers to this unit; "
            "send a new client_id with each new answer",
            stored=stored,
        )
    return SubmitResult(unit, stored, replayed=True)


@transaction.atomic
def _submit(project, user, unit_id, answers, client_id, time_taken_ms, source) -> SubmitResult:
    now = timezone.now()
    assignment = _held_assignment(project, user, unit_id)
    try:
        if assignment is None:
            if not Unit.objects.filter(project=project, pk=unit_id).exists():
                raise AnswerError({"unit": f"no unit {unit_id} in this project"})
            if Removal.objects.filter(project=project, user=user).exists():
                _refuse_removed(project, user, unit_id)
            raise SubmitRefused(NOT_RESERVED)
        if assignment.removed:
            _refuse_removed(project, user, unit_id)
        unit = assignment.unit
        reserved = assignment.status == Assignment.Status.RESERVED
        if not reserved and answer_is_final(project, unit):
            raise FinalAnswerRefused(FINAL_ANSWER)
        if reserved and (assignment.leased_until is None or assignment.leased_until <= now):
            raise SubmitRefused(NOT_RESERVED)
        cleaned = validate_answers(
            project.schemes, answers, unit_context(unit), limits=answer_limits()
        )
        if reserved:
            _check_person_cap(project, user)
    except (AnswerError, SubmitRefused) as exc:
        # A client id seen before is answered as a retry, whatever this copy says.
        previous = _previous_submission(user, client_id)
        if previous is None:
            if isinstance(exc, SubmitRefused):
                exc.log(project, user, unit_id)
            raise
        return _replay(project, previous, user, unit_id, answers)
    # The client id is claimed before anything is written: taken already, this is a
    # retry (or a reuse), answered from what is stored under it.
    if client_id is not None and not _claim_client_id(user, client_id, unit, now):
        previous = _previous_submission(user, client_id)
        return _replay(project, previous, user, unit_id, answers)
    if reserved:
        _complete(assignment, now)
    rows = answer_rows(project, unit, user, cleaned, time_taken_ms=time_taken_ms)
    # One statement for every scheme: insert, or change an earlier answer in place (which
    # is answered now, whatever an import said of the earlier one).
    _upsert_answers(rows, now)
    if reserved and all(row.pk is not None for row in rows):
        # A first answer (an earlier one would have completed the assignment): the rows
        # inserted, their ids returned by the insert, are what is stored; no read back.
        stored = sorted(rows, key=lambda row: row.scheme)
    else:
        stored = list(
            Annotation.objects.filter(unit=unit, annotator=user, scheme__in=list(cleaned))
            .select_related("annotator", "unit")
            .order_by("scheme")
        )
    events.announce_answers(
        project_id=project.pk, schemes=list(cleaned), count=len(rows), source=source
    )
    return SubmitResult(unit, stored, replayed=False)


def _refuse_removed(project, user, unit_id) -> None:
    """A person the managers removed answers nothing more (on an open project too)."""
    security_log.warning(
        "refused an answer from %s to unit %s of %s: removed from the project",
        user.username,
        unit_id,
        project.slug,
    )
    raise SubmitRefused(REMOVED)


def _previous_submission(user, client_id) -> Submission | None:
    if client_id is None:
        return None
    return (
        Submission.objects.filter(annotator=user, client_id=client_id)
        .select_related("unit__instance")
        .first()
    )


# The statements of a first answer are the ORM's (the same on every request), written
# out once (projects.hot_sql): building them through the ORM cost more CPU than running
# them.


@cache
def _held_sql(vendor: str) -> str:
    q = hot_sql.quote
    return (
        f"SELECT {hot_sql.columns(Assignment, 'a')}, {hot_sql.columns(Unit, 'u')}, "
        f"{hot_sql.columns(Instance, 'i')}, EXISTS(SELECT 1 FROM {q(Removal._meta.db_table)} r "
        f"WHERE r.{q('project_id')} = a.{q('project_id')} "
        f"AND r.{q('user_id')} = a.{q('annotator_id')}) FROM {q(Assignment._meta.db_table)} a "
        f"INNER JOIN {q(Unit._meta.db_table)} u ON u.{q('id')} = a.{q('unit_id')} "
        f"LEFT OUTER JOIN {q(Instance._meta.db_table)} i ON i.{q('id')} = u.{q('instance_id')} "
        f"WHERE a.{q('project_id')} = %s AND a.{q('unit_id')} = %s "
        f"AND a.{q('annotator_id')} = %s LIMIT 1" + hot_sql.for_update("a")
    )


def _held_assignment(project: Project, user, unit_id) -> Assignment | None:
    """The person's assignment of this unit in the project, locked, with its unit and the
    unit's instance; None if they were never handed it."""
    unit_id = hot_sql.value(Assignment, "unit", unit_id)
    if not -(2**63) <= unit_id < 2**63:
        return None  # no key is that large (the ORM's lookup matches nothing too)
    params = [project.pk, unit_id, user.pk]
    with connection.cursor() as cursor:
        cursor.execute(_held_sql(connection.vendor), params)
        row = cursor.fetchone()
    if row is None:
        return None
    a, u = hot_sql.width(Assignment), hot_sql.width(Unit)
    assignment = hot_sql.load(Assignment, row[:a])
    assignment.unit = hot_sql.load(Unit, row[a : a + u])
    assignment.unit.instance = hot_sql.load(Instance, row[a + u : -1])
    assignment.removed = bool(row[-1])  # the person was removed from the project since
    return assignment


@cache
def _claim_sql(vendor: str) -> str:
    q = hot_sql.quote
    return (
        f"INSERT INTO {q(Submission._meta.db_table)} "
        f"({q('annotator_id')}, {q('client_id')}, {q('unit_id')}, {q('created_at')}) "
        f"VALUES (%s, %s, %s, %s) ON CONFLICT ({q('annotator_id')}, {q('client_id')}) DO NOTHING"
    )


def _claim_client_id(user, client_id: uuid.UUID, unit: Unit, now) -> bool:
    """Store the client id of this submission; False when the person used it before (the
    unique constraint on annotator and client id; a copy racing in another transaction
    waits for it to end, then finds the id taken)."""
    params = [
        user.pk,
        hot_sql.value(Submission, "client_id", client_id),
        unit.pk,
        hot_sql.value(Submission, "created_at", now),
    ]
    with connection.cursor() as cursor:
        cursor.execute(_claim_sql(connection.vendor), params)
        return cursor.rowcount == 1


@cache
def _complete_sql(vendor: str) -> tuple[str, str]:
    q = hot_sql.quote
    assignment = (
        f"UPDATE {q(Assignment._meta.db_table)} SET {q('status')} = %s, "
        f"{q('completed_at')} = %s, {q('leased_until')} = NULL WHERE {q('id')} = %s"
    )
    unit = (
        f"UPDATE {q(Unit._meta.db_table)} SET {q('completed')} = {q('completed')} + 1 "
        f"WHERE {q('id')} = %s"
    )
    return assignment, unit


def _complete(assignment: Assignment, now) -> None:
    """The assignment completed now (its lease ended), and counted in its unit."""
    assignment.status = Assignment.Status.COMPLETED
    assignment.completed_at = now
    assignment.leased_until = None
    update_assignment, update_unit = _complete_sql(connection.vendor)
    with connection.cursor() as cursor:
        cursor.execute(
            update_assignment,
            [
                assignment.status.value,
                hot_sql.value(Assignment, "completed_at", now),
                assignment.pk,
            ],
        )
        cursor.execute(update_unit, [assignment.unit_id])


ANSWER_COLUMNS = (
    "project_id",
    "unit_id",
    "annotator_id",
    "scheme",
    "value",
    "best_index",
    "worst_index",
    "time_taken_ms",
    "created_at",
    "updated_at",
    "answered_at",
)
ANSWER_CHANGES = (
    "value",
    "best_index",
    "worst_index",
    "time_taken_ms",
    "updated_at",
    "answered_at",
)


@cache
def _upsert_sql(vendor: str, n_rows: int, returning: bool) -> str:
    q = hot_sql.quote
    row = f"({', '.join(['%s'] * len(ANSWER_COLUMNS))})"
    return (
        f"INSERT INTO {q(Annotation._meta.db_table)} "
        f"({', '.join(q(c) for c in ANSWER_COLUMNS)}) VALUES {', '.join([row] * n_rows)} "
        f"ON CONFLICT ({q('unit_id')}, {q('annotator_id')}, {q('scheme')}) DO UPDATE SET "
        + ", ".join(f"{q(c)} = EXCLUDED.{q(c)}" for c in ANSWER_CHANGES)
        + (f" RETURNING {q('id')}, {q('scheme')}" if returning else "")
    )


def _upsert_answers(rows: list[Annotation], now) -> None:
    """Insert the answers, or change the person's earlier answers to the same schemes in
    place; the rows get their ids where the database returns them."""
    returning = connection.features.can_return_rows_from_bulk_insert
    params = []
    for row in rows:
        row.created_at = row.updated_at = now
        for column in ANSWER_COLUMNS:
            params.append(hot_sql.value(Annotation, column, getattr(row, column)))
    with connection.cursor() as cursor:
        cursor.execute(_upsert_sql(connection.vendor, len(rows), returning), params)
        ids = dict((scheme, pk) for pk, scheme in cursor.fetchall()) if returning else {}
    for row in rows:
        row.pk = ids.get(row.scheme)
        row._state.adding, row._state.db = row.pk is None, connection.alias


def _check_person_cap(project: Project, user) -> None:
    """max_annotations_per_user counts completed units (the queue holds it when it hands
    units out; this holds it when the setting was lowered since)."""
    cap = person_cap(project, user)
    if cap is None:
        return
    done = Assignment.objects.filter(
        project=project, annotator=user, status=Assignment.Status.COMPLETED
    ).count()
    if done >= cap:
        raise SubmitRefused(
            f"you have answered {done} units, the most this project takes from one person "
            f"(max_annotations_per_user = {cap})"
        )


def answer_rows(project, unit: Unit, user, cleaned: dict, **fields) -> list[Annotation]:
    """Annotation objects for one person's cleaned answers to a unit; a best-worst answer
    also keeps its chosen items as Item.index values."""
    index_of = dict(zip(unit.item_ids, unit.item_indices, strict=True))
    rows = []
    for scheme, value in cleaned.items():
        bws = isinstance(value, dict) and set(value) == {"best", "worst"}
        rows.append(
            Annotation(
                project=project,
                unit=unit,
                annotator=user,
                scheme=scheme,
                value=value,
                best_index=index_of[value["best"]] if bws else None,
                worst_index=index_of[value["worst"]] if bws else None,
                **fields,
            )
        )
    return rows


# --------------------------------------------------------------------------- imports
