"""Reads of the work annotators do: a project's overview for its managers, a person's
progress, answers and the order they gave them in."""

from django.db.models import Exists, OuterRef, Q, QuerySet
from django.utils.translation import gettext

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
    project: Project,
    user,
    *,
    units: int | None = None,
    done: int | None = None,
    open_units: int | None = None,
) -> Progress:
    """The units this person answered out of those assigned to them: the ones they
    answered and the ones left for them (``left``). Left for them: ordinary units they
    have not answered that still need answers (fewer than num_annotators_per_item), as
    many as their quota still allows (max_annotations_per_user, or a participant's
    units_per_participant); attention checks come on top and count like any unit, the
    training's units not at all. The caller may pass what it read already: ``units`` (the
    project's ordinary units), ``done`` (their answers, the training's not counted) and
    ``open_units`` (open_units_for, at most their quota)."""
    completed = Assignment.objects.filter(
        project=project, annotator=user, status=Assignment.Status.COMPLETED
    )
    if done is None:
        done = completed.exclude(unit__is_gold=True, unit__gold__training=True).count()
    # The ordinary units they answered: all of them without gold.
    ordinary = done if project.settings.gold is None else completed.filter(unit__is_gold=False)
    ordinary = ordinary if isinstance(ordinary, int) else ordinary.count()
    cap = person_cap(project, user, with_training=False)  # a participant's quota included
    if units is None:
        units = Unit.objects.filter(project=project, is_gold=False).count()
    quota = min(units, cap) if cap is not None else units
    if open_units is None:
        open_units = open_units_for(project, user, limit=quota)
    assigned = ordinary + min(max(quota - ordinary, 0), open_units)
    # Attention checks come on top of the quota and are counted like any unit, so the
    # progress a check adds is the progress any unit adds (crowds.attention_checks).
    total = max(people.units_planned(project, user, assigned), done)
    return Progress(done=done, total=total, label=gettext("answered by you"), left=total - done)


def open_units_for(project: Project, user, *, limit: int) -> int:
    """Ordinary units this person has not answered that still need answers (fewer than
    num_annotators_per_item), counted up to ``limit`` (unit_page.standing reads the same
    in its statement)."""
    if limit <= 0:
        return 0
    answered = Assignment.objects.filter(
        unit=OuterRef("pk"), annotator=user, status=Assignment.Status.COMPLETED
    )
    units = Unit.objects.filter(project=project, is_gold=False).exclude(Exists(answered))
    if project.settings.num_annotators_per_item is not None:
        units = units.filter(completed__lt=project.settings.num_annotators_per_item)
    return units.values("pk")[:limit].count()


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
