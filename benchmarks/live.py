"""Live answering with faults: fresh scores after each fault while annotators keep answering.

    python benchmarks/live.py [--annotators 30] [--duration 480]
        [--faults scoring redis postgres gunicorn beat] [--adaptive top_k|threshold]

The production processes as platform/DEPLOY.md runs them (benchmarks/live_stack.py): nginx
in front of gunicorn (platform/gunicorn.conf.py), the default worker, the scoring worker
(nice 19) and beat, each under a restart policy (started again 5 s after any exit, as
systemd's Restart=always), on a PostgreSQL cluster and a redis-server of the run's own (free
ports, a temporary folder; the machine's servers are never touched). Every setting is the
shipped default (SCORING_MAX_STALENESS 60 s, SCORING_SESSION_GAP 20 s, ...).

N annotators answer continuously over HTTP through nginx (REST API: next, then submit with a
client_id, retried with the same id after an error; no logouts; think time around --think
seconds), while each fault is applied once, --gap seconds or more after the previous one's
end:

  scoring   SIGKILL of the scoring worker's process group while a run is computing
  redis     redis-server stopped for --redis-down seconds (30), then started again
  postgres  pg_ctl restart -m fast
  gunicorn  SIGKILL of a gunicorn worker holding a request from nginx
  beat      SIGKILL of beat

Per fault: the client errors seen from its start until the next fault, and the time from its
end (the kill, or the server back) until a finished run of the scheme started after the last
answer accepted before that end (a run reads the answers as of its start), i.e. scores that
cover every answer accepted before it; the target is 60 s. Totals, once the load stops and
the workers are quiet: answers accepted (2xx) and stored, duplicated, units over their cap,
runs left queued or running, redundant runs (an ok run reading no answer its predecessor had
not), failed runs, restarts.

With --adaptive the project's tuples come in adaptive batches aimed at that target (the sizes
left out, as a user would leave them: a balanced start of one appearance, batches of n / 32
tuples, n / 64 for a threshold at score 0), designed by the worker as answers come in; an
annotator who finds the queue empty while the next batch is designed gets 202 with
Retry-After and asks again then. Printed besides: the batches, how many next requests were
told to wait, how long each wait lasted (from the first 202 to the next unit), and how many
were told 204 (no more work) while the design still had batches to add. Figures, not
assertions: tests/test_live.py runs a bounded
version (10 annotators, Redis down 15 s and a scoring worker kill, with --staleness 20
--check-interval 2 --session-gap 5 to fit in about two minutes) and asserts them.
"""

# ruff: noqa: E402  (sys.path is set before the benchmarks package is imported)
from __future__ import annotations

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]
sys.path.append(os.path.dirname(_HERE))

import argparse
import collections
import http.client
import json
import random
import signal
import threading
import time
import uuid
from pathlib import Path

import psycopg

from benchmarks.live_stack import LiveStack
from benchmarks.queue_invariants import check_invariants
from benchmarks.queue_load import Client, percentile
from benchmarks.queue_setup import PASSWORD, SLUG, base_env, manage, write_project

FAULTS = ("scoring", "redis", "postgres", "gunicorn", "beat")
FRESH_TARGET = 60.0
SCHEME = "quality"
TIMES = ("created", "dispatched", "started", "finished")  # of a run, epoch seconds


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--annotators", type=int, default=30)
    parser.add_argument("--duration", type=float, default=480.0, help="seconds of answering")
    parser.add_argument("--faults", nargs="*", choices=FAULTS, default=list(FAULTS))
    parser.add_argument(
        "--adaptive", choices=("top_k", "threshold"), help="adaptive batches aimed at this target"
    )
    parser.add_argument("--think", type=float, default=3.0, help="mean think time, seconds")
    parser.add_argument("--first-fault", type=float, default=45.0, help="seconds into the run")
    parser.add_argument("--gap", type=float, default=60.0, help="seconds between faults")
    parser.add_argument("--redis-down", type=float, default=30.0)
    parser.add_argument("--tuples", type=int, default=5000, help="units of the project")
    parser.add_argument("--memory-mb", type=int, default=2048, help="address space per process")
    parser.add_argument(
        "--staleness",
        type=float,
        help="SCORING_MAX_STALENESS for the run (default: the shipped 60 s); the bounded "
        "run in the test suite lowers it, with --check-interval, to fit in about 2 minutes",
    )
    parser.add_argument("--check-interval", type=float, help="SCORING_CHECK_INTERVAL (5 s)")
    parser.add_argument("--session-gap", type=float, help="SCORING_SESSION_GAP (20 s)")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args(argv)
    args.db = "annolab"
    args.pg_user, args.pg_host = "postgres", "127.0.0.1"
    return args


# ---------------------------------------------------------------- annotators


class Record:
    """What the annotators saw: accepted submits (client id, unit, time), errors with
    times; shared by the threads under a lock."""

    def __init__(self):
        self.lock = threading.Lock()
        self.accepted: list[tuple[float, str]] = []
        self.units: dict[str, list[int]] = collections.defaultdict(list)
        self.errors: list[tuple[float, str]] = []
        self.no_work = 0
        self.waits = 0  # next requests answered 202: ask again, a batch is on its way
        self.wait_spans: list[float] = []  # seconds from a first 202 to the next unit
        # (time answered, "next" or "submit", seconds), for every request that got a status
        self.latencies: list[tuple[float, str, float]] = []

    def error(self, what: str) -> None:
        with self.lock:
            self.errors.append((time.time(), what))


def call(client: Client, record: Record, method: str, path: str, body=None):
    """(status, data), or (None, b"") after a connection error (recorded)."""
    started = time.perf_counter()
    try:
        status, data = client.call(method, path, body)
    except (OSError, http.client.HTTPException) as exc:
        client.conn.close()
        record.error(f"{path.rsplit('/', 2)[-2]} {type(exc).__name__}")
        return None, b""
    kind = "next" if path.endswith("/queue/next/") else "submit"
    with record.lock:
        record.latencies.append((time.time(), kind, time.perf_counter() - started))
    return status, data


def latency_p95(record: Record, faults: list[dict]) -> dict:
    """p95 in ms of next and of submit: over every request, and outside the faults (from
    each fault's start until 10 s after its end)."""
    windows = [(f["start"], f["end"] + 10) for f in faults]
    figures = {}
    for kind in ("next", "submit"):
        every = [s for _, k, s in record.latencies if k == kind]
        calm = [
            s
            for t, k, s in record.latencies
            if k == kind and not any(a <= t <= b for a, b in windows)
        ]
        figures[kind] = {
            "n": len(every),
            "p95_ms": 1000 * percentile(every, 95) if every else None,
            "p95_ms_outside_faults": 1000 * percentile(calm, 95) if calm else None,
        }
    return figures


def annotate(port, username, think, record: Record, stop: threading.Event) -> None:
    """next and submit until ``stop``, bounded in count; a failed submit is sent again with
    its client_id (stored once) until it is accepted or refused with a 4xx."""
    client = Client(port, username)
    rng = random.Random(username)
    for _ in range(20):
        try:
            client.login()
            break
        except Exception as exc:  # noqa: BLE001 - recorded, tried again
            record.error(f"login {type(exc).__name__}")
            stop.wait(1)
    waiting_since = None
    for _ in range(100_000):
        if stop.is_set():
            return
        status, data = call(client, record, "POST", f"/api/v1/projects/{SLUG}/queue/next/")
        if status == 202:  # the next adaptive batch is being designed: ask again then
            with record.lock:
                record.waits += 1
            waiting_since = waiting_since or time.time()
            stop.wait(min(float(json.loads(data).get("retry_after", 3)), 10.0))
            continue
        if status == 200 and waiting_since is not None:
            with record.lock:
                record.wait_spans.append(time.time() - waiting_since)
            waiting_since = None
        if status == 204:
            with record.lock:
                record.no_work += 1
            stop.wait(think)
            continue
        if status != 200:
            if status is not None:
                record.error(f"next {status}")
            stop.wait(1)
            continue
        unit = json.loads(data)
        best, worst = rng.sample([item["id"] for item in unit["items"]], 2)
        body = {
            "unit": unit["id"],
            "annotations": {SCHEME: {"best": best, "worst": worst}},
            "client_id": str(uuid.uuid4()),
        }
        for _ in range(120):  # about two minutes of retries
            status, data = call(
                client, record, "POST", f"/api/v1/projects/{SLUG}/annotations/", body
            )
            if status in (200, 201):
                with record.lock:
                    record.accepted.append((time.time(), body["client_id"]))
                    record.units[username].append(unit["id"])
                break
            if status is not None:
                record.error(f"submit {status}")
                if status < 500:
                    break
            time.sleep(1)  # also after stop: a submit in doubt is settled, not dropped
        stop.wait(rng.uniform(0.5, 1.5) * think)


# ---------------------------------------------------------------- faults


def connect(stack: LiveStack):
    return psycopg.connect(stack.postgres.url("annolab"), autocommit=True, connect_timeout=5)


def query(stack: LiveStack, sql: str, params=()):
    """Rows of one query on a connection of its own (PostgreSQL restarts during the run)."""
    with connect(stack) as conn:
        return conn.execute(sql, params).fetchall()


def wait_for_running_run(stack: LiveStack, timeout: float, stop: threading.Event):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not stop.is_set():
        try:
            rows = query(stack, "SELECT id FROM bws_scorerun WHERE status = 'running'")
        except psycopg.Error:
            rows = []
        if rows:
            return rows[0][0]
        time.sleep(0.05)
    return None


def apply_fault(name: str, stack: LiveStack, args, stop: threading.Event) -> dict:
    """Apply one fault; its start, its end and what it hit."""
    note = ""
    if name == "scoring":
        run = wait_for_running_run(stack, 240, stop)
        time.sleep(0.2)  # inside the computation, not at its first query
        start = time.time()
        stack.procs["scoring"].kill()
        note = f"run {run} computing" if run else "no run was computing within 240 s"
        end = start
    elif name == "redis":
        start = time.time()
        stack.stop_redis()
        stop.wait(args.redis_down)
        stack.start_redis()
        end = time.time()
    elif name == "postgres":
        start = time.time()
        stack.postgres.restart()
        end = time.time()
    elif name == "gunicorn":
        pid = stack.busy_web_worker()
        start = time.time()
        if pid is not None:
            os.kill(pid, signal.SIGKILL)
            note = f"worker {pid} held a request"
        else:
            note = "no worker held a request within 20 s"
        end = start
    else:  # beat
        start = time.time()
        stack.procs["beat"].kill()
        end = start
    return {"fault": name, "start": start, "end": end, "note": note}


def run_faults(stack, args, begin, stop, faults_out) -> None:
    at = begin + args.first_fault
    for name in args.faults:
        if stop.wait(max(0.0, at - time.time())):
            return
        fault = apply_fault(name, stack, args, stop)
        faults_out.append(fault)
        print(f"  {time.time() - begin:6.1f} s  {name}: {fault['note'] or 'applied'}", flush=True)
        at = fault["end"] + args.gap


# ---------------------------------------------------------------- figures


def ok_runs(stack: LiveStack) -> list[dict]:
    rows = query(
        stack,
        "SELECT id, status, n_judgments, attempts, extract(epoch from created_at),"
        " extract(epoch from dispatched_at), extract(epoch from started_at),"
        " extract(epoch from finished_at) FROM bws_scorerun WHERE scheme = %s ORDER BY id",
        [SCHEME],
    )
    keys = ("id", "status", "n", "attempts", *TIMES)
    return [
        {k: float(v) if k in TIMES and v is not None else v for k, v in zip(keys, row, strict=True)}
        for row in rows
    ]


def freshness(fault: dict, accepted: list[float], runs: list[dict]) -> float | None:
    """Seconds from the fault's end until an ok run that started after the last answer
    accepted before that end finished (None: no such run)."""
    before = [t for t in accepted if t <= fault["end"]]
    last = max(before) if before else fault["end"]
    done = [
        float(r["finished"])
        for r in runs
        if r["status"] == "ok" and r["started"] is not None and float(r["started"]) >= last
    ]
    return max(0.0, min(done) - fault["end"]) if done else None


def redundant_runs(runs: list[dict]) -> int:
    """ok runs that read no answer the previous ok run had not read."""
    count, previous = 0, None
    for r in sorted((r for r in runs if r["status"] == "ok"), key=lambda r: float(r["started"])):
        if previous is not None and r["n"] <= previous:
            count += 1
        previous = r["n"]
    return count


def wait_quiet(stack: LiveStack, timeout: float) -> bool:
    """Until no run is queued or running and no project is dirty, twice 3 s apart."""
    deadline, quiet_since = time.monotonic() + timeout, None
    while time.monotonic() < deadline:
        try:
            busy = query(
                stack,
                "SELECT (SELECT count(*) FROM bws_scorerun WHERE status IN ('queued', 'running'))"
                " + (SELECT count(*) FROM bws_scoringstate WHERE dirty)",
            )[0][0]
        except psycopg.Error:
            busy = 1
        if busy:
            quiet_since = None
        elif quiet_since is None:
            quiet_since = time.monotonic()
        elif time.monotonic() - quiet_since >= 3:
            return True
        time.sleep(0.5)
    return False


def figures(stack, args, record: Record, faults: list[dict], begin: float) -> dict:
    runs = ok_runs(stack)
    accepted_times = sorted(t for t, _ in record.accepted)
    per_fault = []
    bounds = [f["start"] for f in faults[1:]] + [float("inf")] if faults else []
    for fault, until in zip(faults, bounds, strict=True):
        errors = [w for t, w in record.errors if fault["start"] - 1 <= t < until]
        fresh = freshness(fault, accepted_times, runs)
        per_fault.append(
            {
                **{k: fault[k] for k in ("fault", "note")},
                "at_s": fault["start"] - begin,
                "lasted_s": fault["end"] - fault["start"],
                "errors": len(errors),
                "error_kinds": dict(collections.Counter(errors).most_common(4)),
                "fresh_s": fresh,
            }
        )
    first = faults[0]["start"] if faults else float("inf")
    stored, dup_clients = query(
        stack,
        "SELECT count(*), count(*) - count(DISTINCT (annotator_id, client_id))"
        " FROM projects_submission s JOIN projects_unit u ON u.id = s.unit_id"
        " JOIN projects_project p ON p.id = u.project_id WHERE p.slug = %s",
        [SLUG],
    )[0]
    broken, totals = check_invariants(args, dict(record.units))
    left = query(stack, "SELECT count(*) FROM bws_scorerun WHERE status IN ('queued', 'running')")[
        0
    ][0]
    accepted_ids = [c for _, c in record.accepted]
    return {
        "annotators": args.annotators,
        "duration_s": args.duration,
        "faults": per_fault,
        "latency": latency_p95(record, faults),
        "errors_before_faults": sum(1 for t, _ in record.errors if t < first - 1),
        "accepted": len(accepted_ids),
        "accepted_twice": len(accepted_ids) - len(set(accepted_ids)),
        "stored": stored,
        "annotations": totals["annotations"],
        "duplicated": dup_clients
        + sum(int(b.split(": ")[1]) for b in broken if b.startswith("duplicate")),
        "over_cap": sum(int(b.split(": ")[1]) for b in broken if b.startswith("units over")),
        "broken": broken,
        "runs": len([r for r in runs if r["status"] == "ok"]),
        "failed_runs": len([r for r in runs if r["status"] == "failed"]),
        "runs_left": left,
        "redundant_runs": redundant_runs(runs),
        "restarts": {n: p.restarts for n, p in stack.procs.items() if n != "redis"},
        "no_work": record.no_work,
        "waits": record.waits,
        "wait_spans": sorted(record.wait_spans),
        "batches": query(
            stack,
            "SELECT count(*), coalesce(sum(b.n_tuples), 0) FROM bws_tuplebatch b"
            " JOIN projects_project p ON p.id = b.project_id WHERE p.slug = %s AND b.number > 0",
            [SLUG],
        )[0],
        "errors_first": [f"{t - begin:.1f} s {w}" for t, w in record.errors[:10]],
        "run_times": [
            {k: round(v - begin, 1) if k in TIMES and v is not None else v for k, v in r.items()}
            for r in runs
        ],
    }


def report(result: dict) -> None:
    load = result["load"]
    print(
        f"\n{result['annotators']} annotators, {result['duration_s']:.0f} s; load average "
        f"{load[0]:.2f} at the start, {load[1]:.2f} at the end"
    )
    print(
        f"| fault | at | lasted | errors seen | fresh after its end (target {FRESH_TARGET:.0f} s) |"
    )
    print("|---|---|---|---|---|")
    for f in result["faults"]:
        fresh = "none" if f["fresh_s"] is None else f"{f['fresh_s']:.1f} s"
        kinds = ", ".join(f"{k} x{v}" for k, v in f["error_kinds"].items())
        print(
            f"| {f['fault']} ({f['note'] or 'applied'}) | {f['at_s']:.0f} s | "
            f"{f['lasted_s']:.1f} s | {f['errors']}{' (' + kinds + ')' if kinds else ''} | "
            f"{fresh} |"
        )
    print(
        f"\naccepted {result['accepted']}, stored {result['stored']} "
        f"({result['annotations']} annotation rows), duplicated {result['duplicated']}, "
        f"over cap {result['over_cap']}, runs left queued or running {result['runs_left']}, "
        f"redundant runs {result['redundant_runs']} of {result['runs']} ok "
        f"({result['failed_runs']} failed); errors before the first fault "
        f"{result['errors_before_faults']}; restarts {result['restarts']}"
    )
    for kind, f in result["latency"].items():
        p95, calm = f["p95_ms"], f["p95_ms_outside_faults"]
        print(
            f"{kind}: {f['n']} requests, p95 {p95:.0f} ms, outside the faults (to 10 s after "
            f"each) {calm:.0f} ms"
            if p95 is not None and calm is not None
            else f"{kind}: {f['n']} requests"
        )
    if result["broken"]:
        print("broken invariants: " + "; ".join(result["broken"]))
    batches, tuples = result["batches"]
    if batches:
        spans = result["wait_spans"]
        longest = (
            f", longest {spans[-1]:.1f} s, median {spans[len(spans) // 2]:.1f} s" if spans else ""
        )
        print(
            f"adaptive: {batches} batches of {tuples} tuples after the start; next answered "
            f"202 (wait) {result['waits']} times of {result['latency']['next']['n']}, "
            f"{len(spans)} waits{longest}; 204 (no more work) {result['no_work']} times"
        )


# ---------------------------------------------------------------- the run


def run(args) -> dict:
    stack = LiveStack(memory_mb=args.memory_mb)
    stop = threading.Event()
    threads: list[threading.Thread] = []
    try:
        stack.start_servers()
        args.pg_port = stack.pg_port
        with psycopg.connect(stack.postgres.url("postgres"), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{args.db}"')
        folder = stack.folder
        env = {  # the shipped defaults, whatever this shell has set
            k: v
            for k, v in base_env(args).items()
            if not k.startswith(("SCORING_", "CELERY_", "GUNICORN_", "DB_CONN"))
        } | {
            "DATABASE_URL": stack.postgres.url(args.db),
            "REDIS_URL": f"redis://127.0.0.1:{stack.redis_port}/0",
            "STATIC_ROOT": str(folder / "static"),
            "PROJECT_FILES_ROOT": str(folder / "files"),
            "PROJECT_FILES_ACCEL_REDIRECT": "/_project_files/",
            "TRUSTED_PROXY_COUNT": "1",
            "GUNICORN_BIND": f"127.0.0.1:{stack.web_port}",
            "GUNICORN_ACCESSLOG": "/dev/null",
        }
        if args.staleness is not None:
            env["SCORING_MAX_STALENESS"] = str(args.staleness)
        if args.check_interval is not None:
            env["SCORING_CHECK_INTERVAL"] = str(args.check_interval)
        if args.session_gap is not None:
            env["SCORING_SESSION_GAP"] = str(args.session_gap)
        manage(env, "migrate", "--noinput")
        manage(env, "collectstatic", "--noinput")
        config = write_project(folder / "project", args.tuples)
        text = config.read_text().replace(
            "  seed: 42\n",
            "  seed: 42\n  scoring:\n    method: bradley_terry\n"
            "    include_confidence: true\n    bootstrap_iterations: 1000\n",
            1,
        )
        if args.adaptive == "top_k":
            text = text.replace(
                "  seed: 42\n", "  seed: 42\n  adaptive:\n    target: top_k\n    k: 0.1\n", 1
            )
        elif args.adaptive == "threshold":
            text = text.replace(
                "  seed: 42\n",
                "  seed: 42\n  adaptive:\n    target: threshold\n    threshold: 0.0\n",
                1,
            )
        config.write_text(text)
        manage(env, "import_project", str(config), "--slug", SLUG)
        users = [f"live{i:03d}" for i in range(args.annotators)]
        manage(env, "add_members", SLUG, "--role", "annotator", "--create", "--password",
               PASSWORD, *users)  # fmt: skip
        stack.start_app(env)
        load_start = os.getloadavg()[0]
        record, faults = Record(), []
        begin = time.time()
        print(f"answering through nginx on 127.0.0.1:{stack.proxy_port}", flush=True)
        threads = [
            threading.Thread(
                target=annotate,
                args=(stack.proxy_port, u, args.think, record, stop),
                daemon=True,
            )
            for u in users
        ]
        for t in threads:
            t.start()
            time.sleep(args.think / len(users))  # arrivals spread over one think time
        run_faults(stack, args, begin, stop, faults)
        # Answering goes on for the duration and past the last fault by the staleness bound
        # plus 15 s (a run), so every fault's freshness is measured under load.
        tail = (args.staleness or 60.0) + 15
        until = max(begin + args.duration, (faults[-1]["end"] + tail) if faults else 0)
        stop.wait(max(0.0, until - time.time()))
        stop.set()
        for t in threads:
            t.join(timeout=150)
        load_end = os.getloadavg()[0]
        quiet = wait_quiet(stack, 240)
        result = figures(stack, args, record, faults, begin)
        result["load"] = [load_start, load_end]
        result["answering_s"] = time.time() - begin
        result["quiet"] = quiet
        return result
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=5)
        stack.stop()


def main(argv=None) -> dict:
    args = parse_args(argv)
    result = run(args)
    report(result)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1))
    return result


if __name__ == "__main__":
    # A SIGTERM unwinds like Ctrl-C, so every process started is stopped and the folder removed.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    main()
