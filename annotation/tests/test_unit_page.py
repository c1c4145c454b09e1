"""The unit page's and the participant middleware's hand-written statements
(annotation/unit_page.py, crowds.participants._session_participant) give what the ORM's
queries give: the same rows, loaded into equal model instances, and the same counts."""

import time

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotation import selectors as work
from annotation import unit_page
from annotation.answers import submit_answers
from annotation.models import Assignment
from annotation.queue import next_unit
from crowds.models import Participant
from crowds.participants import _session_participant
from projects.models import Membership, Unit
from projects.services import import_project
from projects.tests.factories import UserFactory

pytestmark = pytest.mark.django_db

RECORDS = """task_name: Records
data_files: [d.jsonl]
annotation_schemes:
  - {annotation_type: radio, name: q, description: Polite, labels: [yes_, no_]}
"""
TUPLES = """annotation_task_name: Tuples
task_dir: "."
data_files: [d.jsonl]
item_properties: {id_key: id, text_key: text}
bws_config: {tuple_size: 4, min_item_appearances: 2, seed: 1}
annotation_schemes:
  - {annotation_type: bws, name: quality, description: Best and worst, tuple_size: 4}
num_annotators_per_item: 2
"""


def make(tmp_path, config: str, slug: str, n: int = 12):
    folder = tmp_path / slug
    folder.mkdir()
    (folder / "d.jsonl").write_text(
        "".join(f'{{"id": "{slug}{k}", "text": "Text {k}"}}\n' for k in range(n))
    )
    (folder / "c.yaml").write_text(config)
    return import_project(config_path=folder / "c.yaml", slug=slug).project


def same_fields(a, b) -> None:
    assert type(a) is type(b)
    for field in type(a)._meta.concrete_fields:
        assert getattr(a, field.attname) == getattr(b, field.attname), field.name


def answer(project, user, unit) -> None:
    if unit.item_ids:
        answers = {"quality": {"best": unit.item_ids[0], "worst": unit.item_ids[1]}}
    else:
        answers = {"q": "yes_"}
    submit_answers(project=project, user=user, unit_id=unit.pk, answers=answers)


@pytest.mark.parametrize("config", [RECORDS, TUPLES], ids=["records", "tuples"])
def test_the_unit_with_its_assignment_and_the_standing_are_those_of_the_orm(tmp_path, config):
    project = make(tmp_path, config, "pa")
    other = make(tmp_path, config, "pb")
    user, someone = UserFactory(), UserFactory()
    for p in (project, other):
        for u in (user, someone):
            Membership.objects.create(user=u, project=p, role=Membership.Role.ANNOTATOR)
    # whole records are units with an instance; best-worst tuples have none
    with_instance = Unit.objects.filter(project=project, instance__isnull=False).exists()
    assert with_instance == (config is RECORDS)
    empty = unit_page.standing(project, user)
    assert (empty.completed, empty.latest_unit_id) == (0, None)
    for _ in range(3):  # two answered, one in hand
        unit = next_unit(project=project, user=user)
        if Assignment.objects.filter(annotator=user, status="completed").count() < 2:
            answer(project, user, unit)
    answer(project, someone, next_unit(project=project, user=someone))
    # Answers stored at the same time are ordered by their rows, the latest first.
    Assignment.objects.filter(annotator=user, status="completed").update(
        completed_at=timezone.now()
    )
    held_ids = set(Assignment.objects.filter(annotator=user).values_list("unit_id", flat=True))
    for unit in Unit.objects.filter(project__in=[project, other]):
        with CaptureQueriesContext(connection) as asked:
            got = unit_page.held_unit(project, unit.pk, user)
        assert len(asked) == 1
        orm = (
            Assignment.objects.select_related("unit__instance")
            .filter(unit__project=project, unit_id=unit.pk, annotator=user)
            .first()
        )
        assert (got is None) == (orm is None) == (unit.pk not in held_ids)
        if got is not None:
            same_fields(got, orm)
            same_fields(got.unit, orm.unit)
            assert (got.unit.instance is None) == (orm.unit.instance is None)
            if orm.unit.instance is not None:
                same_fields(got.unit.instance, orm.unit.instance)
    with CaptureQueriesContext(connection) as asked:
        standing = unit_page.standing(project, user)
    assert len(asked) == 1
    assert standing.units == Unit.objects.filter(project=project, shown_number__isnull=True).count()
    completed = work.my_completed_units(project, user)
    assert standing.completed == completed.count() == 2
    assert standing.latest_unit_id == completed.first().unit_id
    in_hand = Assignment.objects.get(annotator=user, project=project, status="reserved").unit
    assert work.previous_answer(project, user, in_hand).unit_id == standing.latest_unit_id
    assert unit_page.completed_count(project, user) == 2
    # The units still open to them: those of the ORM's count, within the limit asked.
    units = Unit.objects.filter(project=project, is_gold=False).count()
    assert standing.open_units == work.open_units_for(project, user, limit=units) == units - 2
    two = unit_page.standing(project, user, open_limit=2).open_units
    assert two == work.open_units_for(project, user, limit=2) == 2
    assert unit_page.completed_count(other, user) == 0
    assert unit_page.completed_count(project, someone) == 1


def test_the_session_participant_is_that_of_the_orm_with_their_membership(tmp_path):
    project = make(tmp_path, RECORDS, "pc")
    user, other = UserFactory(), UserFactory()
    participant = Participant.objects.create(
        project=project, user=user, external_id="x1", params={"STUDY_ID": "s"}
    )
    Membership.objects.create(user=user, project=project, role=Membership.Role.ANNOTATOR)
    with CaptureQueriesContext(connection) as asked:
        got = _session_participant(participant.pk, user)
    assert len(asked) == 1
    orm = Participant.objects.select_related("project").get(pk=participant.pk)
    same_fields(got, orm)
    same_fields(got.project, orm.project)
    assert got.user is user and got.is_member is True
    assert _session_participant(participant.pk, other) is None  # not this user's
    assert _session_participant(participant.pk + 1, user) is None
    assert _session_participant("1", user) is None  # not a key the entry link stores
    Membership.objects.filter(user=user).delete()  # removed by the managers
    assert _session_participant(participant.pk, user).is_member is False


def test_the_units_counted_follow_units_added_and_deleted(tmp_path):
    project = make(tmp_path, TUPLES, "pd")
    user = UserFactory()

    def counted() -> int:
        return Unit.objects.filter(project=project, shown_number__isnull=True).count()

    def asked_for(**kwargs) -> tuple[int, int]:
        with CaptureQueriesContext(connection) as asked:
            units = unit_page.standing(project, user, **kwargs).units
        return units, len(asked)

    assert asked_for() == (counted(), 1)
    assert asked_for() == (counted(), 1)  # the count kept, checked against the last position
    last = Unit.objects.filter(project=project).order_by("-position").first()

    def add(position: int, **fields) -> None:
        Unit.objects.create(
            project=project,
            kind=Unit.Kind.TUPLE,
            external_id=f"tuple_{position + 1:06d}",
            position=position,
            random_rank=position,
            item_ids=last.item_ids,
            item_indices=last.item_indices,
            **fields,
        )

    before = counted()
    add(last.position + 1)  # an adaptive batch's unit
    assert asked_for() == (before + 1, 2)  # counted again
    add(last.position + 2, is_gold=True, shown_number=3)  # a gold unit borrows a number
    assert asked_for() == (before + 1, 2)
    assert asked_for() == (before + 1, 1)
    # A unit deleted by hand (the admin) is counted out once the kept count is too old.
    Unit.objects.filter(project=project, position=0).delete()
    later = time.monotonic() + unit_page.COUNT_SECONDS + 1
    assert asked_for(now=later) == (before, 1)
