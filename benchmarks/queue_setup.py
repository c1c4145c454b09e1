"""The queue benchmark's setup: the bench database, the project files, manage.py and
gunicorn, run from the working tree or a snapshot of a commit."""

from __future__ import annotations

import http.client
import http.cookies
import io
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
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
