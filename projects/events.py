"""What happens to a project, announced to the apps built on `projects` (bws, agreement),
which subscribe in their AppConfig.ready(): `projects` itself imports no other app.

- ``project_planned(config, data, limits)``: a project is about to be built; a receiver
  that refuses the plan (a design over a budget) raises BuildRefused, before anything is
  stored.
- ``project_built(project, config, data, instances)``: the project's items and instances
  are stored, inside the import's transaction; a receiver adds its own rows (bws: the
  tuples and their queue units) and returns a BuildReport, or raises BuildRefused and the
  whole import is rolled back.
- ``units_built(project, config)``: every queue unit of the project is stored, still inside
  the import's transaction; a receiver adds what it builds on the units (crowds: the gold
  units of the training and the attention checks), or raises BuildRefused to roll it back.
- ``answers_changed(project_id, schemes, count, source)``: answers were stored or changed
  (source "web", "api" or "import"); sent after the transaction commits.
- ``answers_settled(project)``: a project's answers have been quiet for the session gap, or
  its annotator logged out: figures derived from them may be brought up to date.
- ``session_ended(user)``: an annotator logged out.
- ``member_removed(project, user)``: a person was taken out of a project, inside the
  removal's transaction; a receiver ends what they hold and returns how many leases it ended
  (annotation: their reserved units go back to the queue).
- ``queue_served(project, unit)``: the queue handed out a new unit, or found none (unit
  None); sent at once, inside the request, so a receiver must be cheap (bws: an adaptive
  design orders its next batch before the open tuples run out).
- ``units_coming(project)``: the queue has no unit for a person who may still work: a
  receiver that will add units soon returns True (bws: an adaptive design whose next batch
  is on its way), and the person is asked to wait instead of being told the work is over.
  Sent only when the queue is empty, so a receiver may read a little.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db import transaction
from django.dispatch import Signal

project_planned = Signal()
project_built = Signal()
units_built = Signal()
answers_changed = Signal()
answers_settled = Signal()
session_ended = Signal()
member_removed = Signal()
queue_served = Signal()
units_coming = Signal()

SOURCES = ("web", "api", "import")


def more_units_coming(project) -> bool:
    """Whether a receiver of ``units_coming`` will add units to the project's queue soon."""
    return any(bool(answer) for _, answer in units_coming.send(sender=None, project=project))


class BuildRefused(ValueError):
    """A receiver refuses to build the project; the message says why."""


@dataclass
class BuildReport:
    """What a receiver of project_built added: queue units, notes and summary lines."""

    n_tuples: int = 0
    notes: list[str] = field(default_factory=list)
    summary: list[str] = field(default_factory=list)


def plan_project(*, config, data, limits) -> None:
    """Ask the receivers whether the project may be built (BuildRefused if not)."""
    project_planned.send(sender=None, config=config, data=data, limits=limits)


def built_project(*, project, config, data, instances) -> BuildReport:
    """Let the receivers add their rows to a project being built; their reports merged."""
    merged = BuildReport()
    for _, report in project_built.send(
        sender=type(project), project=project, config=config, data=data, instances=instances
    ):
        if report is None:
            continue
        merged.n_tuples += report.n_tuples
        merged.notes += list(report.notes)
        merged.summary += list(report.summary)
    return merged


def built_units(*, project, config) -> None:
    """Let the receivers build on the project's queue units (BuildRefused rolls it back)."""
    units_built.send(sender=type(project), project=project, config=config)


def removed_member(*, project, user) -> int:
    """Tell the receivers a person left the project; how many leases they ended."""
    responses = member_removed.send(sender=type(project), project=project, user=user)
    return sum(ended or 0 for _, ended in responses)


def announce_answers(*, project_id: int, schemes, count: int, source: str) -> None:
    """Send answers_changed once the current transaction commits (at once outside one)."""
    if source not in SOURCES:
        raise ValueError(f"unknown answer source {source!r}")
    names = sorted(set(schemes))

    def send():
        answers_changed.send(
            sender=None, project_id=project_id, schemes=names, count=count, source=source
        )

    transaction.on_commit(send)
