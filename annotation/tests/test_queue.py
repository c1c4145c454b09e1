"""The queue: strategies, caps, per-user limits, leases, and no double assignment."""

import threading
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection
from django.utils import timezone

from annotation.answers import SubmitRefused, submit_answers
from annotation.models import Annotation, Assignment
from annotation.queue import next_unit
from projects.models import Unit
from projects.services import import_project
from projects.tests.factories import UserFactory

EXAMPLE = Path(settings.BASE_DIR) / "examples" / "mt_bws" / "config.yaml"


def make_project(tmp_path, n_units=12, **queue):
    """A small instance project (radio question) with the queue settings given."""
    lines = "".join(f'{{"id": "u{n:03d}", "text": "text {n}"}}\n' for n in range(n_units))
    (tmp_path / "d.jsonl").write_text(lines)
    extra = "".join(f"{k}: {v}\n" for k, v in queue.items())
    (tmp_path / "c.yaml").write_text(
        "annotation_task_name: Queue test\ndata_files: [d.jsonl]\n"
        "annotation_schemes:\n  - {annotation_type: radio, name: q, description: d, "
        "labels: [yes_, no_]}\n" + extra
    )
    return import_project(config_path=tmp_path / "c.yaml").project


def answer(project, user, unit):
    return submit_answers(project=project, user=user, unit_id=unit.pk, answers={"q": "yes_"})


@pytest.mark.django_db
def test_least_annotated_spreads_work(tmp_path):
    project = make_project(tmp_path, n_units=4)
    users = [UserFactory() for _ in range(4)]
    got = [next_unit(project=project, user=u).external_id for u in users]
    assert sorted(got) == ["u000", "u001", "u002", "u003"]


@pytest.mark.django_db
def test_fixed_order_gives_units_in_file_order(tmp_path):
    project = make_project(tmp_path, n_units=5, assignment_strategy="fixed_order")
    user = UserFactory()
    seen = []
    while (unit := next_unit(project=project, user=user)) is not None:
        seen.append(unit.external_id)
        answer(project, user, unit)
    assert seen == ["u000", "u001", "u002", "u003", "u004"]


@pytest.mark.django_db
def test_random_order_is_seeded_and_not_file_order(tmp_path):
    project = make_project(tmp_path, n_units=30, assignment_strategy="random")
    user = UserFactory()
    seen = []
    while (unit := next_unit(project=project, user=user)) is not None:
        seen.append(unit.external_id)
        answer(project, user, unit)
    assert sorted(seen) == [f"u{n:03d}" for n in range(30)]
    assert seen != sorted(seen)
    order = list(Unit.objects.filter(project=project).order_by("random_rank"))
    assert [u.external_id for u in order] == seen


@pytest.mark.django_db
def test_cap_and_no_unit_twice_to_one_annotator(tmp_path):
    project = make_project(tmp_path, n_units=3, num_annotators_per_item=2)
    users = [UserFactory() for _ in range(4)]
    done = {u.pk: [] for u in users}
    for _ in range(10):
        for user in users:
            unit = next_unit(project=project, user=user)
            if unit is not None:
                assert unit.external_id not in done[user.pk]
                done[user.pk].append(unit.external_id)
                answer(project, user, unit)
    assert sum(len(v) for v in done.values()) == 6
    assert set(Unit.objects.filter(project=project).values_list("completed", flat=True)) == {2}
    assert all(next_unit(project=project, user=u) is None for u in users)


@pytest.mark.django_db
def test_max_annotations_per_user(tmp_path):
    project = make_project(tmp_path, n_units=10, max_annotations_per_user=3)
    user = UserFactory()
    count = 0
    while (unit := next_unit(project=project, user=user)) is not None:
        answer(project, user, unit)
        count += 1
    assert count == 3


@pytest.mark.django_db
def test_next_returns_the_live_reservation_until_answered(tmp_path):
    project = make_project(tmp_path)
    user = UserFactory()
    first = next_unit(project=project, user=user)
    assert next_unit(project=project, user=user) == first
    answer(project, user, first)
    assert next_unit(project=project, user=user) != first


@pytest.mark.django_db
def test_expired_lease_is_reclaimed_for_others(tmp_path):
    project = make_project(tmp_path, n_units=1, num_annotators_per_item=1)
    slow, other = UserFactory(), UserFactory()
    unit = next_unit(project=project, user=slow)
    assert next_unit(project=project, user=other) is None  # the only slot is reserved
    Assignment.objects.filter(annotator=slow).update(
        leased_until=timezone.now() - timedelta(seconds=1)
    )
    assert next_unit(project=project, user=other) == unit
    unit.refresh_from_db()
    assert unit.load == 1
    # the slow annotator's late answer no longer fits: refused, not stored over the cap
    answer(project, other, unit)
    with pytest.raises(SubmitRefused):
        answer(project, slow, unit)
    assert Annotation.objects.filter(unit=unit).count() == 1


@pytest.mark.django_db
def test_late_answer_is_refused_and_the_unit_can_be_taken_again(tmp_path):
    project = make_project(tmp_path, n_units=2, num_annotators_per_item=2)
    user = UserFactory()
    unit = next_unit(project=project, user=user)
    Assignment.objects.filter(annotator=user).update(
        leased_until=timezone.now() - timedelta(minutes=1)
    )
    with pytest.raises(SubmitRefused, match="not reserved for you"):
        answer(project, user, unit)  # expired, even before anyone reclaimed it
    from annotation.queue import reclaim_expired_leases

    assert reclaim_expired_leases(project) == 1
    unit.refresh_from_db()
    assert unit.load == 0
    with pytest.raises(SubmitRefused):
        answer(project, user, unit)
    assert not Annotation.objects.exists()
    # asking the queue again hands the unit back (it still has room), and then it counts
    assert next_unit(project=project, user=user) == unit
    answer(project, user, unit)
    unit.refresh_from_db()
    assert (unit.load, unit.completed) == (1, 1)


def race(project, n_annotators):
    """Annotators in threads, each looping next + submit until the queue is empty."""
    users = [UserFactory(username=f"racer{n}") for n in range(n_annotators)]
    errors = []
    barrier = threading.Barrier(n_annotators)

    def work(user):
        try:
            barrier.wait()
            while True:
                unit = next_unit(project=project, user=user)
                if unit is None:
                    break
                answer(project, user, unit)
        except Exception as exc:  # reported below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=work, args=(u,)) for u in users]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not errors, errors
    return users


def check_invariants(project, cap):
    units = list(Unit.objects.filter(project=project))
    assert all(u.completed == cap and u.load == cap for u in units)
    pairs = list(Annotation.objects.filter(project=project).values_list("unit_id", "annotator_id"))
    assert len(pairs) == len(set(pairs)) == len(units) * cap
    per_unit = {}
    for unit_id, _ in pairs:
        per_unit[unit_id] = per_unit.get(unit_id, 0) + 1
    assert set(per_unit.values()) == {cap}


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_twenty_annotators_race_on_postgresql(tmp_path):
    project = make_project(tmp_path, n_units=50, num_annotators_per_item=2)
    race(project, 20)
    check_invariants(project, cap=2)


@pytest.mark.django_db(transaction=True)
def test_annotators_race_on_sqlite_too(tmp_path, settings):
    if settings.DATABASES["default"]["ENGINE"] != "django.db.backends.sqlite3":
        pytest.skip("the PostgreSQL race test covers this database")
    project = make_project(tmp_path, n_units=20, num_annotators_per_item=2)
    race(project, 6)
    check_invariants(project, cap=2)
