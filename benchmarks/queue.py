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

import argparse
import concurrent.futures
import http.client
import http.cookies
import io
import json
import platform
import random
import re
import resource
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import urllib.parse
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parent.parent
PYTHON = ROOT / ".venv" / "bin" / "python"
GUNICORN = ROOT / ".venv" / "bin" / "gunicorn"
SLUG = "queue-bench"
PASSWORD = "bench-pass-7319"
TUPLE_SIZE = 4
APPEARANCES = 8
CAP = 2
CLK_TCK = os.sysconf("SC_CLK_TCK")


# ---------------------------------------------------------------- setup


def pg_url(args, dbname: str) -> str:
    return f"postgres://{args.pg_user}@{args.pg_host}:{args.pg_port}/{dbname}"


def drop_and_create(admin_url: str, db: str) -> None:
    """A fresh, empty database ``db`` (dropped first, its connections closed)."""
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{db}"')


def recreate_database(args) -> None:
    drop_and_create(pg_url(args, args.admin_db), args.db)


def wsgi_environ(method: str, path: str, query: str = "", body: bytes = b"", **headers) -> dict:
    """The WSGI environ a server on 127.0.0.1:8000 would hand the application for this
    request (for the in-process benchmarks, benchmarks/queue_cpu.py and participant_cpu.py);
    ``headers`` are further environ keys (HTTP_COOKIE, CONTENT_TYPE, ...)."""
    return {
        "REQUEST_METHOD": method,
        "PATH_INFO": path,
        "QUERY_STRING": query,
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "8000",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "127.0.0.1",
        "HTTP_HOST": "127.0.0.1:8000",
        "CONTENT_LENGTH": str(len(body)),
        "wsgi.input": io.BytesIO(body),
        "wsgi.url_scheme": "http",
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": True,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
        "wsgi.version": (1, 0),
        **headers,
    }


def write_project(folder: Path, n_tuples: int) -> Path:
    n_items = n_tuples * TUPLE_SIZE // APPEARANCES
    data = folder / "data"
    data.mkdir(parents=True)
    rng = random.Random(7)
    words = "the cat sat on a mat while dog ran past big small red blue".split()
    with open(data / "items.jsonl", "w") as out:
        for i in range(n_items):
            text = " ".join(rng.choice(words) for _ in range(12))
            out.write(json.dumps({"id": f"it{i:06d}", "text": text, "system": f"sys{i % 7}"}))
            out.write("\n")
    config = folder / "config.yaml"
    config.write_text(
        f"""annotation_task_name: "Queue benchmark ({n_tuples} tuples)"
task_dir: "."
data_files:
  - "data/items.jsonl"
item_properties:
  id_key: id
  text_key: text
bws_config:
  tuple_size: {TUPLE_SIZE}
  min_item_appearances: {APPEARANCES}
  seed: 42
annotation_schemes:
  - annotation_type: bws
    name: quality
    description: "Select the best and the worst"
    tuple_size: {TUPLE_SIZE}
    label_requirement:
      required: true
assignment_strategy: least_annotated
num_annotators_per_item: {CAP}
user_config:
  allow_all_users: false
"""
    )
    return config


CODE = ROOT  # where manage.py and the app run from: the working tree, or a snapshot of HEAD


def snapshot_head(rev: str = "HEAD") -> Path:
    """Export the committed tree (HEAD, or another commit) to a temp dir, so edits in progress
    in the working tree (say, a model changed before its migration) do not leak into the
    figures."""
    folder = Path(tempfile.mkdtemp(prefix="queue-bench-code-"))
    archive = subprocess.run(
        ["git", "archive", "--format=tar", rev], cwd=ROOT, capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive.stdout, check=True)
    return folder


def manage(env: dict, *argv: str) -> str:
    done = subprocess.run(
        [str(PYTHON), "manage.py", *argv],
        cwd=CODE,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    if done.returncode != 0:
        raise RuntimeError(f"manage.py {argv[0]} failed:\n{done.stdout}\n{done.stderr}")
    return done.stdout


def base_env(args) -> dict:
    env = dict(os.environ)
    env.update(
        DATABASE_URL=pg_url(args, args.db),
        DEBUG="0",
        # DEBUG off needs a key of the site's own (platform/DEPLOY.md, "Production settings").
        SECRET_KEY=os.environ.get("SECRET_KEY") or "benchmark-only-" + os.urandom(24).hex(),
        ALLOWED_HOSTS="127.0.0.1,localhost",
        LOGIN_THROTTLE_RATE="100000/min",
        # every simulated participant enters from 127.0.0.1: the entry rate limit is off
        PARTICIPANT_ENTRY_RATE="0/1m",
    )
    env.pop("REDIS_URL", None)
    return env


class Server:
    """gunicorn in its own process group, stopped on exit (also on error)."""

    def __init__(self, args, env: dict):
        env = dict(env)
        env.update(
            GUNICORN_WORKERS=str(args.workers),
            GUNICORN_THREADS=str(args.threads),
            GUNICORN_ACCESSLOG="/dev/null",
            GUNICORN_BIND=f"127.0.0.1:{args.port}",
        )
        self.log = tempfile.NamedTemporaryFile("w+", prefix="gunicorn-", suffix=".log")
        self.proc = subprocess.Popen(
            [
                str(GUNICORN),
                "config.wsgi:application",
                "-c",
                "platform/gunicorn.conf.py",
                "--bind",
                f"127.0.0.1:{args.port}",
                "--log-level",
                "warning",
            ],
            cwd=CODE,
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.port = args.port

    def wait_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"gunicorn exited:\n{self.tail()}")
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
                conn.request("GET", "/api/v1/projects/")
                conn.getresponse().read()
                conn.close()
                return
            except OSError:
                time.sleep(0.2)
        raise RuntimeError(f"gunicorn did not answer within {timeout} s:\n{self.tail()}")

    def pids(self) -> list[int]:
        """The gunicorn master and its workers."""
        found = [self.proc.pid]
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    stat = (entry / "stat").read_text()
                except OSError:
                    continue
                ppid = int(stat.rsplit(")", 1)[1].split()[1])
                if ppid == self.proc.pid:
                    found.append(int(entry.name))
        return found

    def tail(self) -> str:
        self.log.seek(0)
        return "".join(self.log.readlines()[-30:])

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.log.close()


# ---------------------------------------------------------------- CPU accounting


def proc_cpu(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    # utime + stime + cutime + cstime: reaped children (a gunicorn worker recycled after
    # max_requests, a PostgreSQL backend that exited) stay counted in their parent.
    return sum(int(x) for x in fields[11:15]) / CLK_TCK


def postgres_pids() -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "comm").read_text().strip() in ("postgres", "postmaster"):
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


def machine_busy() -> tuple[float, float]:
    """Busy and total CPU seconds of the whole machine so far (from /proc/stat)."""
    parts = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = parts[3] + parts[4]
    total = sum(parts[:8])
    return (total - idle) / CLK_TCK, total / CLK_TCK


class CpuMeter:
    """CPU seconds spent by gunicorn, PostgreSQL and this process over an interval."""

    def __init__(self, server: Server):
        self.server = server

    def snapshot(self) -> dict:
        pg = {pid: proc_cpu(pid) for pid in postgres_pids()}
        web = {pid: proc_cpu(pid) for pid in self.server.pids()}
        times = os.times()
        busy, total = machine_busy()
        return {
            "pg": pg,
            "web": web,
            "load": times.user + times.system,
            "busy": busy,
            "total": total,
            "wall": time.monotonic(),
        }

    @staticmethod
    def delta(a: dict, b: dict) -> dict:
        def group(key):
            # Whole-group totals: a process gone by b had its CPU moved into its parent's
            # cutime (the gunicorn master, the postmaster), which is in the group too.
            return sum(b[key].values()) - sum(a[key].values())

        wall = b["wall"] - a["wall"]
        return {
            "web": group("web") / wall,
            "pg": group("pg") / wall,
            "loadgen": (b["load"] - a["load"]) / wall,
            "machine": (b["busy"] - a["busy"]) / wall,
            "cores": (b["total"] - a["total"]) / wall,
        } | {"other": 0.0}

    @staticmethod
    def with_other(cpu: dict) -> dict:
        """Add what the rest of the machine used meanwhile (other people's jobs)."""
        mine = cpu["web"] + cpu["pg"] + cpu["loadgen"]
        return cpu | {"other": max(0.0, cpu["machine"] - mine)}

    @staticmethod
    def per_pair(cpu: dict, pairs_per_s: float) -> float:
        """CPU milliseconds (gunicorn + PostgreSQL + load generator) per next+submit pair:
        less sensitive than rates to other jobs on the machine."""
        if not pairs_per_s:
            return float("nan")
        return (cpu["web"] + cpu["pg"] + cpu["loadgen"]) / pairs_per_s * 1000


# ---------------------------------------------------------------- simulated annotators


class ApiError(RuntimeError):
    pass


class Client:
    def __init__(self, port: int, username: str):
        self.port = port
        self.username = username
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.token = None
        self.reconnects = 0
        self.server_timing = ""  # the last response's Server-Timing header, if any

    def call(self, method: str, path: str, body=None) -> tuple[int, bytes]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.token:
            headers["Authorization"] = f"Token {self.token}"
        payload = json.dumps(body).encode() if body is not None else b""
        for attempt in range(2):
            try:
                self.conn.request(method, path, body=payload, headers=headers)
                response = self.conn.getresponse()
                data = response.read()
                self.server_timing = response.getheader("Server-Timing", "")
                if response.will_close:
                    self.conn.close()  # sync workers close; the next request reconnects
                return response.status, data
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                # A keep-alive connection the server closed while idle: reconnect once.
                # (Only for idempotent retries: next is, submit carries a client_id.)
                self.conn.close()
                self.reconnects += 1
                if attempt:
                    raise
        raise AssertionError("unreachable")

    def login(self) -> None:
        status, data = self.call(
            "POST", "/api/v1/auth/token/", {"username": self.username, "password": PASSWORD}
        )
        if status != 200:
            raise ApiError(f"login {self.username}: {status} {data[:200]!r}")
        self.token = json.loads(data)["token"]


@dataclass
class Tally:
    next_ms: list = field(default_factory=list)
    submit_ms: list = field(default_factory=list)
    pairs: int = 0
    created: int = 0
    no_work: int = 0
    errors: list = field(default_factory=list)
    units: dict = field(default_factory=dict)  # username -> list of unit ids answered


def annotator_loop(
    client: Client, tally: Tally, lock, think: float, start_at: float, deadline: float, record: bool
) -> None:
    rng = random.Random(client.username)
    next_ms, submit_ms, mine = [], [], []
    created = no_work = pairs = 0
    errors = []
    if start_at > time.monotonic():
        time.sleep(start_at - time.monotonic())
    max_pairs = 1_000_000  # bound the loop even if the clock misbehaves
    while time.monotonic() < deadline and pairs < max_pairs:
        try:
            t0 = time.perf_counter()
            status, data = client.call("POST", f"/api/v1/projects/{SLUG}/queue/next/")
            t1 = time.perf_counter()
            if status == 204:
                no_work += 1
                break
            if status != 200:
                errors.append(f"next {status} {data[:200]!r}")
                break
            unit = json.loads(data)
            items = unit["items"]
            best, worst = rng.sample([it["id"] for it in items], 2)
            body = {
                "unit": unit["id"],
                "annotations": {"quality": {"best": best, "worst": worst}},
                "client_id": str(uuid.uuid4()),
            }
            t2 = time.perf_counter()
            status, data = client.call("POST", f"/api/v1/projects/{SLUG}/annotations/", body)
            t3 = time.perf_counter()
            if status not in (200, 201):
                errors.append(f"submit {status} {data[:200]!r}")
                break
        except Exception as exc:  # noqa: BLE001 - reported, never hidden
            errors.append(f"{type(exc).__name__}: {exc}")
            break
        created += status == 201
        pairs += 1
        mine.append(unit["id"])
        next_ms.append((t1 - t0) * 1000)
        submit_ms.append((t3 - t2) * 1000)
        if think:
            remaining = deadline - time.monotonic()
            time.sleep(max(0.0, min(think, remaining)))
    with lock:
        if record:
            tally.next_ms += next_ms
            tally.submit_ms += submit_ms
            tally.pairs += pairs
        tally.created += created
        tally.no_work += no_work
        tally.errors += [f"{client.username}: {e}" for e in errors]
        tally.units.setdefault(client.username, []).extend(mine)


def run_phase(clients, think: float, seconds: float, record: bool) -> tuple[Tally, float]:
    tally, lock = Tally(), threading.Lock()
    begin = time.monotonic() + 0.2
    deadline = begin + seconds
    threads = []
    for client in clients:
        # Paced annotators start spread over one think time, so arrivals are not in lockstep.
        start_at = begin + (random.uniform(0, think) if think else 0.0)
        thread = threading.Thread(
            target=annotator_loop,
            args=(client, tally, lock, think, start_at, deadline, record),
            daemon=True,
        )
        threads.append(thread)
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=seconds + 120)
    elapsed = max(time.monotonic() - begin, 1e-9)
    if any(t.is_alive() for t in threads):
        tally.errors.append("an annotator thread did not finish in time")
    return tally, elapsed


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    k = (len(ordered) - 1) * q / 100
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


# ---------------------------------------------------------------- invariants


INVARIANTS = {
    "units over the cap": """
        SELECT count(*) FROM projects_unit
        WHERE project_id = %(p)s AND (completed > %(cap)s OR load > %(cap)s)""",
    "duplicate (unit, annotator) assignments": """
        SELECT count(*) FROM (SELECT unit_id, annotator_id FROM projects_assignment
        WHERE project_id = %(p)s GROUP BY 1, 2 HAVING count(*) > 1) d""",
    "duplicate (unit, annotator) annotations": """
        SELECT count(*) FROM (SELECT unit_id, annotator_id FROM projects_annotation
        WHERE project_id = %(p)s GROUP BY 1, 2 HAVING count(*) > 1) d""",
    "units whose completed != annotation rows": """
        SELECT count(*) FROM projects_unit u
        WHERE u.project_id = %(p)s AND u.completed <> (SELECT count(DISTINCT a.annotator_id)
            FROM projects_annotation a WHERE a.unit_id = u.id)""",
    "units whose completed != completed assignments": """
        SELECT count(*) FROM projects_unit u
        WHERE u.project_id = %(p)s AND u.completed <> (SELECT count(*)
            FROM projects_assignment s WHERE s.unit_id = u.id AND s.status = 'completed')""",
    "units whose load != assignment rows": """
        SELECT count(*) FROM projects_unit u
        WHERE u.project_id = %(p)s AND u.load <> (SELECT count(*)
            FROM projects_assignment s WHERE s.unit_id = u.id)""",
    "annotations without a completed assignment": """
        SELECT count(*) FROM projects_annotation a
        WHERE a.project_id = %(p)s AND NOT EXISTS (SELECT 1 FROM projects_assignment s
            WHERE s.unit_id = a.unit_id AND s.annotator_id = a.annotator_id
            AND s.status = 'completed')""",
}


def check_invariants(args, all_units: dict) -> tuple[list[str], dict]:
    """Broken invariants (empty when all hold) and the totals they were checked on."""
    broken = []
    with psycopg.connect(pg_url(args, args.db)) as conn:
        project = conn.execute(
            "SELECT id FROM projects_project WHERE slug = %s", [SLUG]
        ).fetchone()[0]
        for name, sql in INVARIANTS.items():
            count = conn.execute(sql, {"p": project, "cap": CAP}).fetchone()[0]
            if count:
                broken.append(f"{name}: {count}")
        annotations, completed_units = conn.execute(
            "SELECT (SELECT count(*) FROM projects_annotation WHERE project_id = %(p)s),"
            " (SELECT count(*) FROM projects_unit"
            " WHERE project_id = %(p)s AND completed = %(cap)s)",
            {"p": project, "cap": CAP},
        ).fetchone()
    answered = sum(len(v) for v in all_units.values())
    for user, units in all_units.items():
        if len(units) != len(set(units)):
            broken.append(f"{user} was handed a unit twice")
    if annotations != answered:
        broken.append(f"{answered} submissions accepted but {annotations} annotation rows")
    return broken, {"annotations": annotations, "units_at_cap": completed_units}


# ---------------------------------------------------------------- one project size


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


def describe(m: dict) -> str:
    cpu = m["cpu"]
    return (
        f"{m['pairs']} pairs in {m['seconds']:.1f} s = {m['pairs_per_s']:.1f}/s; "
        f"next p50/p95/p99 {'/'.join(f'{x:.1f}' for x in m['next'])} ms; "
        f"submit {'/'.join(f'{x:.1f}' for x in m['submit'])} ms; "
        f"CPU (cores) web {cpu['web']:.2f} pg {cpu['pg']:.2f} loadgen {cpu['loadgen']:.2f} "
        f"other {cpu['other']:.2f}, machine {cpu['machine']:.2f} of {cpu['cores']:.0f}; "
        f"{CpuMeter.per_pair(cpu, m['pairs_per_s']):.1f} CPU ms per pair; "
        f"invariants {'OK' if not m['broken'] else 'BROKEN'} "
        f"({m['totals']['annotations']} annotations)"
    )


def cpu_cell(cpu: dict) -> str:
    return "/".join(f"{cpu[k]:.2f}" for k in ("web", "pg", "loadgen", "other"))


def print_table(rows: list[dict], args) -> None:
    print()
    print(
        f"# {platform.python_implementation()} {platform.python_version()}, "
        f"{os.cpu_count()} cores; gunicorn {args.workers} workers x {args.threads} threads; "
        f"{args.annotators} annotators; think {args.think} s in (a); "
        f"{args.duration_a:g} s (a), {args.duration_b:g} s (b); code: {args.code}"
    )
    head = (
        "| tuples | (a) pairs/s | next p50 | next p95 | next p99 | submit p50 | submit p95 "
        "| submit p99 | (b) pairs/s | (b) next p95 | (b) submit p95 | (b) CPU ms/pair "
        "| CPU (a) web/pg/loadgen/other | CPU (b) web/pg/loadgen/other | invariants |"
    )
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for r in rows:
        a, b = r["a"], r["b"]
        ok = "OK" if not (a["broken"] or b["broken"] or a["errors"] or b["errors"]) else "BROKEN"
        print(
            f"| {r['tuples']:,} | {a['pairs_per_s']:.1f} | {a['next'][0]:.1f} | {a['next'][1]:.1f} "
            f"| {a['next'][2]:.1f} | {a['submit'][0]:.1f} | {a['submit'][1]:.1f} "
            f"| {a['submit'][2]:.1f} | {b['pairs_per_s']:.1f} | {b['next'][1]:.1f} "
            f"| {b['submit'][1]:.1f} | {CpuMeter.per_pair(b['cpu'], b['pairs_per_s']):.1f} "
            f"| {cpu_cell(a['cpu'])} | {cpu_cell(b['cpu'])} | {ok} |"
        )
    print(
        "(latencies in ms, measured at the client; CPU in cores used on average: gunicorn, "
        "PostgreSQL, this load generator, everything else on the machine; CPU ms/pair: "
        "gunicorn + PostgreSQL + load generator per next+submit pair)"
    )
    busy = max(r[m]["cpu"]["other"] for r in rows for m in ("a", "b"))
    if busy > 0.2:
        print(
            f"WARNING: other jobs used up to {busy:.2f} cores during the measurements; "
            "latencies and rates are pessimistic, CPU ms/pair much less so"
        )


# ---------------------------------------------------------------- launch mode (participants)

LAUNCH_SLUG = "launch-bench"
LAUNCH_CODE = "LB7319"


def write_launch_project(folder: Path, n_tuples: int, quota: int) -> Path:
    """The queue project with a participants block (open link, consent, a quota) and
    instructions, as a crowd study is launched."""
    config = write_project(folder, n_tuples)
    text = config.read_text().replace(
        "user_config:",
        f"""instructions: "Choose the **best** and the **worst** text of each tuple."
participants:
  open_link: true
  id_param: PROLIFIC_PID
  units_per_participant: {quota}
  completion_code: "{LAUNCH_CODE}"
  consent: "I agree that my answers are stored for this study."
user_config:""",
    )
    config.write_text(text)
    return config


CSRF_INPUT = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
FORM_ACTION = re.compile(r'<form method="post" action="([^"]+)" id="annotate-form"')
CLIENT_ID = re.compile(r'name="client_id" value="([^"]+)"')
RADIO = re.compile(r'<input type="radio"[^>]*?name="([^"]+)__(best|worst)" value="([^"]+)"')
SAVED = re.compile(r'<li class="msg-success">Saved\.</li>')
REFUSED_MSG = re.compile(r'<li class="msg-error">([^<]*)</li>')
QUERIES = re.compile(r'desc="(\d+) queries"')


class Browser:
    """One participant's browser: its own cookie jar and keep-alive connection to
    127.0.0.1, following redirects by hand so each hop is timed and checked."""

    # gunicorn closes a keep-alive connection idle for 2 s (its default keepalive); a
    # browser then opens a new one, and so does this one rather than race the close.
    IDLE_CLOSE = 1.5

    def __init__(self, port: int, timeout: float):
        self.port = port
        self.timeout = timeout
        self.conn = None
        self.cookies: dict[str, str] = {}
        self.last = 0.0
        self.connects = 0
        self.queries: dict[str, list[int]] = {}

    def _connection(self) -> http.client.HTTPConnection:
        if self.conn is None or time.monotonic() - self.last > self.IDLE_CLOSE:
            if self.conn is not None:
                self.conn.close()
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.timeout)
            self.connects += 1
        return self.conn

    def request(self, method: str, path: str, form: dict | None = None, kind: str = ""):
        headers = {"Accept": "text/html"}
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        body = None
        if form is not None:
            body = urllib.parse.urlencode(form).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        for attempt in range(2):
            conn = self._connection()
            try:
                conn.request(method, path, body=body, headers=headers)
                response = conn.getresponse()
                data = response.read()
                break
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                # Closed by the server before our request reached it (keep-alive race):
                # retried once on a new connection, as a browser does.
                self.conn.close()
                self.conn = None
                if attempt:
                    raise
        self.last = time.monotonic()
        if response.will_close:
            self.conn.close()
            self.conn = None
        for header in response.headers.get_all("Set-Cookie") or []:
            morsel = http.cookies.SimpleCookie(header)
            for name, value in morsel.items():
                if value.get("max-age") == "0" or value.value == "":
                    self.cookies.pop(name, None)
                else:
                    self.cookies[name] = value.value
        timing = QUERIES.search(response.getheader("Server-Timing", "") or "")
        if timing and kind:
            self.queries.setdefault(kind, []).append(int(timing.group(1)))
        return response.status, response.getheader("Location"), data.decode("utf-8", "replace")


class Refused(RuntimeError):
    pass


@dataclass
class Journey:
    """What one participant did and saw."""

    pid: str
    entry_ms: list = field(default_factory=list)  # the link, consent, instructions hops
    next_ms: list = field(default_factory=list)  # POST's redirect to the next unit's page
    page_ms: list = field(default_factory=list)  # the unit page's GET alone
    submit_ms: list = field(default_factory=list)  # the answer's POST
    posted: int = 0  # answers sent and answered by a redirect (302)
    accepted: int = 0  # of which the next page said "Saved."
    refused: list = field(default_factory=list)
    completed: bool = False
    errors: list = field(default_factory=list)
    requests: int = 0
    queries: dict = field(default_factory=dict)
    connects: int = 0


def answer_form(page: str, path: str, rng: random.Random) -> tuple[str, dict]:
    """The unit page's form, filled as a participant would: for each best-worst scheme a
    best and a different worst among the radio buttons the page offers."""
    action = FORM_ACTION.search(page)
    if action is None:
        raise Refused(f"no answer form on {path}")
    choices: dict[str, dict[str, list[str]]] = {}
    for scheme, side, value in RADIO.findall(page):
        choices.setdefault(scheme, {}).setdefault(side, []).append(value)
    form = {
        "csrfmiddlewaretoken": CSRF_INPUT.search(page).group(1),
        "client_id": CLIENT_ID.search(page).group(1),
        "time_taken_ms": "",
    }
    for scheme, sides in choices.items():
        best, worst = rng.sample(sides["best"], 2)
        form[f"{scheme}__best"], form[f"{scheme}__worst"] = best, worst
    return action.group(1), form


def participant_journey(port, pid, rng, think, quota, deadline, stop) -> Journey:
    """Entry link -> consent -> instructions -> up to `quota` units -> completion page."""
    journey = Journey(pid)
    browser = Browser(port, timeout=60)

    def go(method, path, form=None, kind="", expect=(200, 302)):
        if time.monotonic() > deadline or stop.is_set():
            raise Refused("hard timeout reached")
        t0 = time.perf_counter()
        status, location, page = browser.request(method, path, form, kind)
        ms = (time.perf_counter() - t0) * 1000
        journey.requests += 1
        if status not in expect:
            raise Refused(f"{method} {path}: {status} {page[:160]!r}")
        return status, location, page, ms

    def follow(location, kind):
        """GETs redirects until a page; returns (path, page, total ms, last hop ms)."""
        total = 0.0
        for _hop in range(6):
            path = urllib.parse.urlsplit(location).path
            status, nxt, page, ms = go("GET", path, kind=kind)
            total += ms
            if status == 200:
                return path, page, total, ms
            location = nxt
        raise Refused(f"too many redirects from {location}")

    def pause():
        seconds = rng.uniform(*think)
        end = min(time.monotonic() + seconds, deadline)
        stop.wait(max(0.0, end - time.monotonic()))

    try:
        _, location, _, ms = go(
            "GET",
            f"/p/{LAUNCH_SLUG}/start?PROLIFIC_PID={pid}&STUDY_ID=launch&SESSION_ID={pid}s",
            kind="entry",
        )
        journey.entry_ms.append(ms)
        path, page, ms, _ = follow(location, "entry")  # the consent page
        journey.entry_ms.append(ms)
        if not path.endswith("/consent/"):
            raise Refused(f"expected the consent page, got {path}")
        pause()
        token = CSRF_INPUT.search(page).group(1)
        _, location, _, ms = go(
            "POST", path, {"csrfmiddlewaretoken": token, "agree": "yes"}, kind="entry"
        )
        journey.entry_ms.append(ms)
        path, page, ms, _ = follow(location, "entry")  # the instructions
        journey.entry_ms.append(ms)
        if "/instructions/" in path:
            pause()
            path, page, ms, _ = follow(f"/p/{LAUNCH_SLUG}/", "entry")
            journey.entry_ms.append(ms)
        answered_pages = 0
        while "/annotate/" in path and answered_pages <= quota:
            action, form = answer_form(page, path, rng)
            pause()
            form["time_taken_ms"] = str(rng.randint(2000, 5000))
            _, location, _, ms = go("POST", action, form, kind="submit", expect=(302,))
            journey.submit_ms.append(ms)
            journey.posted += 1
            answered_pages += 1
            path, page, ms, last = follow(location, "next")
            if SAVED.search(page):
                journey.accepted += 1
            else:
                refusal = REFUSED_MSG.search(page)
                journey.refused.append(refusal.group(1) if refusal else "no Saved. message")
            if "/annotate/" in path:
                journey.next_ms.append(ms)
                journey.page_ms.append(last)
        if not path.endswith("/done/") or LAUNCH_CODE not in page:
            raise Refused(f"expected the completion page, got {path}")
        journey.completed = True
    except Exception as exc:  # noqa: BLE001 - reported, never hidden
        journey.errors.append(f"{type(exc).__name__}: {exc}")
    finally:
        if browser.conn is not None:
            browser.conn.close()
        journey.queries = browser.queries
        journey.connects = browser.connects
    return journey


LAUNCH_CHECKS = {
    "units over the cap": """
        SELECT count(*) FROM projects_unit
        WHERE project_id = %(p)s AND (completed > %(cap)s OR load > %(cap)s)""",
    "participants over their quota": """
        SELECT count(*) FROM (SELECT s.annotator_id FROM projects_assignment s
        JOIN projects_participant pa ON pa.user_id = s.annotator_id
        WHERE s.project_id = %(p)s AND s.status = 'completed'
        GROUP BY 1 HAVING count(*) > %(quota)s) o""",
    "participants holding more assignments than their quota": """
        SELECT count(*) FROM (SELECT s.annotator_id FROM projects_assignment s
        WHERE s.project_id = %(p)s GROUP BY 1 HAVING count(*) > %(quota)s) o""",
}


def launch_checks(args, journeys: list[Journey]) -> tuple[list[str], dict]:
    broken = []
    with psycopg.connect(pg_url(args, args.db)) as conn:
        project = conn.execute(
            "SELECT id FROM projects_project WHERE slug = %s", [LAUNCH_SLUG]
        ).fetchone()[0]
        params = {"p": project, "cap": CAP, "quota": args.units}
        for name, sql in (INVARIANTS | LAUNCH_CHECKS).items():
            count = conn.execute(sql, params).fetchone()[0]
            if count:
                broken.append(f"{name}: {count}")
        annotations, participants, done = conn.execute(
            "SELECT (SELECT count(*) FROM projects_annotation WHERE project_id = %(p)s),"
            " (SELECT count(*) FROM projects_participant WHERE project_id = %(p)s),"
            " (SELECT count(*) FROM projects_participant WHERE project_id = %(p)s"
            "  AND completed_at IS NOT NULL)",
            params,
        ).fetchone()
    accepted = sum(j.accepted for j in journeys)
    posted = sum(j.posted for j in journeys)
    # A journey cut short (an error, the hard timeout) may have sent an answer whose "Saved."
    # page it never saw: then the rows lie between the confirmed and the sent answers.
    cut = any(j.errors for j in journeys)
    if (annotations != accepted) if not cut else not accepted <= annotations <= posted:
        broken.append(
            f"{accepted} answers confirmed (Saved.), {posted} sent, {annotations} annotation rows"
        )
    return broken, {
        "annotations": annotations,
        "accepted": accepted,
        "posted": posted,
        "participants": participants,
        "completed_in_db": done,
    }


def run_launch(args) -> dict:
    """200 participants arrive over 60 s through the entry link, each answers its quota
    with think time, and the checks run in SQL afterwards."""
    env = base_env(args) | {"SERVER_TIMING": "1" if args.server_timing else "0"}
    folder = Path(tempfile.mkdtemp(prefix="launch-bench-"))
    server = None
    n_tuples = args.tuples[0]
    try:
        recreate_database(args)
        manage(env, "migrate", "--noinput")
        config = write_launch_project(folder, n_tuples, args.units)
        manage(env, "import_project", str(config), "--slug", LAUNCH_SLUG)
        with psycopg.connect(pg_url(args, args.db), autocommit=True) as conn:
            conn.execute("VACUUM ANALYZE")
        server = Server(args, env)
        server.wait_ready()
        # The load generator's memory is bounded (its children were started before this).
        limit = args.memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        threading.stack_size(512 * 1024)
        meter = CpuMeter(server)
        load_before = os.getloadavg()
        before = meter.snapshot()
        rng = random.Random(args.seed)
        plan = sorted(rng.uniform(0, args.arrival) for _ in range(args.participants))
        seeds = [rng.randrange(2**32) for _ in plan]
        stop = threading.Event()
        begin = time.monotonic()
        deadline = begin + args.launch_timeout
        think = (args.think_min, args.think_max)
        journeys: list[Journey] = []
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.pool) as pool:
            futures = []
            for i, (at, seed) in enumerate(zip(plan, seeds, strict=True)):
                wait = begin + at - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
                futures.append(
                    pool.submit(
                        participant_journey,
                        args.port,
                        f"launch{i:04d}",
                        random.Random(seed),
                        think,
                        args.units,
                        deadline,
                        stop,
                    )
                )
            for future in concurrent.futures.as_completed(
                futures, timeout=args.launch_timeout + 60
            ):
                journeys.append(future.result())
        elapsed = time.monotonic() - begin
        cpu = CpuMeter.with_other(CpuMeter.delta(before, meter.snapshot()))
        load_after = os.getloadavg()
        broken, totals = launch_checks(args, journeys)

        def spread(values):
            return [percentile(values, q) for q in (50, 95, 99)]

        def joined(attr):
            return [x for j in journeys for x in getattr(j, attr)]

        queries = {}
        for j in journeys:
            for kind, counts in j.queries.items():
                queries.setdefault(kind, []).extend(counts)
        errors = [f"{j.pid}: {e}" for j in journeys for e in j.errors]
        refused = [f"{j.pid}: {r}" for j in journeys for r in j.refused]
        return {
            "participants": len(journeys),
            "completed": sum(j.completed for j in journeys),
            "seconds": elapsed,
            "requests": sum(j.requests for j in journeys),
            "connects": sum(j.connects for j in journeys),
            "entry": spread(joined("entry_ms")),
            "next": spread(joined("next_ms")),
            "page": spread(joined("page_ms")),
            "submit": spread(joined("submit_ms")),
            "pairs": len(joined("submit_ms")),
            "queries": {k: sum(v) / len(v) for k, v in queries.items() if v},
            "cpu": cpu,
            "load": [load_before, load_after],
            "errors": errors,
            "refused": refused,
            "broken": broken,
            "totals": totals,
        }
    finally:
        if server is not None:
            server.stop()
        shutil.rmtree(folder, ignore_errors=True)


def print_launch(m: dict, args) -> None:
    cpu = m["cpu"]
    print()
    print(
        f"# launch: {args.participants} participants over {args.arrival:g} s, {args.units} "
        f"units each, think {args.think_min:g}-{args.think_max:g} s, {args.tuples[0]:,} tuples "
        f"(cap {CAP}); gunicorn {args.workers} workers x {args.threads} threads; "
        f"{os.cpu_count()} cores; load average before {m['load'][0][0]:.2f}, after "
        f"{m['load'][1][0]:.2f}"
    )
    print(
        "| participants | completed | answers confirmed / sent / rows | errors | refused | broken "
        "| entry p50/p95/p99 | next p50/p95/p99 | unit page p50/p95/p99 "
        "| submit p50/p95/p99 | CPU web/pg/loadgen/other | seconds |"
    )
    print("|" + "---|" * 12)

    def ms(values):
        return "/".join(f"{x:.0f}" for x in values)

    print(
        f"| {m['participants']} | {m['completed']} | {m['totals']['accepted']} / "
        f"{m['totals']['posted']} / {m['totals']['annotations']} | {len(m['errors'])} "
        f"| {len(m['refused'])} | {len(m['broken'])} | {ms(m['entry'])} | {ms(m['next'])} "
        f"| {ms(m['page'])} "
        f"| {ms(m['submit'])} | {cpu_cell(cpu)} | {m['seconds']:.0f} |"
    )
    print(
        "(ms at the client; entry: each request of the link, consent and instructions hops; "
        "next: the answer's redirect to the next unit's page (one GET); "
        "unit page: its GET alone)"
    )
    if m["queries"]:
        print(
            "SQL statements per request (Server-Timing): "
            + ", ".join(f"{k} {v:.1f}" for k, v in sorted(m["queries"].items()))
        )
    print(f"{m['requests']} requests, {m['connects']} connections opened")
    units = m["totals"]["annotations"]
    if units:
        # CPU seconds over the run per answer stored: entries and completion pages included.
        each = {k: cpu[k] * m["seconds"] / units * 1000 for k in ("web", "pg", "loadgen")}
        print(
            f"CPU ms per unit (over the whole launch, entries included): web {each['web']:.1f}, "
            f"PostgreSQL {each['pg']:.1f}, load generator {each['loadgen']:.1f}, together "
            f"{sum(each.values()):.1f}"
        )
    lists = (("errors", m["errors"]), ("refused", m["refused"]), ("BROKEN", m["broken"]))
    for label, rows in lists:
        if rows:
            print(f"{label}: " + "; ".join(rows[:8]))
    if cpu["other"] > 0.2:
        print(
            f"WARNING: other jobs used {cpu['other']:.2f} cores during the run; the latencies "
            "are not those of a quiet machine"
        )


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
    global CODE
    if args.code == "head":
        CODE = snapshot_head(args.rev)
        head = subprocess.run(
            ["git", "rev-parse", "--short", args.rev], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
        print(f"code: snapshot of HEAD {head} in {CODE}", flush=True)
    if args.duration is not None:
        args.duration_a = args.duration_b = args.duration
    if args.mode == "launch":
        try:
            result = run_launch(args)
        finally:
            if CODE != ROOT:
                shutil.rmtree(CODE, ignore_errors=True)
        print_launch(result, args)
        if args.json:
            Path(args.json).write_text(json.dumps(result, indent=2))
        return 1 if result["broken"] or result["errors"] else 0
    rows = []
    try:
        for n in args.tuples:
            rows.append(bench_size(args, n))
    finally:
        if CODE != ROOT:
            shutil.rmtree(CODE, ignore_errors=True)
    print_table(rows, args)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))
    bad = any(r[m]["broken"] or r[m]["errors"] for r in rows for m in ("a", "b"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
