"""Faults leave nothing stale: a real gunicorn, a real worker (both queues, beat inside, as
`make demo` runs it) and a Redis server of the test's own, sharing the test's PostgreSQL
database. Each test prints the figure recorded in benchmarks/RESULTS.md ("Faults")."""

import shutil
import threading
import time
import uuid

import pytest
import requests

from annotation.models import Annotation, Submission
from bws.models import ScoreRun
from projects.services import add_project_members, import_project
from tests.test_background import ROOT, Stack, wait_for

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.redis,
    pytest.mark.django_db(transaction=True),
]

SCHEMES = ("overall_quality", "fluency")
# Runs long enough (a few seconds each) for a kill to land inside one.
BOOTSTRAP = 60000  # within the stack's SCORING_MAX_BOOTSTRAP_ITERATIONS
FRESH_WITHIN = 60.0


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
def project(tmp_path, settings):
    """The MT example with a second best-worst scheme, Plackett-Luce with intervals."""
    settings.SCORING_MAX_BOOTSTRAP_ITERATIONS = int(
        Stack(tmp_path).env["SCORING_MAX_BOOTSTRAP_ITERATIONS"]
    )
    folder = tmp_path / "mt"
    shutil.copytree(ROOT / "examples" / "mt_bws", folder)
    config = (folder / "config.yaml").read_text()
    config = config.replace(
        "  scoring:\n    method: bradley_terry\n",
        "  scoring:\n    method: plackett_luce\n    include_confidence: true\n"
        # the percentile bootstrap, whose runs take as long as their resamples: slow
        # enough to kill a worker during one
        f"    intervals: bootstrap\n    bootstrap_iterations: {BOOTSTRAP}\n",
    )
    second = (
        "  - annotation_type: bws\n"
        "    name: fluency\n"
        '    description: "Select the most and the least fluent translation"\n'
        "    tuple_size: 4\n"
    )
    config = config.replace("\noutput_annotation_dir:", second + "\noutput_annotation_dir:")
    (folder / "config.yaml").write_text(config)
    project = import_project(config_path=folder / "config.yaml", slug="mt").project
    assert [s["name"] for s in project.schemes if s.get("type") == "bws"] == list(SCHEMES)
    add_project_members(
        project=project,
        usernames=[f"a{n}" for n in range(4)],
        role="annotator",
        create=True,
        password="pw-123456",
    )
    return project


class Annotator:
    """An API client that answers every scheme and remembers what the server accepted."""

    def __init__(self, stack, username):
        self.stack = stack
        self.session = requests.Session()
        # A connection per request, as nginx opens them (tests/test_background.py says why).
        self.session.headers["Connection"] = "close"
        token = self.session.post(
            stack.url("/api/v1/auth/token/"),
            json={"username": username, "password": "pw-123456"},
            timeout=10,
        ).json()["token"]
        self.session.headers["Authorization"] = f"Token {token}"
        self.accepted: list[str] = []
        self.refused: list[str] = []

    def answer(self) -> bool:
        try:
            unit = self.session.post(self.stack.url("/api/v1/projects/mt/queue/next/"), timeout=10)
            if unit.status_code != 200:
                self.refused.append(f"next {unit.status_code}")
                return False
            unit = unit.json()
            ids = [item["id"] for item in unit["items"]]
            client_id = str(uuid.uuid4())
            response = self.session.post(
                self.stack.url("/api/v1/projects/mt/annotations/"),
                json={
                    "unit": unit["id"],
                    "annotations": {s: {"best": ids[0], "worst": ids[-1]} for s in SCHEMES},
                    "client_id": client_id,
                },
                timeout=30,
            )
        except requests.RequestException as exc:
            self.refused.append(f"{type(exc).__name__}: {exc}")
            return False
        if 200 <= response.status_code < 300:
            self.accepted.append(client_id)
            return True
        self.refused.append(f"submit {response.status_code}")
        return False


def fresh_for_every_scheme(since: float) -> bool:
    """Every scheme has an ok run, finished after `since`, holding every stored answer."""
    for scheme in SCHEMES:
        total = Annotation.objects.filter(scheme=scheme).count()
        if not ScoreRun.objects.filter(
            scheme=scheme, status="ok", n_judgments=total, finished_at__gt=_aware(since)
        ).exists():
            return False
    return True


def _aware(epoch: float):
    from datetime import UTC, datetime

    return datetime.fromtimestamp(epoch, tz=UTC)


def test_sigkill_of_the_whole_worker_during_a_run_then_a_restart_gives_fresh_scores(stack, project):
    annotators = [Annotator(stack, f"a{n}") for n in range(4)]
    for _ in range(10):
        for annotator in annotators:
            assert annotator.answer(), annotator.refused
    running = wait_for(
        lambda: ScoreRun.objects.filter(status="running").first(), 60, "a run to start"
    )
    time.sleep(0.3)  # inside the computation, not at its first query
    assert ScoreRun.objects.get(pk=running.pk).status == "running", "the run ended too soon"
    killed_at = time.time()
    stack.kill_worker()  # main process, pool process and beat, with no chance to clean up
    assert ScoreRun.objects.get(pk=running.pk).status == "running"
    stack.start_worker()
    restarted_at = time.time()
    wait_for(
        lambda: fresh_for_every_scheme(killed_at), FRESH_WITHIN, "fresh scores after the restart"
    )
    fresh_after = time.time() - restarted_at
    print(
        f"\nFAULT sigkill: fresh scores for {len(SCHEMES)} schemes {fresh_after:.1f} s after "
        f"the restart ({time.time() - killed_at:.1f} s after the kill)"
    )
    running.refresh_from_db()
    assert running.status == "ok" and running.attempts == 2  # queued again, not abandoned


def test_a_redis_outage_during_annotation_loses_no_submit_and_scores_catch_up(stack, project):
    restarts = []
    stop, working = threading.Event(), threading.Event()

    def supervise():  # the restart policy of every shipped deployment
        while not stop.is_set():
            if not stack.worker_alive():
                restarts.append(time.time())
                stack.start_worker()
            time.sleep(0.5)

    annotators = [Annotator(stack, f"a{n}") for n in range(4)]

    def annotate(annotator):
        while not stop.is_set():
            if working.wait(timeout=0.2):
                annotator.answer()
                time.sleep(0.2)

    threads = [threading.Thread(target=supervise, daemon=True)]
    threads += [threading.Thread(target=annotate, args=(a,), daemon=True) for a in annotators]
    for t in threads:
        t.start()
    try:
        working.set()
        # as many answers as the other test's (a run then lasts long enough to lose Redis in)
        wait_for(lambda: all(len(a.accepted) >= 10 for a in annotators), 60, "10 answers from each")
        working.clear()  # a pause: the session ends and a run starts
        wait_for(lambda: ScoreRun.objects.filter(status="running").exists(), 60, "a run to start")
        # Redis drops while the worker holds the run's unacknowledged message, and
        # annotation goes on through the outage.
        stack.stop_redis()
        working.set()
        before = sum(len(a.accepted) for a in annotators)
        time.sleep(30)
        during = sum(len(a.accepted) for a in annotators) - before
        working.clear()
        stack.start_redis()
        back_at = time.time()
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=60)
    accepted = [c for a in annotators for c in a.accepted]
    assert during > 0, "no submit went through while Redis was down"
    stored = {str(c) for c in Submission.objects.values_list("client_id", flat=True)}
    assert set(accepted) <= stored  # every submit that got a 2xx is stored, every scheme
    assert all(Annotation.objects.filter(scheme=s).count() >= len(accepted) for s in SCHEMES)
    if not stack.worker_alive():  # as its restart policy would
        stack.start_worker()
        restarts.append(time.time())
    wait_for(lambda: fresh_for_every_scheme(back_at), FRESH_WITHIN, "fresh scores")
    fresh_after = time.time() - back_at
    print(
        f"\nFAULT redis: {len(accepted)} submits accepted ({during} during the 30 s outage), "
        f"all stored; worker restarted {len(restarts)} times; fresh scores for "
        f"{len(SCHEMES)} schemes {fresh_after:.1f} s after Redis returned"
    )
