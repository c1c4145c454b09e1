"""Gold units: units with known answers, read from the config's gold file when the project is
built, used as a training phase with feedback and as attention checks mixed into the queue.

A gold record of a BWS project names a tuple and its answer, one JSON object a line::

    {"items": ["i3", "i7", "i9", "i12"], "best": "i7", "worst": "i12"}

(``instance`` may name the instance whose context the tuple is shown with). A record of any
other project names an instance and the expected answer per scheme::

    {"instance": "doc-12", "answers": {"sentiment": "positive"}}

A BWS gold tuple becomes a unit of its own, numbered on the page like an ordinary tuple; an
instance's gold record makes that instance's unit a gold unit. Gold units never count in
scores, agreement or progress; exports keep their answers, marked as gold. The first
``training.units`` gold units are the training; the others are the attention checks the
queue mixes in at ``attention_rate`` (projects.queue).

Managers can also leave an annotator out (exclude): their answers then count nowhere but
in exports, which mark them.
"""

from __future__ import annotations

import json
import math
import random
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

import numpy as np
from django.db.models import F

from . import events
from .configuration.vocabulary import MAX_TUPLE_SIZE, MIN_TUPLE_SIZE
from .models import Annotation, Assignment, Item, Membership, Project, Unit
from .paths import PathRefused, confine

MAX_GOLD_BYTES = 5 * 1024 * 1024
MAX_GOLD_UNITS = 10_000


class GoldRefused(events.BuildRefused):
    """The gold file cannot be used; the message names the file and line."""


# --------------------------------------------------------------------------- reading


@dataclass(frozen=True)
class GoldRecord:
    line: int
    answers: dict  # scheme -> expected value
    items: list[str] | None = None  # a BWS tuple's item ids
    instance: str | None = None


def read_gold_file(config, *, item_ids: set[str], instance_ids: set[str]) -> list[GoldRecord]:
    """The gold file's records, every problem named by file and line (GoldRefused)."""
    gold = config.gold
    name = gold.file
    try:
        path = confine("gold.file", name, Path(config.base_dir))
    except PathRefused as exc:
        raise GoldRefused(f"gold.file: {exc.reason}") from None
    if not path.is_file():
        raise GoldRefused(f"gold.file: file not found: {name!r}")
    if path.stat().st_size > MAX_GOLD_BYTES:
        raise GoldRefused(
            f"gold.file: {name!r} is larger than the limit of {MAX_GOLD_BYTES // (1024 * 1024)} "
            "MB for a gold file"
        )
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise GoldRefused(f"gold.file: {name!r} is not valid UTF-8 text") from None
    bws = [s.name for s in config.schemes if s.is_bws]
    others = {s.name for s in config.schemes if not s.is_bws}
    records: list[GoldRecord] = []
    problems: list[str] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        where = f"{name}:{number}"
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            problems.append(f"{where}: not valid JSON ({exc.msg})")
            continue
        if not isinstance(data, dict):
            problems.append(f"{where}: must be a JSON object")
            continue
        try:
            if bws:
                records.append(_bws_record(data, number, bws, item_ids, instance_ids))
            else:
                records.append(_instance_record(data, number, others, instance_ids))
        except ValueError as exc:
            problems.append(f"{where}: {exc}")
        if len(problems) >= 20:
            problems.append("... (first 20 problems shown)")
            break
    if not problems:
        problems = _count_problems(gold, len(records))
    if problems:
        raise GoldRefused("\n".join(problems))
    return records


def _count_problems(gold, n: int) -> list[str]:
    name, training = gold.file, gold.training_units
    if not n:
        return [f"{name}: holds no gold record"]
    if n > MAX_GOLD_UNITS:
        return [f"{name}: {n} gold records, above the limit of {MAX_GOLD_UNITS}"]
    if training > n:
        return [f"gold.training.units: {training} training units, but {name} holds {n} records"]
    if gold.attention_rate > 0 and n == training:
        return [
            f"gold.attention_rate: {gold.attention_rate:g}, but every record of {name} is "
            "used for training: add records for the attention checks or set the rate to 0"
        ]
    return []


def _bws_record(data, number, schemes, item_ids, instance_ids) -> GoldRecord:
    unknown = sorted(set(data) - {"id", "items", "best", "worst", "instance"})
    if unknown:
        raise ValueError(f"unknown key {unknown[0]!r} (a BWS gold record has items, best, worst)")
    items = data.get("items")
    if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
        raise ValueError("items must be a list of item ids")
    if not MIN_TUPLE_SIZE <= len(items) <= MAX_TUPLE_SIZE:
        raise ValueError(
            f"a tuple holds {MIN_TUPLE_SIZE} to {MAX_TUPLE_SIZE} items, got {len(items)}"
        )
    if len(set(items)) != len(items):
        raise ValueError("an item is listed twice in items")
    missing = [i for i in items if i not in item_ids]
    if missing:
        raise ValueError(f"item {missing[0]!r} is not an item of the project")
    best, worst = data.get("best"), data.get("worst")
    for key, value in (("best", best), ("worst", worst)):
        if value not in items:
            raise ValueError(f"{key} must be one of the record's items, got {value!r}")
    if best == worst:
        raise ValueError("best and worst must be different items")
    instance = data.get("instance")
    if instance is not None and instance not in instance_ids:
        raise ValueError(f"instance {instance!r} is not an instance of the project")
    answer = {"best": best, "worst": worst}
    return GoldRecord(number, {s: answer for s in schemes}, items=items, instance=instance)


def _instance_record(data, number, schemes, instance_ids) -> GoldRecord:
    unknown = sorted(set(data) - {"id", "instance", "answers"})
    if unknown:
        raise ValueError(f"unknown key {unknown[0]!r} (a gold record has instance and answers)")
    instance = data.get("instance")
    if not isinstance(instance, str) or instance not in instance_ids:
        raise ValueError(f"instance {instance!r} is not an instance of the project")
    answers = data.get("answers")
    if not isinstance(answers, dict) or not answers:
        raise ValueError("answers must map scheme names to the expected answers")
    for scheme in answers:
        if scheme not in schemes:
            raise ValueError(f"answers: no scheme named {scheme!r}")
    return GoldRecord(number, dict(answers), instance=instance)


def store_gold(*, project: Project, config) -> int:
    """Read the gold file and store its units (inside the import's transaction: a refusal
    stores nothing). Returns how many gold units the project has."""
    if config.gold is None:
        return 0
    items = dict(Item.objects.filter(project=project).values_list("item_id", "index"))
    instances = dict(project.instances.values_list("instance_id", "pk"))
    records = read_gold_file(config, item_ids=set(items), instance_ids=set(instances))
    seen: set[str] = set()
    for record in records:
        if record.instance is not None and record.items is None:
            if record.instance in seen:
                raise GoldRefused(
                    f"{config.gold.file}:{record.line}: instance {record.instance!r} has a "
                    "gold record already"
                )
            seen.add(record.instance)
    training = config.gold.training_units
    units = Unit.objects.filter(project=project)
    n_units = units.count()
    ordinary = max(n_units, 1)
    rng = np.random.default_rng(config.seed)
    for order, record in enumerate(records):
        gold = {
            "answers": record.answers,
            "line": record.line,
            "order": order,
            "training": order < training,
        }
        if record.items is None:
            units.filter(instance_id=instances[record.instance]).update(is_gold=True, gold=gold)
            continue
        position = n_units + order
        Unit.objects.create(
            project=project,
            kind=Unit.Kind.TUPLE,
            external_id=f"tuple_{position + 1:06d}",
            position=position,
            random_rank=position,
            item_ids=record.items,
            item_indices=[items[i] for i in record.items],
            instance_id=instances[record.instance] if record.instance else None,
            is_gold=True,
            gold=gold,
            shown_number=int(rng.integers(1, ordinary + 1)),
        )
    return len(records)


# --------------------------------------------------------------------------- grading


@dataclass(frozen=True)
class Grade:
    correct: bool  # every scheme's answer as expected (BWS: best and worst both right)
    best_right: bool | None = None  # BWS only
    worst_right: bool | None = None


def _same(given, expected) -> bool:
    if isinstance(given, list) and isinstance(expected, list):
        try:
            return sorted(map(json.dumps, given)) == sorted(map(json.dumps, expected))
        except TypeError:
            return given == expected
    return given == expected


def grade(unit: Unit, answers: dict) -> Grade:
    """How a person's answers (scheme -> value) to a gold unit compare with its gold."""
    expected = (unit.gold or {}).get("answers", {})
    correct = True
    best_right = worst_right = None
    for scheme, want in expected.items():
        given = answers.get(scheme)
        if isinstance(want, dict) and set(want) == {"best", "worst"}:
            got = given if isinstance(given, dict) else {}
            b, w = got.get("best") == want["best"], got.get("worst") == want["worst"]
            best_right = b if best_right is None else best_right and b
            worst_right = w if worst_right is None else worst_right and w
            correct = correct and b and w
        else:
            correct = correct and _same(given, want)
    return Grade(correct, best_right, worst_right)


def answers_by_unit(project: Project, user, units) -> dict[int, dict]:
    rows = Annotation.objects.filter(project=project, annotator_id=user.pk, unit__in=units)
    found: dict[int, dict] = {}
    for unit_id, scheme, value in rows.values_list("unit_id", "scheme", "value"):
        found.setdefault(unit_id, {})[scheme] = value
    return found


# --------------------------------------------------------------------------- attention checks


def pick_attention_check(*, project: Project, user, n_given: int) -> Unit | None:
    """An attention check for this person's next unit, drawn with probability
    attention_rate (seeded by the project, the person and how many units they were given,
    so a test sees the same draws); a gold unit they have not seen, or None."""
    gold = project.settings.gold
    if gold is None or gold.attention_rate <= 0:
        return None
    draw = random.Random(f"{project.settings.seed}:{project.pk}:{user.pk}:{n_given}").random()
    if draw >= gold.attention_rate:
        return None
    seen = Assignment.objects.filter(project=project, annotator=user).values("unit_id")
    return (
        Unit.objects.filter(project=project, is_gold=True, gold__training=False)
        .exclude(pk__in=seen)
        .select_related("instance")
        .order_by("random_rank")
        .first()
    )


# --------------------------------------------------------------------------- training


class TrainingStatus(StrEnum):
    NOT_REQUIRED = "not required"
    NOT_STARTED = "not started"
    IN_PROGRESS = "in progress"
    PASSED = "passed"
    FAILED = "failed"


def training_units(project: Project) -> list[Unit]:
    return list(
        Unit.objects.filter(project=project, is_gold=True, gold__training=True)
        .select_related("instance")
        .order_by("gold__order")
    )


def _needs_training(project: Project, user) -> bool:
    gold = project.settings.gold
    if gold is None or gold.training_units <= 0:
        return False
    from .selectors import project_role  # selectors reads the queue, which reads this

    return project_role(user, project) == Membership.Role.ANNOTATOR


def training_required(membership: Membership) -> bool:
    """Whether this member must pass the training before their first unit (annotators of a
    project whose gold block has a training; managers, lab admins and staff never)."""
    return _needs_training(membership.project, membership.user)


@dataclass(frozen=True)
class TrainingResult:
    status: TrainingStatus
    answered: int
    correct: int
    total: int
    needed: int  # correct answers needed to pass


def training_result(project: Project, user) -> TrainingResult:
    units = training_units(project) if _needs_training(project, user) else []
    if not units:
        return TrainingResult(TrainingStatus.NOT_REQUIRED, 0, 0, 0, 0)
    answers = answers_by_unit(project, user, units)
    answered = [u for u in units if u.pk in answers]
    correct = sum(grade(u, answers[u.pk]).correct for u in answered)
    needed = math.ceil(project.settings.gold.pass_threshold * len(units) - 1e-9)
    if len(answered) < len(units):
        status = TrainingStatus.IN_PROGRESS if answered else TrainingStatus.NOT_STARTED
    else:
        status = TrainingStatus.PASSED if correct >= needed else TrainingStatus.FAILED
    return TrainingResult(status, len(answered), correct, len(units), needed)


def training_status(membership: Membership) -> TrainingStatus:
    return training_result(membership.project, membership.user).status


def training_blocks_work(project: Project, user) -> bool:
    """Whether this person may not be given ordinary units yet (or any more): their
    training is required and not passed."""
    return training_result(project, user).status not in (
        TrainingStatus.NOT_REQUIRED,
        TrainingStatus.PASSED,
    )


def next_training_unit(project: Project, user, lease) -> Unit | None:
    """The first training unit this person has not answered, reserved for them."""
    from django.utils import timezone

    units = training_units(project)
    answered = set(answers_by_unit(project, user, units))
    for unit in units:
        if unit.pk in answered:
            continue
        assignment, made = Assignment.objects.get_or_create(
            unit=unit,
            annotator=user,
            defaults={
                "project": project,
                "status": Assignment.Status.RESERVED,
                "leased_until": timezone.now() + lease,
            },
        )
        if made:
            Unit.objects.filter(pk=unit.pk).update(load=F("load") + 1)
        elif assignment.status == Assignment.Status.RESERVED:
            assignment.leased_until = timezone.now() + lease
            assignment.save(update_fields=["leased_until"])
        return unit
    return None


def screening_failure(project: Project, user) -> str | None:
    """Why this person is screened out of the project (the training failed, or more attention
    checks failed than the gold block allows), in words for the managers; None otherwise."""
    if training_result(project, user).status == TrainingStatus.FAILED:
        return "failed the training"
    return None


def record_training_outcome(project: Project, user) -> TrainingStatus:
    """Keep the outcome on the person's participant record, where the flow reads it."""
    status = training_result(project, user).status
    from . import models

    participant_model = getattr(models, "Participant", None)
    if participant_model is not None and status in (TrainingStatus.PASSED, TrainingStatus.FAILED):
        participant_model.objects.filter(project=project, user=user).update(training=str(status))
    return status


# --------------------------------------------------------------------------- exclusions


def excluded_names(project: Project | int) -> list[str]:
    """The usernames of the annotators left out, sorted."""
    project_id = project.pk if isinstance(project, Project) else project
    return sorted(
        Membership.objects.filter(project_id=project_id, excluded=True).values_list(
            "user__username", flat=True
        )
    )


def excluded_user_ids(project: Project | int) -> set[int]:
    project_id = project.pk if isinstance(project, Project) else project
    return set(
        Membership.objects.filter(project_id=project_id, excluded=True).values_list(
            "user_id", flat=True
        )
    )


def set_excluded(*, project: Project, user, excluded: bool) -> bool:
    """Leave an annotator out of (or take them back into) scores and agreement; the scores
    and the agreement report are computed again as after new answers. Returns whether
    anything changed."""
    changed = Membership.objects.filter(project=project, user=user).exclude(excluded=excluded)
    if not changed.update(excluded=excluded):
        return False
    schemes = [scheme.name for scheme in project.settings.schemes]
    # Announced as changed answers, so scoring runs again; the agreement report names the
    # annotators it left out, and is out of date when they differ (agreement.selectors).
    events.announce_answers(project_id=project.pk, schemes=schemes, count=0, source="web")
    return True
