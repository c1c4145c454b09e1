"""Adaptive targets driven through the platform's real queue, against the balanced design.

    python benchmarks/adaptive_queue.py [--items 400] [--seeds 3]
        [--targets top_k threshold reference comparisons] [--db annolab_adaptive_bench]

What ``benchmarks/adaptive_targets.py`` measures on the numeric core, here end to end: per
target and seed a project is imported with an ``adaptive`` block that names the target and
nothing else, so that it runs with the sizes the platform gives a narrow target (a balanced
start of one appearance per item, at most 32 appearances, batches of n / 32 tuples or n / 64
for a threshold score, bws.configuration.adaptive.MEASURED; Plackett-Luce), and 20
simulated annotators take units through ``annotation.queue.next_unit`` and answer through
``annotation.answers.submit_answers`` (MaxDiff judgments of the true utilities, normal with
sd 1). The queue orders each batch when the open tuples run low; the batch task (run in
this process, as a worker would run it) fits the answers with a platform run and designs
the batch. After each batch the target's answer is read from the newest run as the
dashboard reads it (``bws.adaptive.fit_arrays``, ``targets.target_report``) and scored
against the truth; the study stops when it is as accurate as the balanced design at 8
appearances (the same truth and crowd, scored on the core as ``adaptive_targets.py`` does,
averaged over the seeds) or 8 appearances are spent. Printed per target: each seed's
share of the balanced design's judgments, the design rules checked on every stored batch
(``bws.core.adaptive.batch_problems``), the batches and scoring runs, and the time.

Uses its own PostgreSQL database on 127.0.0.1 (dropped and made anew; never the test
database) and no Redis. Figures, not assertions.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import logging  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

# benchmarks/ off the path until psycopg has loaded: its "import queue" would find
# benchmarks/queue.py (benchmarks.adaptive_targets puts the folder back for its own imports)
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or os.curdir).resolve() != _HERE]
sys.path.append(str(_HERE.parent))

import psycopg  # noqa: E402, F401 (loads the standard queue module while it can be found)

from benchmarks.adaptive_targets import FINAL, accuracy, balanced, make_target  # noqa: E402
from benchmarks.queue_setup import base_env, recreate_database  # noqa: E402

ANNOTATORS = 20
MEMORY_LIMIT = 6 * 1024**3
CONFIG = """\
task_name: adaptive queue benchmark
data_files: [items.jsonl]
num_annotators_per_item: 1
annotation_schemes:
  - annotation_type: best_worst_scaling
    name: quality
    tuple_size: 4
    tuple_generation:
      seed: {seed}
      adaptive:
{target}
    scoring:
      method: plackett_luce
"""


def parse(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=400)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument(
        "--targets", nargs="+", default=["top_k", "threshold", "reference", "comparisons"]
    )
    parser.add_argument("--db", default="annolab_adaptive_bench")
    parser.add_argument("--admin-db", default="postgres")
    parser.add_argument("--pg-host", default="127.0.0.1")
    parser.add_argument("--pg-port", default="5432")
    parser.add_argument("--pg-user", default="postgres")
    return parser.parse_args(argv)


def target_lines(target, ids: list[str]) -> str:
    """The config's ``target`` lines for a core target (item indices as the data's ids)."""
    pad = " " * 8
    if target.kind == "top_k":
        return f"{pad}target: top_k\n{pad}k: {target.k}\n"
    if target.kind == "threshold" and target.reference is not None:
        return f"{pad}target: threshold\n{pad}reference: {ids[target.reference]}\n"
    if target.kind == "threshold":
        return f"{pad}target: threshold\n{pad}threshold: {target.score!r}\n"
    pairs = ", ".join(f"[{ids[a]}, {ids[b]}]" for a, b in target.pairs)
    return f"{pad}target: comparisons\n{pad}comparisons: [{pairs}]\n"


def write_study(folder: Path, truth: np.ndarray, target, seed: int) -> Path:
    folder.mkdir(parents=True)
    ids = [f"i{i:05d}" for i in range(truth.size)]
    with (folder / "items.jsonl").open("w") as out:
        for i, key in enumerate(ids):
            out.write(json.dumps({"id": key, "text": f"item {i}"}) + "\n")
    # the sizes left out: the platform's measured ones for the target (a start of one
    # appearance, at most 32, batches of n / 32 tuples or n / 64 for a threshold score)
    config = CONFIG.format(seed=seed, target=target_lines(target, ids))
    (folder / "config.yaml").write_text(config)
    return folder / "config.yaml"


def run_study(project, truth_by_id: dict, target, goal: float, rng) -> dict:
    """Annotators through the queue until the target's answer is as accurate as ``goal``
    or FINAL appearances are spent; what it took."""
    # Django loads after django.setup() (the bench database is chosen at run time).
    from annotation.answers import submit_answers
    from annotation.queue import next_unit
    from bws import adaptive
    from bws.core import adaptive as core
    from bws.core import targets
    from bws.core.choice_models import sample_maxdiff
    from bws.models import ScoreRun, TupleBatch
    from projects.tests.factories import UserFactory

    index = adaptive.item_index(project)
    n = len(index)
    truth = np.empty(n)
    for key, i in index.items():
        truth[i] = truth_by_id[key]
    users = [UserFactory(username=f"{project.slug}-a{k}") for k in range(ANNOTATORS)]
    budget = FINAL * n // 4
    answered, seen_batches, reached, problems = 0, 0, None, 0
    while answered < budget:
        unit = next_unit(project=project, user=users[answered % ANNOTATORS])
        if unit is None:
            break
        items = np.array([index[key] for key in unit.item_ids])
        best, worst = sample_maxdiff(items[None, :], truth, rng)
        submit_answers(
            project=project, user=users[answered % ANNOTATORS], unit_id=unit.pk,
            answers={"quality": {"best": unit.item_ids[best[0]], "worst": unit.item_ids[worst[0]]}},
        )  # fmt: skip
        answered += 1
        newest = (
            TupleBatch.objects.filter(project=project, number__gt=0)
            .select_related("fit_run")
            .order_by("-number")
            .first()
        )
        if newest is None or newest.number == seen_batches:
            continue
        seen_batches = newest.number
        u, sd = adaptive.fit_arrays(newest.fit_run, n)  # the run the batch was designed from
        report = targets.target_report(u, sd, target, targeted=True)
        if accuracy(target, report, truth) >= goal:
            reached = answered
            break
    bound = adaptive.adaptive_settings(project).max_appearances  # 32, as measured
    for batch in TupleBatch.objects.filter(project=project, number__gt=0):
        state = adaptive.design_state(project, before=batch.number)
        stored = batch.tuples.order_by("position").values_list("unit__item_indices", flat=True)
        rows = np.asarray(list(stored), dtype=np.int64).reshape(-1, 4)
        exempt = targets.exempt_items(target)
        problems += len(core.batch_problems(rows, state, max_appearances=bound, exempt=exempt))
    return {
        "share": None if reached is None else reached * 4 / (n * FINAL),
        "answered": answered,
        "batches": seen_batches,
        "runs": ScoreRun.objects.filter(project=project).count(),
        "problems": problems,
    }


def main(argv=None) -> None:
    args = parse(argv)
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    folder = Path(tempfile.mkdtemp(prefix="adaptive-queue-"))
    env = base_env(args)
    env.update(PROJECT_FILES_ROOT=str(folder / "projects"), CELERY_DATA_DIR=str(folder / "c"))
    recreate_database(args)
    os.environ.update(env)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django  # after the environment is set: the settings read it once

    django.setup()
    logging.getLogger("bws").setLevel(logging.WARNING)  # not a line per batch
    # Django loads after django.setup() (the bench database is chosen at run time).
    from adaptive import true_utilities
    from django.core.management import call_command

    from bws import adaptive, tasks
    from config.celery import app as celery_app
    from projects.services import import_project

    call_command("migrate", "--noinput", verbosity=0)
    # the batch task runs at once in this process, as a worker would run it
    assert tasks.design_batch_task.name in celery_app.tasks  # bws.tasks registers it
    adaptive.send_task = lambda name, *a, **k: celery_app.tasks[name].run(*a, **k) or True
    print(f"{args.items:,} items, {ANNOTATORS} annotators, normal utilities, {args.seeds} seeds")
    print("| target | balanced accuracy at r = 8 | share per seed | median | answers | "
          "batches | scoring runs | design-rule problems | seconds |")  # fmt: skip
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|")
    for kind in args.targets:
        started = time.time()
        seeds = range(args.seeds)
        truths = [true_utilities(args.items, "normal", np.random.default_rng(s)) for s in seeds]
        goals = [make_target(kind, truths[s], np.random.default_rng(s + 100)) for s in seeds]
        goal = float(
            np.mean([balanced(truths[s], s, False, goals[s], "accuracy")[0] for s in seeds])
        )
        results = []
        for s in seeds:
            slug = f"{kind.replace('_', '-')}-{s}"
            config = write_study(folder / slug, truths[s], goals[s], seed=s)
            project = import_project(config_path=config, slug=slug).project
            by_id = {f"i{i:05d}": float(x) for i, x in enumerate(truths[s])}
            results.append(run_study(project, by_id, goals[s], goal, np.random.default_rng(s)))
        shares = [r["share"] for r in results]
        finite = [x for x in shares if x is not None]
        print(
            f"| {kind} | {goal:.3f} | "
            + ", ".join("-" if x is None else f"{x:.0%}" for x in shares)
            + f" | {np.median(finite) if finite else float('nan'):.0%} | "
            + ", ".join(str(r["answered"]) for r in results)
            + " | " + ", ".join(str(r["batches"]) for r in results)
            + " | " + ", ".join(str(r["runs"]) for r in results)
            + f" | {sum(r['problems'] for r in results)} | {time.time() - started:.0f} |",
            flush=True,
        )  # fmt: skip


if __name__ == "__main__":
    main()
