"""The queue benchmark's launch mode: participants arriving through the entry link, as browsers."""

from __future__ import annotations

import concurrent.futures
import http.client
import http.cookies
import os
import random
import re
import resource
import shutil
import tempfile
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

import psycopg

from benchmarks.cpu_accounting import CpuMeter
from benchmarks.proxy import Proxy
from benchmarks.queue_invariants import INVARIANTS
from benchmarks.queue_load import percentile
from benchmarks.queue_setup import (
    CAP,
    Server,
    base_env,
    manage,
    pg_url,
    recreate_database,
    write_project,
)

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
    # nginx keeps one idle for keepalive_timeout (platform/nginx/annolab-server.conf, 300 s):
    # through it, a browser keeps its connection between answers.
    IDLE_CLOSE_PROXY = 290.0

    def __init__(self, port: int, timeout: float, idle_close: float = IDLE_CLOSE):
        self.port = port
        self.timeout = timeout
        self.idle_close = idle_close
        self.conn = None
        self.cookies: dict[str, str] = {}
        self.last = 0.0
        self.connects = 0
        self.resets = 0  # connections closed under a request (then sent again once)
        self.queries: dict[str, list[int]] = {}

    def _connection(self) -> http.client.HTTPConnection:
        if self.conn is None or time.monotonic() - self.last > self.idle_close:
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
                self.resets += 1
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
    resets: int = 0


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


def participant_journey(port, pid, rng, think, quota, deadline, stop, idle_close) -> Journey:
    """Entry link -> consent -> instructions -> up to `quota` units -> completion page."""
    journey = Journey(pid)
    browser = Browser(port, timeout=60, idle_close=idle_close)

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
        journey.resets = browser.resets
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


def run_launch(args, proxied: bool = False) -> dict:
    """200 participants arrive over 60 s through the entry link, each answers its quota
    with think time, and the checks run in SQL afterwards. ``proxied``: through nginx in
    front of gunicorn, as deployed (benchmarks/proxy.py, platform/nginx)."""
    folder = Path(tempfile.mkdtemp(prefix="launch-bench-"))
    env = base_env(args) | {
        "SERVER_TIMING": "1" if args.server_timing else "0",
        "STATIC_ROOT": str(folder / "static"),
        "PROJECT_FILES_ROOT": str(folder / "files"),
    }
    if proxied:
        env["PROJECT_FILES_ACCEL_REDIRECT"] = "/_project_files/"
        env["TRUSTED_PROXY_COUNT"] = "1"
    server = proxy = None
    n_tuples = args.tuples[0]
    memory_bound = resource.getrlimit(resource.RLIMIT_AS)
    try:
        recreate_database(args)
        manage(env, "migrate", "--noinput")
        config = write_launch_project(folder, n_tuples, args.units)
        manage(env, "import_project", str(config), "--slug", LAUNCH_SLUG)
        with psycopg.connect(pg_url(args, args.db), autocommit=True) as conn:
            conn.execute("VACUUM ANALYZE")
        server = Server(args, env)
        server.wait_ready()
        port, idle_close = args.port, Browser.IDLE_CLOSE
        if proxied:
            manage(env, "collectstatic", "--noinput")
            proxy = Proxy(args.proxy_port, f"127.0.0.1:{args.port}", folder / "static",
                          folder / "files")  # fmt: skip
            proxy.wait_ready()
            port, idle_close = args.proxy_port, Browser.IDLE_CLOSE_PROXY
        # The load generator's memory is bounded (its children were started before this),
        # until the run ends: a second run's servers start without the bound.
        limit = args.memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, memory_bound[1]))
        threading.stack_size(512 * 1024)
        meter = CpuMeter(server, proxy)
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
                        port,
                        f"launch{i:04d}",
                        random.Random(seed),
                        think,
                        args.units,
                        deadline,
                        stop,
                        idle_close,
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
            "resets": sum(j.resets for j in journeys),
            "proxied": proxied,
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
        resource.setrlimit(resource.RLIMIT_AS, memory_bound)
        if proxy is not None:
            proxy.stop()
        if server is not None:
            server.stop()
        shutil.rmtree(folder, ignore_errors=True)
