"""Export and import of a project's answers in the interchange format,
through projects.interchange, the one reader and writer of that format."""

from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Count

from . import interchange
from .answers import unit_context
from .models import Annotation, Assignment, Project, Unit
from .validation import AnswerError, validate_answers

TIMESTAMP = "%Y-%m-%dT%H:%M:%SZ"


class AnnotationImportError(ValueError):
    """Records that cannot be imported; every line names file:line and the reason."""


def _timestamp(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime(TIMESTAMP)


def export_records(project: Project) -> list[interchange.UnitRecord]:
    """One record per annotator and unit, units in design order, annotators by name."""
    answers = (
        Annotation.objects.filter(project=project)
        .select_related("unit__bws_tuple", "unit__instance", "annotator")
        .order_by("unit__position", "annotator__username", "scheme")
    )
    records: list[interchange.UnitRecord] = []
    current = None
    for answer in answers.iterator(chunk_size=2000):
        key = (answer.unit_id, answer.annotator_id)
        if current is None or current[0] != key:
            unit = answer.unit
            record = interchange.UnitRecord(
                id=unit.external_id,
                annotator=answer.annotator.username,
                items=list(unit.bws_tuple.item_ids) if unit.bws_tuple_id else None,
                instance=(
                    unit.instance.instance_id if unit.bws_tuple_id and unit.instance_id else None
                ),
            )
            current = (key, record, answer.updated_at)
            records.append(record)
        _, record, latest = current
        record.annotations[answer.scheme] = answer.value
        latest = max(latest, answer.updated_at)
        record.timestamp = _timestamp(latest)
        current = (key, record, latest)
    return records


def write_export(project: Project, output: str | Path, fmt: str | None = None) -> int:
    """Write the export to a path; the format from `fmt` or the file's suffix."""
    output = Path(output)
    fmt = fmt or output.suffix.lstrip(".") or "jsonl"
    records = export_records(project)
    if fmt == "jsonl":
        return interchange.write_jsonl(records, output)
    if fmt in ("csv", "tsv"):
        return interchange.write_table(records, output, delimiter="\t" if fmt == "tsv" else ",")
    raise ValueError(f"unknown export format {fmt!r}: use jsonl, csv or tsv")


def read_import_file(path: str | Path) -> list[interchange.UnitRecord]:
    path = Path(path)
    try:
        if path.is_dir():
            return interchange.read_directory(path)
        return interchange.read_file(path)
    except interchange.InterchangeError as exc:
        raise AnnotationImportError(str(exc)) from exc
    except OSError as exc:
        raise AnnotationImportError(f"{path}: cannot read: {exc}") from exc


@dataclass(frozen=True)
class ImportSummary:
    records: int
    annotations: int
    created_users: list[str]


@transaction.atomic
def import_records(*, project: Project, records: list[interchange.UnitRecord]) -> ImportSummary:
    """Store imported answers, all or nothing: unknown units and invalid values are errors
    naming file and line; missing annotator accounts are created inactive."""
    units = {
        u.external_id: u
        for u in Unit.objects.filter(project=project).select_related("bws_tuple", "instance")
    }
    problems = []
    checked = []
    seen = set()
    for record in records:
        where = f"{record.file or '<records>'}:{record.line}"
        unit = units.get(record.id)
        if unit is None:
            problems.append(f"{where}: no unit {record.id!r} in project {project.slug}")
            continue
        if (
            record.items is not None
            and unit.bws_tuple_id
            and record.items != unit.bws_tuple.item_ids
        ):
            problems.append(f"{where}: items of {record.id} differ from the stored tuple")
            continue
        if not record.annotator:
            problems.append(f"{where}: no annotator")
            continue
        if (record.id, record.annotator) in seen:
            problems.append(f"{where}: {record.annotator} answers {record.id} twice")
            continue
        seen.add((record.id, record.annotator))
        try:
            cleaned = validate_answers(
                project.schemes, record.annotations, unit_context(unit), enforce_required=False
            )
        except AnswerError as exc:
            problems.append(f"{where}: {exc}")
            continue
        stamp = None
        if record.timestamp:
            try:
                stamp = datetime.fromisoformat(record.timestamp.replace("Z", "+00:00"))
            except ValueError:
                problems.append(f"{where}: timestamp {record.timestamp!r} is not ISO 8601")
                continue
            if stamp.tzinfo is None:
                stamp = stamp.replace(tzinfo=UTC)
        checked.append((record, unit, cleaned, stamp))
        if len(problems) >= 20:
            break
    if problems:
        raise AnnotationImportError("\n".join(problems))
    User = get_user_model()
    names = {record.annotator for record, *_ in checked}
    users = {u.username: u for u in User.objects.filter(username__in=names)}
    created = sorted(names - set(users))
    for name in created:
        user = User(username=name, is_active=False)
        user.set_unusable_password()
        user.save()
        users[name] = user
    existing = set(
        Annotation.objects.filter(project=project, annotator__username__in=names).values_list(
            "unit__external_id", "annotator__username"
        )
    )
    clashes = [
        f"{r.file}:{r.line}: {r.annotator} already answered {r.id} in this project"
        for r, *_ in checked
        if (r.id, r.annotator) in existing
    ]
    if clashes:
        raise AnnotationImportError("\n".join(clashes[:20]))
    answers, assignments, per_unit = [], [], defaultdict(int)
    for record, unit, cleaned, stamp in checked:
        user = users[record.annotator]
        index_of = (
            dict(zip(unit.bws_tuple.item_ids, unit.bws_tuple.item_indices, strict=True))
            if unit.bws_tuple_id
            else {}
        )
        assignments.append(
            Assignment(
                unit=unit,
                annotator=user,
                project=project,
                status=Assignment.Status.COMPLETED,
                completed_at=stamp,
            )
        )
        per_unit[unit.pk] += 1
        for scheme, value in cleaned.items():
            bws = isinstance(value, dict) and set(value) == {"best", "worst"}
            answers.append(
                Annotation(
                    project=project,
                    unit=unit,
                    annotator=user,
                    scheme=scheme,
                    value=value,
                    best_index=index_of[value["best"]] if bws else None,
                    worst_index=index_of[value["worst"]] if bws else None,
                )
            )
    Assignment.objects.bulk_create(assignments, batch_size=5000)
    created_answers = Annotation.objects.bulk_create(answers, batch_size=5000)
    stamps = {(u.pk, users[r.annotator].pk): s for r, u, _, s in checked if s is not None}
    dated = []
    for answer in created_answers:
        stamp = stamps.get((answer.unit_id, answer.annotator_id))
        if stamp is not None:
            answer.created_at = answer.updated_at = stamp
            dated.append(answer)
    # bulk_update calls no save(), so auto_now fields keep the imported times
    Annotation.objects.bulk_update(dated, ["created_at", "updated_at"], batch_size=2000)
    _recount_units(project, per_unit)
    return ImportSummary(len(checked), len(answers), created)


def _recount_units(project: Project, touched: dict[int, int]) -> None:
    """Set load and completed of the touched units from their assignments."""
    counts = dict(
        Assignment.objects.filter(unit_id__in=list(touched))
        .values("unit_id")
        .annotate(n=Count("id"))
        .values_list("unit_id", "n")
    )
    done = dict(
        Assignment.objects.filter(unit_id__in=list(touched), status=Assignment.Status.COMPLETED)
        .values("unit_id")
        .annotate(n=Count("id"))
        .values_list("unit_id", "n")
    )
    units = list(Unit.objects.filter(pk__in=list(touched)))
    for unit in units:
        unit.load, unit.completed = counts.get(unit.pk, 0), done.get(unit.pk, 0)
    Unit.objects.bulk_update(units, ["load", "completed"], batch_size=5000)
