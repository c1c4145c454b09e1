"""The background benchmark's submit latency beside the scoring worker: Server-Timing
splits, CPU shares and a block bootstrap of the busy-to-idle ratio."""

from __future__ import annotations

import random
import threading
import time

import numpy as np

from benchmarks.background_processes import children_of
from benchmarks.background_project import runs
from benchmarks.background_sessions import paced_loop, run_controller
from benchmarks.cpu_accounting import CpuMeter, proc_cpu
from benchmarks.queue_load import percentile


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
    return sum(proc_cpu(p) for p in [pid, *children_of(pid)])


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
    meter = CpuMeter(server)
    before = meter.snapshot()
    cpu0 = group_cpu(worker_pid)
    for t in threads:
        t.start()
    controller.start()
    for t in threads:
        t.join(timeout=args.duration + 120)
    controller.join(timeout=360)
    worker_cpu = group_cpu(worker_pid) - cpu0
    cpu = CpuMeter.delta(before, meter.snapshot())
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
            "p": [percentile(values, q) for q in (50, 95, 99)],
            "parts": split_latency(parts[name]),
        }
    if busy and idle:
        result["ratio95"] = result["busy"]["p"][1] / result["idle"]["p"][1]
        result["ratio95_ci"] = block_bootstrap_ratio(busy, idle)
    return result
