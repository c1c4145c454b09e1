"""Scoring in the background, end to end: a web process (gunicorn), a Celery worker and a
Redis server of the test's own, all on this machine, sharing the test's PostgreSQL
database. The test drives the REST API as annotators do and reads the database."""

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
import requests
from django.conf import settings
from django.db import connection

from annotation.models import Annotation
from bws.models import ScoreRun
from projects.services import add_project_members, import_project

ROOT = Path(settings.BASE_DIR)
BIN = Path(sys.executable).parent

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.redis,
    pytest.mark.django_db(transaction=True),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.25)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


class Stack:
    """Redis, gunicorn and a worker as child processes, stopped at the end."""

    def __init__(self, tmp_path):
        self.tmp = tmp_path
        self.redis_port = free_port()
        self.web_port = free_port()
        db = connection.settings_dict
        self.env = {
            **os.environ,
            "DATABASE_URL": (
                f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/"
                f"{db['NAME']}"
            ),
            "REDIS_URL": f"redis://127.0.0.1:{self.redis_port}/0",
            "SCORING_SESSION_GAP": "1",
            "SCORING_CHECK_INTERVAL": "1",
            # the killed-worker test asks for a run long enough to be interrupted
            "SCORING_MAX_BOOTSTRAP_ITERATIONS": "100000",
            "DB_CONN_MAX_AGE": "0",
            "GUNICORN_ACCESSLOG": "/dev/null",
        }
        self.procs = {}
        self.worker_starts = 0

    def start_redis(self):
        self.procs["redis"] = subprocess.Popen(
            [
                shutil.which("redis-server") or "redis-server",
                "--port",
                str(self.redis_port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.tmp),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_for(self._redis_up, 20, "redis")

    def _redis_up(self):
        try:
            with socket.create_connection(("127.0.0.1", self.redis_port), timeout=0.5) as s:
                s.sendall(b"PING\r\n")
                return s.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def stop_redis(self):
        self._stop("redis")

    def start_web(self):
        self.procs["web"] = subprocess.Popen(
            [
                str(BIN / "gunicorn"),
                "config.wsgi:application",
                "-c",
                "platform/gunicorn.conf.py",
                "--bind",
                f"127.0.0.1:{self.web_port}",
                "--workers",
                "2",
                "--threads",
                "2",
            ],
            cwd=ROOT,
            env=self.env,
            # its error log (worker restarts, bind failures) kept for a failing test's reader
            stdout=(self.tmp / "web.log").open("w"),
            stderr=subprocess.STDOUT,
        )
        wait_for(self._web_up, 60, "gunicorn")

    def _web_up(self):
        try:
            return requests.get(self.url("/accounts/login/"), timeout=1).status_code == 200
        except requests.RequestException:
            return False

    def start_worker(self):
        """One worker serving both queues with beat inside, as `make demo` runs it, in a
        process group of its own."""
        self.worker_starts += 1
        self.worker_log = self.tmp / f"worker-{self.worker_starts}.log"
        self.procs["worker"] = subprocess.Popen(
            [
                str(BIN / "celery"),
                "-A",
                "config",
                "worker",
                "-Q",
                "celery,scoring",
                "--beat",
                f"--schedule={self.tmp / 'celerybeat-schedule'}",
                "--concurrency=1",
                "--loglevel=WARNING",
                f"--hostname=bg{uuid.uuid4().hex[:6]}@%h",
            ],
            cwd=ROOT,
            env=self.env,
            stdout=self.worker_log.open("w"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def worker_alive(self):
        return "worker" in self.procs and self.procs["worker"].poll() is None

    def kill_worker(self):
        """SIGKILL the whole worker: its main process, its pool processes and beat."""
        proc = self.procs.pop("worker")
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=30)

    def _stop(self, name):
        proc = self.procs.pop(name, None)
        if proc is None:
            return
        group = name == "worker"  # the worker's pool processes and beat go with it

        def send(sig):
            try:
                os.killpg(proc.pid, sig) if group else proc.send_signal(sig)
            except ProcessLookupError:
                pass

        send(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            send(signal.SIGKILL)
            proc.wait()

    def stop(self):
        for name in list(self.procs):
            self._stop(name)

    def url(self, path):
        return f"http://127.0.0.1:{self.web_port}{path}"


@pytest.fixture
def stack(tmp_path):
    stack = Stack(tmp_path)
    try:
        stack.start_redis()
        stack.start_web()
        stack.start_worker()
        yield stack
    finally:
        stack.stop()


@pytest.fixture
def project(tmp_path):
    folder = tmp_path / "mt"
    shutil.copytree(ROOT / "examples" / "mt_bws", folder)
    config = (folder / "config.yaml").read_text()
    config = config.replace("method: bradley_terry", "method: counting")
    (folder / "config.yaml").write_text(config)
    project = import_project(config_path=folder / "config.yaml", slug="mt").project
    add_project_members(
        project=project,
        usernames=[f"a{n}" for n in range(4)],
        role="annotator",
        create=True,
        password="pw-123456",
    )
    add_project_members(
        project=project, usernames=["boss"], role="manager", create=True, password="pw-123456"
    )
    return project


class Annotator:
    def __init__(self, stack, username):
        self.stack = stack
        self.session = requests.Session()
        # A connection per request, as nginx opens them in front of gunicorn: a kept-alive
        # one that gunicorn closes after its 2 s keep-alive, just as the next request goes
        # out on it, ended a run of this test on a loaded machine ("Remote end closed
        # connection without response").
        self.session.headers["Connection"] = "close"
        token = self.session.post(
            stack.url("/api/v1/auth/token/"),
            json={"username": username, "password": "pw-123456"},
            timeout=10,
        ).json()["token"]
        self.session.headers["Authorization"] = f"Token {token}"

    def answer(self, n=1):
        for _ in range(n):
            unit = self.session.post(self.stack.url("/api/v1/projects/mt/queue/next/"), timeout=10)
            assert unit.status_code == 200, unit.text
            unit = unit.json()
            ids = [item["id"] for item in unit["items"]]
            started = time.monotonic()
            response = self.session.post(
                self.stack.url("/api/v1/projects/mt/annotations/"),
                json={
                    "unit": unit["id"],
                    "annotations": {"overall_quality": {"best": ids[0], "worst": ids[-1]}},
                    "client_id": str(uuid.uuid4()),
                },
                timeout=30,
            )
            assert response.status_code == 201, response.text
            assert time.monotonic() - started < 10


def good_runs():
    return ScoreRun.objects.filter(status="ok").count()


def test_a_session_gives_fresh_scores_and_a_burst_gives_few_runs(stack, project):
    Annotator(stack, "a0").answer(5)
    wait_for(good_runs, 60, "a run after the session")
    run = ScoreRun.objects.get(status="ok")
    assert run.n_judgments == 5 and run.trigger == "auto"
    before = ScoreRun.objects.count()
    annotators = [Annotator(stack, f"a{n}") for n in range(4)]
    for _ in range(25):  # 100 submissions in a burst
        for annotator in annotators:
            annotator.answer()
    wait_for(
        lambda: ScoreRun.objects.filter(n_judgments=105, status="ok").exists(),
        90,
        "a run with every judgment",
    )
    time.sleep(3)  # nothing more should follow
    assert ScoreRun.objects.count() - before <= 3


def test_worker_killed_mid_run_keeps_the_last_good_run(stack, project):
    Annotator(stack, "a0").answer(20)
    good = wait_for(lambda: ScoreRun.objects.filter(status="ok").first(), 60, "first run")
    # a long run, asked for through the API so the stack's own broker carries it
    slow = Annotator(stack, "boss").session.post(
        stack.url("/api/v1/projects/mt/scores/"),
        json={
            "scheme": "overall_quality",
            "method": "plackett_luce",
            "intervals": "bootstrap",
            "bootstrap": 100000,
        },
        timeout=10,
    )
    assert slow.status_code == 202, slow.text
    slow = ScoreRun.objects.get(pk=slow.json()["id"])
    wait_for(
        lambda: ScoreRun.objects.filter(pk=slow.pk, status="running").exists(),
        60,
        "the slow run to start",
    )
    stack.kill_worker()
    from bws import selectors

    assert selectors.latest_good_run(project, "overall_quality") == good
    stack.start_worker()
    Annotator(stack, "a1").answer(3)
    wait_for(
        lambda: ScoreRun.objects.filter(status="ok", n_judgments=23).exists(),
        90,
        "the next run after the restart",
    )
    assert selectors.latest_good_run(project, "overall_quality").n_judgments == 23


def test_answers_survive_a_redis_outage_and_scoring_catches_up(stack, project):
    annotator = Annotator(stack, "a2")
    stack.stop_redis()
    annotator.answer(6)  # submits keep working without the broker
    assert Annotation.objects.filter(project=project).count() == 6
    assert not ScoreRun.objects.exists()
    stack.start_redis()
    stack.kill_worker()
    stack.start_worker()  # a worker coming up catches up on dirty projects
    run = wait_for(lambda: ScoreRun.objects.filter(status="ok").first(), 90, "catch-up run")
    assert run.n_judgments == 6
