"""Reads of the work annotators do: a project's overview for its managers, a person's
progress, answers and the order they gave them in."""

from django.db.models import Q, QuerySet

from projects.models import Project, Unit
from projects.selectors import Progress

from .models import Annotation, Assignment
from .people import rules as people
from .queue import person_cap


def my_answers(project: Project, user, unit: Unit) -> dict:
    return dict(
        Annotation.objects.filter(project=project, unit=unit, annotator=user).values_list(
            "scheme", "value"
        )
    )


def my_progress(
    project: Project, user, *, units: int | None = None, done: int | None = None
) -> Progress:
    """Units this annotator completed, out of what the queue can still give them (``units``:
    the project's ordinary units, ``done``: the units they completed, the training's not
    counted, when the caller has them already); attention checks count in both."""
    if done is None:
        done = (
            Assignment.objects.filter(
                project=project, annotator=user, status=Assignment.Status.COMPLETED
            )
            .exclude(unit__is_gold=True, unit__gold__training=True)
            .count()
        )
    cap = person_cap(project, user, with_training=False)  # a participant's quota included
    if units is None:
        units = Unit.objects.filter(project=project, is_gold=False).count()
    total = min(units, cap) if cap else units
    # Attention checks come on top of the quota and are counted like any unit, so the
    # progress a check adds is the progress any unit adds (crowds.attention_checks).
    total = people.units_planned(project, user, total)
    return Progress(done=done, total=total, label="answered by you")


def my_completed_units(project: Project, user) -> QuerySet[Assignment]:
    """This annotator's answered units, the latest first (answers stored at the same time,
    as an import stores them, in the reverse of the order they were stored)."""
    return (
        Assignment.objects.filter(
            project=project, annotator=user, status=Assignment.Status.COMPLETED
        )
        .select_related("unit")
        .order_by("-completed_at", "-pk")
    )


_ASK = object()


def previous_answer(project: Project, user, unit: Unit, *, current=_ASK) -> Assignment | None:
    """The answer this annotator gave just before the one on ``unit``, in the order they
    answered; for a unit not answered yet, their latest answer; None before the first.
    ``current``: their completed assignment of ``unit`` (None: not answered) when the caller
    has read it already."""
    completed = my_completed_units(project, user)
    if current is _ASK:
        current = completed.filter(unit=unit).first()
    if current is None:
        return completed.first()
    earlier = Q(completed_at__lt=current.completed_at) | Q(
        completed_at=current.completed_at, pk__lt=current.pk
    )
    return completed.filter(earlier).first()


def model_judges(project: Project) -> set[str]:
    """Usernames of model judges that answered in the project."""
    return set(
        Annotation.objects.filter(project=project, annotator__annotator_profile__is_model=True)
        .values_list("annotator__username", flat=True)
        .distinct()
    )
