"""Background scoring benchmark: fresh scores after a session, and submit latency during a run.

    python benchmarks/background.py [--gap 5] [--sessions 3] [--duration 240] [--code head]

One project of 10,000 items (dialect A, T = 4, r = 8, so 20,000 tuples, cap 2,
bws_config.scoring.method bradley_terry, 1000 bootstrap resamples) is built in a bench
database of its own (dropped and recreated), 20,000 judgments (one per tuple, drawn from
the MaxDiff model) are imported with `import_annotations`, then a private redis-server,
gunicorn (--workers x --threads, 2 x 8 unless given; RESULTS.md uses 4 x 2) and two Celery
workers as platform/systemd runs them are started on 127.0.0.1 with SCORING_SESSION_GAP =
--gap: the default queue's worker with beat inside (the catch-up), and the scoring worker
(queue "scoring", concurrency 1, prefetch 1).

  (1) session -> fresh scores: 10 annotators answer 3 units each with no think time (a
      session of 30 submits); from the end of the last submit, the database is polled
      until an ok ScoreRun of the scheme's method holds every judgment. Reported: that
      delay (finished_at - end of session), the wait before the run started (the session
      gap plus queueing) and the compute time (finished_at - started_at). Done for
      Bradley-Terry and then, after setting the scheme's method in the stored project
      config, for Plackett-Luce; one unmeasured session first warms the worker.
  (2) submit latency: 50 annotators with 2 s think time (the queue benchmark's paced
      load) for --duration seconds; meanwhile a manager asks for runs through
      POST /api/v1/projects/{slug}/scores/ (Bradley-Terry and Plackett-Luce in turn,
      1000 resamples), each followed by a quiet spell. Each submit is classed by its
      wall-clock span: during a run (it overlaps [started_at, finished_at] of a run) or
      idle (more than 1 s away from any run). Reported: p50/p95/p99 of both, the p95 ratio
      with a 1000-resample interval (resampling 1-second blocks of submits). The manager
      polls the run every --poll seconds (1 s), between runs too, so both kinds of
      spell carry the same load. The server adds a Server-Timing header
      (SERVER_TIMING=1, config/timing.py), which splits each submit's time into outside
      Django, CPU, database and other (waiting); and from the manager's request to an ok
      run is reported too (fresh scores while the annotators keep working).

--worker-cpu-quota F puts the scoring worker in a cgroup of its own (cgroup v1 cpu
controller, /sys/fs/cgroup/cpu/annolab-scoring-<pid>) with a quota of F of one core per
--worker-cpu-period-ms and the lowest weight (cpu.idle where the kernel has it), as
CPUQuota= / CPUQuotaPeriodSec= / CPUWeight=idle would; --worker-cpu-weight gives it the
lowest weight alone, with no quota, as the shipped unit does (CPUWeight=idle, add
--worker-nice 19 for its Nice=19); the cgroup is removed at the end. --worker-cpus /
--web-cpus / --pg-cpus pin the processes with taskset, --worker-nice and
--worker-sched-idle lower the scoring worker's priority: the experiments in RESULTS.md.

The script reuses setup and client code of benchmarks/queue.py. Figures, not assertions.
"""

# ruff: noqa: E402  (sys.path is fixed before the imports; see below)
from __future__ import annotations

import os
import sys

# Run as a script, this folder comes first on sys.path and benchmarks/queue.py would shadow
# the standard library's queue module: drop that entry before importing anything else.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]
sys.path.append(os.path.dirname(_HERE))  # the benchmarks package

import argparse
import json
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import psycopg

from benchmarks import queue_setup
from benchmarks.background_latency import measure_latency
from benchmarks.background_processes import (
    Child,
    CpuQuota,
    free_port,
    pin_postgres,
    pin_tree,
    start_default_worker,
    start_redis,
    start_worker,
)
from benchmarks.background_project import (
    SLUG,
    judgment_count,
    set_method,
    wait_worker_quiet,
    write_config,
    write_judgments,
)
from benchmarks.background_report import report
from benchmarks.background_sessions import measure_session
from benchmarks.queue_load import Client
from benchmarks.queue_setup import (
    PASSWORD,
    ROOT,
    Server,
    base_env,
    manage,
    pg_url,
    recreate_database,
    snapshot_head,
)

# ---------------------------------------------------------------- main


def others_running() -> list[str]:
    found = subprocess.run(
        ["pgrep", "-af", "benchmarks/(queue|scoring|agreement|tuple_design).py"],
        capture_output=True,
        text=True,
    ).stdout
    return [line for line in found.splitlines() if str(os.getpid()) != line.split()[0]]


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gap", type=float, default=5.0, help="SCORING_SESSION_GAP, seconds")
    parser.add_argument("--sessions", type=int, default=3, help="measured sessions per method")
    parser.add_argument("--session-annotators", type=int, default=10)
    parser.add_argument("--per-client", type=int, default=3, help="submits per annotator")
    parser.add_argument("--fresh-timeout", type=float, default=300.0)
    parser.add_argument("--annotators", type=int, default=50)
    parser.add_argument("--think", type=float, default=2.0)
    parser.add_argument("--duration", type=float, default=240.0, help="seconds of part (2)")
    parser.add_argument("--warmup", type=float, default=10.0, help="unmeasured seconds of (2)")
    parser.add_argument(
        "--poll", type=float, default=1.0, help="seconds between the manager's run polls"
    )
    parser.add_argument("--idle", type=float, default=20.0, help="quiet seconds between runs")
    parser.add_argument(
        "--worker-cpu-quota",
        type=float,
        default=0.0,
        help="run the scoring worker in a cgroup with this share of one core (e.g. 0.1)",
    )
    parser.add_argument(
        "--worker-cpu-period-ms", type=float, default=10.0, help="the quota's period, ms"
    )
    parser.add_argument(
        "--worker-cpu-weight",
        action="store_true",
        help="the scoring worker's cgroup at the lowest weight with no quota (CPUWeight=idle)",
    )
    parser.add_argument(
        "--worker-nice", type=int, default=0, help="run the Celery worker under nice -n N"
    )
    parser.add_argument(
        "--worker-sched-idle",
        action="store_true",
        help="run the Celery worker under the SCHED_IDLE policy (chrt --idle 0)",
    )
    parser.add_argument("--worker-cpus", default="", help="pin the Celery worker (taskset -c)")
    parser.add_argument("--web-cpus", default="", help="pin gunicorn (taskset -c)")
    parser.add_argument("--pg-cpus", default="", help="pin PostgreSQL's processes meanwhile")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn worker processes")
    parser.add_argument("--threads", type=int, default=8, help="threads per gunicorn worker")
    parser.add_argument("--db", default="annolab_bg_bench")
    parser.add_argument("--admin-db", default="postgres")
    parser.add_argument("--pg-host", default="127.0.0.1")
    parser.add_argument("--pg-port", default="5432")
    parser.add_argument("--pg-user", default="postgres")
    parser.add_argument("--wait-others", type=float, default=1800, help="max s to wait")
    parser.add_argument("--json", help="also write the figures to this file")
    parser.add_argument("--code", choices=["tree", "head"], default="head")
    args = parser.parse_args()

    folder = Path(tempfile.mkdtemp(prefix="bg-bench-"))
    children: list[Child] = []
    server = None
    pg_restore = ""
    quota = None
    try:
        if args.code == "head":
            queue_setup.CODE = snapshot_head()
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
        print(f"code: {args.code} ({head}) in {queue_setup.CODE}", flush=True)

        redis_port = free_port()
        args.port = free_port()
        children.append(start_redis(redis_port, folder))
        env = base_env(args)
        env.update(
            REDIS_URL=f"redis://127.0.0.1:{redis_port}/0",
            SCORING_SESSION_GAP=str(args.gap),
            SERVER_TIMING="1",
            CELERY_DATA_DIR=str(folder / "celery"),
            # The manager asks for a run after every quiet spell, more than a person would.
            SCORING_MANUAL_RUNS_PER_HOUR="10000",
        )

        t0 = time.monotonic()
        recreate_database(args)
        manage(env, "migrate", "--noinput")
        config = write_config(folder / "project")
        manage(env, "import_project", str(config), "--slug", SLUG)
        users = [f"u{i:02d}" for i in range(1, args.annotators + 1)]
        manage(
            env,
            "add_members",
            SLUG,
            "--role",
            "annotator",
            "--create",
            "--password",
            PASSWORD,
            *users,
        )
        manage(
            env,
            "add_members",
            SLUG,
            "--role",
            "manager",
            "--create",
            "--password",
            PASSWORD,
            "boss",
        )
        n = write_judgments(args, folder / "judgments.jsonl")
        manage(env, "import_annotations", SLUG, str(folder / "judgments.jsonl"))
        with psycopg.connect(pg_url(args, args.db), autocommit=True) as conn:
            conn.execute("VACUUM ANALYZE")
            print(
                f"database ready in {time.monotonic() - t0:.0f} s: {n:,} tuples, "
                f"{judgment_count(conn):,} judgments",
                flush=True,
            )

        # wait for the machine to be free of other benchmarks before measuring
        waited = time.monotonic()
        while others_running() and time.monotonic() - waited < args.wait_others:
            time.sleep(10)
        others = others_running()
        print(f"other benchmarks: {others or 'none'}; load average {loadavg()}", flush=True)

        server = Server(args, env)
        server.wait_ready()
        if args.web_cpus:
            pin_tree(server.proc.pid, args.web_cpus)
        if args.pg_cpus:
            pg_restore = pin_postgres(args.pg_cpus)
        if args.worker_cpu_quota or args.worker_cpu_weight:
            quota = CpuQuota(args.worker_cpu_quota, args.worker_cpu_period_ms)
        children.append(start_default_worker(env))
        worker = start_worker(
            env, args.worker_nice, args.worker_sched_idle, args.worker_cpus, quota
        )
        children.append(worker)
        clients = [Client(args.port, u) for u in users]
        for c in clients:
            c.login()
        manager = Client(args.port, "boss")
        manager.login()

        conn = psycopg.connect(pg_url(args, args.db), autocommit=True)
        try:
            # (1) session -> fresh scores
            sessions = []
            load_before = loadavg()
            session_clients = clients[: args.session_annotators]
            for method in ("bradley_terry", "plackett_luce"):
                set_method(args, method)
                for k in range(args.sessions + 1):  # the first is a warm-up
                    wait_worker_quiet(conn)
                    if not worker.alive():
                        raise RuntimeError(f"the worker exited:\n{worker.tail()}")
                    s = measure_session(args, conn, session_clients, method)
                    s["warmup"] = k == 0
                    sessions.append(s)
                    print(
                        f"(1) {method}{' warm-up' if k == 0 else ''}: fresh {s['fresh_s']:.1f} s "
                        f"after the session (seen {s['seen_s']:.1f} s), started after "
                        f"{s['wait_s']:.1f} s, compute {s['compute_s']:.1f} s, "
                        f"{s['judgments']:,} judgments; load {loadavg()}",
                        flush=True,
                    )
            set_method(args, "bradley_terry")
            wait_worker_quiet(conn)

            # (2) submit latency, idle vs during a run
            load_2 = loadavg()
            lat = measure_latency(args, conn, clients, manager, worker.proc.pid, server)
            print(f"(2) {json.dumps({k: v for k, v in lat.items() if k != 'raw'})}", flush=True)
        finally:
            conn.close()
        report(args, sessions, lat, others, load_before, load_2, head)
        if args.json:
            Path(args.json).write_text(json.dumps({"sessions": sessions, "latency": lat}, indent=2))
        return 1 if lat["errors"] else 0
    finally:
        if pg_restore:
            pin_postgres(pg_restore)
        if server is not None:
            server.stop()
        for child in reversed(children):
            child.stop()
        if quota is not None:
            print(f"cgroup cpu.stat: {quota.throttled()}", flush=True)
            quota.remove()
        shutil.rmtree(folder, ignore_errors=True)
        if queue_setup.CODE != ROOT:
            shutil.rmtree(queue_setup.CODE, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
