"""The background benchmark's project: its config, its judgments written in bulk, its
scoring method, and its scoring runs read from the bench database."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import psycopg
from psycopg.types.json import Jsonb

from benchmarks.queue_setup import pg_url, write_project

SLUG = "bg-bench"
SCHEME = "quality"
N_TUPLES = 20_000  # 10,000 items at T = 4, r = 8
PRELOAD_ANNOTATORS = 10


def write_config(folder: Path) -> Path:
    config = write_project(folder, N_TUPLES)
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
    with psycopg.connect(pg_url(args, args.db)) as conn:
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
    with psycopg.connect(pg_url(args, args.db), autocommit=True) as conn:
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
