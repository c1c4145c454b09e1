"""The background benchmark's annotators: sessions of submits that start scoring runs, and
the paced load with the controller that schedules runs meanwhile."""

from __future__ import annotations

import json
import random
import threading
import time
import uuid

from benchmarks.background_project import SCHEME, SLUG, judgment_count, runs
from benchmarks.queue_load import ApiError


def answer_one(client, rng) -> tuple[float, float, float, dict]:
    """next + submit; returns (submit start wall time, submit end wall time, next ms, the
    submit's Server-Timing figures)."""
    t0 = time.perf_counter()
    status, data = client.call("POST", f"/api/v1/projects/{SLUG}/queue/next/")
    next_ms = (time.perf_counter() - t0) * 1000
    if status != 200:
        raise ApiError(f"next {status} {data[:200]!r}")
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
        raise ApiError(f"submit {status} {data[:200]!r}")
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
