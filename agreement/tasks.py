"""Celery tasks of the agreement app: thin callers of the services."""

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings

from projects.models import Project

from .models import AgreementReport
from .services import current_report


@shared_task(
    name="agreement.compute_report",
    autoretry_for=(Exception,),
    retry_backoff=True,
    retry_backoff_max=60,  # below the broker visibility timeout: a waiting retry is delivered once
    retry_jitter=True,
    max_retries=3,
)
def compute_agreement_task(project_id: int) -> int | None:
    """Bring the project's agreement report up to date; returns the report's id.

    Idempotent: when no answer changed since the latest report, nothing new is stored.
    A project deleted in the meantime is not an error worth retrying.
    """
    project = Project.objects.filter(pk=project_id).first()
    if project is None:
        return None
    try:
        report, _ = current_report(project=project)
    except SoftTimeLimitExceeded:
        # compute_report stored the failure; say why, and do not retry what timed out.
        failed = AgreementReport.objects.filter(
            project=project, status=AgreementReport.Status.FAILED
        ).order_by("-id")[:1]
        AgreementReport.objects.filter(pk__in=list(failed.values_list("pk", flat=True))).update(
            error="stopped: the computation took longer than the limit of "
            f"{settings.CELERY_TASK_SOFT_TIME_LIMIT} seconds (CELERY_TASK_SOFT_TIME_LIMIT)"
        )
        return None
    return report.pk
