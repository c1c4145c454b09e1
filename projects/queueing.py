"""Queuing background work from a request: never blocks on a broker that is down."""

import logging

log = logging.getLogger(__name__)


def send_task(task, *args, countdown: float = 0, **kwargs) -> bool:
    """Queue a Celery task without ever blocking the caller on a broker that is down; False
    when the broker could not be reached (the caller leaves a mark for a catch-up to retry,
    or relies on the task being idempotent and sent again later)."""
    try:
        task.apply_async(args=args, kwargs=kwargs, countdown=countdown or None, retry=False)
    except Exception:
        log.warning("could not queue %s; it is sent again later", task.name, exc_info=True)
        return False
    return True
