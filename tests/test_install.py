"""The installed package: the command lines run from any directory in the venv."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

# The apps the project installs (pyproject's package list), importable from anywhere.
INSTALLED = ["projects", "bws", "agreement", "config"]


def run_outside(tmp_path, *args):
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    return subprocess.run(
        [sys.executable, *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("module", ["bws", "agreement"])
def test_command_line_runs_outside_the_repository(tmp_path, module):
    done = run_outside(tmp_path, "-m", module, "--help")
    assert done.returncode == 0, done.stderr
    assert f"python -m {module}" in done.stdout


def test_every_app_is_installed(tmp_path):
    code = f"import importlib; [importlib.import_module(m) for m in {INSTALLED!r}]"
    done = run_outside(tmp_path, "-c", code)
    assert done.returncode == 0, done.stderr


def test_every_app_of_the_settings_is_installed(tmp_path, settings):
    """A new app of the checkout is missing from pyproject's package list if this fails."""
    root = Path(__file__).resolve().parent.parent
    local = sorted(
        {
            app.split(".")[0]
            for app in settings.INSTALLED_APPS
            if (root / app.split(".")[0]).is_dir()
        }
    )
    code = f"import importlib; [importlib.import_module(m) for m in {local!r}]"
    done = run_outside(tmp_path, "-c", code)
    assert done.returncode == 0, done.stderr
