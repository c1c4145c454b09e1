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

from annotation.annotation_files import write_export
from annotation.answers import submit_answers
from annotation.queue import next_unit
from bws import adaptive, scheduling, services, tasks
from bws.models import ItemScore, ScoreRun, ScoringState
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


def test_a_worker_run_stores_exactly_what_a_foreground_run_stores(study):
    # The worker's task and the command line share one computation; the numbers, the
    # stats text and the output file must not depend on which one ran it.
    project = import_project(config_path=study / "config.yaml", slug="mt").project
    annotate(project, ["overall_quality"], n_users=3, per_user=30)
    foreground = services.execute_run(
        services.request_run(project=project, scheme="overall_quality", bootstrap=100).pk
    )
    queued = services.request_run(project=project, scheme="overall_quality", bootstrap=100)
    assert tasks.score_run_task(queued.pk) == "ok"
    background = ScoreRun.objects.get(pk=queued.pk)

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

    def record(name, *args, countdown=0, **kwargs):
        calls.append((name, args, kwargs, countdown))
        return True

    monkeypatch.setattr(scheduling, "send_task", record)
    return calls


def quiet(project, seconds=None):
    """Move the project's last answer back by the session gap (or `seconds`)."""
    ago = seconds if seconds is not None else settings.SCORING_SESSION_GAP + 1
    ScoringState.objects.filter(project=project).update(
        last_answer_at=timezone.now() - timedelta(seconds=ago)
    )


def test_answers_in_a_burst_mark_the_project_and_send_nothing(
    study, sent, django_capture_on_commit_callbacks
):
    # A submit never waits on the broker: it only marks the project for the catch-up.
    project = import_project(config_path=study / "config.yaml", slug="mt").project
    with django_capture_on_commit_callbacks(execute=True):
        annotate(project, ["overall_quality"], n_users=2, per_user=10)
    assert sent == []
    state = ScoringState.objects.get(project=project)
    assert state.dirty and state.last_answer_at is not None


def test_the_catch_up_waits_for_the_session_gap_then_queues_one_run_per_scheme(
    study, sent, django_capture_on_commit_callbacks
):
    project = import_project(config_path=study / "config.yaml", slug="mt").project
    with django_capture_on_commit_callbacks(execute=True):
        annotate(project, ["overall_quality"], n_users=1, per_user=5)
    assert tasks.catch_up_task() == 0  # answers a moment ago: the session goes on
    assert tasks.recompute_project_task(project.pk) == "waiting"
    assert sent == []
    quiet(project)
    assert tasks.catch_up_task() == 1
    assert [c[0] for c in sent].count("bws.score_run") == 1
    assert all(c[3] == 0 for c in sent)  # no delayed message is held by the broker
    run = ScoreRun.objects.get()
    assert (run.status, run.trigger, run.method) == ("queued", "auto", "bradley_terry")
    assert not ScoringState.objects.get(project=project).dirty
    assert tasks.catch_up_task() == 0  # queued once
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
    assert tasks.recompute_project_task(project.pk, force=True) == "queued 1 runs"


@pytest.fixture
def broker_down(monkeypatch):
    """send_task as it behaves with the broker unreachable; `.up()` brings it back."""
    calls = []

    class Broker:
        down = True

        def up(self):
            self.down = False

    broker = Broker()

    def send(name, *args, countdown=0, **kwargs):
        calls.append(name)
        return not broker.down

    monkeypatch.setattr(scheduling, "send_task", send)
    broker.calls = calls
    return broker


def test_a_run_that_cannot_be_queued_is_retried_once_the_broker_is_back(
    study, broker_down, django_capture_on_commit_callbacks
):
    project = import_project(config_path=study / "config.yaml", slug="mt").project
    with django_capture_on_commit_callbacks(execute=True):
        annotate(project, ["overall_quality"], n_users=1, per_user=5)
    quiet(project)
    assert tasks.catch_up_task() == 1
    waiting = ScoreRun.objects.get()
    assert waiting.status == "queued" and waiting.dispatched_at is None  # not sent: kept
    state = ScoringState.objects.get(project=project)
    assert state.dirty and state.scheduled_at is None  # the next catch-up tries again
    broker_down.up()
    assert tasks.catch_up_task() == 1
    run = ScoreRun.objects.get()  # the same run, sent now
    assert run.pk == waiting.pk and run.status == "queued" and run.dispatched_at is not None
    assert not ScoringState.objects.get(project=project).dirty


def test_a_run_left_running_by_a_dead_worker_is_queued_again_and_scored(study, sent):
    project = import_project(config_path=study / "config.yaml", slug="mt").project
    annotate(project, ["overall_quality"], n_users=2, per_user=10)
    run = services.request_run(project=project, scheme="overall_quality", bootstrap=0)
    live = services.request_run(project=project, scheme="overall_quality", bootstrap=0)
    ScoreRun.objects.filter(pk__in=[run.pk, live.pk]).update(
        status="running", started_at=timezone.now(), attempts=1
    )
    # a worker starts; another live worker reports `live` as its current task
    assert scheduling.recover_runs_without_worker({live.pk}) == 1
    run.refresh_from_db()
    assert run.status == "queued" and "worker stopped" in run.error
    assert ScoreRun.objects.get(pk=live.pk).status == "running"
    assert sent[-1][:2] == ("bws.score_run", (run.pk,))
    assert tasks.score_run_task(run.pk) == "ok"
    run.refresh_from_db()
    assert run.n_judgments == 20 and run.attempts == 2


def test_a_run_that_keeps_killing_its_worker_is_marked_failed(study, sent):
    project = import_project(config_path=study / "config.yaml", slug="mt").project
    run = services.request_run(project=project, scheme="overall_quality", bootstrap=0)
    ScoreRun.objects.filter(pk=run.pk).update(
        status="running", started_at=timezone.now(), attempts=settings.SCORING_RUN_ATTEMPTS
    )
    assert scheduling.recover_runs_without_worker(set()) == 0
    run.refresh_from_db()
    assert run.status == "failed" and "worker stopped" in run.error
    assert sent == []


def test_the_catch_up_requeues_a_run_running_past_the_run_timeout(study, sent, settings):
    project = import_project(config_path=study / "config.yaml", slug="mt").project
    run = services.request_run(project=project, scheme="overall_quality", bootstrap=0)
    long_ago = timezone.now() - timedelta(seconds=settings.SCORING_RUN_TIMEOUT + 5)
    ScoreRun.objects.filter(pk=run.pk).update(status="running", started_at=long_ago, attempts=1)
    tasks.catch_up_task()
    assert ScoreRun.objects.get(pk=run.pk).status == "queued"
    assert ("bws.score_run", (run.pk,)) in [c[:2] for c in sent]
    # the timeout is minutes, tied to the hard time limit: never an hour
    assert settings.SCORING_RUN_TIMEOUT < 3600
    assert settings.SCORING_RUN_TIMEOUT > settings.CELERY_TASK_TIME_LIMIT


def test_a_run_whose_message_was_lost_is_sent_again_once_per_period(study, sent):
    from django.core.cache import cache

    project = import_project(config_path=study / "config.yaml", slug="mt").project
    run = services.request_run(project=project, scheme="overall_quality", bootstrap=0)
    ScoreRun.objects.filter(pk=run.pk).update(
        dispatched_at=timezone.now() - timedelta(seconds=settings.SCORING_SCHEDULE_STALE + 1)
    )
    cache.clear()
    tasks.catch_up_task()
    tasks.catch_up_task()
    assert [c[:2] for c in sent] == [("bws.score_run", (run.pk,))]
    assert tasks.score_run_task(run.pk) == "ok"
    assert tasks.score_run_task(run.pk) == "ok"  # a duplicate finds the work done


def test_scoring_tasks_go_to_the_scoring_queue_and_the_rest_stays_on_the_default():
    from config.celery import app

    router = app.amqp.router
    assert router.route({}, "bws.score_run")["queue"].name == "scoring"
    assert router.route({}, "agreement.compute_report")["queue"].name == "scoring"
    for name in ("bws.catch_up", "bws.recompute_project", "bws.design_summary"):
        assert router.route({}, name)["queue"].name == "celery"


def test_work_queued_by_name_goes_to_the_bws_task_of_that_name():
    # scheduling and adaptive queue by the registered name, without importing bws.tasks.
    from config.celery import app

    queued = {
        scheduling.SCORE_RUN_TASK: tasks.score_run_task,
        scheduling.RECOMPUTE_PROJECT_TASK: tasks.recompute_project_task,
        adaptive.DESIGN_BATCH_TASK: tasks.design_batch_task,
    }
    for name, task in queued.items():
        assert task.name == name and app.tasks[name].name == name


def test_the_broker_takes_back_an_unacknowledged_message_within_minutes():
    # Only checked where Redis is configured: the embedded broker has no such timeout.
    options = settings.CELERY_BROKER_TRANSPORT_OPTIONS
    if "visibility_timeout" in options:
        assert 60 <= options["visibility_timeout"] <= 600
