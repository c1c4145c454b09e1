"""The operator's import of answers (manage.py import_annotations, from an interchange file):
checked as a whole, then stored through the same rows as every answer, or refused with
every problem named and nothing stored."""

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from projects import events
from projects.models import Project, Unit

from .answers import answer_rows
from .models import Annotation, Assignment
from .queue import QueuePolicy


class ImportRefused(ValueError):
    """An import that cannot be stored as a whole; each problem names file:line and why."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("\n".join(problems))


@dataclass(frozen=True)
class ImportedAnswer:
    """One annotator's validated answers to one unit, read from an import file."""

    where: str  # file:line
    unit: Unit
    annotator: str
    answers: dict
    answered_at: datetime | None = None


@dataclass(frozen=True)
class ImportResult:
    records: int
    annotations: int
    created_users: list[str]


@transaction.atomic
def import_answers(*, project: Project, answers: list[ImportedAnswer]) -> ImportResult:
    """Store answers from the operator's import, all or nothing: none may repeat an answer
    already stored, meet a live lease of its annotator on the unit, or take a unit past
    num_annotators_per_item (ImportRefused names each line). The operator's import needs no
    lease; a lease of the annotator that ran out is completed by the import. Missing
    annotator accounts are created inactive. Stored answers count as new from now on (their
    file's time is kept as answered_at), and are announced like any other."""
    users, created = _import_users({entry.annotator for entry in answers})
    unit_ids = sorted({entry.unit.pk for entry in answers})
    # Held until the import commits: the queue cannot hand these units out meanwhile.
    list(Unit.objects.select_for_update().filter(pk__in=unit_ids).values_list("pk", flat=True))
    problems = _import_conflicts(project, answers, users, unit_ids)
    if problems:
        raise ImportRefused(problems)
    now = timezone.now()
    lapsed = set(
        Assignment.objects.filter(
            unit_id__in=unit_ids,
            annotator__in=list(users.values()),
            status=Assignment.Status.RESERVED,
        ).values_list("unit_id", "annotator_id")
    )
    rows, assignments, completed = [], [], []
    for entry in answers:
        user = users[entry.annotator]
        if (entry.unit.pk, user.pk) in lapsed:
            completed.append((entry.unit.pk, user.pk, entry.answered_at or now))
        else:
            assignments.append(
                Assignment(
                    unit=entry.unit,
                    annotator=user,
                    project=project,
                    status=Assignment.Status.COMPLETED,
                    completed_at=entry.answered_at or now,
                )
            )
        rows += answer_rows(project, entry.unit, user, entry.answers, answered_at=entry.answered_at)
    for unit_id, user_id, stamp in completed:
        Assignment.objects.filter(unit_id=unit_id, annotator_id=user_id).update(
            status=Assignment.Status.COMPLETED, completed_at=stamp, leased_until=None
        )
    Assignment.objects.bulk_create(assignments, batch_size=5000)
    stored = Annotation.objects.bulk_create(rows, batch_size=5000)
    # Time order (scoring's convergence, the judgment order) follows the file's times.
    dated = [row for row in stored if row.answered_at is not None]
    for row in dated:
        row.created_at = row.answered_at
    Annotation.objects.bulk_update(dated, ["created_at"], batch_size=2000)
    _recount_units(unit_ids)
    if rows:
        events.announce_answers(
            project_id=project.pk,
            schemes=[row.scheme for row in rows],
            count=len(rows),
            source="import",
        )
    return ImportResult(len(answers), len(rows), created)


def _import_users(names: set[str]) -> tuple[dict, list[str]]:
    """The annotators' accounts by name; missing ones created inactive, with no password."""
    User = get_user_model()
    users = {u.username: u for u in User.objects.filter(username__in=names)}
    created = sorted(names - set(users))
    for name in created:
        user = User(username=name, is_active=False)
        user.set_unusable_password()
        user.save()
        users[name] = user
    return users, created


def _import_conflicts(project, answers, users, unit_ids) -> list[str]:
    """Why these answers cannot be imported (at most 20 lines), or an empty list."""
    now = timezone.now()
    held = Assignment.objects.filter(unit_id__in=unit_ids)
    answered = set(
        Annotation.objects.filter(unit_id__in=unit_ids, annotator__in=list(users.values()))
        .values_list("unit_id", "annotator_id")
        .distinct()
    )
    mine = {
        (a.unit_id, a.annotator_id): a
        for a in held.filter(annotator__in=list(users.values())).only(
            "unit_id", "annotator_id", "status", "leased_until"
        )
    }
    live = Q(status=Assignment.Status.COMPLETED) | Q(
        status=Assignment.Status.RESERVED, leased_until__gt=now
    )
    taken = defaultdict(
        int, held.filter(live).values("unit_id").annotate(n=Count("id")).values_list("unit_id", "n")
    )
    cap = QueuePolicy.of(project).cap
    problems = []
    for entry in answers:
        user = users[entry.annotator]
        key = (entry.unit.pk, user.pk)
        assignment = mine.get(key)
        if key in answered or (
            assignment is not None and assignment.status == Assignment.Status.COMPLETED
        ):
            final = " (a gold unit: its graded answer is final)" if entry.unit.is_gold else ""
            problems.append(
                f"{entry.where}: {entry.annotator} already answered {entry.unit.external_id} "
                f"in this project{final}"
            )
        elif assignment is not None and assignment.leased_until and assignment.leased_until > now:
            problems.append(
                f"{entry.where}: {entry.annotator} holds a live lease on unit "
                f"{entry.unit.external_id} (until {assignment.leased_until:%Y-%m-%d %H:%M:%S} "
                "UTC): wait for it to expire or release it"
            )
        elif cap is not None and taken[entry.unit.pk] >= cap:
            problems.append(
                f"{entry.where}: unit {entry.unit.external_id} already has its {cap} "
                "annotators (num_annotators_per_item)"
            )
        else:
            taken[entry.unit.pk] += 1
        if len(problems) >= 20:
            break
    return problems


def _recount_units(unit_ids: list[int]) -> None:
    """Set load and completed of these units from their assignments."""
    figures = {
        row["unit_id"]: row
        for row in Assignment.objects.filter(unit_id__in=unit_ids)
        .values("unit_id")
        .annotate(n=Count("id"), done=Count("id", filter=Q(status=Assignment.Status.COMPLETED)))
    }
    units = list(Unit.objects.filter(pk__in=unit_ids))
    for unit in units:
        row = figures.get(unit.pk, {"n": 0, "done": 0})
        unit.load, unit.completed = row["n"], row["done"]
    Unit.objects.bulk_update(units, ["load", "completed"], batch_size=5000)
