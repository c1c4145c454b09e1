"""Reads of the agreement app: the stored reports and the figures each page shows."""

from __future__ import annotations

from django.db.models import Max
from django.utils import timezone

from agreement.core.report import BWS_TYPES, CATEGORICAL_TYPES, STRUCTURED_TYPES
from projects.models import Annotation, Project

from .models import AgreementReport

# Schemes whose figures the categorical endpoint gives: chance-corrected coefficients on
# one label per unit (a BWS answer is the chosen item, a nominal label per tuple).
CATEGORICAL_REPORT_TYPES = CATEGORICAL_TYPES + BWS_TYPES


def latest_report(project: Project) -> AgreementReport | None:
    """The newest successfully computed report of the project, or None."""
    return (
        AgreementReport.objects.filter(project=project, status=AgreementReport.Status.OK)
        .order_by("-computed_at", "-id")
        .first()
    )


def latest_failure(project: Project) -> AgreementReport | None:
    """The newest failed computation if it is newer than the newest good report."""
    failure = (
        AgreementReport.objects.filter(project=project, status=AgreementReport.Status.FAILED)
        .order_by("-computed_at", "-id")
        .first()
    )
    good = latest_report(project)
    if failure is None or (good is not None and good.computed_at >= failure.computed_at):
        return None
    return failure


def answers_since(report: AgreementReport) -> int:
    """Answers saved or changed after the report was computed."""
    return Annotation.objects.filter(
        project_id=report.project_id, updated_at__gt=report.computed_at
    ).count()


def is_current(report: AgreementReport) -> bool:
    """Whether the report still reflects every stored answer (none added, changed or removed)."""
    figures = Annotation.objects.filter(project_id=report.project_id).aggregate(
        latest=Max("updated_at")
    )
    count = Annotation.objects.filter(project_id=report.project_id).count()
    latest = figures["latest"]
    return count == report.n_annotations and (latest is None or latest <= report.computed_at)


def report_age_seconds(report: AgreementReport) -> int:
    return max(0, int((timezone.now() - report.computed_at).total_seconds()))


def categorical_figures(report: AgreementReport, *, see: str) -> dict:
    """The categorical part of a report: per-scheme figures of categorical (and BWS) schemes.

    Structured schemes (3D boxes, segments, traces) are left out and named with a pointer
    (`see`) to the full IAA report, where their figures are shown as not chance-corrected.
    """
    schemes = report.report.get("schemes", {})
    return {
        "schemes": {
            name: figures
            for name, figures in schemes.items()
            if figures.get("type") in CATEGORICAL_REPORT_TYPES
        },
        "structured_schemes": {
            name: {"type": figures.get("type"), "see": see}
            for name, figures in schemes.items()
            if figures.get("type") in STRUCTURED_TYPES
        },
        "see": see,
    }


def report_meta(report: AgreementReport) -> dict:
    """When and from how much a report was computed."""
    return {
        "computed_at": report.computed_at.isoformat(),
        "age_seconds": report_age_seconds(report),
        "n_annotations": report.n_annotations,
        "n_records": report.report.get("n_records", 0),
        "model_annotators": report.report.get("model_annotators", []),
    }
