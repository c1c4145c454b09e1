"""Celery tasks of the projects app: thin callers of its services, on the default queue."""

import logging

from celery import shared_task

from annotation.annotation_files import write_answer_file
from projects.models import Project
from projects.paths import PathRefused

log = logging.getLogger(__name__)


@shared_task(
    name="projects.write_answer_file",
    autoretry_for=(OSError,),
    retry_backoff=True,
    retry_backoff_max=60,  # below the broker visibility timeout: a waiting retry is delivered once
    retry_jitter=True,
    max_retries=3,
)
def write_answer_file_task(project_id: int) -> str | None:
    """Write the project's answer file in its output_annotation_dir; returns its path.

    Idempotent: the file is rewritten whole from the stored answers. A project deleted in
    the meantime, or a stored config whose output_annotation_dir leads outside the
    project's folder, writes nothing (logged, not retried)."""
    project = Project.objects.filter(pk=project_id).first()
    if project is None:
        return None
    try:
        return str(write_answer_file(project))
    except (PathRefused, ValueError) as exc:
        log.warning("project %s: answer file not written: %s", project_id, exc)
        return None
