"""Storing answers: validated per scheme, once per client submission id, completing the
annotator's assignment of the unit."""

import uuid
from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from .models import Annotation, Assignment, Project, Submission, Unit
from .queue import QueuePolicy
from .validation import AnswerError, UnitContext, validate_answers


class SubmitRefused(ValueError):
    """An answer that cannot be stored for a reason other than its values (HTTP 409)."""


@dataclass(frozen=True)
class SubmitResult:
    unit: Unit
    annotations: list[Annotation]
    replayed: bool  # True when the client id was seen before: nothing new was stored


def unit_context(unit: Unit) -> UnitContext:
    if unit.bws_tuple_id is not None:
        return UnitContext(items=list(unit.bws_tuple.item_ids), data=_instance_data(unit))
    return UnitContext(data=_instance_data(unit))


def _instance_data(unit: Unit) -> dict:
    return dict(unit.instance.data) if unit.instance_id is not None else {}


def _stored(unit: Unit, user) -> list[Annotation]:
    return list(Annotation.objects.filter(unit=unit, annotator=user).order_by("scheme"))


def submit_answers(
    *,
    project: Project,
    user,
    unit_id: int,
    answers: dict,
    client_id: uuid.UUID | str | None = None,
    time_taken_ms: int | None = None,
) -> SubmitResult:
    """Validate and store one submission; a repeated client_id returns the stored answers."""
    if client_id is not None and not isinstance(client_id, uuid.UUID):
        try:
            client_id = uuid.UUID(str(client_id))
        except ValueError:
            raise AnswerError({"client_id": "must be a UUID"}) from None
    try:
        return _submit(project, user, unit_id, answers, client_id, time_taken_ms)
    except IntegrityError:
        # Two copies of one submission raced: the other stored it; report it as a replay.
        if client_id is None:
            raise
        previous = Submission.objects.filter(annotator=user, client_id=client_id).first()
        if previous is None:
            raise
        return SubmitResult(previous.unit, _stored(previous.unit, user), replayed=True)


@transaction.atomic
def _submit(project, user, unit_id, answers, client_id, time_taken_ms) -> SubmitResult:
    if client_id is not None:
        previous = (
            Submission.objects.filter(annotator=user, client_id=client_id)
            .select_related("unit")
            .first()
        )
        if previous is not None:
            return SubmitResult(previous.unit, _stored(previous.unit, user), replayed=True)
    assignment = (
        Assignment.objects.select_for_update(of=("self",))
        .select_related("unit__bws_tuple", "unit__instance")
        .filter(project=project, unit_id=unit_id, annotator=user)
        .first()
    )
    if assignment is not None:
        unit = assignment.unit
    else:
        unit = (
            Unit.objects.filter(project=project, pk=unit_id)
            .select_related("bws_tuple", "instance")
            .first()
        )
        if unit is None:
            raise AnswerError({"unit": f"no unit {unit_id} in this project"})
    cleaned = validate_answers(project.schemes, answers, unit_context(unit))
    now = timezone.now()
    if assignment is None:
        # The lease ran out and the slot was reclaimed (or the unit was never handed out):
        # keep the answer if the unit still has room, so no work is lost.
        policy = QueuePolicy.of(project)
        locked = Unit.objects.select_for_update().get(pk=unit.pk)
        if policy.cap is not None and locked.load >= policy.cap:
            raise SubmitRefused(
                "this unit was not reserved for you (its lease ran out) and it has all the "
                "annotators it needs; ask for the next unit"
            )
        assignment = Assignment.objects.create(
            unit=unit, annotator=user, project=project, status=Assignment.Status.RESERVED
        )
        Unit.objects.filter(pk=unit.pk).update(load=F("load") + 1)
    if assignment.status == Assignment.Status.RESERVED:
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


def _answers_changed(project_id: int) -> None:
    from bws.services import note_answers

    note_answers(project_id)


def _item_indices(project: Project, unit: Unit, cleaned: dict) -> dict[str, int]:
    if unit.bws_tuple_id is None:
        return {}
    return dict(zip(unit.bws_tuple.item_ids, unit.bws_tuple.item_indices, strict=True))
