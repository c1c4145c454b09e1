"""Gold units: units with known answers, read from the config's gold file when the project is
built, used as a training phase with feedback and as attention checks mixed into the queue.

A gold record of a BWS project names a tuple and its answer, one JSON object a line::

    {"items": ["i3", "i7", "i9", "i12"], "best": "i7", "worst": "i12"}

(``instance`` may name the instance whose context the tuple is shown with). A record of any
other project names an instance and the expected answer per scheme::

    {"instance": "doc-12", "answers": {"sentiment": "positive"}}

A BWS gold tuple becomes a unit of its own; an instance's gold record makes that instance's
unit a gold unit. Gold units never count in scores or agreement; exports keep their answers,
marked as gold. The first ``training.units`` gold units are the training; the others are the
attention checks the queue hands out in place of ordinary units (annotation.queue): exactly
``round(attention_rate x quota)`` of them per person, at positions drawn for that person, on
top of the quota. A gold answer is final once given (annotation.answers); a person who failed
the training, or more checks than ``max_failed_checks``, is screened out until a manager
resets them (reset_screening).

Managers can also leave an annotator out (exclude): their answers then count nowhere but
in exports, which mark them.
"""

from __future__ import annotations

import json
import logging
import math
from collections import defaultdict
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

import numpy as np
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Count, F, Q
from django.utils import timezone

from annotation.models import Annotation, Assignment, Submission
from crowds.models import Participant
from projects import events
from projects.configuration.vocabulary import BWS_TYPE
from projects.models import Item, Membership, Project, Unit
from projects.paths import PathRefused, confine
from projects.schemes import scheme_type

audit_log = logging.getLogger("annolab.audit")
security_log = logging.getLogger("annolab.security")

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
    fewest, most = scheme_type(BWS_TYPE).unit_items
    if not fewest <= len(items) <= most:
        raise ValueError(f"a tuple holds {fewest} to {most} items, got {len(items)}")
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


def store_gold_receiver(sender, *, project: Project, config, **kwargs) -> None:
    """projects.events.units_built: the gold units are stored once the queue units are."""
    store_gold(project=project, config=config)


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


def _is_annotator(project: Project, user) -> bool:
    """Annotators are trained and checked; managers, lab admins and staff never."""
    from projects.selectors import project_role  # selectors reads the queue, which reads this

    return project_role(user, project) == Membership.Role.ANNOTATOR


def _needs_training(project: Project, user) -> bool:
    gold = project.settings.gold
    if gold is None or gold.training_units <= 0:
        return False
    return _is_annotator(project, user)


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


def check_failures(project: Project, user) -> tuple[int, int]:
    """How many attention checks this person failed, and how many they answered."""
    answered = Annotation.objects.filter(project=project, annotator=user, unit__is_gold=True)
    units = {
        unit.pk: unit
        for unit in Unit.objects.filter(pk__in=answered.values("unit_id"))
        .exclude(gold__training=True)
        .only("pk", "gold", "is_gold")
    }
    given = answers_by_unit(project, user, list(units))
    failed = sum(not grade(units[pk], answers).correct for pk, answers in given.items())
    return failed, len(given)


def _checks_verdict(gold, failed: int, answered: int) -> str | None:
    limit = gold.max_failed_checks if gold is not None else None
    if limit is not None and failed > limit:
        return f"failed {failed} of {answered} attention checks"
    return None


def screening_failure(project: Project, user) -> str | None:
    """Why this person is screened out of the project (the training failed, or more attention
    checks failed than the gold block allows), in words for the managers; None otherwise."""
    if training_result(project, user).status == TrainingStatus.FAILED:
        return "failed the training"
    return _failed_checks(project, user)


def _failed_checks(project: Project, user) -> str | None:
    gold = project.settings.gold
    if gold is None or gold.max_failed_checks is None or not _is_annotator(project, user):
        return None
    return _checks_verdict(gold, *check_failures(project, user))


def withholds_work(project: Project, user) -> bool:
    """Whether the queue gives this person no unit: a training to pass first (or failed), or
    screened out by failed attention checks."""
    # The training is asked once: screening_failure would ask it again.
    return training_blocks_work(project, user) or _failed_checks(project, user) is not None


def screened_out(project: Project) -> dict[int, str]:
    """Per person screened out of the project (user id), why: the training failed or too
    many attention checks failed (screening_failure's words, for every person at once)."""
    gold = project.settings.gold
    if gold is None:
        return {}
    units = {
        unit.pk: unit for unit in Unit.objects.filter(project=project, is_gold=True).only("gold")
    }
    given: dict[int, dict[int, dict]] = defaultdict(lambda: defaultdict(dict))
    rows = Annotation.objects.filter(project=project, unit__is_gold=True)
    for user_id, unit_id, scheme, value in rows.values_list(
        "annotator_id", "unit_id", "scheme", "value"
    ):
        given[user_id][unit_id][scheme] = value
    managers = set(
        Membership.objects.filter(project=project, role=Membership.Role.MANAGER).values_list(
            "user_id", flat=True
        )
    )
    n_training = sum(bool((u.gold or {}).get("training")) for u in units.values())
    needed = math.ceil(gold.pass_threshold * n_training - 1e-9)
    found = {}
    for user_id, answers in given.items():
        if user_id in managers:
            continue
        right = defaultdict(int)
        for unit_id, answer in answers.items():
            kind = "training" if (units[unit_id].gold or {}).get("training") else "checks"
            right[kind, grade(units[unit_id], answer).correct] += 1
        trained = right["training", True] + right["training", False]
        if n_training and trained == n_training and right["training", True] < needed:
            found[user_id] = "failed the training"
        elif reason := _checks_verdict(
            gold, right["checks", False], right["checks", False] + right["checks", True]
        ):
            found[user_id] = reason
    return found


class ResetRefused(ValueError):
    """A reset that cannot be made; the message says why (HTTP 400)."""


@dataclass(frozen=True)
class ResetResult:
    reason: str  # why the person was screened out
    answers: int  # gold answers deleted
    units: int  # gold units given back


def person_to_reset(project: Project, username: str, *, by):
    """The person of the project (member, participant, or anyone handed a unit) a manager
    names for a reset; ResetRefused, logged, when there is none or it is a manager."""
    User = get_user_model()
    user = User.objects.filter(username=username).first() if username else None
    known = user is not None and (
        Membership.objects.filter(project=project, user=user).exists()
        or Participant.objects.filter(project=project, user=user).exists()
        or Assignment.objects.filter(project=project, annotator=user).exists()
    )
    if not known:
        refuse_reset(project, by, username, "no such person in this project")
    if Membership.objects.filter(project=project, user=user, role=Membership.Role.MANAGER).exists():
        refuse_reset(project, by, username, "a manager takes no training and no checks")
    return user


def refuse_reset(project: Project, by, username: str, reason: str):
    security_log.warning(
        "refused: %s (user %s) asked to reset %r in project %s: %s",
        by.get_username(),
        by.pk,
        username,
        project.slug,
        reason,
    )
    raise ResetRefused(f"Cannot reset {username or 'nobody'}: {reason}.")


@transaction.atomic
def reset_screening(*, project: Project, user, by) -> ResetResult:
    """Give a person screened out of the project (failed training or too many failed
    attention checks) a fresh start, by a manager's decision: their gold answers and gold
    units go (the units' slots given back), their participant record returns to before the
    training and loses a screen-out outcome. Logged: who reset whom and why."""
    reason = screening_failure(project, user)
    if reason is None:
        refuse_reset(
            project,
            by,
            user.get_username(),
            "they have not failed the training or the attention checks; there is nothing to reset",
        )
    gold_units = Unit.objects.filter(project=project, is_gold=True)
    mine = Assignment.objects.filter(project=project, annotator=user, unit__in=gold_units)
    unit_ids = list(mine.values_list("unit_id", flat=True))
    answers, _ = Annotation.objects.filter(
        project=project, annotator=user, unit__in=gold_units
    ).delete()
    Submission.objects.filter(annotator=user, unit_id__in=unit_ids).delete()
    mine.delete()
    figures = {
        row["pk"]: row
        for row in Unit.objects.filter(pk__in=unit_ids)
        .values("pk")
        .annotate(
            n=Count("assignments"),
            done=Count("assignments", filter=Q(assignments__status=Assignment.Status.COMPLETED)),
        )
    }
    for unit_id, row in figures.items():
        Unit.objects.filter(pk=unit_id).update(load=row["n"], completed=row["done"])
    participant = Participant.objects.filter(project=project, user=user)
    participant.update(training=Participant.Training.NONE)
    participant.filter(outcome=Participant.Outcome.SCREENED_OUT).update(
        outcome=Participant.Outcome.NONE, outcome_at=None, outcome_reason=""
    )
    audit_log.warning(
        "reset: %s (user %s) reset %s (user %s) in project %s, screened out because they %s; "
        "%s gold answers deleted, %s gold units given back",
        by.get_username(),
        by.pk,
        user.get_username(),
        user.pk,
        project.slug,
        reason,
        answers,
        len(unit_ids),
    )
    return ResetResult(reason, answers, len(unit_ids))


def record_training_outcome(project: Project, user) -> TrainingStatus:
    """Keep the outcome on the person's participant record, where the flow reads it."""
    status = training_result(project, user).status
    if status in (TrainingStatus.PASSED, TrainingStatus.FAILED):
        Participant.objects.filter(project=project, user=user).update(training=str(status))
    return status


# --------------------------------------------------------------------------- exclusions
