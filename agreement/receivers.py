"""How the agreement app answers what `projects` announces (projects.events): when a
project's answers have settled, its report is brought up to date in the worker."""

import logging

log = logging.getLogger(__name__)


def update_report(sender, *, project, **kwargs) -> None:
    """Queue the report's update without ever blocking on a broker that is down (the task
    is idempotent, and the page computes a missing report itself)."""
    from .tasks import compute_agreement_task

    try:
        compute_agreement_task.apply_async(args=(project.pk,), retry=False)
    except Exception:
        log.warning("could not queue the agreement report of %s", project.pk, exc_info=True)
