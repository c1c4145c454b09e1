"""Queuing from a request: a task sent by its registered name reaches the queue its route
names, with its arguments, and a broker that is down costs the caller a False, not an
exception or a wait."""

import socket
import time

import pytest
from celery import Celery, current_app

from projects.queueing import send_task


def _current(app: Celery):
    """Make ``app`` the current Celery app for the test, then the previous one again."""
    previous = current_app._get_current_object()
    app.set_current()
    try:
        yield app
    finally:
        previous.set_current()


@pytest.fixture
def in_memory():
    app = Celery("queueing-test", broker="memory://", set_as_current=False)
    app.conf.task_routes = {"demo.slow": {"queue": "slow"}}
    yield from _current(app)


@pytest.fixture
def broker_down():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens here once the socket is closed
    app = Celery("queueing-down", broker=f"redis://127.0.0.1:{port}/0", set_as_current=False)
    app.conf.broker_connection_timeout = 1
    app.conf.redis_socket_connect_timeout = 1
    yield from _current(app)


def test_a_task_sent_by_name_reaches_the_queue_its_route_names(in_memory):
    assert send_task("demo.slow", 3, force=True) is True
    with in_memory.connection_for_read() as connection:
        message = connection.SimpleQueue("slow").get(timeout=1)
    message.ack()
    assert message.headers["task"] == "demo.slow"
    assert message.payload[:2] == [[3], {"force": True}]


def test_a_name_this_process_registered_goes_through_the_tasks_own_apply_async(
    in_memory, monkeypatch
):
    @in_memory.task(name="demo.slow", shared=False)
    def slow(n, force=False):
        return n

    calls = []

    def apply_async(args=None, kwargs=None, **options):
        calls.append((tuple(args), kwargs, options["retry"]))

    monkeypatch.setattr(slow, "apply_async", apply_async)
    assert send_task("demo.slow", 3, force=True)
    assert calls == [((3,), {"force": True}, False)]


@pytest.mark.parametrize("by_name", [True, False])
def test_a_broker_that_is_down_gives_false_at_once(broker_down, by_name, caplog):
    @broker_down.task(name="demo.slow", shared=False)
    def slow(n):
        return n

    started = time.monotonic()
    assert send_task("demo.slow" if by_name else slow, 3) is False
    # The broker's connect timeout (1 s here) bounds the wait; no retries on top of it.
    assert time.monotonic() - started < 15
    assert "could not queue demo.slow" in caplog.text
