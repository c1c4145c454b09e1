"""The annotation queue: which unit an annotator gets next, under leases and caps.

Each request is one short transaction. On PostgreSQL the chosen unit row is locked with
SELECT ... FOR UPDATE SKIP LOCKED, so concurrent annotators never wait on each other and
never take the same slot; on SQLite the transaction takes the write lock at BEGIN
(settings: transaction_mode IMMEDIATE), which serialises the same steps.
"""

import random
from dataclasses import dataclass
from datetime import timedelta
from functools import cache

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from annotation.models import Assignment
from annotation.people import rules as people
from projects import events, hot_sql
from projects.models import Instance, Project, Removal, Unit

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
    (participants.units_per_participant) where that is lower. Gold units (the training's
    and the attention checks) come on top (``with_training=False``: the quota alone)."""
    cap = (policy or QueuePolicy.of(project)).max_per_user
    block = project.settings.participants
    if block is not None and block.units_per_participant is not None:
        if people.is_participant(project, user):
            quota = block.units_per_participant
            cap = quota if cap is None else min(cap, quota)
    if with_training and cap is not None and project.settings.gold is not None:
        cap += _gold_taken(project, user)  # no gold, no training and no checks
    return cap


def lease_for(project: Project, user, policy: QueuePolicy) -> timedelta:
    """How long this person holds a unit: the project's lease, or a participant's (the
    participants block's lease_minutes) where that is shorter, so that idle or fake
    participants hand their units back soon."""
    block = project.settings.participants
    if block is None or not people.is_participant(project, user):
        return policy.lease
    return min(policy.lease, timedelta(minutes=_lease_minutes(block.lease_minutes)))


def _gold_taken(project: Project, user) -> int:
    return Assignment.objects.filter(project=project, annotator=user, unit__is_gold=True).count()


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


def release_own_expired(project: Project, user) -> int:
    """Give back this person's reservations whose lease ran out (they no longer count
    against the person's cap, and their units go back to the queue)."""
    now = timezone.now()
    with transaction.atomic():
        mine = Assignment.objects.filter(
            project=project,
            annotator=user,
            status=Assignment.Status.RESERVED,
            leased_until__lte=now,
        ).select_for_update(skip_locked=True)
        return _release(list(mine.values_list("id", "unit_id")))


def release_person(project: Project, user) -> int:
    """End every reservation this person holds in the project, live or not (they were
    removed): the units go back to the queue at once."""
    with transaction.atomic():
        held = Assignment.objects.filter(
            project=project, annotator=user, status=Assignment.Status.RESERVED
        ).select_for_update()
        return _release(list(held.values_list("id", "unit_id")))


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


# A person who waits for units on their way asks again after this many seconds.
WAIT_SECONDS = 3


def units_coming(*, project: Project, user) -> bool:
    """After ``next_unit`` found nothing: whether more units are on their way for this
    person (an adaptive design's next batch), so that they wait rather than being told the
    work is over. Never for a person held back from work or at their cap."""
    if people.withholds_work(project, user) or at_cap(project, user, QueuePolicy.of(project)):
        return False
    return events.more_units_coming(project)


def at_cap(project: Project, user, policy: QueuePolicy, taken: int | None = None) -> bool:
    """Whether this person has taken as many units as they may (``person_cap``);
    ``taken``: their count when the caller has it already."""
    cap = person_cap(project, user, policy)
    if cap is None:
        return False
    if taken is None:
        taken = Assignment.objects.filter(project=project, annotator=user).count()
    return taken >= cap


@transaction.atomic
def next_unit(*, project: Project, user) -> Unit | None:
    """The unit this annotator works on now: their live reservation, or a new one taken
    from the queue (with its tuple and instance loaded); None when there is no more work."""
    now = timezone.now()
    policy = QueuePolicy.of(project)
    if people.withholds_work(project, user):
        return None  # a training to pass first, failed, or screened out (crowds.gold)
    taken = people.take_turn(project, user)  # a participant's requests take turns
    live = _live_unit(project, user, now)
    if live is not None:
        return live
    if at_cap(project, user, policy, taken):
        return None
    # Expired reservations go back to the queue when it would otherwise run dry, and now
    # and then in passing, so most requests skip the extra statement.
    if random.random() < RECLAIM_IN_PASSING:
        reclaim_expired_leases(project, now)
    unit = _free_unit(project, user, policy)
    if unit is None and reclaim_expired_leases(project, now):
        unit = _free_unit(project, user, policy)
    if unit is None:
        events.queue_served.send(sender=None, project=project, unit=None)
        return None
    # An attention check in its place where the person's plan puts one (on top of their
    # quota; crowds.attention_checks), asked only of a project that has checks.
    checks = project.settings.gold
    if checks is not None and checks.attention_rate > 0:
        unit = people.attention_check(project, user) or unit
    _reserve(project, unit, user, now, now + lease_for(project, user, policy))
    unit.load += 1
    events.queue_served.send(sender=None, project=project, unit=unit)
    return unit


# The statements below are the ORM's (the same on every request), written out once
# (projects.hot_sql): building them through the ORM cost more CPU than running them.


def _unit_with_instance(row) -> Unit:
    n = hot_sql.width(Unit)
    unit = hot_sql.load(Unit, row[:n])
    unit.instance = hot_sql.load(Instance, row[n:])
    return unit


@cache
def _live_sql(vendor: str) -> str:
    q = hot_sql.quote
    return (
        f"SELECT {hot_sql.columns(Unit, 'u')}, {hot_sql.columns(Instance, 'i')} "
        f"FROM {q(Assignment._meta.db_table)} a "
        f"INNER JOIN {q(Unit._meta.db_table)} u ON u.{q('id')} = a.{q('unit_id')} "
        f"LEFT OUTER JOIN {q(Instance._meta.db_table)} i ON i.{q('id')} = u.{q('instance_id')} "
        f"WHERE a.{q('project_id')} = %s AND a.{q('annotator_id')} = %s "
        f"AND a.{q('status')} = %s AND a.{q('leased_until')} > %s "
        f"ORDER BY a.{q('created_at')} ASC LIMIT 1"
    )


def _live_unit(project: Project, user, now) -> Unit | None:
    """The unit of this person's live reservation in the project, with its instance."""
    params = [
        project.pk,
        user.pk,
        Assignment.Status.RESERVED.value,
        hot_sql.value(Assignment, "leased_until", now),
    ]
    with connection.cursor() as cursor:
        cursor.execute(_live_sql(connection.vendor), params)
        row = cursor.fetchone()
    return None if row is None else _unit_with_instance(row)


@cache
def _free_sql(vendor: str, strategy: str, capped: bool) -> str:
    q = hot_sql.quote
    order = ", ".join(f"u.{q(name)} ASC" for name in _ordering(strategy))
    return (
        f"SELECT {hot_sql.columns(Unit, 'u')}, {hot_sql.columns(Instance, 'i')} "
        f"FROM {q(Unit._meta.db_table)} u "
        f"LEFT OUTER JOIN {q(Instance._meta.db_table)} i ON i.{q('id')} = u.{q('instance_id')} "
        f"WHERE u.{q('project_id')} = %s AND u.{q('is_gold')} = %s AND NOT EXISTS("
        f"SELECT 1 FROM {q(Assignment._meta.db_table)} a "
        f"WHERE a.{q('unit_id')} = u.{q('id')} AND a.{q('annotator_id')} = %s) "
        # A person the managers removed is given nothing (on an open project too). Not
        # correlated with u, so it is asked once and the least-loaded index keeps its order.
        f"AND NOT EXISTS(SELECT 1 FROM {q(Removal._meta.db_table)} r "
        f"WHERE r.{q('project_id')} = %s AND r.{q('user_id')} = %s)"
        + (f" AND u.{q('load')} < %s" if capped else "")
        + f" ORDER BY {order} LIMIT 1"
        + hot_sql.for_update("u", skip_locked=True)
    )


def _free_unit(project: Project, user, policy: QueuePolicy) -> Unit | None:
    """The queue's next unit for this person, locked: an ordinary unit they never had,
    under its cap, first in the strategy's order; a unit another request holds locked is
    skipped, not waited for."""
    capped = policy.cap is not None
    params = [project.pk, False, user.pk, project.pk, user.pk] + ([policy.cap] if capped else [])
    with connection.cursor() as cursor:
        cursor.execute(_free_sql(connection.vendor, policy.strategy, capped), params)
        row = cursor.fetchone()
    return None if row is None else _unit_with_instance(row)


@cache
def _reserve_sql(vendor: str) -> tuple[str, str]:
    q = hot_sql.quote
    names = ["unit_id", "annotator_id", "project_id", "status", "leased_until", "created_at"]
    insert = (
        f"INSERT INTO {q(Assignment._meta.db_table)} ({', '.join(q(n) for n in names)}) "
        f"VALUES ({', '.join(['%s'] * len(names))})"
    )
    update = (
        f"UPDATE {q(Unit._meta.db_table)} SET {q('load')} = {q('load')} + 1 WHERE {q('id')} = %s"
    )
    return insert, update


def _reserve(project: Project, unit: Unit, user, now, until) -> None:
    """Reserve the unit for the person until the lease ends, and count it in its load."""
    insert, update = _reserve_sql(connection.vendor)
    with connection.cursor() as cursor:
        cursor.execute(
            insert,
            [
                unit.pk,
                user.pk,
                project.pk,
                Assignment.Status.RESERVED.value,
                hot_sql.value(Assignment, "leased_until", until),
                hot_sql.value(Assignment, "created_at", now),
            ],
        )
        cursor.execute(update, [unit.pk])
