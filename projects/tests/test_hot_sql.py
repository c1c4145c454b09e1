"""The queue's hand-written statements (projects/hot_sql.py) give what the ORM gives: the
same access decisions as selectors.visible_projects, and model instances equal, field by
field, to those the ORM loads."""

import pytest
from django.contrib.auth.models import AnonymousUser
from django.db import connection
from django.http import Http404
from django.test.utils import CaptureQueriesContext

from projects import access, hot_sql, selectors
from projects.models import Lab, Project
from projects.tests.factories import (
    LabMembershipFactory,
    MembershipFactory,
    ProjectFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db


def same_fields(a, b) -> None:
    assert type(a) is type(b)
    for field in type(a)._meta.concrete_fields:
        assert getattr(a, field.attname) == getattr(b, field.attname), field.name


def test_access_in_one_statement_decides_as_the_visible_projects_rule():
    lab = LabMembershipFactory(is_admin=False).lab
    closed = ProjectFactory(lab=lab, allow_all_users=False, config={"nested": {"a": [1, 2]}})
    opened = ProjectFactory(lab=lab, allow_all_users=True)
    other_lab = ProjectFactory(allow_all_users=False)
    member = MembershipFactory(project=closed).user
    admin = LabMembershipFactory(lab=lab, is_admin=True).user
    plain_lab_member = LabMembershipFactory(lab=lab, is_admin=False).user
    staff = UserFactory(is_staff=True)
    outsider = UserFactory()
    seen = 0
    for user in (member, admin, plain_lab_member, staff, outsider):
        visible = set(selectors.visible_projects(user).values_list("slug", flat=True))
        for project in (closed, opened, other_lab):
            if project.slug in visible:
                seen += 1
                with CaptureQueriesContext(connection) as asked:
                    got = access.visible_project_or_404(user, project.slug)
                    assert got.lab.slug == project.lab.slug  # loaded with it
                assert len(asked) == 1
                same_fields(got, Project.objects.get(pk=project.pk))
                same_fields(got.lab, Lab.objects.get(pk=project.lab_id))
            else:
                with pytest.raises(Http404):
                    access.visible_project_or_404(user, project.slug)
        with pytest.raises(Http404):
            access.visible_project_or_404(user, "no-such-project")
    assert seen == 2 + 2 + 1 + 3 + 1  # every branch of the rule was taken
    with pytest.raises(Http404):
        access.visible_project_or_404(AnonymousUser(), opened.slug)


def test_a_loaded_row_converts_json_dates_and_booleans_as_the_orm_does():
    project = ProjectFactory(allow_all_users=True, config={"k": [1, {"x": None}], "t": "é"})
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {hot_sql.columns(Project, 'p')} FROM projects_project p WHERE p.id = %s",
            [project.pk],
        )
        loaded = hot_sql.load(Project, cursor.fetchone())
    same_fields(loaded, Project.objects.get(pk=project.pk))
    assert loaded.allow_all_users is True
    assert loaded.created_at.tzinfo is not None
    assert not loaded._state.adding
    assert hot_sql.load(Project, [None] * hot_sql.width(Project)) is None


def test_a_token_is_read_with_its_user_and_refused_once_revoked_or_inactive():
    from django.test import Client

    from labs.tokens import issue_token

    user = UserFactory()
    token, key = issue_token(user=user)
    client = Client(HTTP_AUTHORIZATION=f"Token {key}")
    with CaptureQueriesContext(connection) as asked:
        assert client.get("/api/v1/projects/").status_code == 200
    first = asked.captured_queries[0]["sql"]
    assert "knox_authtoken" in first and "auth_user" in first  # token and user at once
    wrong = Client(HTTP_AUTHORIZATION=f"Token {key[:-4]}{'0000' if key[-4:] != '0000' else '1111'}")
    assert wrong.get("/api/v1/projects/").status_code == 401
    user.is_active = False
    user.save()
    assert client.get("/api/v1/projects/").status_code == 401
    user.is_active = True
    user.save()
    assert client.get("/api/v1/projects/").status_code == 200
    token.delete()  # revoked: refused on the very next request
    assert client.get("/api/v1/projects/").status_code == 401


def test_an_answer_comes_back_as_the_output_serializer_gives_it(tmp_path):
    import json

    from django.test import Client
    from rest_framework.renderers import JSONRenderer

    from annotation.api import AnnotationOutputSerializer
    from annotation.models import Annotation
    from labs.tokens import issue_token
    from projects.models import Membership
    from projects.services import import_project

    (tmp_path / "d.jsonl").write_text(
        "".join(f'{{"id": "i{n}", "text": "Text {n}"}}\n' for n in range(8))
    )
    (tmp_path / "c.yaml").write_text(
        'annotation_task_name: T\ntask_dir: "."\ndata_files: [d.jsonl]\n'
        "item_properties: {id_key: id, text_key: text}\n"
        "bws_config: {tuple_size: 4, min_item_appearances: 1, seed: 1}\n"
        "annotation_schemes:\n"
        "  - {annotation_type: bws, name: quality, description: Q, tuple_size: 4}\n"
        "  - {annotation_type: bws, name: fluency, description: F, tuple_size: 4}\n"
    )
    project = import_project(config_path=tmp_path / "c.yaml", slug="hot").project
    user = UserFactory()
    Membership.objects.create(user=user, project=project, role=Membership.Role.ANNOTATOR)
    client = Client(HTTP_AUTHORIZATION=f"Token {issue_token(user=user)[1]}")
    unit = client.post("/api/v1/projects/hot/queue/next/").json()
    ids = [item["id"] for item in unit["items"]]
    body = {
        "unit": unit["id"],
        "annotations": {
            "quality": {"best": ids[0], "worst": ids[1]},
            "fluency": {"best": ids[2], "worst": ids[3]},
        },
        "client_id": "00000000-0000-4000-8000-000000000001",
        "time_taken_ms": 1234,
    }

    def expected() -> list:
        stored = Annotation.objects.filter(annotator=user).order_by("scheme")
        data = AnnotationOutputSerializer(stored.select_related("unit", "annotator"), many=True)
        return json.loads(JSONRenderer().render(data.data))

    for code in (201, 200):  # the first answer, then its retry
        response = client.post("/api/v1/projects/hot/annotations/", body, "application/json")
        assert response.status_code == code
        assert response.json() == expected()
        assert [list(a) for a in response.json()] == [list(a) for a in expected()]
    body["client_id"] = "00000000-0000-4000-8000-000000000002"  # a changed answer
    body["annotations"]["quality"] = {"best": ids[1], "worst": ids[0]}
    response = client.post("/api/v1/projects/hot/annotations/", body, "application/json")
    assert response.status_code == 201
    assert response.json() == expected()
    assert [a["value"] for a in response.json()][1] == {"best": ids[1], "worst": ids[0]}


def test_an_answer_to_a_unit_id_beyond_any_key_is_no_such_unit(tmp_path):
    from annotation.answers import submit_answers
    from projects.validation import AnswerError

    project = ProjectFactory()
    for unit_id in (10**30, -(10**30), 2**63):
        with pytest.raises(AnswerError) as refused:
            submit_answers(project=project, user=UserFactory(), unit_id=unit_id, answers={})
        assert "unit" in refused.value.errors
