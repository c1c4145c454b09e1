"""The queue benchmark's printed tables, for the queue and the launch modes."""

from __future__ import annotations

import os
import platform

from benchmarks.cpu_accounting import CpuMeter
from benchmarks.queue_setup import CAP


def describe(m: dict) -> str:
    cpu = m["cpu"]
    return (
        f"{m['pairs']} pairs in {m['seconds']:.1f} s = {m['pairs_per_s']:.1f}/s; "
        f"next p50/p95/p99 {'/'.join(f'{x:.1f}' for x in m['next'])} ms; "
        f"submit {'/'.join(f'{x:.1f}' for x in m['submit'])} ms; "
        f"CPU (cores) web {cpu['web']:.2f} pg {cpu['pg']:.2f} loadgen {cpu['loadgen']:.2f} "
        f"other {cpu['other']:.2f}, machine {cpu['machine']:.2f} of {cpu['cores']:.0f}; "
        f"{CpuMeter.per_pair(cpu, m['pairs_per_s']):.1f} CPU ms per pair; "
        f"invariants {'OK' if not m['broken'] else 'BROKEN'} "
        f"({m['totals']['annotations']} annotations)"
    )


def cpu_cell(cpu: dict) -> str:
    return "/".join(f"{cpu[k]:.2f}" for k in ("web", "pg", "loadgen", "other"))


def print_table(rows: list[dict], args) -> None:
    print()
    print(
        f"# {platform.python_implementation()} {platform.python_version()}, "
        f"{os.cpu_count()} cores; gunicorn {args.workers} workers x {args.threads} threads; "
        f"{args.annotators} annotators; think {args.think} s in (a); "
        f"{args.duration_a:g} s (a), {args.duration_b:g} s (b); code: {args.code}"
    )
    head = (
        "| tuples | (a) pairs/s | next p50 | next p95 | next p99 | submit p50 | submit p95 "
        "| submit p99 | (b) pairs/s | (b) next p95 | (b) submit p95 | (b) CPU ms/pair "
        "| CPU (a) web/pg/loadgen/other | CPU (b) web/pg/loadgen/other | invariants |"
    )
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for r in rows:
        a, b = r["a"], r["b"]
        ok = "OK" if not (a["broken"] or b["broken"] or a["errors"] or b["errors"]) else "BROKEN"
        print(
            f"| {r['tuples']:,} | {a['pairs_per_s']:.1f} | {a['next'][0]:.1f} | {a['next'][1]:.1f} "
            f"| {a['next'][2]:.1f} | {a['submit'][0]:.1f} | {a['submit'][1]:.1f} "
            f"| {a['submit'][2]:.1f} | {b['pairs_per_s']:.1f} | {b['next'][1]:.1f} "
            f"| {b['submit'][1]:.1f} | {CpuMeter.per_pair(b['cpu'], b['pairs_per_s']):.1f} "
            f"| {cpu_cell(a['cpu'])} | {cpu_cell(b['cpu'])} | {ok} |"
        )
    print(
        "(latencies in ms, measured at the client; CPU in cores used on average: gunicorn, "
        "PostgreSQL, this load generator, everything else on the machine; CPU ms/pair: "
        "gunicorn + PostgreSQL + load generator per next+submit pair)"
    )
    busy = max(r[m]["cpu"]["other"] for r in rows for m in ("a", "b"))
    if busy > 0.2:
        print(
            f"WARNING: other jobs used up to {busy:.2f} cores during the measurements; "
            "latencies and rates are pessimistic, CPU ms/pair much less so"
        )


def print_launch(m: dict, args) -> None:
    cpu = m["cpu"]
    print()
    server = "nginx in front of gunicorn" if m.get("proxied") else "bare gunicorn"
    print(
        f"# launch ({server}): {args.participants} participants over {args.arrival:g} s, "
        f"{args.units} "
        f"units each, think {args.think_min:g}-{args.think_max:g} s, {args.tuples[0]:,} tuples "
        f"(cap {CAP}); gunicorn {args.workers} workers x {args.threads} threads; "
        f"{os.cpu_count()} cores; load average before {m['load'][0][0]:.2f}, after "
        f"{m['load'][1][0]:.2f}"
    )
    print(
        "| participants | completed | answers confirmed / sent / rows | errors | refused | broken "
        "| entry p50/p95/p99 | next p50/p95/p99 | unit page p50/p95/p99 "
        "| submit p50/p95/p99 | CPU web/pg/loadgen/other | seconds |"
    )
    print("|" + "---|" * 12)

    def ms(values):
        return "/".join(f"{x:.0f}" for x in values)

    print(
        f"| {m['participants']} | {m['completed']} | {m['totals']['accepted']} / "
        f"{m['totals']['posted']} / {m['totals']['annotations']} | {len(m['errors'])} "
        f"| {len(m['refused'])} | {len(m['broken'])} | {ms(m['entry'])} | {ms(m['next'])} "
        f"| {ms(m['page'])} "
        f"| {ms(m['submit'])} | {cpu_cell(cpu)} | {m['seconds']:.0f} |"
    )
    print(
        "(ms at the client; entry: each request of the link, consent and instructions hops; "
        "next: the answer's redirect to the next unit's page (one GET); "
        "unit page: its GET alone)"
    )
    if m["queries"]:
        print(
            "SQL statements per request (Server-Timing): "
            + ", ".join(f"{k} {v:.1f}" for k, v in sorted(m["queries"].items()))
        )
    print(
        f"{m['requests']} requests, {m['connects']} connections opened, "
        f"{m.get('resets', 0)} connection resets (closed under a request, sent again)"
    )
    each = cpu_per_unit(m)
    if each:
        print(
            f"CPU ms per unit (over the whole launch, entries included): web {each['web']:.1f}, "
            f"proxy {each['proxy']:.1f}, PostgreSQL {each['pg']:.1f}, load generator "
            f"{each['loadgen']:.1f}; web + PostgreSQL {each['web'] + each['pg']:.1f}, with "
            f"the proxy {each['web'] + each['pg'] + each['proxy']:.1f}"
        )
    lists = (("errors", m["errors"]), ("refused", m["refused"]), ("BROKEN", m["broken"]))
    for label, rows in lists:
        if rows:
            print(f"{label}: " + "; ".join(rows[:8]))
    if cpu["other"] > 0.2:
        print(
            f"WARNING: other jobs used {cpu['other']:.2f} cores during the run; the latencies "
            "are not those of a quiet machine"
        )


def cpu_per_unit(m: dict) -> dict:
    """CPU milliseconds per answer stored, over the whole launch (entries and completion
    pages included), of each group: web (gunicorn), proxy (nginx), pg, loadgen."""
    units = m["totals"]["annotations"]
    if not units:
        return {}
    cpu = m["cpu"]
    groups = ("web", "proxy", "pg", "loadgen")
    return {k: cpu.get(k, 0.0) * m["seconds"] / units * 1000 for k in groups}


def print_launch_comparison(results: list[dict]) -> None:
    """One row per launch of the same invocation: bare gunicorn, then behind nginx."""
    print()
    print(
        "| server | errors | connection resets | connections opened | next p95 | submit p95 "
        "| CPU ms per unit: web / proxy / pg | web + pg (+ proxy) | load average before, after |"
    )
    print("|" + "---|" * 9)
    for m in results:
        each = cpu_per_unit(m)
        print(
            f"| {'nginx + gunicorn' if m.get('proxied') else 'gunicorn'} | {len(m['errors'])} "
            f"| {m.get('resets', 0)} | {m['connects']} | {m['next'][1]:.0f} "
            f"| {m['submit'][1]:.0f} | {each['web']:.1f} / {each['proxy']:.1f} / "
            f"{each['pg']:.1f} | {each['web'] + each['pg']:.1f} "
            f"({each['web'] + each['pg'] + each['proxy']:.1f}) "
            f"| {m['load'][0][0]:.2f}, {m['load'][1][0]:.2f} |"
        )
