"""The REST API as scripts and model judges use it."""

import uuid
from pathlib import Path

import pytest
from django.conf import settings
from rest_framework.test import APIClient

from annotation.models import Annotation
from projects.models import Membership
from projects.services import import_project
from projects.tests.factories import MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db
EXAMPLE = Path(settings.BASE_DIR) / "examples" / "mt_bws" / "config.yaml"


@pytest.fixture
def project():
    project = import_project(config_path=EXAMPLE, slug="mt").project
    project.allow_all_users = False
    project.save()
    return project


@pytest.fixture
def annotator(project):
    user = UserFactory(username="judge")
    MembershipFactory(user=user, project=project)
    return user


def token_client(username, password="pw-for-tests-123"):
    client = APIClient()
    response = client.post(
        "/api/v1/auth/token/", {"username": username, "password": password}, format="json"
    )
    assert response.status_code == 200, response.content
    client.credentials(HTTP_AUTHORIZATION=f"Token {response.json()['token']}")
    return client


def test_token_needs_the_right_password(annotator):
    response = APIClient().post(
        "/api/v1/auth/token/", {"username": "judge", "password": "nope"}, format="json"
    )
    assert response.status_code == 400
    assert "non_field_errors" in response.json()["errors"]


def test_unauthenticated_requests_are_refused(project):
    assert APIClient().get("/api/v1/projects/").status_code in (401, 403)


def test_projects_list_shows_only_mine(annotator, project):
    import_project(config_path=EXAMPLE, slug="other").project.__class__.objects.filter(
        slug="other"
    ).update(allow_all_users=False)
    data = token_client("judge").get("/api/v1/projects/").json()
    assert [p["slug"] for p in data["results"]] == ["mt"]
    assert data["results"][0]["role"] == "annotator"
    assert data["results"][0]["progress"]["total"] == 400


def test_next_submit_replay_and_mine(annotator, project):
    client = token_client("judge")
    unit = client.post("/api/v1/projects/mt/queue/next/").json()
    assert unit["kind"] == "tuple" and len(unit["items"]) == 4
    assert [i["letter"] for i in unit["items"]] == ["A", "B", "C", "D"]
    assert all(i["text"] for i in unit["items"])
    assert unit["schemes"][0]["name"] == "overall_quality"
    ids = [i["id"] for i in unit["items"]]
    body = {
        "unit": unit["id"],
        "annotations": {"overall_quality": {"best": ids[2], "worst": ids[0]}},
        "client_id": str(uuid.uuid4()),
    }
    first = client.post("/api/v1/projects/mt/annotations/", body, format="json")
    assert first.status_code == 201, first.content
    again = client.post("/api/v1/projects/mt/annotations/", body, format="json")
    assert again.status_code == 200
    assert again.json() == first.json()
    assert Annotation.objects.count() == 1
    stored = Annotation.objects.get()
    assert stored.value == {"best": ids[2], "worst": ids[0]}
    index = dict(project.items.values_list("item_id", "index"))
    assert (stored.best_index, stored.worst_index) == (index[ids[2]], index[ids[0]])
    mine = client.get("/api/v1/projects/mt/annotations/?mine=1").json()
    assert mine["count"] == 1 and mine["results"][0]["unit"] == unit["external_id"]
    assert client.post("/api/v1/projects/mt/queue/next/").json()["id"] != unit["id"]


@pytest.mark.parametrize(
    "value, message",
    [
        ({"best": "X", "worst": None}, "choose the worst item"),
        ({"best": "mt_9999", "worst": "FIRST"}, "not in this tuple"),
        ({"best": "FIRST", "worst": "FIRST"}, "must be different"),
    ],
)
def test_bad_answers_get_field_errors(annotator, project, value, message):
    client = token_client("judge")
    unit = client.post("/api/v1/projects/mt/queue/next/").json()
    first = unit["items"][0]["id"]
    value = {k: (first if v == "FIRST" else v) for k, v in value.items()}
    response = client.post(
        "/api/v1/projects/mt/annotations/",
        {"unit": unit["id"], "annotations": {"overall_quality": value}},
        format="json",
    )
    assert response.status_code == 400
    assert message in response.json()["errors"]["annotations"]["overall_quality"][0]
    assert not Annotation.objects.exists()


def test_unknown_scheme_and_unit_are_field_errors(annotator, project):
    client = token_client("judge")
    unit = client.post("/api/v1/projects/mt/queue/next/").json()
    response = client.post(
        "/api/v1/projects/mt/annotations/",
        {"unit": unit["id"], "annotations": {"fluency": "x"}},
        format="json",
    )
    assert "no scheme named" in response.json()["errors"]["annotations"]["fluency"][0]
    response = client.post(
        "/api/v1/projects/mt/annotations/",
        {"unit": 10**9, "annotations": {}},
        format="json",
    )
    assert response.status_code == 400 and "unit" in response.json()["errors"]


def test_queue_empty_is_204(annotator, project):
    project.config = {**project.config, "max_annotations_per_user": 1}
    project.save()
    client = token_client("judge")
    unit = client.post("/api/v1/projects/mt/queue/next/").json()
    ids = [i["id"] for i in unit["items"]]
    client.post(
        "/api/v1/projects/mt/annotations/",
        {"unit": unit["id"], "annotations": {"overall_quality": {"best": ids[0], "worst": ids[1]}}},
        format="json",
    )
    assert client.post("/api/v1/projects/mt/queue/next/").status_code == 204


def test_other_projects_are_404_and_answers_private(annotator, project):
    other = UserFactory(username="other")
    MembershipFactory(user=other, project=project)
    stranger = UserFactory(username="stranger")
    assert token_client("stranger").post("/api/v1/projects/mt/queue/next/").status_code == 404
    judge = token_client("judge")
    unit = judge.post("/api/v1/projects/mt/queue/next/").json()
    ids = [i["id"] for i in unit["items"]]
    judge.post(
        "/api/v1/projects/mt/annotations/",
        {"unit": unit["id"], "annotations": {"overall_quality": {"best": ids[0], "worst": ids[1]}}},
        format="json",
    )
    assert token_client("other").get("/api/v1/projects/mt/annotations/").json()["count"] == 0
    manager = UserFactory(username="boss")
    Membership.objects.create(user=manager, project=project, role="manager")
    assert token_client("boss").get("/api/v1/projects/mt/annotations/").json()["count"] == 1
    assert stranger.pk


def test_schema_documents_the_annotator_endpoints(client):
    client.force_login(UserFactory(username="reader"))
    schema = client.get("/api/schema/").content.decode()
    for path in (
        "/api/v1/auth/token/",
        "/api/v1/projects/{slug}/queue/next/",
        "/api/v1/projects/{slug}/annotations/",
    ):
        assert path in schema


def test_api_docs_page_loads_nothing_from_the_internet(client):
    client.force_login(UserFactory(username="reader"))
    html = client.get("/api/docs/").content.decode()
    assert "redoc" in html.lower()
    assert "http://" not in html and "https://" not in html.replace("https://github", "")
