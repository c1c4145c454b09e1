"""The queue benchmark's load: simulated annotators through the REST API, and their latencies."""

from __future__ import annotations

import http.client
import http.cookies
import json
import random
import threading
import time
import uuid
from dataclasses import dataclass, field

from benchmarks.queue_setup import PASSWORD, SLUG


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
