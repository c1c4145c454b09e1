"""Celery tasks of the agreement app: thin callers of the services."""

from celery import shared_task

from projects.models import Project

from .services import current_report


@shared_task(
    name="agreement.compute_report",
    autoretry_for=(Exception,),
    retry_backoff=True,
    retry_backoff_max=600,
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
    report, _ = current_report(project=project)
    return report.pk
