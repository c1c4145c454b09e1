"""Celery tasks of the BWS app: thin callers of the core and the services."""

from celery import shared_task

from .core.design import balanced_tuples, design_summary


@shared_task(name="bws.design_summary")
def design_summary_task(n_items: int, tuple_size: int, appearances: int, seed: int = 42) -> dict:
    """Design tuples in a worker and return their summary (used to check workers end to end)."""
    tuples = balanced_tuples(n_items, tuple_size, appearances, seed=seed)
    summary = design_summary(tuples, n_items)
    return {
        "n_tuples": int(summary.n_tuples),
        "appearances_min": int(summary.appearances_min),
        "appearances_max": int(summary.appearances_max),
        "repeated_pairs": int(summary.repeated_pairs),
    }
