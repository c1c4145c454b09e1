"""How the agreement app answers what `projects` announces (projects.events): when a
project's answers have settled, its report is brought up to date in the worker."""

from projects.queueing import send_task

from .tasks import compute_agreement_task


def update_report(sender, *, project, **kwargs) -> None:
    """Queue the report's update without ever blocking on a broker that is down (the task
    is idempotent, and the page computes a missing report itself)."""
    send_task(compute_agreement_task, project.pk)
