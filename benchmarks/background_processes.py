"""The background benchmark's child processes: Redis, the Celery workers (under a CPU quota,
nice, SCHED_IDLE or pinned), and the process trees they pin."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

from benchmarks import queue_setup
from benchmarks.queue_setup import ROOT

CELERY = ROOT / ".venv" / "bin" / "celery"


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
    """A cgroup v1 cpu group at the lowest weight with a CFS quota: `share` of one core per
    `period_ms`; no quota for a share of 0 (the weight alone, as CPUWeight=idle does)."""

    def __init__(self, share: float, period_ms: float):
        self.path = CGROUP_CPU / f"annolab-scoring-{os.getpid()}"
        self.path.mkdir()
        if share > 0:
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
        queue_setup.CODE,
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
    return Child("worker", quota.argv(argv) if quota else argv, queue_setup.CODE, env)


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
