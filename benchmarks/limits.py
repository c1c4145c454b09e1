"""The largest project the limits allow: import it through the web's (untrusted) path and
score it, under an address-space cap, printing seconds and peak memory per stage.

    python benchmarks/limits.py [--items N] [--tuple-size 4] [--cap-gb 4]

Items default to PROJECT_MAX_ITEMS; appearances to the most that PROJECT_MAX_TUPLES and
DESIGN_MAX_MEMORY_MB allow for that many items (at most DESIGN_MAX_APPEARANCES). One simulated
MaxDiff judgment per tuple, then a foreground scoring run with the config's defaults
(counting, 1000 bootstrap resamples, split-half, convergence, the output file). Runs in a
fresh SQLite database and folder in a temporary directory, removed at the end.
Figures, not assertions.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def peak_mb() -> float:
    """This process's peak resident memory so far (Linux ru_maxrss is in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, help="items (default: PROJECT_MAX_ITEMS)")
    parser.add_argument("--tuple-size", type=int, default=4)
    parser.add_argument("--cap-gb", type=float, default=4.0, help="RLIMIT_AS for this process")
    parser.add_argument("--appearances", type=int, help="default: the most the budget allows")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="annolab-limits-"))
    os.environ.update(
        {
            "DEBUG": "1",
            "DATABASE_URL": f"sqlite:///{work / 'limits.sqlite3'}",
            "PROJECT_FILES_ROOT": str(work / "projects"),
            "OPENBLAS_NUM_THREADS": "1",
        }
    )
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    import numpy as np
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.core.management import call_command

    from annotation.models import Annotation
    from bws import services as bws_services
    from bws.core.choice_models import sample_maxdiff
    from bws.core.design import design_memory
    from projects.models import Unit
    from projects.services import create_lab, create_project_from_upload, project_folder

    cap = int(args.cap_gb * 1024**3)
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    call_command("migrate", verbosity=0)

    n = args.items or settings.PROJECT_MAX_ITEMS
    size = args.tuple_size
    budget = settings.DESIGN_MAX_MEMORY_MB * 1024 * 1024
    appearances = max(
        (
            r
            for r in range(1, settings.DESIGN_MAX_APPEARANCES + 1)
            if design_memory(n, size, r) <= budget
            and -(-n * r // size) <= settings.PROJECT_MAX_TUPLES
        ),
        default=0,
    )
    if args.appearances:
        appearances = args.appearances
    if not appearances:
        print(f"no design of {n} items in tuples of {size} fits DESIGN_MAX_MEMORY_MB")
        return 1
    estimate = design_memory(n, size, appearances) / 1024**2
    print(
        f"{n:,} items (PROJECT_MAX_ITEMS {settings.PROJECT_MAX_ITEMS:,}), tuples of {size}, "
        f"{appearances} appearances (DESIGN_MAX_MEMORY_MB {settings.DESIGN_MAX_MEMORY_MB}; "
        f"design estimate {estimate:.0f} MB); "
        f"RLIMIT_AS {args.cap_gb:g} GiB; baseline peak {peak_mb():.0f} MB"
    )

    items = "".join(
        json.dumps({"id": f"item{i:06d}", "text": f"Item number {i} of the largest project"}) + "\n"
        for i in range(n)
    ).encode()
    config = (
        "annotation_task_name: Largest project\n"
        "data_files: [items.jsonl]\n"
        "annotation_schemes:\n"
        "  - {annotation_type: bws, name: quality, description: Best and worst}\n"
        "bws_config:\n"
        f"  tuple_size: {size}\n"
        f"  min_item_appearances: {appearances}\n"
        f"  seed: {args.seed}\n"
        "  scoring: {method: counting, output_file: scores.tsv}\n"
    )
    lab = create_lab(name="Benchmark lab")
    started = time.perf_counter()
    result = create_project_from_upload(
        config_file=SimpleUploadedFile("config.yaml", config.encode()),
        data_files=[SimpleUploadedFile("items.jsonl", items)],
        lab=lab,
        owner=None,
    )
    project = result.project
    print(
        f"import (upload path, design, rows): {time.perf_counter() - started:.1f} s, "
        f"{result.n_tuples:,} tuples; peak {peak_mb():.0f} MB"
    )

    started = time.perf_counter()
    user = get_user_model().objects.create(username="judge")
    rng = np.random.default_rng(args.seed)
    truth = rng.normal(size=n)
    ids = [f"item{i:06d}" for i in range(n)]
    units = Unit.objects.filter(project=project).order_by("position")
    rows = units.values_list("pk", "item_indices").iterator(chunk_size=5000)
    count = 0

    def store(chunk):
        tuples = np.asarray([indices for _, indices in chunk], dtype=np.int64)
        best, worst = sample_maxdiff(tuples, truth, rng)
        picked = np.arange(len(chunk))
        b, w = tuples[picked, best], tuples[picked, worst]
        Annotation.objects.bulk_create(
            Annotation(
                project=project,
                unit_id=unit_id,
                annotator=user,
                scheme="quality",
                value={"best": ids[int(b[k])], "worst": ids[int(w[k])]},
                best_index=int(b[k]),
                worst_index=int(w[k]),
            )
            for k, (unit_id, _) in enumerate(chunk)
        )
        return len(chunk)

    chunk = []
    for row in rows:
        chunk.append(row)
        if len(chunk) == 5000:
            count += store(chunk)
            chunk = []
    if chunk:
        count += store(chunk)
    print(
        f"{count:,} judgments stored (one per tuple): {time.perf_counter() - started:.1f} s; "
        f"peak {peak_mb():.0f} MB"
    )

    started = time.perf_counter()
    cpu = time.process_time()
    run = bws_services.request_run(project=project, scheme="quality")
    run = bws_services.execute_run(run.pk)
    written = project_folder(project) / "scores.tsv"
    print(
        f"scoring run ({run.method}, {run.parameters['bootstrap']} resamples, split-half, "
        f"convergence, {written.name}): {time.perf_counter() - started:.1f} s "
        f"({time.process_time() - cpu:.1f} s CPU), status {run.status}"
        f"{', output written' if written.exists() else ''}; peak {peak_mb():.0f} MB"
    )
    shutil.rmtree(work, ignore_errors=True)
    return 0 if run.status == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())
