"""Writes of the agreement app: compute a project's report and store it."""

from __future__ import annotations

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from agreement.core.report import build_report
from annotation.annotation_files import export_records
from annotation.selectors import model_judges
from projects.models import Project
from projects.rate_limits import admit_or_refuse
from projects.schemes import scheme_type
from projects.selectors import excluded_names

from . import selectors
from .models import AgreementReport


def compute_report(*, project: Project) -> AgreementReport:
    """Compute the project's agreement report from its stored answers and keep it.

    A failure is stored too (status failed, with the error) so the page can say why the
    figures are old, and the exception is raised again for the caller or the worker's retry.
    """
    started = timezone.now()
    try:
        with transaction.atomic():
            stored = export_records(project)
            records = counted_records(project, stored)
            schemes = [
                {
                    "name": s["name"],
                    "type": s["type"],
                    "options": s["options"],
                    "measure": scheme_type(s["type"]).measure,
                }
                for s in project.schemes
            ]
            report = build_report(records, schemes, model_annotators=model_judges(project))
            left_out = excluded_names(project)
            if left_out:  # named, so the report is out of date when the list changes
                report["excluded_annotators"] = left_out
            return AgreementReport.objects.create(
                project=project,
                computed_at=started,
                n_annotations=sum(len(record.annotations) for record in stored),
                report=report,
                status=AgreementReport.Status.OK,
            )
    except Exception as exc:
        # Outside the rolled-back block, so the failure survives it.
        AgreementReport.objects.create(
            project=project,
            status=AgreementReport.Status.FAILED,
            error=f"{type(exc).__name__}: {exc}",
        )
        raise


def counted_records(project: Project, stored: list | None = None) -> list:
    """The answers agreement is computed from (of ``stored``, the export's records): neither
    gold units' answers nor those of the annotators a manager left out (crowds.gold)."""
    gold_ids = set(project.units.filter(is_gold=True).values_list("external_id", flat=True))
    left_out = set(excluded_names(project))
    return [
        record
        for record in (export_records(project) if stored is None else stored)
        if record.id not in gold_ids and record.annotator not in left_out
    ]


def current_report(*, project: Project) -> tuple[AgreementReport, bool]:
    """The latest report if no answer changed since; otherwise a new one.

    Returns (report, computed_now). Running it twice stores at most one report, which keeps
    the worker's task idempotent.
    """
    latest = selectors.latest_report(project)
    if latest is not None and selectors.is_current(latest):
        return latest, False
    return compute_report(project=project), True


def recompute_on_request(*, project: Project) -> AgreementReport:
    """A manager's "Recompute now": a new report from every stored answer, at most
    AGREEMENT_MANUAL_RUNS_PER_HOUR per project (it is computed in the request, so the limit
    keeps one lab's managers from holding the web's workers). Raises
    projects.rate_limits.Refused beyond the limit."""
    admit_or_refuse(
        "agreement-recomputes",
        project.pk,
        settings.AGREEMENT_MANUAL_RUNS_PER_HOUR,
        "AGREEMENT_MANUAL_RUNS_PER_HOUR",
        "recomputations",
    )
    return compute_report(project=project)


def latest_or_compute(*, project: Project) -> tuple[AgreementReport, bool]:
    """The latest stored report, however old (the caller shows its age), or a first one
    computed now. Returns (report, computed_now)."""
    latest = selectors.latest_report(project)
    if latest is not None:
        return latest, False
    return compute_report(project=project), True
