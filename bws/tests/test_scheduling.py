"""When scoring runs: within SCORING_MAX_STALENESS of an answer while answers keep coming,
one queued run per scheme whatever triggers it, one lab's turn at a time on the scoring
queue, and manual requests deduplicated and limited per project.

Time is a clock the test moves (django.utils.timezone.now), and the scoring worker is the
task function called for each message in the order the broker would hand them out."""

from datetime import timedelta

import pytest
from django.conf import settings
from django.core.cache import cache
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from annotation.answers import submit_answers
from annotation.queue import next_unit
from bws import scheduling, services, tasks
from bws.models import ScoreRun, ScoringState
from projects.models import Membership
from projects.services import import_project
from projects.tests.factories import LabFactory, UserFactory

from .test_runs import quiet, sent, study  # noqa: F401  (fixtures)

pytestmark = pytest.mark.django_db
SCHEME = "overall_quality"


class Clock:
    """timezone.now() as the test sets it."""

    def __init__(self, start):
        self.now = start

    def __call__(self):
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@pytest.fixture
def clock(monkeypatch):
    fake = Clock(timezone.now())
    monkeypatch.setattr(timezone, "now", fake)
    return fake


def answer(project, user) -> bool:
    """One BWS answer by ``user`` (False when the queue has no unit left for them)."""
    unit = next_unit(project=project, user=user)
    if unit is None:
        return False
    items = sorted(unit.bws_tuple.item_ids)
    answers = {SCHEME: {"best": items[0], "worst": items[-1]}}
    submit_answers(project=project, user=user, unit_id=unit.pk, answers=answers)
    return True


def work(sent, done=None) -> list[int]:  # noqa: F811
    """The scoring worker: takes the run messages in the order they were sent (including
    those sent while it works) and runs each; the run ids in the order it ran them."""
    done = [] if done is None else done
    while True:
        waiting = [c[1][0] for c in sent if c[0] == scheduling.SCORE_RUN_TASK]
        todo = [run_id for run_id in waiting if run_id not in done]
        if not todo:
            return done
        done.append(todo[0])
        tasks.score_run_task(todo[0])


def keep_answering(project, users, ticks, sent, clock, capture) -> list:  # noqa: F811
    """One answer per catch-up tick (users in turn), the catch-up and the worker after each;
    the times of the answers stored."""
    answered = []
    for tick in range(ticks):
        with capture(execute=True):
            if answer(project, users[tick % len(users)]):
                answered.append(clock.now)
        tasks.catch_up_task()
        work(sent)
        clock.advance(settings.SCORING_CHECK_INTERVAL)
    return answered


def score_messages(sent) -> list[int]:  # noqa: F811
    return [c[1][0] for c in sent if c[0] == scheduling.SCORE_RUN_TASK]


def test_a_scheme_is_rescored_within_the_bound_while_answers_keep_coming(
    study,  # noqa: F811
    sent,  # noqa: F811
    clock,
    django_capture_on_commit_callbacks,
):
    project = import_project(config_path=study / "config.yaml", slug="mt").project
    users = [UserFactory(username=f"u{n}") for n in range(6)]
    bound = settings.SCORING_MAX_STALENESS
    # An answer every catch-up tick for 200 s: the quiet gap that ends a session never comes.
    answered = keep_answering(project, users, 40, sent, clock, django_capture_on_commit_callbacks)
    assert len(answered) >= 35
    runs = list(ScoreRun.objects.filter(project=project).order_by("started_at"))
    assert all(run.status == "ok" for run in runs)
    starts = [run.started_at for run in runs]
    for at in answered:
        first = next((start for start in starts if start >= at), None)
        if first is None:  # answered after the last run started: not yet overdue
            assert (clock.now - at).total_seconds() < bound
        else:
            assert (first - at).total_seconds() <= bound
    assert len(runs) >= 3
    # Every run read answers its predecessor had not: none was redundant.
    counts = [run.n_judgments for run in runs]
    assert counts == sorted(set(counts))


def test_runs_that_take_time_start_early_enough_to_finish_within_the_bound(
    study,  # noqa: F811
    sent,  # noqa: F811
    clock,
    monkeypatch,
    django_capture_on_commit_callbacks,
):
    """A run of 15 s (a busy host): once one run has shown how long runs take, the next
    starts that much earlier, so every answer is in finished scores within the bound."""
    project = import_project(config_path=study / "config.yaml", slug="mt").project
    users = [UserFactory(username=f"u{n}") for n in range(6)]
    bound, duration = settings.SCORING_MAX_STALENESS, 15.0
    compute = services.score_everything

    def slow(*args, **kwargs):
        clock.advance(duration)
        return compute(*args, **kwargs)

    monkeypatch.setattr(services, "score_everything", slow)
    answered = keep_answering(project, users, 60, sent, clock, django_capture_on_commit_callbacks)
    runs = list(ScoreRun.objects.filter(project=project).order_by("started_at"))
    assert len(runs) >= 4 and all(run.status == "ok" for run in runs)
    assert all((r.finished_at - r.started_at).total_seconds() >= duration for r in runs)
    late = []
    for at in answered:
        if at < runs[0].finished_at:
            continue  # before the first run no duration is known: the bound plus one run
        covering = next((r for r in runs if r.started_at >= at), None)
        if covering is None:
            assert (clock.now - at).total_seconds() < bound
        elif (covering.finished_at - at).total_seconds() > bound:
            late.append((covering.finished_at - at).total_seconds())
    assert late == []


def test_many_triggers_give_one_queued_run_which_reads_the_answers_as_of_its_start(
    study,  # noqa: F811
    sent,  # noqa: F811
    django_capture_on_commit_callbacks,
):
    project = import_project(config_path=study / "config.yaml", slug="mt").project
    first, second = UserFactory(username="first"), UserFactory(username="second")
    with django_capture_on_commit_callbacks(execute=True):
        for _ in range(5):
            answer(project, first)
    quiet(project)
    assert tasks.catch_up_task() == 1
    queued = ScoreRun.objects.get()
    # Answers keep coming while the run waits for the worker; every trigger fires.
    with django_capture_on_commit_callbacks(execute=True):
        for _ in range(3):
            answer(project, second)
    tasks.recompute_project_task(project.pk, force=True)  # a logout
    quiet(project)
    tasks.catch_up_task()  # a session's end
    scheduling.note_answers(project.pk)  # an exclusion changes the answers that count
    quiet(project)
    tasks.catch_up_task()
    asked, created = scheduling.ask_for_run(  # a manager's request
        project=project, scheme=SCHEME, trigger=ScoreRun.Trigger.MANUAL
    )
    assert (asked.pk, created) == (queued.pk, False)
    assert list(ScoreRun.objects.values_list("pk", flat=True)) == [queued.pk]
    assert score_messages(sent) == [queued.pk]
    assert work(sent) == [queued.pk]
    assert ScoreRun.objects.get().n_judgments == 8  # the answers stored before it started
    # They were read: the next session's end finds nothing to score again.
    quiet(project)
    assert tasks.catch_up_task() == 0
    assert ScoreRun.objects.count() == 1


def test_answers_after_a_run_started_are_scored_by_the_next(
    study,  # noqa: F811
    sent,  # noqa: F811
    django_capture_on_commit_callbacks,
):
    project = import_project(config_path=study / "config.yaml", slug="mt").project
    user = UserFactory(username="ada")
    with django_capture_on_commit_callbacks(execute=True):
        answer(project, user)
    quiet(project)
    tasks.catch_up_task()
    run = ScoreRun.objects.get()
    # Started, then an answer arrives before it finishes: that one is unscored.
    ScoreRun.objects.filter(pk=run.pk).update(
        status="running", started_at=timezone.now() - timedelta(seconds=1)
    )
    services.note_run_started(run, timezone.now() - timedelta(seconds=1))
    with django_capture_on_commit_callbacks(execute=True):
        answer(project, user)
    state = ScoringState.objects.get(project=project)
    assert state.dirty and state.unscored_since is not None
    quiet(project)
    assert tasks.catch_up_task() == 1  # one queued beside the running one
    assert ScoreRun.objects.filter(status="queued").count() == 1


def test_a_second_lab_is_not_stuck_behind_the_first_labs_backlog(
    study,  # noqa: F811
    sent,  # noqa: F811
    django_capture_on_commit_callbacks,
):
    lab_a, lab_b = LabFactory(), LabFactory()
    busy = import_project(config_path=study / "config.yaml", slug="busy", lab=lab_a).project
    other = import_project(config_path=study / "config.yaml", slug="other", lab=lab_b).project
    with django_capture_on_commit_callbacks(execute=True):
        for project in (busy, other):
            for n in range(2):
                answer(project, UserFactory(username=f"{project.slug}{n}"))
    backlog = [
        services.request_run(project=busy, scheme=SCHEME, bootstrap=0, wait_turn=True)
        for _ in range(40)
    ]
    for run in backlog:
        assert scheduling.queue_run(run)
    mine, created = scheduling.ask_for_run(
        project=other, scheme=SCHEME, trigger=ScoreRun.Trigger.MANUAL, bootstrap=0
    )
    assert created and scheduling.queue_run(mine)
    # The broker holds one run of the busy lab, then the other lab's: not 40 before it.
    assert score_messages(sent) == [backlog[0].pk, mine.pk]
    done = []
    for _ in range(2):  # the worker takes two messages
        done.append(score_messages(sent)[len(done)])
        tasks.score_run_task(done[-1])
    assert done == [backlog[0].pk, mine.pk]
    assert ScoreRun.objects.get(pk=mine.pk).status == "ok"
    # The busy lab's backlog goes on one run at a time, in order.
    assert work(sent, done)[2:5] == [run.pk for run in backlog[1:4]]


@pytest.fixture
def manager_api(study):  # noqa: F811
    project = import_project(config_path=study / "config.yaml", slug="mt").project
    user = UserFactory(username="boss")
    Membership.objects.create(user=user, project=project, role="manager")
    client = APIClient()
    client.force_authenticate(user)
    cache.clear()
    return client


def test_a_second_request_returns_the_queued_run_and_requests_are_limited_per_project(
    manager_api,
    sent,  # noqa: F811
    settings,
):
    settings.SCORING_MANUAL_RUNS_PER_HOUR = 2
    url = "/api/v1/projects/mt/scores/"
    first = manager_api.post(url, {"scheme": SCHEME}, format="json")
    again = manager_api.post(url, {"scheme": SCHEME}, format="json")
    assert first.status_code == again.status_code == 202
    assert again.json()["id"] == first.json()["id"]
    # Asking for another method while it waits sets the queued run to it: still one run.
    other = manager_api.post(url, {"scheme": SCHEME, "method": "counting"}, format="json")
    assert other.json()["id"] == first.json()["id"] and other.json()["method"] == "counting"
    assert ScoreRun.objects.count() == 1
    ScoreRun.objects.update(status="ok")
    second = manager_api.post(url, {"scheme": SCHEME}, format="json")
    assert second.status_code == 202 and second.json()["id"] != first.json()["id"]
    ScoreRun.objects.update(status="ok")
    refused = manager_api.post(url, {"scheme": SCHEME}, format="json")
    assert refused.status_code == 429
    assert int(refused["Retry-After"]) > 0
    assert "SCORING_MANUAL_RUNS_PER_HOUR" in refused.json()["detail"]
    assert ScoreRun.objects.count() == 2  # the refusal changed nothing


def test_the_dashboard_says_how_old_the_scores_are(
    study,  # noqa: F811
    sent,  # noqa: F811
    client,
    django_capture_on_commit_callbacks,
):
    project = import_project(config_path=study / "config.yaml", slug="mt").project
    with django_capture_on_commit_callbacks(execute=True):
        answer(project, UserFactory(username="ada"))
    quiet(project)
    tasks.catch_up_task()
    work(sent)
    with django_capture_on_commit_callbacks(execute=True):
        answer(project, UserFactory(username="bob"))
    boss = UserFactory(username="boss")
    Membership.objects.create(user=boss, project=project, role="manager")
    client.force_login(boss)
    html = client.get(reverse("bws-dashboard", args=["mt"])).content.decode()
    assert "Age of these scores" in html
    assert "A run that reads it starts at the latest at" in html
    assert f"at most {settings.SCORING_MAX_STALENESS:.0f} s after an answer" in html


def test_the_dashboards_rescore_button_is_limited_per_project_too(
    study,  # noqa: F811
    sent,  # noqa: F811
    client,
    settings,
):
    settings.SCORING_MANUAL_RUNS_PER_HOUR = 1
    cache.clear()
    project = import_project(config_path=study / "config.yaml", slug="mt").project
    boss = UserFactory(username="boss")
    Membership.objects.create(user=boss, project=project, role="manager")
    client.force_login(boss)
    url = reverse("bws-rescore", args=["mt"])
    assert client.post(url, {"scheme": SCHEME}).status_code == 302
    assert client.post(url, {"scheme": SCHEME}).status_code == 302  # the queued run
    ScoreRun.objects.update(status="ok")
    refused = client.post(url, {"scheme": SCHEME})
    assert refused.status_code == 429 and int(refused["Retry-After"]) > 0
    assert "SCORING_MANUAL_RUNS_PER_HOUR" in refused.content.decode()
    assert ScoreRun.objects.count() == 1
