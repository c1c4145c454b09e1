"""An adaptive study driven through the platform's queue: annotators never hear "nothing to
do" while a tuple that keeps the design rules could still be added, and every stored batch
keeps the rules. The rules are checked here without the adaptive module."""

import itertools

import numpy as np
import pytest
from django.core.cache import cache

from annotation.queue import next_unit
from bws import adaptive
from bws.core import adaptive as core
from bws.models import BwsTuple, TupleBatch
from bws.tests.test_adaptive_platform import answer, run_now, write_study
from projects.services import import_project
from projects.tests.factories import UserFactory

pytestmark = pytest.mark.django_db

SIZE = 4
BOUND = 8

BLOCK = """\
      adaptive:
        initial_appearances: 4
        batch_tuples: {batch}
        max_appearances: 8
        ready_margin: {margin}
        strategy: {strategy}
"""


@pytest.fixture(autouse=True)
def no_pending_design():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def inline_tasks(monkeypatch):
    """The batch task runs at once, as a worker would run it."""
    monkeypatch.setattr(adaptive, "send_task", run_now)


def make_project(tmp_path, settings, *, n_items=40, batch=12, margin=6, strategy="adaptive"):
    settings.PROJECT_FILES_ROOT = tmp_path / "projects"
    block = BLOCK.format(batch=batch, margin=margin, strategy=strategy)
    config, truth = write_study(
        tmp_path / f"study-{strategy}", adaptive_block=block, n_items=n_items
    )
    project = import_project(config_path=config, slug=f"q-{strategy}").project
    project.truth = truth
    return project


def stored(project, batch=None):
    tuples = BwsTuple.objects.filter(project=project).order_by("position")
    if batch is not None:
        tuples = tuples.filter(batch=batch)
    rows = list(tuples.values_list("unit__item_indices", flat=True))
    return np.asarray(rows, dtype=np.int64).reshape(-1, SIZE)


def facts(rows, n):
    """Appearances, seats per position and the pairs met of a design."""
    appearances = np.bincount(rows.ravel(), minlength=n)
    seats = np.zeros((n, SIZE), dtype=np.int64)
    for p in range(SIZE):
        np.add.at(seats[:, p], rows[:, p], 1)
    met = {tuple(sorted(pair)) for row in rows.tolist() for pair in itertools.combinations(row, 2)}
    return appearances, seats, met


def a_tuple_that_fits(rows, n):
    """Some tuple the rules would still allow after ``rows`` (items below the bound, no
    pair met before, each item in a position it has sat in least), by brute force; None."""
    appearances, seats, met = facts(rows, n)
    under = [i for i in range(n) if appearances[i] < BOUND]
    for items in itertools.combinations(under, SIZE):
        if any(pair in met for pair in itertools.combinations(items, 2)):
            continue
        for order in itertools.permutations(range(SIZE)):
            if all(seats[i, q] == seats[i].min() for i, q in zip(items, order, strict=True)):
                return items
    return None


def check_batch(before, batch, n):
    """The design rules for one batch against the design before it."""
    appearances, seats, met = facts(before, n)
    count = np.bincount(batch.ravel(), minlength=n)
    assert count.max() <= 1, "an item twice in one batch"
    assert (appearances + count).max() <= BOUND, "an item above its bound"
    pairs = [tuple(sorted(p)) for row in batch.tolist() for p in itertools.combinations(row, 2)]
    assert len(set(pairs)) == len(pairs), "a pair twice within the batch"
    assert not met & set(pairs), "a pair met again"
    for p in range(SIZE):
        # each item seated where it has sat least so far
        assert (seats[batch[:, p], p] == seats[batch[:, p]].min(axis=1)).all()


def drive(project, django_capture_on_commit_callbacks, *, annotators=4, seed=0, limit=3000):
    """Annotators who hold a unit for a while: each step one of them, at random, either asks
    for work or answers what they hold, so several units are out at once. Returns the
    number of answers and, at every "nothing to do", the stored design at that moment."""
    rng = np.random.default_rng(seed)
    users = [UserFactory(username=f"q{k}") for k in range(annotators)]
    held = {}
    idle = set()
    refusals = []
    answers = 0
    for _ in range(limit):
        if len(idle) == annotators:
            return answers, refusals
        user = users[rng.integers(annotators)]
        if user.pk in held and rng.random() < 0.5:
            with django_capture_on_commit_callbacks(execute=True):
                answer(project, user, held.pop(user.pk), rng)
            answers += 1
            continue
        unit = next_unit(project=project, user=user)
        if unit is None:
            idle.add(user.pk)
            # only after everything handed out is answered may the others hear it too
            refusals.append((stored(project), len(held)))
        else:
            idle.discard(user.pk)
            held[user.pk] = unit
    raise AssertionError("the study did not end")


@pytest.mark.parametrize("strategy", ["adaptive", "iterative"])
def test_the_queue_has_no_gap_and_every_batch_keeps_the_rules(
    tmp_path, settings, inline_tasks, django_capture_on_commit_callbacks, strategy
):
    project = make_project(tmp_path, settings, strategy=strategy)
    n = 40
    answers, refusals = drive(project, django_capture_on_commit_callbacks)
    rows = stored(project)
    assert answers == rows.shape[0]
    assert refusals, "the study ended"
    for design, _ in refusals:
        # "nothing to do" only when no further tuple could keep the rules
        assert a_tuple_that_fits(design, n) is None
    batches = list(TupleBatch.objects.filter(project=project).order_by("number"))
    assert len(batches) >= 4
    before = stored(project, batches[0])
    for batch in batches[1:]:
        mine = stored(project, batch)
        assert mine.shape[0] == batch.n_tuples
        check_batch(before, mine, n)
        before = np.vstack([before, mine])
    # the design went on until the rules, not the designer, stopped it
    appearances = np.bincount(rows.ravel(), minlength=n)
    assert (appearances < BOUND).sum() < n // 2
    assert adaptive.design_finished(project)


def test_an_empty_adaptive_batch_is_topped_up_and_does_not_end_the_design(
    tmp_path, settings, inline_tasks, django_capture_on_commit_callbacks, monkeypatch
):
    """The designer coming back with nothing (as it did for tuples of close items whose
    pairs had all met) no longer ends the study: the top-up fills the batch."""
    monkeypatch.setattr(
        core, "adaptive_batch", lambda u, sd, state, **kw: np.empty((0, SIZE), dtype=np.int64)
    )
    project = make_project(tmp_path, settings)
    answers, refusals = drive(project, django_capture_on_commit_callbacks, seed=1)
    for design, _ in refusals:
        assert a_tuple_that_fits(design, 40) is None
    batches = TupleBatch.objects.filter(project=project, number__gt=0).order_by("number")
    assert [b.n_tuples for b in batches][0] > 0
    assert sum(b.n_tuples for b in batches) == answers - 40


def test_a_short_batch_is_followed_at_once_by_another(
    tmp_path, settings, inline_tasks, django_capture_on_commit_callbacks, monkeypatch
):
    """A batch that leaves the open tuples under the margin is followed by another from the
    same fit in the same request, before the queue runs out."""
    real = core.topped_up
    monkeypatch.setattr(
        core,
        "topped_up",
        lambda rows, *a, batch_tuples, **kw: real(rows, *a, batch_tuples=2, **kw),
    )
    monkeypatch.setattr(
        core, "adaptive_batch", lambda u, sd, state, **kw: np.empty((0, SIZE), dtype=np.int64)
    )
    project = make_project(tmp_path, settings, batch=12, margin=6)
    user = UserFactory(username="solo")
    rng = np.random.default_rng(4)
    for _ in range(30):  # 10 tuples still open: no batch yet
        with django_capture_on_commit_callbacks(execute=True):
            answer(project, user, next_unit(project=project, user=user), rng)
    assert not TupleBatch.objects.filter(project=project, number__gt=0).exists()
    for k in range(7):  # others take 7 at once, without answering yet
        assert next_unit(project=project, user=UserFactory(username=f"o{k}")) is not None
    with django_capture_on_commit_callbacks(execute=True):
        answer(project, user, next_unit(project=project, user=user), rng)
    # 2 tuples were open when the answer asked: batches of 2 until 6 are open
    batches = TupleBatch.objects.filter(project=project, number__gt=0).order_by("number")
    assert [b.n_tuples for b in batches] == [2, 2]
    assert adaptive.open_tuples(project) == 6
    assert len({b.fit_run_id for b in batches}) == 1


def test_units_taken_without_answers_order_the_next_batch(
    tmp_path, settings, inline_tasks, django_capture_on_commit_callbacks
):
    """More annotators than the margin each take a unit before anyone answers: the hand-outs
    alone order the next batch, so the one after the initial design's last unit still
    gets work (with one answer per tuple, 40 items x 4 appearances make 40 tuples)."""
    project = make_project(tmp_path, settings, batch=12, margin=6)
    users = [UserFactory(username=f"h{k}") for k in range(46)]
    given = [next_unit(project=project, user=user) for user in users]
    assert all(unit is not None for unit in given)
    assert TupleBatch.objects.filter(project=project, number__gt=0).exists()
    before = stored(project, TupleBatch.objects.get(project=project, number=0))
    for batch in TupleBatch.objects.filter(project=project, number__gt=0).order_by("number"):
        mine = stored(project, batch)
        check_batch(before, mine, 40)
        before = np.vstack([before, mine])


def test_a_balanced_project_sends_no_design_request_on_hand_out(
    tmp_path, settings, inline_tasks, django_capture_on_commit_callbacks
):
    settings.PROJECT_FILES_ROOT = tmp_path / "projects"
    config, _ = write_study(tmp_path / "plain", adaptive_block="", n_items=40)
    project = import_project(config_path=config, slug="plain").project
    for k in range(12):
        assert next_unit(project=project, user=UserFactory(username=f"b{k}")) is not None
    assert not TupleBatch.objects.filter(project=project, number__gt=0).exists()
    assert not adaptive.after_hand_out(project)
