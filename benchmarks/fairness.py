"""Fair scoring across labs: one lab's backlog of queued runs against another lab's next run.

    python benchmarks/fairness.py [--backlog 40] [--trials 3] [--db annolab_fair_bench]

Two labs, each with a copy of examples/mt_tuples (one BWS scheme, Bradley-Terry, the
scheme's default intervals) answered by 8 annotators, in a bench database of its own
(dropped and recreated) beside a private redis-server and the real scoring worker (Celery
queue "scoring", concurrency 1, prefetch 1, as platform/systemd runs it). This process
plays the web: it asks for runs as the API does (bws.scheduling).

  idle:    lab B asks for a run on an empty queue; from the request to the run's finish.
  backlog: lab A queues --backlog runs, and once its first run has started lab B asks for
           a run; from B's request to its finish, and B's runs-ahead (runs finished
           between B's request and B's start).

Both with the shipped dispatch (SCORING_LAB_SLOTS=1: a lab's runs wait in the database for
its turn) and with every run sent at once (SCORING_LAB_SLOTS=100000: one FIFO queue, the
behaviour before the lab turn). Figures, not assertions.
"""

# ruff: noqa: E402  (sys.path and the environment are set before Django loads)
from __future__ import annotations

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]
sys.path.append(os.path.dirname(_HERE))

import argparse
import resource
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from benchmarks.background_processes import free_port, start_redis, start_worker
from benchmarks.queue_setup import ROOT, base_env, recreate_database

SCHEME = "overall_quality"


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backlog", type=int, default=40, help="lab A's queued runs")
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=600.0, help="max s per wait")
    parser.add_argument("--db", default="annolab_fair_bench")
    parser.add_argument("--admin-db", default="postgres")
    parser.add_argument("--pg-host", default="127.0.0.1")
    parser.add_argument("--pg-port", default="5432")
    parser.add_argument("--pg-user", default="postgres")
    return parser.parse_args()


def setup_django(env: dict) -> None:
    os.environ.update(env)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django  # after the environment is set: the settings read it once

    django.setup()


def build(folder: Path) -> tuple:
    """Two labs with one answered project each; (project A, project B)."""
    from annotation.answers import submit_answers
    from annotation.queue import next_unit
    from projects.models import Lab
    from projects.services import import_project
    from projects.tests.factories import UserFactory

    projects = []
    for name in ("a", "b"):
        source = folder / f"mt_{name}"
        shutil.copytree(ROOT / "examples" / "mt_tuples", source)
        (source / "output").mkdir(exist_ok=True)
        lab = Lab.objects.create(name=f"Lab {name.upper()}", slug=f"lab-{name}")
        project = import_project(
            config_path=source / "config.yaml", lab=lab, slug=f"mt-{name}"
        ).project
        for n in range(8):
            user = UserFactory(username=f"{name}{n}")
            for _ in range(30):
                unit = next_unit(project=project, user=user)
                if unit is None:
                    break
                items = sorted(unit.bws_tuple.item_ids)
                answer = {SCHEME: {"best": items[0], "worst": items[-1]}}
                submit_answers(project=project, user=user, unit_id=unit.pk, answers=answer)
        projects.append(project)
    return tuple(projects)


def wait_finished(run_id: int, timeout: float) -> float:
    """Seconds until the run is ok or failed (monotonic clock of this process)."""
    # Django apps load after django.setup() (the bench database is chosen at run time).
    from bws.models import ScoreRun

    start = time.monotonic()
    while time.monotonic() - start < timeout:
        status = ScoreRun.objects.filter(pk=run_id).values_list("status", flat=True).first()
        if status in ("ok", "failed"):
            return time.monotonic()
        time.sleep(0.05)
    raise TimeoutError(f"run {run_id} did not finish in {timeout} s")


def ask_b(project_b, timeout: float) -> tuple[float, int]:
    """Lab B's request: seconds to its finish, and the runs that finished before it
    started after it was asked for."""
    # Django apps load after django.setup() (the bench database is chosen at run time).
    from django.utils import timezone

    from bws import scheduling
    from bws.models import ScoreRun

    asked_at = timezone.now()
    start = time.monotonic()
    run, _ = scheduling.ask_for_run(
        project=project_b, scheme=SCHEME, trigger=ScoreRun.Trigger.MANUAL
    )
    scheduling.queue_run(run)
    done = wait_finished(run.pk, timeout)
    run.refresh_from_db()
    ahead = ScoreRun.objects.filter(
        finished_at__gt=asked_at, finished_at__lte=run.started_at
    ).count()
    return done - start, ahead


def trial_backlog(project_a, project_b, backlog: int, timeout: float) -> tuple[float, int]:
    # Django apps load after django.setup() (the bench database is chosen at run time).
    from bws import scheduling, services
    from bws.models import ScoreRun

    runs = [
        services.request_run(project=project_a, scheme=SCHEME, wait_turn=True)
        for _ in range(backlog)
    ]
    for run in runs:
        scheduling.queue_run(run)
    # B asks once A's first run is computing (the worker is busy with lab A).
    start = time.monotonic()
    while ScoreRun.objects.filter(pk=runs[0].pk, status="queued").exists():
        if time.monotonic() - start > timeout:
            raise TimeoutError("lab A's first run did not start")
        time.sleep(0.02)
    took, ahead = ask_b(project_b, timeout)
    # The rest of lab A's backlog is not needed for the figure: dropped, then drained.
    ScoreRun.objects.filter(pk__in=[r.pk for r in runs], status="queued").delete()
    wait_quiet(timeout)
    return took, ahead


def wait_quiet(timeout: float) -> None:
    # Django apps load after django.setup() (the bench database is chosen at run time).
    from bws.models import ScoreRun

    start = time.monotonic()
    while ScoreRun.objects.filter(status__in=["queued", "running"]).exists():
        if time.monotonic() - start > timeout:
            raise TimeoutError("runs still queued or running")
        time.sleep(0.1)


def main() -> int:
    resource.setrlimit(resource.RLIMIT_AS, (8 * 2**30, 8 * 2**30))
    args = parse()
    folder = Path(tempfile.mkdtemp(prefix="fair-bench-"))
    children = []
    try:
        redis_port = free_port()
        children.append(start_redis(redis_port, folder))
        env = base_env(args)
        env.update(
            REDIS_URL=f"redis://127.0.0.1:{redis_port}/0",
            PROJECT_FILES_ROOT=str(folder / "projects"),
            CELERY_DATA_DIR=str(folder / "celery"),
            SCORING_MANUAL_RUNS_PER_HOUR="100000",
        )
        recreate_database(args)
        setup_django(env)
        # Django loads after django.setup() (the bench database is chosen at run time).
        from django.conf import settings
        from django.core.management import call_command

        call_command("migrate", "--noinput", verbosity=0)
        project_a, project_b = build(folder)
        print(f"load average {' '.join(Path('/proc/loadavg').read_text().split()[:3])}")
        figures = {}
        for mode, slots in (("lab turn (shipped)", 1), ("one FIFO queue", 100_000)):
            settings.SCORING_LAB_SLOTS = slots
            worker = start_worker({**env, "SCORING_LAB_SLOTS": str(slots)})
            children.append(worker)
            try:
                ask_b(project_b, args.timeout)  # warm the worker up
                idle = [ask_b(project_b, args.timeout)[0] for _ in range(args.trials)]
                busy = [
                    trial_backlog(project_a, project_b, args.backlog, args.timeout)
                    for _ in range(args.trials)
                ]
            finally:
                worker.stop()
                children.remove(worker)
            figures[mode] = (idle, busy)
            ratio = max(t for t, _ in busy) / statistics.median(idle)
            print(
                f"{mode}: idle {', '.join(f'{t:.2f}' for t in idle)} s; with lab A's "
                f"{args.backlog} runs {', '.join(f'{t:.2f}' for t, _ in busy)} s "
                f"(runs ahead {', '.join(str(a) for _, a in busy)}); worst / idle median "
                f"{ratio:.2f}",
                flush=True,
            )
        print(f"load average {' '.join(Path('/proc/loadavg').read_text().split()[:3])}")
        print(
            "\n| dispatch | lab B idle, median s | lab B behind lab A's backlog, s "
            "| runs ahead of B | worst / idle |"
        )
        print("|---|---|---|---|---|")
        for mode, (idle, busy) in figures.items():
            med = statistics.median(idle)
            print(
                f"| {mode} | {med:.2f} | {', '.join(f'{t:.2f}' for t, _ in busy)} | "
                f"{', '.join(str(a) for _, a in busy)} | "
                f"{max(t for t, _ in busy) / med:.2f} |"
            )
        return 0
    finally:
        for child in reversed(children):
            child.stop()
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
