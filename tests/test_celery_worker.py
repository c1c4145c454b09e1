"""Tasks go through a real worker process: on Redis, and on the embedded file broker."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CELERY = str(Path(sys.executable).with_name("celery"))

CLIENT = """
import os
import django
django.setup()
from config.celery import app
from bws.tasks import design_summary_task
queue = os.environ.get("TEST_QUEUE") or None
result = design_summary_task.apply_async((400, 4, 8, 7), queue=queue)
print(result.get(timeout=90))
"""


def start_worker(env, name, queues="celery"):
    return subprocess.Popen(
        [
            CELERY,
            "-A",
            "config",
            "worker",
            "-Q",
            queues,
            "--pool=solo",
            "--loglevel=WARNING",
            f"--hostname={name}@%h",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def stop(worker):
    worker.terminate()
    try:
        return worker.communicate(timeout=30)[0]
    except subprocess.TimeoutExpired:
        worker.kill()
        return worker.communicate()[0]


def run_client(env):
    started = time.monotonic()
    out = subprocess.run(
        [sys.executable, "-c", CLIENT],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return out, time.monotonic() - started


def check_result(out):
    assert out.returncode == 0, out.stderr[-3000:]
    result = eval(out.stdout.strip().splitlines()[-1])  # a dict printed by the client
    assert result == {
        "n_tuples": 800,
        "appearances_min": 8,
        "appearances_max": 8,
        "repeated_pairs": 0,
    }


@pytest.mark.redis
def test_task_runs_on_a_real_worker_through_redis():
    env = {**os.environ, "REDIS_URL": os.environ["REDIS_URL"]}
    env.pop("CELERY_TASK_ALWAYS_EAGER", None)
    worker = start_worker(env, "redis-test")
    try:
        out, _ = run_client(env)
    finally:
        log = stop(worker)
    assert out.returncode == 0, log[-3000:]
    check_result(out)


def test_task_runs_on_a_real_worker_with_the_embedded_broker(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    env["CELERY_DATA_DIR"] = str(tmp_path / "celery")
    worker = start_worker(env, "embedded-test")
    try:
        out, _ = run_client(env)
    finally:
        log = stop(worker)
    assert out.returncode == 0, log[-3000:]
    check_result(out)


def test_the_demo_worker_serves_the_scoring_queue_on_the_embedded_broker(tmp_path):
    """`make demo` runs one worker for both queues: a task on "scoring" reaches it."""
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    env["CELERY_DATA_DIR"] = str(tmp_path / "celery")
    env["TEST_QUEUE"] = "scoring"
    worker = start_worker(env, "demo-test", queues="celery,scoring")
    try:
        out, _ = run_client(env)
    finally:
        log = stop(worker)
    assert out.returncode == 0, log[-3000:]
    check_result(out)


def test_without_a_worker_the_embedded_broker_queues_instead_of_running_inline(tmp_path):
    """The site never runs tasks eagerly: with no worker, a task waits in the queue."""
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    env["CELERY_DATA_DIR"] = str(tmp_path / "celery")
    script = (
        "import django\n"
        "django.setup()\n"
        "from config.celery import app\n"
        "assert not app.conf.task_always_eager\n"
        "from bws.tasks import design_summary_task\n"
        "r = design_summary_task.delay(40, 4, 2)\n"
        "print(r.status)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "PENDING"
    assert any((tmp_path / "celery" / "queue").iterdir())
