"""Queue benchmark: gunicorn on PostgreSQL, simulated annotators through the REST API.

    python benchmarks/queue.py [--tuples 10000 100000] [--duration 60] [--workers 2 --threads 8]

For each project size (BWS tuples, T = 4, r = 8, so N = tuples / 2 items, and
num_annotators_per_item: 2) the script drops and recreates the bench database, migrates,
imports the project, adds the annotators, starts gunicorn on 127.0.0.1 and logs every
annotator in (password hashing is not measured), then runs two modes, each for a fixed
duration after a short unmeasured warm-up:

  (a) paced: every annotator asks for the next unit, submits an answer, thinks --think
      seconds (2 s: about 25 next+submit pairs per second offered by 50 annotators);
      reports p50/p95/p99 latency of next and of submit;
  (b) saturation: the same with no think time; reports next+submit pairs per second.

Each mode ends with the invariant check, in SQL on the bench database: no unit over its
cap, no (unit, annotator) twice in projects_assignment or projects_annotation, each unit's
completed and load counters equal to its rows; and, from the client side, nobody handed
the same unit twice and every 201 stored. The load generator is one process of threads,
each with a keep-alive http.client connection; its CPU share is reported next to that of
gunicorn and PostgreSQL, since all three share the machine's cores. Figures, not
assertions; the exit code is 1 only when an invariant is broken or requests fail.
"""

# ruff: noqa: E402  (sys.path is fixed before the imports; see below)
from __future__ import annotations

import os
import sys

# Run as a script, this file's folder comes first on sys.path and its name would shadow the
# standard library's queue module (which psycopg and others import): drop that entry.
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
from benchmarks.cpu_accounting import CpuMeter
from benchmarks.queue_invariants import check_invariants
from benchmarks.queue_launch import run_launch
from benchmarks.queue_load import Client, Tally, percentile, run_phase
from benchmarks.queue_report import (
    describe,
    print_launch,
    print_launch_comparison,
    print_table,
)
from benchmarks.queue_setup import (
    PASSWORD,
    ROOT,
    SLUG,
    Server,
    base_env,
    manage,
    pg_url,
    recreate_database,
    snapshot_head,
    write_project,
)


def bench_size(args, n_tuples: int) -> dict:
    row = {"tuples": n_tuples}
    env = base_env(args)
    folder = Path(tempfile.mkdtemp(prefix="queue-bench-"))
    server = None
    try:
        t0 = time.monotonic()
        recreate_database(args)
        manage(env, "migrate", "--noinput")
        config = write_project(folder, n_tuples)
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
        with psycopg.connect(pg_url(args, args.db), autocommit=True) as conn:
            conn.execute("VACUUM ANALYZE")
            row["units"] = conn.execute(
                "SELECT count(*) FROM projects_unit u JOIN projects_project p"
                " ON p.id = u.project_id WHERE p.slug = %s",
                [SLUG],
            ).fetchone()[0]
        print(
            f"[{n_tuples}] database ready in {time.monotonic() - t0:.0f} s ({row['units']} units)",
            flush=True,
        )

        server = Server(args, env)
        server.wait_ready()
        clients = [Client(args.port, u) for u in users]
        for client in clients:
            client.login()
        meter = CpuMeter(server)
        answered: dict = {}

        def merge(tally: Tally) -> None:
            for user, units in tally.units.items():
                answered.setdefault(user, []).extend(units)

        for mode, think, seconds in (
            ("a", args.think, args.duration_a),
            ("b", 0.0, args.duration_b),
        ):
            warm, _ = run_phase(clients, think, args.warmup, record=False)
            merge(warm)
            before = meter.snapshot()
            tally, elapsed = run_phase(clients, think, seconds, record=True)
            cpu = CpuMeter.with_other(CpuMeter.delta(before, meter.snapshot()))
            merge(tally)
            broken, totals = check_invariants(args, answered)
            errors = warm.errors + tally.errors
            row[mode] = {
                "pairs": tally.pairs,
                "seconds": elapsed,
                "pairs_per_s": tally.pairs / elapsed,
                "next": [percentile(tally.next_ms, q) for q in (50, 95, 99)],
                "submit": [percentile(tally.submit_ms, q) for q in (50, 95, 99)],
                "cpu": cpu,
                "errors": errors,
                "no_work": tally.no_work + warm.no_work,
                "broken": broken,
                "totals": totals,
            }
            print(f"[{n_tuples}] mode {mode}: {describe(row[mode])}", flush=True)
            if errors:
                print("   errors: " + "; ".join(errors[:5]), flush=True)
            if broken:
                print("   BROKEN: " + "; ".join(broken), flush=True)
        row["reconnects"] = sum(c.reconnects for c in clients)
        return row
    finally:
        if server is not None:
            server.stop()
        shutil.rmtree(folder, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tuples", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--duration", type=float, help="seconds of each mode (sets both)")
    parser.add_argument("--duration-a", type=float, default=60.0)
    parser.add_argument("--duration-b", type=float, default=60.0)
    parser.add_argument("--warmup", type=float, default=5.0, help="unmeasured seconds per mode")
    parser.add_argument("--annotators", type=int, default=50)
    parser.add_argument("--think", type=float, default=2.0)
    parser.add_argument("--workers", type=int, default=4, help="gunicorn worker processes")
    parser.add_argument(
        "--threads", type=int, default=2, help="threads per worker (1: sync workers; more: gthread)"
    )
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--db", default="annolab_bench")
    parser.add_argument("--admin-db", default="postgres")
    parser.add_argument("--pg-host", default="127.0.0.1")
    parser.add_argument("--pg-port", default="5432")
    parser.add_argument("--pg-user", default="postgres")
    parser.add_argument("--json", help="also write the figures to this file")
    parser.add_argument(
        "--code",
        choices=["tree", "head"],
        default="tree",
        help="run the working tree, or a snapshot of the last commit (git archive HEAD)",
    )
    parser.add_argument("--rev", default="HEAD", help="with --code head: the commit to run")
    parser.add_argument(
        "--mode",
        choices=["queue", "launch"],
        default="queue",
        help="queue: paced and saturation runs of members through the API; launch: "
        "participants arriving through the entry link, as browsers",
    )
    launch = parser.add_argument_group("launch mode")
    launch.add_argument("--participants", type=int, default=200)
    launch.add_argument("--arrival", type=float, default=60.0, help="seconds they arrive over")
    launch.add_argument("--units", type=int, default=20, help="units_per_participant")
    launch.add_argument("--think-min", type=float, default=2.0)
    launch.add_argument("--think-max", type=float, default=5.0)
    launch.add_argument("--seed", type=int, default=14)
    launch.add_argument(
        "--proxy",
        choices=["bare", "proxy", "both"],
        default="both",
        help="the participants reach gunicorn itself, nginx in front of it (platform/nginx), "
        "or one launch of each, bare first",
    )
    launch.add_argument("--proxy-port", type=int, default=8766)
    launch.add_argument("--pool", type=int, default=250, help="at most this many browsers at once")
    launch.add_argument(
        "--launch-timeout", type=float, default=420.0, help="hard limit of the whole launch"
    )
    launch.add_argument("--memory-mb", type=int, default=3072, help="load generator's memory")
    launch.add_argument(
        "--server-timing",
        type=int,
        default=1,
        help="1: gunicorn sends Server-Timing, read for SQL statements per request",
    )
    args = parser.parse_args()
    if args.code == "head":
        queue_setup.CODE = snapshot_head(args.rev)
        head = subprocess.run(
            ["git", "rev-parse", "--short", args.rev], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
        print(f"code: snapshot of HEAD {head} in {queue_setup.CODE}", flush=True)
    if args.duration is not None:
        args.duration_a = args.duration_b = args.duration
    if args.mode == "launch":
        results = []
        try:
            for proxied in {"bare": [False], "proxy": [True], "both": [False, True]}[args.proxy]:
                results.append(run_launch(args, proxied))
                print_launch(results[-1], args)
        finally:
            if queue_setup.CODE != ROOT:
                shutil.rmtree(queue_setup.CODE, ignore_errors=True)
        if len(results) > 1:
            print_launch_comparison(results)
        if args.json:
            Path(args.json).write_text(json.dumps(results, indent=2))
        return 1 if any(r["broken"] or r["errors"] for r in results) else 0
    rows = []
    try:
        for n in args.tuples:
            rows.append(bench_size(args, n))
    finally:
        if queue_setup.CODE != ROOT:
            shutil.rmtree(queue_setup.CODE, ignore_errors=True)
    print_table(rows, args)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))
    bad = any(r[m]["broken"] or r[m]["errors"] for r in rows for m in ("a", "b"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
