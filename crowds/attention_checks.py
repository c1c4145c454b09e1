"""Attention checks: the gold units (crowds.gold) beyond the training, handed to a person
in place of ordinary units. Exactly ``round(attention_rate x quota)`` checks per person, at
positions drawn for that person (seeded by the project's seed, the project and the person),
on top of the quota: the quota is the participant's ``units_per_participant``, else
``max_annotations_per_user``; a person with neither gets their checks per block of
CHECK_BLOCK ordinary units. A check is handed like any unit, so nothing on its page, in its
address or in its number tells it from the others."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from annotation.models import Assignment
from projects.models import Project, Unit

# A person without a quota gets their checks per block of this many ordinary units.
CHECK_BLOCK = 20


def _rounded(x: float) -> int:
    return math.floor(x + 0.5 + 1e-9)


@dataclass(frozen=True)
class CheckPlan:
    """Where a person's attention checks fall: ``checks`` of them among each block of
    ``ordinary + checks`` units handed out, at positions drawn for the person; one block
    when the person has a quota, one block after another when not."""

    ordinary: int  # ordinary units per block: the quota, or CHECK_BLOCK
    checks: int  # round(attention_rate x ordinary)
    repeats: bool
    seed: str  # the project's seed, the project and the person

    @property
    def length(self) -> int:
        return self.ordinary + self.checks

    def positions(self, block: int) -> set[int]:
        # A quota's last unit is an ordinary one: the queue stops at the quota, so a check
        # drawn there would never be handed out.
        places = range(self.length if self.repeats else self.length - 1)
        return set(random.Random(f"{self.seed}:block:{block}").sample(places, self.checks))

    def is_check(self, n: int) -> bool:
        """Whether the person's n-th unit (from 0, the training not counted) is a check."""
        block, place = divmod(n, self.length)
        if block and not self.repeats:
            return False
        return place in self.positions(block)

    def units_for(self, ordinary: int) -> int:
        """How many units a person is handed for this many ordinary ones (checks on top)."""
        if not self.repeats:
            return min(ordinary, self.ordinary) + self.checks
        blocks, rest = divmod(ordinary, self.ordinary)
        return ordinary + blocks * self.checks + _rounded(rest * self.checks / self.ordinary)


def check_plan(project: Project, user) -> CheckPlan | None:
    """This person's attention-check plan; None when the project has no checks."""
    gold = project.settings.gold
    if gold is None or gold.attention_rate <= 0:
        return None
    from annotation.queue import person_cap  # the queue reads this module

    quota = person_cap(project, user, with_training=False)
    seed = f"{project.settings.seed}:{project.pk}:{user.pk}"
    per_block = quota if quota else CHECK_BLOCK
    checks = _rounded(gold.attention_rate * per_block)
    return CheckPlan(per_block, checks, repeats=not quota, seed=seed)


def _handed_out(project: Project, user) -> int:
    """Units handed to this person so far, the training's not counted."""
    return (
        Assignment.objects.filter(project=project, annotator=user)
        .exclude(unit__is_gold=True, unit__gold__training=True)
        .count()
    )


def pick_attention_check(*, project: Project, user) -> Unit | None:
    """The attention check to hand this person in place of their next ordinary unit, when
    their plan puts one at this position: a check they were never given, the first in an
    order drawn for them; None otherwise (or when they have seen every check)."""
    plan = check_plan(project, user)
    if plan is None or not plan.checks or not plan.is_check(_handed_out(project, user)):
        return None
    checks = Unit.objects.filter(project=project, is_gold=True).exclude(gold__training=True)
    seen = set(
        Assignment.objects.filter(project=project, annotator=user, unit__is_gold=True).values_list(
            "unit_id", flat=True
        )
    )
    order = sorted(checks.values_list("pk", flat=True))
    random.Random(f"{plan.seed}:order").shuffle(order)
    fresh = next((pk for pk in order if pk not in seen), None)
    return None if fresh is None else checks.select_related("instance").get(pk=fresh)


def units_planned(project: Project, user, units: int) -> int:
    """The units a person's plan holds for ``units`` ordinary ones: the checks on top."""
    plan = check_plan(project, user)
    return units if plan is None else plan.units_for(units)
