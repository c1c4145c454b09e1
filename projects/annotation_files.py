"""Export and import of a project's answers in the interchange format,
through projects.interchange, the one reader and writer of that format."""

from datetime import UTC, datetime
from pathlib import Path

from . import answers, interchange
from .answers import unit_context
from .models import Annotation, Project, Unit
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
        .select_related("unit__instance", "annotator")
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
                items=list(unit.item_ids) if unit.item_ids else None,
                instance=(
                    unit.instance.instance_id if unit.item_ids and unit.instance_id else None
                ),
            )
            current = (key, record, answer.answered_at or answer.updated_at)
            records.append(record)
        _, record, latest = current
        record.annotations[answer.scheme] = answer.value
        latest = max(latest, answer.answered_at or answer.updated_at)
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


ImportSummary = answers.ImportResult


def import_records(*, project: Project, records: list[interchange.UnitRecord]) -> ImportSummary:
    """Store imported answers through projects.answers, all or nothing: unknown units,
    invalid values, answers already stored, live leases and full units are errors naming
    file and line; missing annotator accounts are created inactive."""
    units = {
        u.external_id: u for u in Unit.objects.filter(project=project).select_related("instance")
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
        if record.items is not None and unit.item_ids and record.items != unit.item_ids:
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
    try:
        return answers.import_answers(
            project=project,
            answers=[
                answers.ImportedAnswer(
                    where=f"{record.file or '<records>'}:{record.line}",
                    unit=unit,
                    annotator=record.annotator,
                    answers=cleaned,
                    answered_at=stamp,
                )
                for record, unit, cleaned, stamp in checked
            ],
        )
    except answers.ImportRefused as exc:
        raise AnnotationImportError(str(exc)) from exc
