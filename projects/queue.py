"""The annotation queue: which unit an annotator gets next, under leases and caps.

Each request is one short transaction. On PostgreSQL the chosen unit row is locked with
SELECT ... FOR UPDATE SKIP LOCKED, so concurrent annotators never wait on each other and
never take the same slot; on SQLite the transaction takes the write lock at BEGIN
(settings: transaction_mode IMMEDIATE), which serialises the same steps.
"""

import random
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, F, OuterRef
from django.utils import timezone

from . import gold
from .models import Assignment, Participant, Project, Unit

RECLAIM_BATCH = 200
RECLAIM_IN_PASSING = 0.05


@dataclass(frozen=True)
class QueuePolicy:
    strategy: str
    cap: int | None
    max_per_user: int | None
    lease: timedelta

    @classmethod
    def of(cls, project: Project) -> "QueuePolicy":
        config = project.settings
        return cls(
            strategy=config.assignment_strategy,
            cap=config.num_annotators_per_item,
            max_per_user=config.max_annotations_per_user,
            lease=timedelta(minutes=_lease_minutes(config.lease_minutes)),
        )


def person_cap(
    project: Project, user, policy: QueuePolicy | None = None, *, with_training: bool = True
) -> int | None:
    """The most units one person takes: max_annotations_per_user, or a participant's quota
    (participants.units_per_participant) where that is lower. The training's gold units
    come on top of a quota (``with_training=False``: the quota alone, as progress counts)."""
    cap = (policy or QueuePolicy.of(project)).max_per_user
    block = project.settings.participants
    if block is not None and block.units_per_participant is not None:
        if _is_participant(project, user):
            quota = block.units_per_participant
            if with_training and project.settings.gold is not None:  # no gold, no training
                quota += _training_taken(project, user)
            cap = quota if cap is None else min(cap, quota)
    return cap


def _is_participant(project: Project, user) -> bool:
    """Whether the user is a participant of this project: as the participant middleware
    found it for this request (projects.participants.ParticipantScope), else asked."""
    known = getattr(user, "participant_project_id", None)
    if known is not None:
        return known == project.pk
    return Participant.objects.filter(project=project, user=user).exists()


def _training_taken(project: Project, user) -> int:
    return Assignment.objects.filter(
        project=project, annotator=user, unit__is_gold=True, unit__gold__training=True
    ).count()


def _lease_minutes(minutes: int) -> int:
    """The stored lease, within the site's limit: a config stored before the limit existed
    cannot push a lease past what a datetime holds."""
    return min(max(minutes, 1), settings.QUEUE_MAX_LEASE_MINUTES)


def reclaim_expired_leases(project: Project, now=None) -> int:
    """Release reservations whose lease ran out, so their slots go back to the queue."""
    now = now or timezone.now()
    expired = list(
        Assignment.objects.filter(
            project=project, status=Assignment.Status.RESERVED, leased_until__lte=now
        )
        .select_for_update(skip_locked=True)
        .values_list("id", "unit_id")[:RECLAIM_BATCH]
    )
    return _release(expired)


def _release(assignments) -> int:
    """Delete reservations (pairs of assignment id and unit id, or a queryset) and give their
    slots back to the units."""
    pairs = list(
        assignments if isinstance(assignments, list) else assignments.values_list("id", "unit_id")
    )
    if not pairs:
        return 0
    Assignment.objects.filter(id__in=[a for a, _ in pairs]).delete()
    for _, unit_id in pairs:
        Unit.objects.filter(pk=unit_id).update(load=F("load") - 1)
    return len(pairs)


def _ordering(strategy: str) -> list[str]:
    if strategy == "fixed_order":
        return ["position"]
    if strategy == "random":
        return ["random_rank"]
    return ["load", "position"]


@transaction.atomic
def next_unit(*, project: Project, user) -> Unit | None:
    """The unit this annotator works on now: their live reservation, or a new one taken
    from the queue (with its tuple and instance loaded); None when there is no more work."""
    now = timezone.now()
    policy = QueuePolicy.of(project)
    if gold.training_blocks_work(project, user):
        return None  # a training to pass first, or failed (projects.gold)
    mine = Assignment.objects.filter(project=project, annotator=user)
    live = (
        mine.filter(status=Assignment.Status.RESERVED, leased_until__gt=now)
        .select_related("unit__instance")
        .first()
    )
    if live is not None:
        return live.unit
    cap = person_cap(project, user, policy)
    if cap is not None and mine.count() >= cap:
        return None
    candidates = Unit.objects.filter(project=project, is_gold=False).exclude(
        Exists(Assignment.objects.filter(unit=OuterRef("pk"), annotator=user))
    )
    if policy.cap is not None:
        candidates = candidates.filter(load__lt=policy.cap)
    candidates = (
        candidates.select_related("instance")
        .order_by(*_ordering(policy.strategy))
        .select_for_update(skip_locked=True, of=("self",))
    )
    # Expired reservations go back to the queue when it would otherwise run dry, and now
    # and then in passing, so most requests skip the extra statement.
    if random.random() < RECLAIM_IN_PASSING:
        reclaim_expired_leases(project, now)
    unit = candidates.first()
    if unit is None and reclaim_expired_leases(project, now):
        unit = candidates.first()
    if unit is None:
        return None
    # Now and then an attention check in its place (gold, uncapped; projects.gold); the
    # count it draws with is taken only for a project that has attention checks.
    checks = project.settings.gold
    if checks is not None and checks.attention_rate > 0:
        unit = gold.pick_attention_check(project=project, user=user, n_given=mine.count()) or unit
    Assignment.objects.create(
        unit=unit,
        annotator=user,
        project=project,
        status=Assignment.Status.RESERVED,
        leased_until=now + policy.lease,
    )
    Unit.objects.filter(pk=unit.pk).update(load=F("load") + 1)
    unit.load += 1
    return unit
