"""Test-wide rules: tests that need PostgreSQL or Redis are skipped without them, and with
REQUIRE_SERVICES=1 (set by .ci/run) such a skip is a failure. Under pytest-xdist (`make
test` runs three processes) each process has a Redis database of its own."""

import os
from urllib.parse import urlsplit, urlunsplit

import pytest

REDIS_DATABASES = 16  # a Redis server's default number of databases

# Under xdist the tests of each group run in one process, one after another (the group is
# one unit of work; every other test is scheduled on its own): modules whose module-wide
# fixture is worth building once, and the modules that start servers of their own (a web
# process, a Celery worker and a Redis each; two such stacks at once on a 2-core machine
# would starve each other's timed steps).
XDIST_GROUPS = {
    "tests/test_background.py": "service-stacks",
    "tests/test_faults.py": "service-stacks",
    "tests/test_live.py": "service-stacks",
    "tests/test_readme.py": "readme",
    "tests/test_demo_media.py": "demo-media",
}


def redis_url_for_worker(url: str, worker: str) -> str:
    """REDIS_URL for xdist worker `worker` ("gw0", "gw1", ...): the same server, database
    number (REDIS_URL's own + the worker's number). pytest-django gives each worker a test
    database of its own; this does the same for the cache and the broker, so one process's
    cache.clear() (a FLUSHDB) or queued tasks never reach another's."""
    parts = urlsplit(url)
    base = int(parts.path.strip("/") or 0)
    number = base + int(worker.removeprefix("gw"))
    if number >= REDIS_DATABASES:
        raise pytest.UsageError(
            f"xdist worker {worker} would use Redis database {number}: start from a lower "
            "database in REDIS_URL or run fewer workers"
        )
    return urlunsplit(parts._replace(path=f"/{number}"))


def _redis_per_worker():
    """Point this worker's settings, and its child processes, at its own Redis database.
    pytest-django has loaded the settings before this file is read; nothing has connected
    to Redis yet (the cache and the Celery app connect on first use)."""
    worker, url = os.environ.get("PYTEST_XDIST_WORKER"), os.environ.get("REDIS_URL")
    if not worker or not url:
        return
    from django.conf import settings

    from config.celery import app

    own = redis_url_for_worker(url, worker)
    os.environ["REDIS_URL"] = own
    settings.REDIS_URL = own
    settings.CELERY_BROKER_URL = settings.CELERY_RESULT_BACKEND = own
    settings.CACHES["default"]["LOCATION"] = own
    app.conf.update(broker_url=own, result_backend=own)


_redis_per_worker()


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


@pytest.fixture(autouse=True)
def _one_round_passwords(settings):
    """Test users' passwords are hashed with one PBKDF2 round (tests/passwords.py); the
    shipped hashers stay behind it, so hashes made by them still verify. A test of
    hashing itself sets its own list. (pytest-django's ``settings`` announces the change,
    which clears Django's cached hashers.)"""
    from tests.passwords import HASHER

    settings.PASSWORD_HASHERS = [HASHER, *settings.PASSWORD_HASHERS]


def pytest_xdist_make_scheduler(config, log):
    """`--dist loadgroup` (addopts) with the groups of XDIST_GROUPS. xdist's own loadgroup
    reads xdist_group marks but cannot label the tests with pytest 9.2 (it writes a node id
    field pytest no longer reads: pytest-xdist issue 1386), so the groups are named here by
    module. Largest units first, as xdist does."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class GroupScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return XDIST_GROUPS.get(nodeid.split("::", 1)[0], nodeid)

    return GroupScheduling(config, log)
