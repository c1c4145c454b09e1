"""CPU seconds of processes, of PostgreSQL and of the whole machine, read from /proc."""

from __future__ import annotations

import os
import time
from pathlib import Path

from benchmarks.queue_setup import Server

CLK_TCK = os.sysconf("SC_CLK_TCK")


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
    """CPU seconds spent by gunicorn, PostgreSQL, the proxy in front of gunicorn (nginx,
    when there is one) and this process over an interval."""

    def __init__(self, server: Server, proxy=None):
        self.server = server
        self.proxy = proxy

    def snapshot(self) -> dict:
        pg = {pid: proc_cpu(pid) for pid in postgres_pids()}
        web = {pid: proc_cpu(pid) for pid in self.server.pids()}
        proxy = {pid: proc_cpu(pid) for pid in (self.proxy.pids() if self.proxy else [])}
        times = os.times()
        busy, total = machine_busy()
        return {
            "pg": pg,
            "web": web,
            "proxy": proxy,
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
            "proxy": group("proxy") / wall,
            "loadgen": (b["load"] - a["load"]) / wall,
            "machine": (b["busy"] - a["busy"]) / wall,
            "cores": (b["total"] - a["total"]) / wall,
        } | {"other": 0.0}

    @staticmethod
    def with_other(cpu: dict) -> dict:
        """Add what the rest of the machine used meanwhile (other people's jobs)."""
        mine = cpu["web"] + cpu["pg"] + cpu.get("proxy", 0.0) + cpu["loadgen"]
        return cpu | {"other": max(0.0, cpu["machine"] - mine)}

    @staticmethod
    def per_pair(cpu: dict, pairs_per_s: float) -> float:
        """CPU milliseconds (gunicorn + PostgreSQL + load generator) per next+submit pair:
        less sensitive than rates to other jobs on the machine."""
        if not pairs_per_s:
            return float("nan")
        return (cpu["web"] + cpu["pg"] + cpu["loadgen"]) / pairs_per_s * 1000
