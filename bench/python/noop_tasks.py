"""The queue benchmark's task for ``cybercom worker``: a lab module with one task that does nothing."""

from celery import shared_task


@shared_task(name="bench.noop")
def noop() -> None:
    """Do nothing (used by the queue benchmark)."""
