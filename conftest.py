"""Test-wide rules: tests that need PostgreSQL or Redis are skipped without them, and with
REQUIRE_SERVICES=1 (set by .ci/run) such a skip is a failure."""

import os

import pytest


def _service_missing(marker: str) -> str | None:
    if marker == "postgres":
        if not os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://")):
            return "needs PostgreSQL: set DATABASE_URL=postgres://..."
    if marker == "redis":
        if not os.environ.get("REDIS_URL"):
            return "needs Redis: set REDIS_URL=redis://..."
    return None


def pytest_runtest_setup(item):
    for marker in ("postgres", "redis"):
        if item.get_closest_marker(marker) is None:
            continue
        reason = _service_missing(marker)
        if reason is None:
            continue
        if os.environ.get("REQUIRE_SERVICES") == "1":
            pytest.fail(f"REQUIRE_SERVICES=1 but this test {reason}", pytrace=False)
        pytest.skip(reason)


@pytest.fixture(autouse=True)
def _project_files_in_tmp(tmp_path_factory):
    """Project folders written by a test (uploads, score files) go to a temporary folder,
    not to the checkout's var/."""
    from django.conf import settings

    previous = settings.PROJECT_FILES_ROOT
    settings.PROJECT_FILES_ROOT = tmp_path_factory.mktemp("project-files")
    yield
    settings.PROJECT_FILES_ROOT = previous
