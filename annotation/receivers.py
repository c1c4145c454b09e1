"""How annotation answers the projects app's news (projects.events): when a project's
answers have settled, its answer file in output_annotation_dir is brought up to date in the
worker; when a person is removed from a project, the units they hold go back to the queue."""

from projects.queueing import send_task

from . import queue
from .tasks import write_answer_file_task


def keep_answer_file(sender, *, project, **kwargs) -> None:
    """Queue the answer file's rewrite without ever blocking on a broker that is down (the
    task is idempotent: the next settle writes every answer again)."""
    send_task(write_answer_file_task, project.pk)


def release_removed_member(sender, *, project, user, **kwargs) -> int:
    """The removed person's reservations end at once; how many."""
    return queue.release_person(project, user)
