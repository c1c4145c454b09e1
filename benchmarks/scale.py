"""Scoring at scale: a 1,000,000-item scheme scored with intervals, and its item rows written.

    python benchmarks/scale.py [--items 1000000] [--resamples 1000] [--model-resamples N]
                               [--methods counting plackett_luce] [--cap-gb 6]
                               [--intervals calibrated|bootstrap] [--no-rows]

A balanced design of tuples of 4 with 8 appearances per item (2N tuples), one simulated
MaxDiff judgment per tuple (utilities ~ N(0, 1), ``sample_maxdiff``), so 2,000,000
judgments for 1,000,000 items. Each method is scored in a child process under RLIMIT_AS
``--cap-gb``, which prints seconds (wall and CPU), the child's peak resident memory and
the load average. With ``--intervals calibrated`` (the default, the platform's) that is
``calibrated``: the scores with their intervals as the platform makes them (for the
models, the empirical-Bayes fits and posterior intervals; no other fit is needed), then,
for comparison only, a fit at the fixed default penalty. With ``--intervals bootstrap``
it is the fixed-penalty fit, then its bootstrap intervals (``--resamples``;
``--model-resamples`` for Bradley-Terry and Plackett-Luce when given). A last child writes
the first method's item rows as a run's ItemScore rows with ``write_item_scores``: into
the PostgreSQL database of DATABASE_URL when it names one (COPY), else into a fresh
SQLite file (bulk_create), timing the write alone. Temporary files are removed at the
end. Figures, not assertions.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

MODEL_METHODS = ("bradley_terry", "plackett_luce")


def peak_mb() -> float:
    """This process's peak resident memory so far (Linux ru_maxrss is in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def cap_memory(gib: float) -> None:
    cap = int(gib * 1024**3)
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))


def clock() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def since(start: tuple[float, float]) -> tuple[float, float]:
    return time.perf_counter() - start[0], time.process_time() - start[1]


def intervals_for(judgments, method: str, scores, resamples: int, seed: int):
    """The intervals of --intervals (the children read it from SCALE_INTERVALS): calibrated,
    the platform's default (its own empirical-Bayes fits included in its time), or the
    percentile bootstrap."""
    if os.environ.get("SCALE_INTERVALS", "calibrated") == "calibrated":
        from bws.core.intervals import calibrated

        return calibrated(judgments, method)[1]
    from bws.core.bootstrap import bootstrap_intervals

    return bootstrap_intervals(judgments, method, scores=scores, resamples=resamples, seed=seed)


def load_judgments(work: Path):
    import numpy as np

    from bws.core.judgments import Judgments

    data = np.load(work / "judgments.npz")
    tuples = data["tuples"]
    m, n = tuples.shape[0], int(data["n_items"])
    ids = np.arange(m)
    zeros = np.zeros(m, dtype=np.int64)
    return Judgments(tuples, data["best"], data["worst"], ids, zeros, ids, n)


def simulate(work: Path, n_items: int, seed: int) -> dict:
    import numpy as np

    from bws.core.choice_models import sample_maxdiff
    from bws.core.design import balanced_tuples

    start = clock()
    rng = np.random.default_rng(seed)
    truth = rng.normal(size=n_items)
    tuples = balanced_tuples(n_items, 4, 8, seed=seed)
    best, worst = sample_maxdiff(tuples, truth, rng)
    np.savez(work / "judgments.npz", tuples=tuples, best=best, worst=worst, n_items=n_items)
    wall, _ = since(start)
    return {"tuples": int(tuples.shape[0]), "seconds": wall}


def score_child(work: Path, method: str, resamples: int, seed: int, save: bool) -> dict:
    import numpy as np

    from bws.core.scoring import fit

    judgments = load_judgments(work)
    base = peak_mb()
    if os.environ.get("SCALE_INTERVALS", "calibrated") == "calibrated":
        from bws.core.intervals import calibrated

        # The platform's path: the scores and their intervals in one call.
        start = clock()
        scores, intervals = calibrated(judgments, method)
        calibrated_time, calibrated_peak = since(start), peak_mb()
        load = os.getloadavg()[0]
        start = clock()
        fit(method, judgments)  # the fixed-penalty fit, for comparison only
        fixed_time = since(start)
        if save:
            save_scores(work, scores, intervals)
        return {
            "method": method,
            "kind": "calibrated",
            "converged": bool(scores.converged),
            "loaded_peak_mb": base,
            "calibrated": calibrated_time,
            "calibrated_peak_mb": calibrated_peak,
            "calibrated_load": load,
            "fixed_fit": fixed_time,
            "finite_intervals": float(np.isfinite(intervals.low).mean()),
            "prior_variance": intervals.prior_variance,
        }
    start = clock()
    scores = fit(method, judgments)
    fit_time, fit_peak = since(start), peak_mb()
    start = clock()
    intervals = intervals_for(judgments, method, scores, resamples, seed)
    interval_time, interval_peak = since(start), peak_mb()
    if save:
        save_scores(work, scores, intervals)
    return {
        "method": method,
        "resamples": resamples,
        "converged": bool(scores.converged),
        "loaded_peak_mb": base,
        "fit": fit_time,
        "fit_peak_mb": fit_peak,
        "intervals": interval_time,
        "intervals_peak_mb": interval_peak,
        "finite_intervals": float(np.isfinite(intervals.low).mean()),
    }


def save_scores(work: Path, scores, intervals) -> None:
    """The scores and intervals for the row-writing child."""
    import numpy as np

    from bws.core.scoring import score_ranks

    np.savez(
        work / "scores.npz",
        scores=scores.scores,
        low=intervals.low,
        high=intervals.high,
        best=scores.best_counts,
        worst=scores.worst_counts,
        appearances=scores.appearances,
        ranks=score_ranks(scores),
    )


def write_child(work: Path) -> dict:
    """Store the saved scores as a run's item rows (Django set up here, in the child)."""
    database = os.environ.get("DATABASE_URL", "")
    if not database.startswith(("postgres://", "postgresql://")):
        os.environ["DATABASE_URL"] = f"sqlite:///{work / 'scale.sqlite3'}"
    os.environ.update({"DEBUG": "1", "PROJECT_FILES_ROOT": str(work / "projects")})
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    import numpy as np
    from django.core.management import call_command
    from django.db import connection, transaction

    from bws import services
    from bws.filemode import ScoreRow
    from bws.models import ItemScore, ScoreRun
    from projects.tests.factories import ProjectFactory

    call_command("migrate", verbosity=0)
    data = np.load(work / "scores.npz")
    n = data["scores"].size
    ids = [f"item{i:07d}" for i in range(n)]
    order = np.argsort(data["ranks"], kind="stable")
    columns = [data[name][order].tolist() for name in ("scores", "low", "high")]
    counts = [data[name][order].tolist() for name in ("best", "worst", "appearances", "ranks")]
    rows = [
        ScoreRow(ids[i], "", s, lo, hi, int(b), int(w), int(a), int(r))
        for i, s, lo, hi, b, w, a, r in zip(order.tolist(), *columns, *counts, strict=True)
    ]
    index_of = {item_id: i for i, item_id in enumerate(ids)}
    name = f"scale-benchmark-{os.getpid()}"
    project = ProjectFactory(slug=name, lab__slug=name, lab__name=name)
    run = ScoreRun.objects.create(project=project, scheme="q", method="counting")
    start = clock()
    with transaction.atomic():
        services.write_item_scores(run, rows, index_of)
    elapsed = since(start)
    stored = ItemScore.objects.filter(run=run).count()
    project.delete()  # the benchmark's rows do not stay in the database
    project.lab.delete()
    return {"database": connection.vendor, "rows": stored, "write": elapsed, "peak_mb": peak_mb()}


def child(args) -> int:
    cap_memory(args.cap_gb)
    work = Path(args.work)
    if args.child == "write":
        result = write_child(work)
    else:
        result = score_child(work, args.child, args.child_resamples, args.seed, args.save)
    print("RESULT " + json.dumps(result), flush=True)
    return 0


def run_child(args, work: Path, stage: str, *extra: str) -> dict:
    command = [sys.executable, __file__, "--child", stage, "--work", str(work)]
    command += ["--cap-gb", str(args.cap_gb), "--seed", str(args.seed), *extra]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    for line in done.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT ") :])
    tail = done.stderr.strip().splitlines()[-1:] or ["no output"]
    return {"failed": f"exit {done.returncode}: {tail[0]}"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=1_000_000)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--model-resamples", type=int, help="for the model methods only")
    parser.add_argument("--methods", nargs="+", default=["counting", "plackett_luce"])
    parser.add_argument("--cap-gb", type=float, default=6.0, help="RLIMIT_AS of each child")
    parser.add_argument(
        "--intervals",
        choices=("calibrated", "bootstrap"),
        default=os.environ.get("SCALE_INTERVALS", "calibrated"),
        help="interval method (default: calibrated, the platform's)",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-rows", action="store_true", help="skip writing the item rows")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--work", help=argparse.SUPPRESS)
    parser.add_argument("--child-resamples", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--save", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    os.environ["SCALE_INTERVALS"] = args.intervals
    if args.child:
        return child(args)

    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    work = Path(tempfile.mkdtemp(prefix="annolab-scale-"))
    try:
        made = simulate(work, args.items, args.seed)
        print(
            f"{args.items:,} items, {made['tuples']:,} tuples of 4 (8 appearances), one MaxDiff "
            f"judgment each; simulated in {made['seconds']:.1f} s; each child under "
            f"RLIMIT_AS {args.cap_gb:g} GiB; load {os.getloadavg()[0]:.2f}",
            flush=True,
        )
        for number, method in enumerate(args.methods):
            resamples = args.resamples
            if method in MODEL_METHODS and args.model_resamples:
                resamples = args.model_resamples
            save = number == 0 and not args.no_rows
            extra = ["--child-resamples", str(resamples)] + (["--save"] if save else [])
            r = run_child(args, work, method, *extra)
            if "failed" in r:
                print(f"{method}: FAILED ({r['failed']})", flush=True)
                continue
            if r.get("kind") == "calibrated":
                prior = r["prior_variance"]
                print(
                    f"{method}: scores with calibrated intervals {r['calibrated'][0]:.1f} s "
                    f"({r['calibrated'][1]:.1f} s CPU), {r['calibrated_peak_mb']:,.0f} MB peak, "
                    f"load {r['calibrated_load']:.2f} at its end"
                    + ("" if prior is None else f"; prior variance {prior:.4f}")
                    + f"; converged {r['converged']}; finite intervals "
                    f"{r['finite_intervals']:.3f}; data loaded {r['loaded_peak_mb']:,.0f} MB. "
                    f"For comparison, a fixed-penalty fit alone {r['fixed_fit'][0]:.1f} s "
                    f"({r['fixed_fit'][1]:.1f} s CPU); load {os.getloadavg()[0]:.2f}",
                    flush=True,
                )
                continue
            total = r["fit"][0] + r["intervals"][0]
            print(
                f"{method}: fit {r['fit'][0]:.1f} s ({r['fit'][1]:.1f} s CPU), "
                f"{r['fit_peak_mb']:,.0f} MB peak; {resamples} resamples "
                f"{r['intervals'][0]:.1f} s ({r['intervals'][1]:.1f} s CPU), "
                f"{r['intervals_peak_mb']:,.0f} MB peak; fit + intervals {total:.1f} s; "
                f"converged {r['converged']}; data loaded {r['loaded_peak_mb']:,.0f} MB; "
                f"load {os.getloadavg()[0]:.2f}",
                flush=True,
            )
        if (work / "scores.npz").exists():
            r = run_child(args, work, "write")
            if "failed" in r:
                print(f"item rows: FAILED ({r['failed']})")
            else:
                print(
                    f"item rows ({args.methods[0]}): {r['rows']:,} rows into {r['database']} "
                    f"in {r['write'][0]:.1f} s ({r['write'][1]:.1f} s CPU), "
                    f"{r['peak_mb']:,.0f} MB peak; load {os.getloadavg()[0]:.2f}"
                )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
