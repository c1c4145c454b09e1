"""Queuing background work from a request: never blocks on a broker that is down."""

import logging

from celery import Task, current_app

log = logging.getLogger(__name__)


def send_task(task: Task | str, *args, countdown: float = 0, **kwargs) -> bool:
    """Queue a Celery task without ever blocking the caller on a broker that is down; False
    when the broker could not be reached (the caller leaves a mark for a catch-up to retry,
    or relies on the task being idempotent and sent again later).

    ``task`` is the task or its registered name: a module that queues work by name need not
    import the module that defines it (the tasks import the services that queue them)."""
    name = task if isinstance(task, str) else task.name
    # By name, the signature is routed like the task (CELERY_TASK_ROUTES) and goes through
    # the task's own apply_async where this process has it registered.
    signature = current_app.signature(name) if isinstance(task, str) else task
    try:
        signature.apply_async(args=args, kwargs=kwargs, countdown=countdown or None, retry=False)
    except Exception:
        log.warning("could not queue %s; it is sent again later", name, exc_info=True)
        return False
    return True
