"""The live benchmark's processes, as platform/DEPLOY.md runs them, on servers of its own: a
PostgreSQL cluster (initdb into a temporary folder, its own port) and a redis-server (its own
port), nginx in front of gunicorn, the default and the scoring worker and beat, each under a
restart policy (systemd's Restart=always: started again RestartSec after any exit). Every
process has an address-space limit; stop() ends everything started and removes the folder."""

from __future__ import annotations

import glob
import http.client
import os
import pwd
import resource
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from benchmarks.background_processes import CELERY, free_port
from benchmarks.proxy import Proxy
from benchmarks.queue_setup import GUNICORN, ROOT


def postgres_bin() -> Path | None:
    """The newest /usr/lib/postgresql/<version>/bin that has initdb."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=_version)
    return Path(found[-1]).parent if found else None


def _version(path: str) -> int:
    part = Path(path).parent.parent.name
    return int(part) if part.isdigit() else 0


def limited(memory_mb: int, user: str | None = None):
    """A preexec_fn: an address-space limit, and the user to run as (PostgreSQL refuses
    root). It makes no Python-level allocation worth a lock: safe after fork in a threaded
    parent."""
    limit = memory_mb * 1024 * 1024
    account = pwd.getpwnam(user) if user else None

    def apply():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        if account is not None:
            os.setgid(account.pw_gid)
            os.setuid(account.pw_uid)

    return apply


class Supervised:
    """A process in its own process group under a restart policy: when it exits for any
    reason (a crash, a kill), it is started again ``restart_sec`` later, until stop().
    With ``restart_sec=None`` it stays down (a server the benchmark stops on purpose)."""

    def __init__(self, name, argv, env, folder: Path, memory_mb: int, restart_sec=5.0):
        self.name, self.argv, self.env = name, argv, env
        self.log_path = folder / f"{name}.log"
        self.memory_mb = memory_mb
        self.restart_sec = restart_sec
        self.proc: subprocess.Popen | None = None
        self.starts: list[float] = []
        self.exits: list[float] = []
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._watcher = None

    def start(self) -> None:
        with self._lock:
            with open(self.log_path, "ab") as log:
                self.proc = subprocess.Popen(
                    self.argv,
                    cwd=ROOT,
                    env=self.env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                    preexec_fn=limited(self.memory_mb),
                )
            self.starts.append(time.time())
        if self.restart_sec is not None and self._watcher is None:
            self._watcher = threading.Thread(target=self._watch, daemon=True)
            self._watcher.start()

    def _watch(self) -> None:
        while not self._stopping.is_set():
            proc = self.proc
            if proc is not None and proc.poll() is not None:
                self.exits.append(time.time())
                self._killpg(proc, signal.SIGKILL)  # what systemd does to the rest of a unit
                if self._stopping.wait(self.restart_sec):
                    return
                self.start()
            self._stopping.wait(0.2)

    @property
    def restarts(self) -> int:
        return max(0, len(self.starts) - 1)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def pid(self) -> int:
        return self.proc.pid

    def kill(self) -> None:
        """SIGKILL to the whole process group (main process and its children)."""
        self._killpg(self.proc, signal.SIGKILL)

    @staticmethod
    def _killpg(proc, sig) -> None:
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def stop(self) -> None:
        self._stopping.set()
        if self._watcher is not None:
            self._watcher.join(timeout=10)
        proc = self.proc
        if proc is None:
            return
        self._killpg(proc, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pass
        self._killpg(proc, signal.SIGKILL)  # the group's stragglers too
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass

    def tail(self, n: int = 20) -> str:
        try:
            return "".join(self.log_path.read_text(errors="replace").splitlines(True)[-n:])
        except OSError:
            return ""


class Postgres:
    """A cluster of its own: initdb into ``folder``, pg_ctl on 127.0.0.1:``port``, trust
    authentication, run as the postgres account when this process is root."""

    def __init__(self, folder: Path, port: int, memory_mb: int):
        binaries = postgres_bin()
        if binaries is None:
            raise RuntimeError("no /usr/lib/postgresql/*/bin/initdb (apt-get install postgresql)")
        self.bin, self.port, self.folder = binaries, port, folder
        self.data = folder / "pgdata"
        self.user = "postgres" if os.geteuid() == 0 else None
        self.memory_mb = memory_mb
        folder.mkdir(parents=True, exist_ok=True)
        if self.user:
            account = pwd.getpwnam(self.user)
            os.chown(folder, account.pw_uid, account.pw_gid)
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "-A", "trust", "-E", "UTF8")
        self.started = False

    def _run(self, tool: str, *argv: str, timeout: float = 120) -> None:
        done = subprocess.run(
            [str(self.bin / tool), *argv],
            cwd=self.folder,
            capture_output=True,
            text=True,
            timeout=timeout,
            preexec_fn=limited(self.memory_mb, self.user),
        )
        if done.returncode != 0:
            raise RuntimeError(f"{tool} failed:\n{done.stdout}\n{done.stderr}")

    def _ctl(self, action: str, *extra: str) -> None:
        options = (
            f"-p {self.port} -c listen_addresses=127.0.0.1 "
            f"-c unix_socket_directories={self.folder} -c max_connections=200 "
            "-c fsync=off -c synchronous_commit=off"
        )
        self._run(
            "pg_ctl", action, "-D", str(self.data), "-l", str(self.folder / "postgres.log"),
            "-o", options, "-w", "-t", "60", *extra,
        )  # fmt: skip

    def start(self) -> None:
        self._ctl("start")
        self.started = True

    def restart(self) -> None:
        """pg_ctl restart -m fast: every session is cut, the server is back when it returns."""
        self._ctl("restart", "-m", "fast")

    def url(self, db: str) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{db}"

    def stop(self) -> None:
        if not self.data.exists():
            return
        try:
            self._run("pg_ctl", "stop", "-D", str(self.data), "-m", "immediate", "-w", timeout=60)
        except (RuntimeError, subprocess.TimeoutExpired):
            pid_file = self.data / "postmaster.pid"
            if pid_file.exists():  # the postmaster, whatever pg_ctl said
                try:
                    os.kill(int(pid_file.read_text().split()[0]), signal.SIGKILL)
                except (ProcessLookupError, ValueError):
                    pass


def redis_up(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def wait_until(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise RuntimeError(f"{what}: not within {timeout:.0f} s")


def established_inodes(port: int) -> set[str]:
    """Socket inodes of established TCP connections whose local port is ``port`` (the
    connections gunicorn accepted from nginx: nginx opens one per request)."""
    inodes = set()
    with open("/proc/net/tcp") as table:
        next(table)
        for line in table:
            fields = line.split()
            if int(fields[1].split(":")[1], 16) == port and fields[3] == "01":
                inodes.add(fields[9])
    return inodes


def children(pid: int) -> list[int]:
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


def workers_in_request(master: int, port: int) -> list[int]:
    """gunicorn workers that hold a request from nginx right now."""
    inodes = established_inodes(port)
    busy = []
    for pid in children(master):
        try:
            links = [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")]
        except OSError:
            continue
        if any(link.startswith("socket:[") and link[8:-1] in inodes for link in links):
            busy.append(pid)
    return busy


class LiveStack:
    """Every process of the deployment; stop() ends them all and removes the folder."""

    def __init__(self, memory_mb: int = 2048, restart_sec: float = 5.0):
        self.folder = Path(tempfile.mkdtemp(prefix="live-bench-"))
        os.chmod(self.folder, 0o755)  # the postgres account reads its way to its cluster
        self.memory_mb, self.restart_sec = memory_mb, restart_sec
        self.pg_port, self.redis_port = free_port(), free_port()
        self.web_port, self.proxy_port = free_port(), free_port()
        self.postgres: Postgres | None = None
        self.proxy: Proxy | None = None
        self.procs: dict[str, Supervised] = {}

    def start_servers(self) -> None:
        self.postgres = Postgres(self.folder / "pg", self.pg_port, self.memory_mb)
        self.postgres.start()
        self.start_redis()

    def start_redis(self) -> None:
        # Debian's save points: a stopped Redis writes its data and reads it back at start.
        argv = [
            shutil.which("redis-server") or "redis-server",
            "--port", str(self.redis_port), "--bind", "127.0.0.1",
            "--save", "3600 1 300 100 60 10000", "--appendonly", "no",
            "--dir", str(self.folder),
        ]  # fmt: skip
        redis = Supervised("redis", argv, dict(os.environ), self.folder, 1024, restart_sec=None)
        redis.start()
        self.procs["redis"] = redis
        wait_until(lambda: redis_up(self.redis_port), 30, "redis-server to answer")

    def stop_redis(self) -> None:
        self.procs.pop("redis").stop()

    def start_app(self, env: dict) -> None:
        """gunicorn, nginx in front, the two workers and beat (platform/Procfile)."""
        celery = [str(CELERY), "-A", "config"]
        commands = {
            "web": [str(GUNICORN), "config.wsgi:application", "-c", "platform/gunicorn.conf.py"],
            "worker": [*celery, "worker", "-Q", "celery", "--loglevel=INFO", "--concurrency=2"],
            # the lowest nice (the runner's CPU weight; platform/DEPLOY.md)
            "scoring": [
                "nice",
                "-n",
                "19",
                *celery,
                "worker",
                "-Q",
                "scoring",
                "--concurrency=1",
                "--prefetch-multiplier=1",
                "--loglevel=INFO",
                "--hostname=scoring@%h",
            ],  # fmt: skip
            "beat": [
                *celery,
                "beat",
                "--loglevel=INFO",
                f"--schedule={self.folder / 'celerybeat-schedule'}",
            ],  # fmt: skip
        }
        for name, argv in commands.items():
            self.procs[name] = Supervised(
                name, argv, env, self.folder, self.memory_mb, self.restart_sec
            )
            self.procs[name].start()
        self.proxy = Proxy(
            self.proxy_port,
            f"127.0.0.1:{self.web_port}",
            Path(env["STATIC_ROOT"]),
            Path(env["PROJECT_FILES_ROOT"]),
            preexec_fn=limited(self.memory_mb),
        )
        self.proxy.wait_ready(timeout=30)  # nginx itself (a static file)
        wait_until(self._site_up, 120, "gunicorn to answer through nginx")

    def _site_up(self) -> bool:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", self.proxy_port, timeout=5)
            conn.request("GET", "/accounts/login/")
            status = conn.getresponse().status
            conn.close()
            return status == 200
        except (OSError, http.client.HTTPException):
            return False

    def busy_web_worker(self, timeout: float = 20) -> int | None:
        """A gunicorn worker in the middle of a request (polled until one is)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            busy = workers_in_request(self.procs["web"].pid(), self.web_port)
            if busy:
                return busy[0]
            time.sleep(0.005)
        return None

    def stop(self) -> None:
        """Everything started, whatever failed before; then the folder."""
        if self.proxy is not None:
            self.proxy.stop()
        for proc in list(self.procs.values()):
            proc.stop()
        if self.postgres is not None:
            self.postgres.stop()
        shutil.rmtree(self.folder, ignore_errors=True)
