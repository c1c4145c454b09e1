"""Scoring runs on the platform: stored scores, the same numbers as file mode, and the
debounced recomputation after annotation sessions (task functions called directly here;
tests/test_background.py runs them through a real worker)."""

import random
import shutil
import subprocess
import sys
from datetime import timedelta
from io import StringIO
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.utils import timezone

from bws import services, tasks
from bws.models import ItemScore, ScoreRun, ScoringState
from projects.annotation_files import write_export
from projects.answers import submit_answers
from projects.queue import next_unit
from projects.services import import_project
from projects.tests.factories import UserFactory

pytestmark = pytest.mark.django_db
ROOT = Path(settings.BASE_DIR)


@pytest.fixture
def study(tmp_path, settings):
    """A copy of the dialect-B example (items within instances, output_file configured);
    the projects' own folders live in tmp_path / "projects"."""
    settings.PROJECT_FILES_ROOT = tmp_path / "projects"
    folder = tmp_path / "mt"
    shutil.copytree(ROOT / "examples" / "mt_tuples", folder)
    (folder / "output").mkdir(exist_ok=True)
    return folder


def annotate(project, schemes, n_users=4, per_user=40, seed=1):
    rng = random.Random(seed)
    for n in range(n_users):
        user = UserFactory(username=f"u{n}")
        for _ in range(per_user):
            unit = next_unit(project=project, user=user)
            if unit is None:
                break
            items = unit.bws_tuple.item_ids
            # a consistent preference (sys_a best ... sys_f worst) with noise
            ranked = sorted(items, key=lambda i: i + str(rng.random() * 0.3))
            answers = {s: {"best": ranked[0], "worst": ranked[-1]} for s in schemes}
            submit_answers(project=project, user=user, unit_id=unit.pk, answers=answers)


def test_run_stores_scores_intervals_reliability_convergence(study, tmp_path):
    project = import_project(config_path=study / "config.yaml", slug="mt").project
    annotate(project, ["overall_quality"])
    run = services.request_run(project=project, scheme="overall_quality", bootstrap=200)
    run = services.execute_run(run.pk)
    assert run.status == "ok" and run.method == "bradley_terry"
    assert run.n_judgments == 160 and run.n_annotators == 4
    items = list(ItemScore.objects.filter(run=run).order_by("rank"))
    assert [i.item_id for i in items][:1] == ["sys_a"] and items[-1].item_id == "sys_f"
    assert all(i.ci_low <= i.score <= i.ci_high for i in items)
    assert run.reliability["mean"] > 0.5 and run.reliability["trials"] == 100
    assert len(run.convergence) == 10 and run.convergence[-1]["spearman"] == pytest.approx(1)
    assert "Schema: overall_quality" in run.stats_text
    # The scheme's output_file, written in the project's own folder, never beside the config.
    written = tmp_path / "projects" / project.storage_folder / "output" / "quality_scores.csv"
    assert not (study / "output" / "quality_scores.csv").exists()
    assert written.read_text().splitlines()[0].startswith("item_id,text,score,ci_low")


@pytest.mark.parametrize("busy", [True, False])
def test_a_paced_run_stores_exactly_what_a_foreground_run_stores(study, monkeypatch, busy):
    # The worker computes in a paced child process (bws/pacing.py); the numbers, the
    # stats text and the output file must not depend on it.
    from bws import pacing

    real = pacing.run_paced
    children = []

    def spy(function, *args, **kwargs):
        kwargs["busy"] = lambda: busy
        stats = kwargs.setdefault("stats", pacing.PaceStats())
        result = real(function, *args, **kwargs)
        children.append(stats)
        return result

    monkeypatch.setattr(pacing, "run_paced", spy)
    project = import_project(config_path=study / "config.yaml", slug="mt").project
    annotate(project, ["overall_quality"], n_users=3, per_user=30)
    runs = []
    for paced in (False, True):
        run = services.request_run(project=project, scheme="overall_quality", bootstrap=100)
        runs.append(services.execute_run(run.pk, paced=paced))
    assert len(children) == 1 and children[0].wall > 0  # only the paced run forked
    foreground, background = runs
    assert background.status == "ok"

    def stored(run):
        return list(
            ItemScore.objects.filter(run=run)
            .order_by("item_index")
            .values_list("item_id", "score", "ci_low", "ci_high", "best", "worst", "rank")
        )

    assert stored(background) == stored(foreground) and len(stored(background)) == 6
    assert background.stats_text == foreground.stats_text
    assert background.reliability == foreground.reliability
    assert background.convergence == foreground.convergence


def test_platform_and_file_mode_give_the_same_scores(study, tmp_path):
    project = import_project(config_path=study / "config.yaml", slug="mt").project
    annotate(project, ["overall_quality"], n_users=3, per_user=30)
    for method in ("counting", "plackett_luce"):
        run = services.request_run(
            project=project, scheme="overall_quality", method=method, bootstrap=100
        )
        run = services.execute_run(run.pk)
        platform = tmp_path / f"platform-{method}.tsv"
        services.write_run_table(run, platform)
        write_export(project, study / "output" / "annotations.jsonl")
        cli = tmp_path / f"cli-{method}.tsv"
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "bws",
                "score",
                "--config",
                str(study / "config.yaml"),
                "--method",
                method,
                "--bootstrap",
                "100",
                "--output",
                str(cli),
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        assert platform.read_text() == cli.read_text()


def test_manage_score_command_prints_stats_and_writes_table(study, tmp_path):
    project = import_project(config_path=study / "config.yaml", slug="mt").project
    annotate(project, ["overall_quality"], n_users=2, per_user=20)
    out = StringIO()
    path = tmp_path / "s.tsv"
    call_command(
        "score",
        "mt",
        "--method",
        "counting",
        "--bootstrap",
        "50",
        "--output",
        str(path),
        stdout=out,
    )
    assert "Score Summary (Counting)" in out.getvalue()
    assert path.read_text().startswith("item_id\ttext\tscore")
    assert ScoreRun.objects.get().trigger == "command"


def test_failed_run_is_marked_and_keeps_the_last_good_one(study, monkeypatch):
    from bws import selectors

    project = import_project(config_path=study / "config.yaml", slug="mt").project
    annotate(project, ["overall_quality"], n_users=2, per_user=10)
    good = services.execute_run(
        services.request_run(project=project, scheme="overall_quality", bootstrap=0).pk
    )

    def boom(*args, **kwargs):
        raise RuntimeError("solver exploded")

    monkeypatch.setattr(services, "_compute", boom)
    bad = services.request_run(project=project, scheme="overall_quality", bootstrap=0)
    with pytest.raises(RuntimeError):
        services.execute_run(bad.pk)
    bad.refresh_from_db()
    assert bad.status == "failed" and "solver exploded" in bad.error
    assert selectors.latest_good_run(project, "overall_quality") == good
    assert selectors.latest_failed_run(project, "overall_quality") == bad


@pytest.fixture
def sent(monkeypatch):
    calls = []

    def record(task, *args, countdown=0, **kwargs):
        calls.append((task.name, args, kwargs, countdown))
        return True

    monkeypatch.setattr(services, "send_task", record)
    return calls


def test_answers_in_a_burst_schedule_one_recomputation(
    study, sent, django_capture_on_commit_callbacks
):
    project = import_project(config_path=study / "config.yaml", slug="mt").project
    with django_capture_on_commit_callbacks(execute=True):
        annotate(project, ["overall_quality"], n_users=2, per_user=10)
    scheduled = [c for c in sent if c[0] == "bws.recompute_project"]
    assert len(scheduled) == 1
    assert scheduled[0][3] == settings.SCORING_SESSION_GAP
    state = ScoringState.objects.get(project=project)
    assert state.dirty and state.scheduled_at is not None


def test_recompute_waits_for_the_session_gap_then_queues_one_run_per_scheme(study, sent):
    project = import_project(config_path=study / "config.yaml", slug="mt").project
    now = timezone.now()
    ScoringState.objects.filter(project=project).update(
        dirty=True, last_answer_at=now, scheduled_at=now
    )
    assert tasks.recompute_project_task(project.pk) == "waiting"
    assert sent[-1][0] == "bws.recompute_project"
    ScoringState.objects.filter(project=project).update(
        last_answer_at=now - timedelta(seconds=settings.SCORING_SESSION_GAP + 1)
    )
    assert tasks.recompute_project_task(project.pk) == "queued 1 runs"
    assert [c[0] for c in sent].count("bws.score_run") == 1
    run = ScoreRun.objects.get()
    assert (run.status, run.trigger, run.method) == ("queued", "auto", "bradley_terry")
    state = ScoringState.objects.get(project=project)
    assert not state.dirty and state.scheduled_at is None
    assert tasks.recompute_project_task(project.pk) == "clean"


def test_logout_scores_without_waiting(study, sent, client):
    project = import_project(config_path=study / "config.yaml", slug="mt").project
    annotate(project, ["overall_quality"], n_users=1, per_user=2)
    ScoringState.objects.update_or_create(
        project=project, defaults={"dirty": True, "last_answer_at": timezone.now()}
    )
    from django.contrib.auth import get_user_model

    client.force_login(get_user_model().objects.get(username="u0"))
    client.post("/accounts/logout/")
    forced = [c for c in sent if c[0] == "bws.recompute_project" and c[2].get("force")]
    assert forced and forced[0][1] == (project.pk,)


def test_catch_up_requeues_dirty_projects(study, sent):
    project = import_project(config_path=study / "config.yaml", slug="mt").project
    ScoringState.objects.filter(project=project).update(dirty=True, last_answer_at=timezone.now())
    assert tasks.catch_up_task() == 1
    assert sent[-1][:2] == ("bws.recompute_project", (project.pk,))
    assert tasks.catch_up_task() == 0  # scheduled now: not queued twice
