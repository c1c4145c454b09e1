"""What a unit page reads besides the unit's content, in few statements: the unit with the
reader's assignment of it, and where the reader stands in the project (units, answered,
their latest answer). A participant opens one such page per unit, so these are written out
once (projects.hot_sql) rather than built by the ORM on every request; the results are
those of the ORM's queries (annotation/tests/test_unit_page.py)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import cache

from django.db import connection
from django.db.models import Q
from django.utils.translation import gettext

from annotation import people
from annotation.models import Assignment
from projects import hot_sql
from projects.models import Instance, Project, Unit


@cache
def _held_sql(vendor: str) -> str:
    q = hot_sql.quote
    return (
        f"SELECT {hot_sql.columns(Assignment, 'a')}, {hot_sql.columns(Unit, 'u')}, "
        f"{hot_sql.columns(Instance, 'i')} "
        f"FROM {q(Assignment._meta.db_table)} a "
        f"INNER JOIN {q(Unit._meta.db_table)} u ON u.{q('id')} = a.{q('unit_id')} "
        f"LEFT OUTER JOIN {q(Instance._meta.db_table)} i ON i.{q('id')} = u.{q('instance_id')} "
        f"WHERE u.{q('project_id')} = %s AND a.{q('unit_id')} = %s "
        f"AND a.{q('annotator_id')} = %s"
    )


def held_unit(project: Project, unit_id: int, user) -> Assignment | None:
    """This person's assignment of the project's unit, with the unit and its instance
    loaded; None when the project has no such unit or it is not theirs."""
    if not -(2**63) <= unit_id < 2**63:  # no key is that large (the URL takes any digits)
        return None
    with connection.cursor() as cursor:
        cursor.execute(_held_sql(connection.vendor), [project.pk, unit_id, user.pk])
        row = cursor.fetchone()
    if row is None:
        return None
    a, u = hot_sql.width(Assignment), hot_sql.width(Unit)
    held = hot_sql.load(Assignment, row[:a])
    unit = hot_sql.load(Unit, row[a : a + u])
    unit.instance = hot_sql.load(Instance, row[a + u :])
    held.unit = unit
    return held


@dataclass(frozen=True)
class Standing:
    units: int  # the project's ordinary units (gold units not counted)
    completed: int  # units this person completed, the training's gold units included
    latest_unit_id: int | None  # the unit of their latest answer
    # ordinary units they have not answered that still need answers, up to the limit asked
    # (annotation.selectors.open_units_for)
    open_units: int = 0


# The units a page numbers, per project: counting them reads every unit row (10,000 rows,
# about 1.3 ms of PostgreSQL at 10,000 tuples, on every unit page). Units are only ever
# added, at the end (an import, an adaptive batch, gold units): so the count is kept with
# the project's last position, which the page reads from the index in the same statement,
# and counted again when that moved. Kept at most COUNT_SECONDS, so a unit deleted by hand
# (the admin) is counted out within that time.
COUNT_SECONDS = 60.0
_counts: dict[tuple, tuple[int, int | None, float]] = {}


@cache
def _standing_sql(vendor: str, with_count: bool) -> str:
    q = hot_sql.quote
    units, assignments = q(Unit._meta.db_table), q(Assignment._meta.db_table)
    mine = (
        f"FROM {assignments} a WHERE a.{q('project_id')} = %s AND a.{q('annotator_id')} = %s "
        f"AND a.{q('status')} = %s"
    )
    count = (
        f"(SELECT COUNT(*) FROM {units} u WHERE u.{q('project_id')} = %s "
        f"AND u.{q('is_gold')} = %s), "
        if with_count
        else ""
    )
    return (
        f"SELECT {count}"
        f"(SELECT MAX(u.{q('position')}) FROM {units} u WHERE u.{q('project_id')} = %s), "
        f"(SELECT COUNT(*) {mine}), "
        f"(SELECT a.{q('unit_id')} {mine} "
        f"ORDER BY a.{q('completed_at')} DESC, a.{q('id')} DESC LIMIT 1), "
        f"(SELECT COUNT(*) FROM (SELECT 1 FROM {units} u WHERE u.{q('project_id')} = %s "
        f"AND u.{q('is_gold')} = %s AND u.{q('completed')} < %s AND NOT EXISTS("
        f"SELECT 1 FROM {assignments} a WHERE a.{q('unit_id')} = u.{q('id')} "
        f"AND a.{q('annotator_id')} = %s AND a.{q('status')} = %s) LIMIT %s) o)"
    )


# No cap on a unit, or on a person: a bound no count reaches (a 64-bit integer).
NO_BOUND = 2**62


def standing(
    project: Project, user, *, now: float | None = None, open_limit: int | None = None
) -> Standing:
    """Where this person stands in the project, in one statement (two when units were
    added since the last count): the units the page numbers, the units they completed, the
    unit of their latest answer (the order of selectors.my_completed_units), and the units
    still open to them, counted up to ``open_limit`` (None: all)."""
    now = time.monotonic() if now is None else now
    key = (project.pk, project.created_at)
    known = _counts.get(key)
    fresh = known is not None and now - known[2] < COUNT_SECONDS
    completed = Assignment.Status.COMPLETED.value
    mine = [project.pk, user.pk, completed]
    per_unit = project.settings.num_annotators_per_item
    still_open = [
        project.pk,
        False,
        NO_BOUND if per_unit is None else per_unit,
        user.pk,
        completed,
        NO_BOUND if open_limit is None else max(open_limit, 0),
    ]
    # count (project, not gold), last position, completed, latest, open
    params = [project.pk, False, project.pk, *mine, *mine, *still_open]
    with connection.cursor() as cursor:
        cursor.execute(_standing_sql(connection.vendor, not fresh), params[2:] if fresh else params)
        row = cursor.fetchone()
        if fresh:
            last, done, latest, still = row
            units = known[0]
            if last != known[1]:  # units were added since: counted again
                fresh = False
                cursor.execute(_standing_sql(connection.vendor, True), params)
                units, last, done, latest, still = cursor.fetchone()
        else:
            units, last, done, latest, still = row
    if not fresh:
        _counts[key] = (units, last, now)
    return Standing(units=units, completed=done, latest_unit_id=latest, open_units=still)


@cache
def _completed_sql(vendor: str) -> str:
    q = hot_sql.quote
    return (
        f"SELECT COUNT(*) FROM {q(Assignment._meta.db_table)} a "
        f"WHERE a.{q('project_id')} = %s AND a.{q('annotator_id')} = %s AND a.{q('status')} = %s"
    )


def completed_count(project: Project, user) -> int:
    """Units this person completed in the project, the training's gold units included."""
    params = [project.pk, user.pk, Assignment.Status.COMPLETED.value]
    with connection.cursor() as cursor:
        cursor.execute(_completed_sql(connection.vendor), params)
        return cursor.fetchone()[0]


# --------------------------------------------------------------------------- numbers


def _named(unit: Unit, number: int) -> str:
    if unit.kind == Unit.Kind.TUPLE:
        return gettext("Tuple %(number)s") % {"number": number}
    return gettext("Item %(number)s") % {"number": number}


def is_training(unit: Unit) -> bool:
    return unit.is_gold and bool((unit.gold or {}).get("training"))


def _answered_before(project: Project, user, held: Assignment) -> int:
    """The person's answers up to and including this one, the training's not counted."""
    earlier = Q(completed_at__lt=held.completed_at) | Q(
        completed_at=held.completed_at, pk__lte=held.pk
    )
    return (
        Assignment.objects.filter(
            project=project, annotator=user, status=Assignment.Status.COMPLETED
        )
        .filter(earlier)
        .exclude(unit__is_gold=True, unit__gold__training=True)
        .count()
    )


def heading(project: Project, user, unit: Unit, *, answered: Assignment | None, progress) -> str:
    """What a person reads above a unit: its place in their own sequence ("Tuple 7 of 22";
    a participant, "Unit 2 of 3": their quota),
    the k-th unit they were handed, a check the same as any unit; never the unit's place in
    the project, which would tell a check (made after the others) from an ordinary unit."""
    if is_training(unit):
        return gettext("Training unit")
    number = progress.done + 1 if answered is None else _answered_before(project, user, answered)
    if people.rules.is_participant(project, user):
        # a crowd participant counts the units of their quota, whatever their kind
        text = gettext("Unit %(number)s of %(total)s")
    elif unit.kind == Unit.Kind.TUPLE:
        text = gettext("Tuple %(number)s of %(total)s")
    else:
        text = gettext("Item %(number)s of %(total)s")
    return text % {"number": number, "total": progress.total}


def numbered(assignments, done: int) -> list[tuple[Assignment, str]]:
    """A person's completed units, latest first, each with the name its page gave it
    ("Tuple 7"); ``done``: how many they completed, the training's not counted."""
    rows = []
    for assignment in assignments:
        if is_training(assignment.unit):
            rows.append((assignment, gettext("Training unit")))
            continue
        rows.append((assignment, _named(assignment.unit, done)))
        done -= 1
    return rows
