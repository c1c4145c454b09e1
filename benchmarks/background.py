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
--worker-cpu-period-ms and the lowest weight (cpu.idle where the kernel has it), as the
systemd unit's CPUQuota= / CPUQuotaPeriodSec= / CPUWeight=idle do; the cgroup is removed at
the end. --worker-cpus / --web-cpus / --pg-cpus pin the processes with taskset,
--worker-nice and --worker-sched-idle lower the scoring worker's priority: the experiments
in RESULTS.md.

The script reuses setup and client code from benchmarks/queue.py. Figures, not assertions.
"""

# ruff: noqa: E402  (sys.path is fixed before the imports; see below)
from __future__ import annotations

import os
import sys

# Run as a script, this folder comes first on sys.path and benchmarks/queue.py would shadow
# the standard library's queue module: drop that entry before importing anything else.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]

import argparse
import importlib.util
import json
import platform
import random
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import uuid
from pathlib import Path

import numpy as np
import psycopg
from psycopg.types.json import Jsonb


def _load_queue_bench():
    spec = importlib.util.spec_from_file_location("bench_queue", Path(_HERE) / "queue.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_queue"] = module
    spec.loader.exec_module(module)
    return module


qb = _load_queue_bench()

ROOT = qb.ROOT
CELERY = ROOT / ".venv" / "bin" / "celery"
SLUG = "bg-bench"
SCHEME = "quality"
N_TUPLES = 20_000  # 10,000 items at T = 4, r = 8
PRELOAD_ANNOTATORS = 10


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---------------------------------------------------------------- child processes


class Child:
    """A child process in its own process group, its output in a temp file."""

    def __init__(self, name: str, argv: list[str], cwd, env: dict):
        self.name = name
        self.log = tempfile.NamedTemporaryFile("w+", prefix=f"bg-{name}-", suffix=".log")
        self.proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def alive(self) -> bool:
        return self.proc.poll() is None

    def tail(self, n: int = 30) -> str:
        self.log.seek(0)
        return "".join(self.log.readlines()[-n:])

    def stop(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=30)
            except ProcessLookupError:
                pass
        self.log.close()


def start_redis(port: int, folder: Path) -> Child:
    redis = Child(
        "redis",
        [
            shutil.which("redis-server") or "redis-server",
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(folder),
        ],
        folder,
        dict(os.environ),
    )
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if not redis.alive():
            raise RuntimeError(f"redis-server exited:\n{redis.tail()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
                s.sendall(b"PING\r\n")
                if s.recv(16).startswith(b"+PONG"):
                    return redis
        except OSError:
            pass
        time.sleep(0.2)
    redis.stop()
    raise RuntimeError("redis-server did not answer within 20 s")


CGROUP_CPU = Path("/sys/fs/cgroup/cpu")


class CpuQuota:
    """A cgroup v1 cpu group with a CFS quota: `share` of one core per `period_ms`."""

    def __init__(self, share: float, period_ms: float):
        self.path = CGROUP_CPU / f"annolab-scoring-{os.getpid()}"
        self.path.mkdir()
        period = int(period_ms * 1000)
        (self.path / "cpu.cfs_period_us").write_text(str(period))
        (self.path / "cpu.cfs_quota_us").write_text(str(max(1000, int(period * share))))
        (self.path / "cpu.shares").write_text("2")
        if (self.path / "cpu.idle").exists():
            (self.path / "cpu.idle").write_text("1")

    def argv(self, argv: list[str]) -> list[str]:
        """A command that enters the group before it starts, so every child is inside."""
        procs = self.path / "cgroup.procs"
        return ["sh", "-c", f'echo $$ > {procs} && exec "$@"', "sh", *argv]

    def throttled(self) -> dict:
        stat = dict(
            line.split() for line in (self.path / "cpu.stat").read_text().splitlines() if line
        )
        return {k: int(v) for k, v in stat.items()}

    def remove(self) -> None:
        for _ in range(50):
            left = (self.path / "cgroup.procs").read_text().split()
            for pid in left:  # anything still alive goes back to the root group
                try:
                    (CGROUP_CPU / "cgroup.procs").write_text(pid)
                except OSError:
                    pass
            try:
                self.path.rmdir()
                return
            except OSError:
                time.sleep(0.1)


def start_default_worker(env: dict) -> Child:
    """The default queue (the catch-up and scheduling) with beat inside."""
    Path(env["CELERY_DATA_DIR"]).mkdir(parents=True, exist_ok=True)
    return Child(
        "default-worker",
        [
            str(CELERY),
            "-A",
            "config",
            "worker",
            "-Q",
            "celery",
            "--beat",
            f"--schedule={env['CELERY_DATA_DIR']}/celerybeat-schedule",
            "--concurrency=1",
            "--loglevel=WARNING",
            f"--hostname=bgdefault{uuid.uuid4().hex[:6]}@%h",
        ],
        qb.CODE,
        env,
    )


def start_worker(
    env: dict,
    nice: int = 0,
    sched_idle: bool = False,
    cpus: str = "",
    quota: CpuQuota | None = None,
) -> Child:
    """The scoring worker, as platform/systemd/annolab-scoring.service runs it."""
    argv = (
        (["taskset", "-c", cpus] if cpus else [])
        + (["chrt", "--idle", "0"] if sched_idle else [])
        + (["nice", "-n", str(nice)] if nice else [])
        + [
            str(CELERY),
            "-A",
            "config",
            "worker",
            "-Q",
            "scoring",
            "--concurrency=1",
            "--prefetch-multiplier=1",
            "--loglevel=WARNING",
            f"--hostname=bgscoring{uuid.uuid4().hex[:6]}@%h",
        ]
    )
    return Child("worker", quota.argv(argv) if quota else argv, qb.CODE, env)


# ---------------------------------------------------------------- project and data


def children_of(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(entry.name))
    return out


def pin_tree(pid: int, cpus: str) -> None:
    """taskset a process, its threads and its children (new children inherit it)."""
    for p in [pid, *children_of(pid)]:
        subprocess.run(["taskset", "-a", "-p", "-c", cpus, str(p)], capture_output=True)


def pin_postgres(cpus: str) -> str:
    """Pin the postmaster and its processes; returns the CPU list to restore."""
    found = subprocess.run(["pgrep", "-o", "-x", "postgres"], capture_output=True, text=True)
    pid = int(found.stdout.split()[0])
    before = ",".join(str(c) for c in sorted(os.sched_getaffinity(pid)))
    pin_tree(pid, cpus)
    return before


def write_config(folder: Path) -> Path:
    config = qb.write_project(folder, N_TUPLES)
    text = config.read_text()
    text = text.replace(
        "  seed: 42\n",
        "  seed: 42\n  scoring:\n    method: bradley_terry\n"
        "    include_confidence: true\n    bootstrap_iterations: 1000\n",
        1,
    )
    text = text.replace("Queue benchmark", "Background scoring benchmark", 1)
    config.write_text(text)
    return config


def write_judgments(args, path: Path) -> int:
    """One judgment per tuple from the MaxDiff model, utilities ~ N(0, 1), as interchange
    records of PRELOAD_ANNOTATORS pseudo-annotators."""
    with psycopg.connect(qb.pg_url(args, args.db)) as conn:
        rows = conn.execute(
            "SELECT u.external_id, u.item_ids FROM projects_unit u"
            " JOIN projects_project p ON p.id = u.project_id WHERE p.slug = %s ORDER BY u.id",
            [SLUG],
        ).fetchall()
    rng = np.random.default_rng(11)
    utility: dict[str, float] = {}
    with open(path, "w") as out:
        for n, (unit_id, item_ids) in enumerate(rows):
            u = np.array([utility.setdefault(i, rng.normal()) for i in item_ids])
            best = int(np.argmax(u + rng.gumbel(size=len(u))))
            rest = [k for k in range(len(u)) if k != best]
            worst = rest[int(np.argmax(-u[rest] + rng.gumbel(size=len(rest))))]
            record = {
                "id": unit_id,
                "items": list(item_ids),
                "annotations": {SCHEME: {"best": item_ids[best], "worst": item_ids[worst]}},
                "annotator": f"pre{n % PRELOAD_ANNOTATORS:02d}",
            }
            out.write(json.dumps(record) + "\n")
    return len(rows)


def set_method(args, method: str) -> None:
    """Set the scheme's scoring method in the stored project config (as an edit would)."""
    with psycopg.connect(qb.pg_url(args, args.db), autocommit=True) as conn:
        config = conn.execute(
            "SELECT config FROM projects_project WHERE slug = %s", [SLUG]
        ).fetchone()[0]
        for scheme in config["schemes"]:
            if scheme.get("name") == SCHEME:
                scheme["options"]["scoring"]["method"] = method
        conn.execute(
            "UPDATE projects_project SET config = %s WHERE slug = %s",
            [Jsonb(config), SLUG],
        )


RUN_COLUMNS = (
    "r.id, r.method, r.status, r.trigger, r.n_judgments, extract(epoch from r.created_at),"
    " extract(epoch from r.started_at), extract(epoch from r.finished_at)"
)


def runs(conn, since: float = 0.0) -> list[dict]:
    rows = conn.execute(
        f"SELECT {RUN_COLUMNS} FROM bws_scorerun r JOIN projects_project p"
        " ON p.id = r.project_id WHERE p.slug = %s AND r.created_at >= to_timestamp(%s)"
        " ORDER BY r.id",
        [SLUG, since],
    ).fetchall()
    keys = ("id", "method", "status", "trigger", "n", "created", "started", "finished")
    return [
        {
            k: (float(v) if k in ("created", "started", "finished") and v is not None else v)
            for k, v in zip(keys, row, strict=True)
        }
        for row in rows
    ]


def judgment_count(conn) -> int:
    return conn.execute(
        "SELECT count(*) FROM projects_annotation a JOIN projects_project p"
        " ON p.id = a.project_id WHERE p.slug = %s AND a.scheme = %s",
        [SLUG, SCHEME],
    ).fetchone()[0]


def wait_worker_quiet(conn, timeout: float = 300) -> None:
    """Until no run is queued or running and the project is not dirty, twice 2 s apart
    (the catch-up takes the dirty flag a moment before it records the runs it queues)."""
    deadline = time.monotonic() + timeout
    quiet_since = None
    while time.monotonic() < deadline:
        busy = conn.execute(
            "SELECT (SELECT count(*) FROM bws_scorerun WHERE status IN ('queued', 'running'))"
            " + (SELECT count(*) FROM bws_scoringstate WHERE dirty)"
        ).fetchone()[0]
        if busy:
            quiet_since = None
        elif quiet_since is None:
            quiet_since = time.monotonic()
        elif time.monotonic() - quiet_since >= 2:
            return
        time.sleep(0.5)
    raise RuntimeError(f"the worker was still busy after {timeout} s")


# ---------------------------------------------------------------- annotators


def answer_one(client, rng) -> tuple[float, float, float, dict]:
    """next + submit; returns (submit start wall time, submit end wall time, next ms, the
    submit's Server-Timing figures)."""
    t0 = time.perf_counter()
    status, data = client.call("POST", f"/api/v1/projects/{SLUG}/queue/next/")
    next_ms = (time.perf_counter() - t0) * 1000
    if status != 200:
        raise qb.ApiError(f"next {status} {data[:200]!r}")
    unit = json.loads(data)
    best, worst = rng.sample([it["id"] for it in unit["items"]], 2)
    body = {
        "unit": unit["id"],
        "annotations": {SCHEME: {"best": best, "worst": worst}},
        "client_id": str(uuid.uuid4()),
    }
    w0 = time.time()
    status, data = client.call("POST", f"/api/v1/projects/{SLUG}/annotations/", body)
    w1 = time.time()
    if status not in (200, 201):
        raise qb.ApiError(f"submit {status} {data[:200]!r}")
    return w0, w1, next_ms, server_timing(client.server_timing)


def session_burst(clients, per_client: int) -> float:
    """Every client answers per_client units back to back, in parallel; returns the wall
    time at which the last submit returned (the end of the session)."""
    ends, errors, lock = [], [], threading.Lock()

    def work(client):
        rng = random.Random(client.username + str(time.time()))
        try:
            for _ in range(per_client):
                _, w1, _, _ = answer_one(client, rng)
                with lock:
                    ends.append(w1)
        except Exception as exc:  # noqa: BLE001 - reported
            with lock:
                errors.append(f"{client.username}: {exc}")

    threads = [threading.Thread(target=work, args=(c,), daemon=True) for c in clients]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    if errors or len(ends) != per_client * len(clients):
        raise RuntimeError("session failed: " + "; ".join(errors[:5]))
    return max(ends)


def measure_session(args, conn, clients, method: str) -> dict:
    end = session_burst(clients, args.per_client)
    total = judgment_count(conn)
    deadline = time.monotonic() + args.fresh_timeout
    while time.monotonic() < deadline:
        fresh = [
            r
            for r in runs(conn, end - 1)
            if r["status"] == "ok" and r["method"] == method and r["n"] >= total
        ]
        if fresh:
            seen = time.time()
            r = fresh[0]
            return {
                "method": method,
                "judgments": r["n"],
                "fresh_s": r["finished"] - end,
                "seen_s": seen - end,
                "wait_s": r["started"] - end,
                "compute_s": r["finished"] - r["started"],
                "runs": len(runs(conn, end - 1)),
            }
        failed = [r for r in runs(conn, end - 1) if r["status"] == "failed"]
        if failed:
            raise RuntimeError(f"a run failed: {failed[0]}")
        time.sleep(0.2)
    raise RuntimeError(f"no fresh {method} run within {args.fresh_timeout} s of the session end")


def paced_loop(client, think, deadline, out, lock, start_at):
    rng = random.Random(client.username)
    mine, errors = [], []
    if start_at > time.monotonic():
        time.sleep(start_at - time.monotonic())
    for _ in range(100_000):  # bounded
        if time.monotonic() >= deadline:
            break
        try:
            w0, w1, _, timing = answer_one(client, rng)
        except Exception as exc:  # noqa: BLE001 - reported
            errors.append(f"{client.username}: {type(exc).__name__}: {exc}")
            break
        mine.append((w0, w1, timing))
        time.sleep(max(0.0, min(think, deadline - time.monotonic())))
    with lock:
        out["submits"] += mine
        out["errors"] += errors


def run_controller(manager, schedule, stop_at, log, poll=1.0):
    """Ask for runs through the API: after `idle` quiet seconds, one run, wait until it is
    done, and again, cycling through the methods, until stop_at."""
    idle, methods = schedule
    k = 0
    run_id = None
    while time.monotonic() + idle < stop_at:
        # The manager keeps the page open between runs too, so polling adds the same load
        # to idle spells as to runs.
        quiet_until = time.monotonic() + idle
        while time.monotonic() < quiet_until:
            if run_id is not None:
                manager.call("GET", f"/api/v1/projects/{SLUG}/scores/runs/{run_id}/")
            time.sleep(max(0.0, min(poll, quiet_until - time.monotonic())))
        method = methods[k % len(methods)]
        k += 1
        status, data = manager.call(
            "POST",
            f"/api/v1/projects/{SLUG}/scores/",
            {"scheme": SCHEME, "method": method, "bootstrap": 1000},
        )
        if status != 202:
            log.append(f"rescore {status} {data[:200]!r}")
            return
        run_id = json.loads(data)["id"]
        polls_until = time.monotonic() + 300  # at most 300 s per run
        while time.monotonic() < polls_until:
            status, data = manager.call("GET", f"/api/v1/projects/{SLUG}/scores/runs/{run_id}/")
            if status == 200 and json.loads(data)["status"] in ("ok", "failed"):
                break
            time.sleep(poll)
        if time.monotonic() > stop_at:
            return


def server_timing(header: str) -> dict:
    """{"app": ms, "cpu": ms, "db": ms} from a Server-Timing header (config/timing.py)."""
    out = {}
    for part in header.split(","):
        fields = [f.strip() for f in part.split(";")]
        for f in fields[1:]:
            if f.startswith("dur="):
                out[fields[0]] = float(f[4:])
    return out


def split_latency(sample: list) -> dict:
    """Mean and p95 of where submit time went: outside Django (client, network, accept
    queue, waiting for a gunicorn thread), CPU of the serving thread, database calls, and
    the rest of the time inside Django (runnable but not running, GIL, locks)."""
    rows = [(ms, t["app"], t["cpu"], t["db"]) for ms, t in sample if {"app", "cpu", "db"} <= set(t)]
    if not rows:
        return {}
    a = np.array(rows)
    named = {
        "total": a[:, 0],
        "outside": a[:, 0] - a[:, 1],
        "cpu": a[:, 2],
        "db": a[:, 3],
        "other": np.maximum(a[:, 1] - a[:, 2] - a[:, 3], 0.0),
    }
    return {k: [float(v.mean()), float(np.percentile(v, 95))] for k, v in named.items()}


def cpu_wall(snapshot: dict) -> float:
    return max(time.monotonic() - snapshot["wall"], 1e-9)


def block_bootstrap_ratio(busy, idle, q=95, resamples=1000, seed=0):
    """Interval of p_q(busy) / p_q(idle), resampling 1-second blocks of submits."""
    rng = np.random.default_rng(seed)

    def blocks(sample):
        by_sec: dict[int, list] = {}
        for start, ms in sample:
            by_sec.setdefault(int(start), []).append(ms)
        return [np.array(v) for v in by_sec.values()]

    bb, ib = blocks(busy), blocks(idle)
    ratios = []
    for _ in range(resamples):
        b = np.concatenate([bb[i] for i in rng.integers(0, len(bb), len(bb))])
        i = np.concatenate([ib[j] for j in rng.integers(0, len(ib), len(ib))])
        ratios.append(np.percentile(b, q) / np.percentile(i, q))
    return float(np.percentile(ratios, 2.5)), float(np.percentile(ratios, 97.5))


def group_cpu(pid: int) -> float:
    """CPU seconds of a process and its children (a Celery prefork master and its child)."""
    return sum(qb.proc_cpu(p) for p in [pid, *children_of(pid)])


def measure_latency(args, conn, clients, manager, worker_pid, server) -> dict:
    out, lock = {"submits": [], "errors": []}, threading.Lock()
    begin = time.monotonic() + 0.2
    deadline = begin + args.duration
    wall_begin = time.time()
    threads = [
        threading.Thread(
            target=paced_loop,
            args=(c, args.think, deadline, out, lock, begin + random.uniform(0, args.think)),
            daemon=True,
        )
        for c in clients
    ]
    log: list[str] = []
    controller = threading.Thread(
        target=run_controller,
        args=(
            manager,
            (args.idle, ["bradley_terry", "plackett_luce"]),
            deadline - 5,
            log,
            args.poll,
        ),
        daemon=True,
    )
    meter = qb.CpuMeter(server)
    before = meter.snapshot()
    cpu0 = group_cpu(worker_pid)
    for t in threads:
        t.start()
    controller.start()
    for t in threads:
        t.join(timeout=args.duration + 120)
    controller.join(timeout=360)
    worker_cpu = group_cpu(worker_pid) - cpu0
    cpu = qb.CpuMeter.delta(before, meter.snapshot())
    cpu["worker"] = worker_cpu / cpu_wall(before)
    mine = cpu["web"] + cpu["pg"] + cpu["loadgen"] + cpu["worker"]
    cpu["other"] = max(0.0, cpu["machine"] - mine)
    spans = [
        (r["started"], r["finished"], r["method"])
        for r in runs(conn, wall_begin - 1)
        if r["started"] and r["finished"]
    ]
    warm = wall_begin + args.warmup
    busy, idle = [], []
    parts = {"busy": [], "idle": []}
    for w0, w1, timing in out["submits"]:
        if w0 < warm:
            continue
        ms = (w1 - w0) * 1000
        if any(w0 < f and w1 > s for s, f, _ in spans):
            busy.append((w0, ms))
            parts["busy"].append((ms, timing))
        elif all(w1 < s - 1 or w0 > f + 1 for s, f, _ in spans):
            idle.append((w0, ms))
            parts["idle"].append((ms, timing))
    run_seconds = sum(f - s for s, f, _ in spans)
    # While the 50 annotators keep working: from the manager's request to an ok run
    requested = [
        (r["method"], r["finished"] - r["created"])
        for r in runs(conn, wall_begin - 1)
        if r["status"] == "ok" and r["finished"]
    ]
    result = {
        "request_to_fresh": requested,
        "submits": len(out["submits"]),
        "errors": out["errors"] + log,
        "runs": [(m, round(f - s, 1)) for s, f, m in spans],
        "run_seconds": run_seconds,
        "worker_cores_in_runs": worker_cpu / run_seconds if run_seconds else float("nan"),
        "cpu": cpu,
        "spans": spans,
        "raw": [(w0, (w1 - w0) * 1000, t) for w0, w1, t in out["submits"]],
    }
    for name, sample in (("busy", busy), ("idle", idle)):
        values = [ms for _, ms in sample]
        result[name] = {
            "n": len(values),
            "p": [qb.percentile(values, q) for q in (50, 95, 99)],
            "parts": split_latency(parts[name]),
        }
    if busy and idle:
        result["ratio95"] = result["busy"]["p"][1] / result["idle"]["p"][1]
        result["ratio95_ci"] = block_bootstrap_ratio(busy, idle)
    return result


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
            qb.CODE = qb.snapshot_head()
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
        print(f"code: {args.code} ({head}) in {qb.CODE}", flush=True)

        redis_port = free_port()
        args.port = free_port()
        children.append(start_redis(redis_port, folder))
        env = qb.base_env(args)
        env.update(
            REDIS_URL=f"redis://127.0.0.1:{redis_port}/0",
            SCORING_SESSION_GAP=str(args.gap),
            SERVER_TIMING="1",
            CELERY_DATA_DIR=str(folder / "celery"),
        )

        t0 = time.monotonic()
        qb.recreate_database(args)
        qb.manage(env, "migrate", "--noinput")
        config = write_config(folder / "project")
        qb.manage(env, "import_project", str(config), "--slug", SLUG)
        users = [f"u{i:02d}" for i in range(1, args.annotators + 1)]
        qb.manage(
            env,
            "add_members",
            SLUG,
            "--role",
            "annotator",
            "--create",
            "--password",
            qb.PASSWORD,
            *users,
        )
        qb.manage(
            env,
            "add_members",
            SLUG,
            "--role",
            "manager",
            "--create",
            "--password",
            qb.PASSWORD,
            "boss",
        )
        n = write_judgments(args, folder / "judgments.jsonl")
        qb.manage(env, "import_annotations", SLUG, str(folder / "judgments.jsonl"))
        with psycopg.connect(qb.pg_url(args, args.db), autocommit=True) as conn:
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

        server = qb.Server(args, env)
        server.wait_ready()
        if args.web_cpus:
            pin_tree(server.proc.pid, args.web_cpus)
        if args.pg_cpus:
            pg_restore = pin_postgres(args.pg_cpus)
        if args.worker_cpu_quota:
            quota = CpuQuota(args.worker_cpu_quota, args.worker_cpu_period_ms)
        children.append(start_default_worker(env))
        worker = start_worker(
            env, args.worker_nice, args.worker_sched_idle, args.worker_cpus, quota
        )
        children.append(worker)
        clients = [qb.Client(args.port, u) for u in users]
        for c in clients:
            c.login()
        manager = qb.Client(args.port, "boss")
        manager.login()

        conn = psycopg.connect(qb.pg_url(args, args.db), autocommit=True)
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
        if qb.CODE != ROOT:
            shutil.rmtree(qb.CODE, ignore_errors=True)


def report(args, sessions, lat, others, load1, load2, head) -> None:
    print()
    print(
        f"# {platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} "
        f"cores; code {args.code} {head}; SCORING_SESSION_GAP {args.gap:g} s; scoring worker "
        f"concurrency 1 (CPU quota {args.worker_cpu_quota:g} of a core per "
        f"{args.worker_cpu_period_ms:g} ms, nice {args.worker_nice}, "
        f"SCHED_IDLE {args.worker_sched_idle}); "
        f"gunicorn {args.workers}x{args.threads}; "
        f"other benchmarks: {len(others)}; load average at (1) {load1}, at (2) {load2}"
    )
    print(
        "| method | sessions | end of session -> fresh ok run, s (median, min-max) "
        "| wait before start, s | compute, s | judgments |"
    )
    print("|---|---|---|---|---|---|")
    for method in ("bradley_terry", "plackett_luce"):
        m = [s for s in sessions if s["method"] == method and not s["warmup"]]
        if not m:
            continue

        def cell(key, m=m):
            v = [s[key] for s in m]
            return f"{np.median(v):.1f} ({min(v):.1f}-{max(v):.1f})"

        print(
            f"| {method} | {len(m)} | {cell('fresh_s')} | {cell('wait_s')} | "
            f"{cell('compute_s')} | {m[-1]['judgments']:,} |"
        )
    print()
    print("| submits | n | p50 ms | p95 ms | p99 ms |")
    print("|---|---|---|---|---|")
    for name, label in (("idle", "idle (no run)"), ("busy", "during a run")):
        p = lat[name]["p"]
        print(f"| {label} | {lat[name]['n']} | {p[0]:.1f} | {p[1]:.1f} | {p[2]:.1f} |")
    print()
    print("| submit time, mean / p95 ms | total | outside Django | CPU | database | other |")
    print("|---|---|---|---|---|---|")
    for name, label in (("idle", "idle (no run)"), ("busy", "during a run")):
        parts = lat[name].get("parts") or {}
        if parts:
            print(
                f"| {label} | "
                + " | ".join(
                    f"{parts[k][0]:.1f} / {parts[k][1]:.1f}"
                    for k in ("total", "outside", "cpu", "db", "other")
                )
                + " |"
            )
    if "ratio95" in lat:
        lo, hi = lat["ratio95_ci"]
        print(
            f"p95 during / idle: {lat['ratio95']:.2f} (95% interval {lo:.2f}-{hi:.2f}); "
            f"runs {lat['runs']}; worker {lat['worker_cores_in_runs']:.2f} cores while "
            "running; CPU over (2) in cores: "
            + ", ".join(f"{k} {lat['cpu'][k]:.2f}" for k in ("web", "pg", "loadgen", "worker"))
            + f", everything else {lat['cpu']['other']:.2f}; "
            f"machine {lat['cpu']['machine']:.2f} of {lat['cpu']['cores']:.0f}"
        )
    if lat.get("request_to_fresh"):
        print(
            "while the annotators work, re-score request -> fresh run, s: "
            + ", ".join(f"{m} {v:.1f}" for m, v in lat["request_to_fresh"])
        )
    if lat["errors"]:
        print("ERRORS: " + "; ".join(lat["errors"][:5]))


if __name__ == "__main__":
    sys.exit(main())
