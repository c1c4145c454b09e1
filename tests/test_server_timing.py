"""SERVER_TIMING=1: every response says where its time went (config/timing.py)."""

import re

import pytest
from django.conf import settings
from django.test import override_settings

from projects.tests.factories import UserFactory

pytestmark = pytest.mark.django_db
HEADER = re.compile(
    r"^app;dur=(?P<app>[\d.]+), cpu;dur=(?P<cpu>[\d.]+), "
    r'db;dur=(?P<db>[\d.]+);desc="(?P<queries>\d+) queries"$'
)


@override_settings(MIDDLEWARE=["config.timing.ServerTimingMiddleware", *settings.MIDDLEWARE])
def test_a_response_carries_app_cpu_and_database_time(client):
    user = UserFactory(username="ops")
    client.force_login(user)
    response = client.get("/api/v1/projects/")
    assert response.status_code == 200
    found = HEADER.match(response["Server-Timing"])
    assert found, response["Server-Timing"]
    app, cpu, db = (float(found[k]) for k in ("app", "cpu", "db"))
    assert int(found["queries"]) >= 2  # the session's user and the project list at least
    assert app > 0 and 0 <= db <= app + 0.1 and 0 <= cpu <= app + 1.0


@override_settings(MIDDLEWARE=["config.timing.ServerTimingMiddleware", *settings.MIDDLEWARE])
def test_queries_are_counted_per_request_not_accumulated(client):
    client.force_login(UserFactory(username="ops2"))
    counts = []
    for _ in range(3):
        header = client.get("/api/v1/projects/")["Server-Timing"]
        counts.append(int(HEADER.match(header)["queries"]))
    assert counts[1] == counts[2] and counts[2] <= counts[0]


def test_off_by_default(client):
    assert not settings.SERVER_TIMING
    assert "Server-Timing" not in client.get("/accounts/login/")
