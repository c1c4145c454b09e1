"""How the projects app answers its own news (projects.events): when a project's answers
have settled, its answer file in output_annotation_dir is brought up to date in the worker."""

from projects.queueing import send_task


def keep_answer_file(sender, *, project, **kwargs) -> None:
    """Queue the answer file's rewrite without ever blocking on a broker that is down (the
    task is idempotent: the next settle writes every answer again)."""
    from annotation.tasks import write_answer_file_task

    send_task(write_answer_file_task, project.pk)
