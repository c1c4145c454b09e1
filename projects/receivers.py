"""How the projects app answers its own news (projects.events): when a project's answers
have settled, its answer file in output_annotation_dir is brought up to date in the worker."""

import logging

log = logging.getLogger(__name__)


def keep_answer_file(sender, *, project, **kwargs) -> None:
    """Queue the answer file's rewrite without ever blocking on a broker that is down (the
    task is idempotent: the next settle writes every answer again)."""
    from .tasks import write_answer_file_task

    try:
        write_answer_file_task.apply_async(args=(project.pk,), retry=False)
    except Exception:
        log.warning("could not queue the answer file of %s", project.pk, exc_info=True)
