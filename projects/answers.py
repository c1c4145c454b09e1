"""Storing answers: validated per scheme, once per client submission id, on a unit the
annotator holds a live lease on (completing it) or answered before (changing the answer)."""

import uuid
from dataclasses import dataclass

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from .models import Annotation, Assignment, Project, Submission, Unit
from .queue import QueuePolicy
from .validation import (
    MAX_MILLISECONDS,
    AnswerError,
    AnswerLimits,
    UnitContext,
    validate_answers,
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

    def details(self) -> dict:
        body: dict = {"detail": str(self)}
        if self.stored:
            body["annotation_ids"] = [a.pk for a in self.stored]
            body["unit_id"] = self.stored[0].unit_id
            body["unit"] = self.stored[0].unit.external_id
        return body


@dataclass(frozen=True)
class SubmitResult:
    unit: Unit
    annotations: list[Annotation]
    replayed: bool  # True when the client id was seen before: nothing new was stored


def unit_context(unit: Unit) -> UnitContext:
    if unit.bws_tuple_id is not None:
        return UnitContext(items=list(unit.bws_tuple.item_ids), data=_instance_data(unit))
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
        return _submit(project, user, unit_id, answers, client_id, time_taken_ms)
    except IntegrityError:
        # Two copies of one submission raced: the other stored it; answer as a retry would.
        if client_id is None:
            raise
        previous = (
            Submission.objects.filter(annotator=user, client_id=client_id)
            .select_related("unit__bws_tuple", "unit__instance")
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
            f"this client_id was already used for an answer to unit {unit.external_id}; "
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
def _submit(project, user, unit_id, answers, client_id, time_taken_ms) -> SubmitResult:
    if client_id is not None:
        previous = (
            Submission.objects.filter(annotator=user, client_id=client_id)
            .select_related("unit__bws_tuple", "unit__instance")
            .first()
        )
        if previous is not None:
            return _replay(project, previous, user, unit_id, answers)
    assignment = (
        Assignment.objects.select_for_update(of=("self",))
        .select_related("unit__bws_tuple", "unit__instance")
        .filter(project=project, unit_id=unit_id, annotator=user)
        .first()
    )
    if assignment is None:
        if not Unit.objects.filter(project=project, pk=unit_id).exists():
            raise AnswerError({"unit": f"no unit {unit_id} in this project"})
        raise SubmitRefused(NOT_RESERVED)
    unit = assignment.unit
    now = timezone.now()
    reserved = assignment.status == Assignment.Status.RESERVED
    if reserved and (assignment.leased_until is None or assignment.leased_until <= now):
        raise SubmitRefused(NOT_RESERVED)
    cleaned = validate_answers(project.schemes, answers, unit_context(unit), limits=answer_limits())
    if reserved:
        _check_person_cap(project, user)
        assignment.status = Assignment.Status.COMPLETED
        assignment.completed_at = now
        assignment.leased_until = None
        assignment.save(update_fields=["status", "completed_at", "leased_until"])
        Unit.objects.filter(pk=unit.pk).update(completed=F("completed") + 1)
    index_of = _item_indices(project, unit, cleaned)
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
                time_taken_ms=time_taken_ms,
            )
        )
    # One statement for every scheme: insert, or change an earlier answer in place.
    Annotation.objects.bulk_create(
        rows,
        update_conflicts=True,
        unique_fields=["unit", "annotator", "scheme"],
        update_fields=["value", "best_index", "worst_index", "time_taken_ms", "updated_at"],
    )
    stored = list(
        Annotation.objects.filter(unit=unit, annotator=user, scheme__in=list(cleaned))
        .select_related("annotator", "unit")
        .order_by("scheme")
    )
    if client_id is not None:
        Submission.objects.create(annotator=user, client_id=client_id, unit=unit)
    transaction.on_commit(lambda: _answers_changed(project.pk))
    return SubmitResult(unit, stored, replayed=False)


def _check_person_cap(project: Project, user) -> None:
    """max_annotations_per_user counts completed units (the queue holds it when it hands
    units out; this holds it when the setting was lowered since)."""
    cap = QueuePolicy.of(project).max_per_user
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


def _answers_changed(project_id: int) -> None:
    from bws.services import note_answers

    note_answers(project_id)


def _item_indices(project: Project, unit: Unit, cleaned: dict) -> dict[str, int]:
    if unit.bws_tuple_id is None:
        return {}
    return dict(zip(unit.bws_tuple.item_ids, unit.bws_tuple.item_indices, strict=True))
