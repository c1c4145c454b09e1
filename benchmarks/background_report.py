"""The background benchmark's printed report."""

from __future__ import annotations

import os
import platform

import numpy as np


def report(args, sessions, lat, others, load1, load2, head) -> None:
    print()
    print(
        f"# {platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} "
        f"cores; code {args.code} {head}; SCORING_SESSION_GAP {args.gap:g} s; scoring worker "
        f"concurrency 1 (CPU quota {args.worker_cpu_quota:g} of a core per "
        f"{args.worker_cpu_period_ms:g} ms, nice {args.worker_nice}, "
        f"SCHED_IDLE {args.worker_sched_idle}); "
        f"gunicorn {args.workers}x{args.threads}; "
        f"other benchmarks: {len(others)}; load average at (1) {load1}, at (2) {load2}"
    )
    print(
        "| method | sessions | end of session -> fresh ok run, s (median, min-max) "
        "| wait before start, s | compute, s | judgments |"
    )
    print("|---|---|---|---|---|---|")
    for method in ("bradley_terry", "plackett_luce"):
        m = [s for s in sessions if s["method"] == method and not s["warmup"]]
        if not m:
            continue

        def cell(key, m=m):
            v = [s[key] for s in m]
            return f"{np.median(v):.1f} ({min(v):.1f}-{max(v):.1f})"

        print(
            f"| {method} | {len(m)} | {cell('fresh_s')} | {cell('wait_s')} | "
            f"{cell('compute_s')} | {m[-1]['judgments']:,} |"
        )
    print()
    print("| submits | n | p50 ms | p95 ms | p99 ms |")
    print("|---|---|---|---|---|")
    for name, label in (("idle", "idle (no run)"), ("busy", "during a run")):
        p = lat[name]["p"]
        print(f"| {label} | {lat[name]['n']} | {p[0]:.1f} | {p[1]:.1f} | {p[2]:.1f} |")
    print()
    print("| submit time, mean / p95 ms | total | outside Django | CPU | database | other |")
    print("|---|---|---|---|---|---|")
    for name, label in (("idle", "idle (no run)"), ("busy", "during a run")):
        parts = lat[name].get("parts") or {}
        if parts:
            print(
                f"| {label} | "
                + " | ".join(
                    f"{parts[k][0]:.1f} / {parts[k][1]:.1f}"
                    for k in ("total", "outside", "cpu", "db", "other")
                )
                + " |"
            )
    if "ratio95" in lat:
        lo, hi = lat["ratio95_ci"]
        print(
            f"p95 during / idle: {lat['ratio95']:.2f} (95% interval {lo:.2f}-{hi:.2f}); "
            f"runs {lat['runs']}; worker {lat['worker_cores_in_runs']:.2f} cores while "
            "running; CPU over (2) in cores: "
            + ", ".join(f"{k} {lat['cpu'][k]:.2f}" for k in ("web", "pg", "loadgen", "worker"))
            + f", everything else {lat['cpu']['other']:.2f}; "
            f"machine {lat['cpu']['machine']:.2f} of {lat['cpu']['cores']:.0f}"
        )
    if lat.get("request_to_fresh"):
        print(
            "while the annotators work, re-score request -> fresh run, s: "
            + ", ".join(f"{m} {v:.1f}" for m, v in lat["request_to_fresh"])
        )
    if lat["errors"]:
        print("ERRORS: " + "; ".join(lat["errors"][:5]))
