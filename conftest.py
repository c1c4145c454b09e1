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


@pytest.fixture(autouse=True)
def _no_measured_design_lead(request, monkeypatch):
    """A design batch run inline in a test takes as long as the machine makes it: the
    lead it would record (and the margin planned from it) is left out, so a test's batches
    come where its numbers say on a slow machine as on a fast one. Tests marked ``paced``
    measure the lead itself; the others that need one set it in the cache."""
    if request.node.get_closest_marker("paced"):
        return
    from bws import adaptive  # the apps are loaded only once pytest-django has set up

    monkeypatch.setattr(adaptive, "record_lead", lambda project_id, took: None)


# Seconds a test takes on a 2-core machine (`pytest --durations`), by node id prefix (a
# group: the whole group), for the tests that take long; every other test counts one.
# The scheduler hands out the longest work first, so no long test is left to run alone at
# the end while the other processes idle.
SLOW_TESTS = {
    "service-stacks": 370,
    "readme": 85,
    "demo-media": 11,
    "tests/test_browser_demo_pages.py": 100,
    "tests/security/test_api_fuzz.py": 56,
    "bws/tests/test_design.py::test_balanced_design_guarantees": 40,
    "tests/test_browser_a11y.py": 35,
    "tests/test_browser_touch.py": 14,
    "tests/test_browser": 10,
    "agreement/tests/test_django_browser.py": 10,
    "tests/test_celery_worker.py": 13,
    "tests/test_serve_local.py": 30,
    "bws/tests/test_adaptive_platform.py": 8,
    "bws/tests/test_targets_platform.py": 6,
    "bws/tests/test_adaptive.py": 6,
    "bws/tests/test_adaptive_queue.py": 5,
    "tests/test_migrations.py": 8,
    "tests/security/test_production.py": 4,
    "bws/tests/test_scoring.py::test_bradley_terry_agrees_with_choix": 12,
    "bws/tests/test_small_study.py::test_intervals_of_studies_of_10_and_20_items": 12,
    "bws/tests/test_cli_scoring.py": 4,
    "bws/tests/test_scheduling.py": 4,
    "tests/test_static_files.py": 3,
}


def estimated_seconds(scope: str, n_tests: int) -> float:
    """How long a unit of work takes (SLOW_TESTS; a group's figure is the whole group's)."""
    for prefix, seconds in SLOW_TESTS.items():
        if scope == prefix:
            return seconds
        if scope.startswith(prefix):
            return seconds * n_tests
    return float(n_tests)


def pytest_xdist_make_scheduler(config, log):
    """`--dist loadgroup` (addopts) with the groups of XDIST_GROUPS. xdist's own loadgroup
    reads xdist_group marks but cannot label the tests with pytest 9.2 (it writes a node id
    field pytest no longer reads: pytest-xdist issue 1386), so the groups are named here by
    module. The longest units go first (estimated_seconds)."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class GroupScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return XDIST_GROUPS.get(nodeid.split("::", 1)[0], nodeid)

        def schedule(self) -> None:
            """xdist's first distribution, with the queue in estimated_seconds order (xdist
            orders it by the number of tests); later calls are xdist's own."""
            assert self.collection_is_completed
            if self.collection is not None or not self._check_nodes_have_same_collection():
                return super().schedule()
            self.collection = list(next(iter(self.registered_collections.values())))
            units: dict[str, dict[str, bool]] = {}
            for nodeid in self.collection:
                units.setdefault(self._split_scope(nodeid), {})[nodeid] = False
            for scope, nodeids in sorted(
                units.items(), key=lambda unit: -estimated_seconds(unit[0], len(unit[1]))
            ):
                self.workqueue[scope] = nodeids
            for _ in range(max(0, len(self.nodes) - len(self.workqueue))):
                self.assigned_work.popitem()[0].shutdown()
            for node in self.nodes:
                self._assign_work_unit(node)
            # As xdist does: a worker runs its last test only once it has more work or is
            # told to stop, so each starts with two units and all stop when none is left.
            for node in self.nodes:
                self._reschedule(node)
            if not self.workqueue:
                for node in self.nodes:
                    node.shutdown()

    return GroupScheduling(config, log)
