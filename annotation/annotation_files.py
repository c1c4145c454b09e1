"""Export and import of a project's answers in the interchange format, through
projects.interchange, the one reader and writer of that format; and the answer file the
platform keeps in each project's output_annotation_dir."""

import tempfile
from datetime import UTC, datetime
from pathlib import Path

from annotation import answer_import
from annotation.answers import unit_context
from annotation.models import Annotation
from projects import interchange
from projects.configuration import OUTPUT_FORMATS, ProjectConfig
from projects.models import Project, Unit
from projects.paths import PathRefused, write_inside
from projects.selectors import excluded_user_ids
from projects.services import project_folder
from projects.validation import AnswerError, validate_answers

TIMESTAMP = "%Y-%m-%dT%H:%M:%SZ"
# The file the platform keeps in a project's output_annotation_dir: annotations.<format>.
ANSWER_FILE_NAME = "annotations"


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
    left_out = excluded_user_ids(project)
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
                gold=unit.is_gold,
                excluded=answer.annotator_id in left_out,
            )
            current = (key, record, answer.answered_at or answer.updated_at)
            records.append(record)
        _, record, latest = current
        record.annotations[answer.scheme] = answer.value
        latest = max(latest, answer.answered_at or answer.updated_at)
        record.timestamp = _timestamp(latest)
        current = (key, record, latest)
    return records


def _write_records(records, target, fmt: str) -> int:
    """Write records to a path or an open text stream in one of OUTPUT_FORMATS."""
    if fmt == "jsonl":
        return interchange.write_jsonl(records, target)
    if fmt in ("csv", "tsv"):
        return interchange.write_table(records, target, delimiter="\t" if fmt == "tsv" else ",")
    raise ValueError(f"unknown export format {fmt!r}: use jsonl, csv or tsv")


def write_export(project: Project, output: str | Path, fmt: str | None = None) -> int:
    """Write the export to a path; the format from `fmt` or the file's suffix."""
    output = Path(output)
    fmt = fmt or output.suffix.lstrip(".") or "jsonl"
    return _write_records(export_records(project), output, fmt)


# The export's formats and their media types, for the web page and the API alike.
EXPORT_TYPES = {"jsonl": "application/jsonl", "csv": "text/csv", "tsv": "text/tab-separated-values"}


def export_file(project: Project, fmt: str) -> tuple[bytes, str, str]:
    """The export as a download: its bytes, file name and media type (fmt: EXPORT_TYPES)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"{project.slug}-annotations.{fmt}"
        write_export(project, path, fmt)
        return path.read_bytes(), path.name, EXPORT_TYPES[fmt]


def write_answer_file(project: Project) -> Path:
    """Write the project's answers as ANSWER_FILE_NAME.<output_annotation_format> in the
    output_annotation_dir of its own folder, where ``python -m bws score --config`` reads
    them: the whole file, replaced atomically.

    The stored config is confined again (projects.paths.write_inside): PathRefused when its
    output_annotation_dir leads outside the project's folder; ValueError for a format
    that is not one of OUTPUT_FORMATS."""
    config = ProjectConfig.from_dict(project.config)
    if not isinstance(config.output_annotation_dir, str):
        raise PathRefused("output_annotation_dir")
    fmt = config.output_annotation_format
    if fmt not in OUTPUT_FORMATS:
        raise ValueError(f"unknown output_annotation_format {fmt!r}: use jsonl, csv or tsv")
    relative = Path(config.output_annotation_dir) / f"{ANSWER_FILE_NAME}.{fmt}"
    records = export_records(project)
    return write_inside(
        project_folder(project),
        relative,
        lambda stream: _write_records(records, stream, fmt),
        key="output_annotation_dir",
    )


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


ImportSummary = answer_import.ImportResult


def import_records(*, project: Project, records: list[interchange.UnitRecord]) -> ImportSummary:
    """Store imported answers through annotation.answers, all or nothing: unknown units,
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
        return answer_import.import_answers(
            project=project,
            answers=[
                answer_import.ImportedAnswer(
                    where=f"{record.file or '<records>'}:{record.line}",
                    unit=unit,
                    annotator=record.annotator,
                    answers=cleaned,
                    answered_at=stamp,
                )
                for record, unit, cleaned, stamp in checked
            ],
        )
    except answer_import.ImportRefused as exc:
        raise AnnotationImportError(str(exc)) from exc
