"""``python -m bws`` and ``python -m agreement`` answer ``--help`` without loading numpy,
scipy or the configuration schema: those load only when a command runs, so asking for
help takes a moment, not seconds (the time is measured in benchmarks/cli_startup.py)."""

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# Packages a help request must not import: the numeric code and the configuration schema.
HEAVY = ("numpy", "scipy", "projects.configuration")


def imported_by(*args: str) -> tuple[subprocess.CompletedProcess, set[str]]:
    """Run ``python -X importtime ARGS`` and return its result and every module it imported."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    modules = {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }
    return done, modules


def heavy(modules: set[str]) -> list[str]:
    return sorted(
        name for name in modules if any(name == h or name.startswith(h + ".") for h in HEAVY)
    )


@pytest.mark.parametrize(
    "args",
    [
        ("bws", "--help"),
        ("bws", "generate-tuples", "--help"),
        ("bws", "score", "--help"),
        ("bws", "stats", "--help"),
        ("agreement", "--help"),
        ("agreement", "report", "--help"),
    ],
    ids=" ".join,
)
def test_help_loads_no_numeric_code_and_no_configuration_schema(args):
    done, modules = imported_by("-m", *args)
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"python -m {args[0]}" in done.stdout
    assert f"{args[0]}.cli" in modules  # the import list was read
    assert heavy(modules) == []


def test_a_command_still_loads_what_it_needs(tmp_path):
    """The check above can fail: a command that runs imports the modules it lists."""
    items = tmp_path / "items.jsonl"
    items.write_text("".join(f'{{"id": "i{k}"}}\n' for k in range(6)))
    args = ["generate-tuples", "--items", str(items), "--tuple-size", "3"]
    args += ["--tuples-per-item", "2", "--output", str(tmp_path / "tuples.jsonl")]
    done, modules = imported_by("-m", "bws", *args)
    assert done.returncode == 0, done.stderr[-2000:]
    assert {"numpy", "scipy", "projects.configuration"} <= modules


def test_the_score_command_loads_no_stats_optimize_or_django(tmp_path):
    """`python -m bws score` (Plackett-Luce, calibrated intervals, annotators' sensitivities
    tested) pays no import of scipy.stats, scipy.optimize or Django: half its start-up time
    once went to them (benchmarks/cli_score_time.py)."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        from cli_score_time import write_study
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    config = write_study(tmp_path, 60, 8, "plackett_luce")
    done, modules = imported_by("-m", "bws", "score", "--config", str(config), "--ranks")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Scored 60 items" in done.stdout and "Ranks with 95% intervals" in done.stdout
    assert "bws.core.annotator_model" in modules  # the import list was read
    loaded = [
        name
        for name in modules
        if name.split(".")[0] == "django" or name.startswith(("scipy.stats", "scipy.optimize"))
    ]
    assert loaded == []
