"""The REST API for what a manager does: create a project from uploaded files, manage its
members, list its items and tuples, export its answers; API tokens listed and revoked by
their owners; one error shape for every refusal."""

import csv
import io
import json
from html import unescape
from pathlib import Path

import pytest
import yaml
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from knox.models import AuthToken
from rest_framework.test import APIClient

from annotation.models import Annotation
from projects.models import Membership, Project, Unit
from projects.services import import_project
from projects.tests.factories import (
    LabFactory,
    LabMembershipFactory,
    MembershipFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db
EXAMPLE = Path(settings.BASE_DIR) / "examples" / "mt_bws"
DATA = EXAMPLE / "data" / "mt_systems.jsonl"
PASSWORD = "pw-for-tests-123"


def token_client(username):
    client = APIClient()
    response = client.post(
        "/api/v1/auth/token/", {"username": username, "password": PASSWORD}, format="json"
    )
    assert response.status_code == 200, response.content
    client.credentials(HTTP_AUTHORIZATION=f"Token {response.json()['token']}")
    return client


def assert_error(response, status, field=None):
    """The one error shape: a sentence in detail; the refused fields under errors."""
    assert response.status_code == status, response.content
    body = response.json()
    assert isinstance(body["detail"], str) and body["detail"]
    if field is not None:
        assert field in body["errors"], body
        assert all(isinstance(m, str) for m in body["errors"][field])
    return body


@pytest.fixture
def lab():
    return LabFactory(slug="nlp")


@pytest.fixture
def project(lab):
    project = import_project(config_path=EXAMPLE / "config.yaml", slug="mt", lab=lab).project
    project.allow_all_users = False
    project.save()
    return project


@pytest.fixture
def manager(project):
    user = UserFactory(username="boss")
    MembershipFactory(user=user, project=project, role=Membership.Role.MANAGER)
    return user


@pytest.fixture
def annotator(project):
    user = UserFactory(username="judge")
    MembershipFactory(user=user, project=project)
    return user


@pytest.fixture
def lab_admin(lab):
    user = UserFactory(username="chief")
    LabMembershipFactory(lab=lab, user=user, is_admin=True)
    return user


# --------------------------------------------------------------------------- create


def upload_body(config=None, data=None, **fields):
    config = config if config is not None else (EXAMPLE / "config.yaml").read_bytes()
    data = data if data is not None else [("mt_systems.jsonl", DATA.read_bytes())]
    return {
        "config_file": SimpleUploadedFile("config.yaml", config),
        "data_files": [SimpleUploadedFile(name, content) for name, content in data],
        **fields,
    }


def files_left() -> list[Path]:
    root = Path(settings.PROJECT_FILES_ROOT)
    return [p for p in root.iterdir()] if root.exists() else []


def test_lab_admin_creates_a_project_by_multipart_upload(lab_admin, lab):
    before = set(files_left())
    response = token_client("chief").post("/api/v1/projects/", upload_body(), format="multipart")
    assert response.status_code == 201, response.content
    body = response.json()
    project = Project.objects.get(slug=body["slug"])
    assert project.lab == lab and body["lab"] == "nlp"
    assert body["role"] == "manager"
    assert body["n_items"] == project.items.count() == 200
    assert body["n_tuples"] == Unit.objects.filter(project=project).count() > 0
    assert Membership.objects.get(project=project, user=lab_admin).role == "manager"
    (folder,) = set(files_left()) - before
    assert folder.name == project.storage_folder


def test_create_names_the_lab_when_the_caller_may_use_several(lab_admin, lab):
    other = LabFactory(slug="vision")
    LabMembershipFactory(lab=other, user=lab_admin, is_admin=True)
    client = token_client("chief")
    body = assert_error(
        client.post("/api/v1/projects/", upload_body(), format="multipart"), 400, "lab"
    )
    assert "nlp" in body["detail"] and "vision" in body["detail"]
    created = client.post("/api/v1/projects/", upload_body(lab="vision"), format="multipart")
    assert created.status_code == 201 and created.json()["lab"] == "vision"
    # a lab someone else administers is refused, and says nothing of that lab
    LabFactory(slug="secret")
    refused = client.post("/api/v1/projects/", upload_body(lab="secret"), format="multipart")
    assert_error(refused, 400, "lab")


def test_a_refused_upload_keeps_nothing_and_says_why_as_the_web_does(lab_admin, lab, client):
    bad = (
        (EXAMPLE / "config.yaml")
        .read_text()
        .replace("tuple_size: 4\n  min", "tuple_sise: 4\n  min")
    )
    before = set(files_left())
    response = token_client("chief").post(
        "/api/v1/projects/", upload_body(config=bad.encode()), format="multipart"
    )
    body = assert_error(response, 400, "non_field_errors")
    assert "tuple_sise" in body["detail"]
    assert str(settings.PROJECT_FILES_ROOT) not in response.content.decode()
    assert not Project.objects.exists() and set(files_left()) == before
    # the web page refuses the same upload with the same messages
    client.force_login(lab_admin)
    page = client.post(
        reverse("project-create"),
        {**upload_body(config=bad.encode()), "lab": lab.pk},
    )
    assert page.status_code == 400
    html = unescape(page.content.decode())
    assert all(message in html for message in body["errors"]["non_field_errors"])


def test_upload_limits_hold_for_the_api(lab_admin, settings):
    client = token_client("chief")
    settings.UPLOAD_MAX_FILE_MB = 1
    big = [("mt_systems.jsonl", b"x" * (1024 * 1024 + 1))]
    response = client.post("/api/v1/projects/", upload_body(data=big), format="multipart")
    body = assert_error(response, 400, "non_field_errors")
    assert "larger than the limit of 1 MB (UPLOAD_MAX_FILE_MB)" in body["detail"]
    settings.UPLOAD_MAX_FILE_MB = 50
    settings.DATA_UPLOAD_MAX_NUMBER_FILES = 2
    many = [(f"d{i}.jsonl", b"{}\n") for i in range(3)]
    response = client.post("/api/v1/projects/", upload_body(data=many), format="multipart")
    assert "(UPLOAD_MAX_FILES)" in assert_error(response, 400, "non_field_errors")["detail"]
    no_yaml = {"config_file": SimpleUploadedFile("config.txt", b"a: 1"), "data_files": []}
    assert_error(client.post("/api/v1/projects/", no_yaml, format="multipart"), 400, "config_file")
    assert_error(client.post("/api/v1/projects/", {}, format="multipart"), 400, "config_file")
    assert not Project.objects.exists()


def test_only_lab_admins_and_staff_create_projects(annotator, manager):
    for name in ("judge", "boss"):
        response = token_client(name).post("/api/v1/projects/", upload_body(), format="multipart")
        assert assert_error(response, 403)["detail"] == "Only lab admins create projects."
    assert Project.objects.count() == 1
    UserFactory(username="root", is_staff=True)
    assert (
        token_client("root")
        .post("/api/v1/projects/", upload_body(), format="multipart")
        .status_code
        == 201
    )


# --------------------------------------------------------------------------- members


def test_manager_lists_adds_and_removes_members(manager, annotator, project):
    client = token_client("boss")
    listed = client.get("/api/v1/projects/mt/members/").json()
    assert listed["count"] == 2
    assert [(m["username"], m["role"]) for m in listed["results"]] == [
        ("boss", "manager"),
        ("judge", "annotator"),
    ]
    UserFactory(username="ada")
    UserFactory(username="grace", email="grace@example.org")
    response = client.post(
        "/api/v1/projects/mt/members/",
        {
            "members": ["ada", "grace@example.org", "judge", "nobody", "bad!name"],
            "role": "manager",
        },
        format="json",
    )
    assert response.status_code == 200, response.content
    outcomes = {
        row["entry"]: (row["account"], row["outcome"]) for row in response.json()["results"]
    }
    assert outcomes == {
        "ada": ("ada", "added"),
        "grace@example.org": ("grace", "added"),
        "judge": ("judge", "already a member"),
        "nobody": ("", "unknown account"),
        "bad!name": ("", "invalid entry"),
    }
    roles = dict(Membership.objects.filter(project=project).values_list("user__username", "role"))
    assert roles == {"boss": "manager", "judge": "manager", "ada": "manager", "grace": "manager"}
    managers = client.get("/api/v1/projects/mt/members/", {"role": "manager", "search": "gra"})
    assert [m["username"] for m in managers.json()["results"]] == ["grace"]
    removed = client.delete("/api/v1/projects/mt/members/?username=ada")
    assert removed.status_code == 204
    assert not Membership.objects.filter(project=project, user__username="ada").exists()
    assert_error(client.delete("/api/v1/projects/mt/members/?username=ada"), 404)
    assert_error(client.delete("/api/v1/projects/mt/members/"), 400, "username")
    # a name no account can have is refused, not asked of the database (PostgreSQL refuses NUL)
    assert_error(client.delete("/api/v1/projects/mt/members/?username=%00"), 400, "username")


def test_members_can_be_created_with_invite_links(manager, project):
    client = token_client("boss")
    response = client.post(
        "/api/v1/projects/mt/members/",
        {"members": ["newbie"], "create_missing": True},
        format="json",
    )
    (row,) = response.json()["results"]
    assert row["outcome"] == "account created" and row["account"] == "newbie"
    assert row["invite_url"].startswith("http://testserver/") and row["emailed"] is False
    assert Membership.objects.get(project=project, user__username="newbie").role == "annotator"
    page = Client().get(row["invite_url"].removeprefix("http://testserver"))
    assert page.status_code in (200, 302)


def test_bad_member_requests_are_refused_in_the_one_shape(manager, project):
    client = token_client("boss")
    url = "/api/v1/projects/mt/members/"
    assert_error(client.post(url, {"members": ["x"], "role": "owner"}, format="json"), 400, "role")
    assert_error(client.post(url, {"members": []}, format="json"), 400, "members")
    assert_error(client.post(url, {"members": ["a"] * 501}, format="json"), 400, "members")
    assert_error(client.post(url, {}, format="json"), 400, "members")
    two = assert_error(client.post(url, {"members": ["boss, judge"]}, format="json"), 400)
    assert "one username or e-mail address per entry" in two["detail"]
    assert Membership.objects.filter(project=project).count() == 1


def test_annotators_and_strangers_cannot_manage_members(annotator, project):
    UserFactory(username="stranger")
    for name in ("judge", "stranger"):
        client = token_client(name)
        assert_error(client.get("/api/v1/projects/mt/members/"), 404)
        grab = client.post(
            "/api/v1/projects/mt/members/", {"members": [name], "role": "manager"}, format="json"
        )
        assert grab.json() == {"detail": "No such project."} and grab.status_code == 404
        assert_error(client.delete("/api/v1/projects/mt/members/?username=judge"), 404)
    assert Membership.objects.get(project=project, user=annotator).role == "annotator"


def test_lab_admin_manages_members_without_being_one(lab_admin, annotator, project):
    client = token_client("chief")
    assert client.get("/api/v1/projects/mt/members/").json()["count"] == 1
    assert client.delete("/api/v1/projects/mt/members/?username=judge").status_code == 204


# --------------------------------------------------------------------------- items, tuples


def test_items_are_paginated_and_filtered(manager, project):
    client = token_client("boss")
    page = client.get("/api/v1/projects/mt/items/", {"page_size": 50}).json()
    assert page["count"] == 200 and len(page["results"]) == 50 and page["next"]
    first = page["results"][0]
    assert first["index"] == 0 and first["item_id"] and first["text"]
    tuples = Unit.objects.filter(project=project)
    shown = sum(1 for unit in tuples if first["item_id"] in unit.item_ids)
    assert first["appearances"] == shown > 0
    second = client.get(page["next"]).json()
    assert second["results"][0]["index"] == 50
    word = first["text"].split()[0]
    found = client.get("/api/v1/projects/mt/items/", {"search": word, "page_size": 1000}).json()
    assert found["count"] == project.items.filter(text__icontains=word).count() >= 1
    assert all(word.lower() in item["text"].lower() for item in found["results"])
    one = client.get("/api/v1/projects/mt/items/", {"item_id": first["item_id"]}).json()
    assert [item["item_id"] for item in one["results"]] == [first["item_id"]]
    counts = [
        item["appearances"]
        for item in client.get("/api/v1/projects/mt/items/", {"page_size": 1000}).json()["results"]
    ]
    high = max(counts)
    top = client.get("/api/v1/projects/mt/items/", {"min_appearances": high}).json()
    assert top["count"] == counts.count(high)
    low = client.get("/api/v1/projects/mt/items/", {"max_appearances": high - 1}).json()
    assert low["count"] == len(counts) - counts.count(high)
    bad = client.get("/api/v1/projects/mt/items/", {"min_appearances": "many"})
    assert_error(bad, 400, "min_appearances")
    assert_error(client.get("/api/v1/projects/mt/items/", {"page": 99}), 404)


def test_tuples_filter_by_item_and_by_answers(manager, annotator, project):
    from annotation.queue import next_unit

    client = token_client("boss")
    page = client.get("/api/v1/projects/mt/tuples/").json()
    assert page["count"] == Unit.objects.filter(project=project).count()
    first = page["results"][0]
    assert first["position"] == 0 and len(first["item_ids"]) == 4
    item = first["item_ids"][0]
    holding = client.get("/api/v1/projects/mt/tuples/", {"item": item, "page_size": 1000}).json()
    expected = [u.external_id for u in Unit.objects.filter(project=project) if item in u.item_ids]
    assert [t["tuple_id"] for t in holding["results"]] == expected
    unit = next_unit(project=project, user=annotator)
    Annotation.objects.create(
        project=project,
        unit=unit,
        annotator=annotator,
        scheme="overall_quality",
        value={"best": unit.item_ids[0], "worst": unit.item_ids[1]},
    )
    answered = client.get("/api/v1/projects/mt/tuples/", {"answered": "true"}).json()
    assert [t["id"] for t in answered["results"]] == [unit.pk]
    by_scheme = client.get("/api/v1/projects/mt/tuples/", {"scheme": "overall_quality"}).json()
    assert [t["id"] for t in by_scheme["results"]] == [unit.pk]
    assert client.get("/api/v1/projects/mt/tuples/", {"scheme": "other"}).json()["count"] == 0
    open_ones = client.get("/api/v1/projects/mt/tuples/", {"answered": "false"}).json()
    assert open_ones["count"] == page["count"] - 1
    assert_error(token_client("judge").get("/api/v1/projects/mt/tuples/"), 404)
    assert_error(token_client("judge").get("/api/v1/projects/mt/items/"), 404)


# --------------------------------------------------------------------------- export


@pytest.fixture
def answered(project, annotator):
    """One answer whose text would start a spreadsheet formula."""
    from annotation.queue import next_unit

    unit = next_unit(project=project, user=annotator)
    Annotation.objects.create(
        project=project,
        unit=unit,
        annotator=annotator,
        scheme="overall_quality",
        value={"best": unit.item_ids[0], "worst": unit.item_ids[1]},
    )
    annotator.username = "=HYPERLINK(1)"
    annotator.save()
    return unit


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "tsv"])
def test_export_is_the_web_export(manager, answered, client, fmt):
    response = token_client("boss").get("/api/v1/projects/mt/export/", {"format": fmt})
    assert response.status_code == 200
    client.force_login(manager)
    web = client.get(reverse("project-export", args=["mt"]), {"format": fmt})
    assert response.content == web.content
    assert response["Content-Type"] == web["Content-Type"]
    assert response["Content-Disposition"] == web["Content-Disposition"]
    text = response.content.decode()
    if fmt == "jsonl":
        (record,) = [json.loads(line) for line in text.splitlines()]
        assert record["id"] == answered.external_id
    else:
        rows = list(csv.reader(io.StringIO(text), delimiter="\t" if fmt == "tsv" else ","))
        assert len(rows) == 2
        assert not any(cell.startswith("=") for cell in rows[1])


def test_export_refuses_unknown_formats_and_other_callers(manager, annotator, answered):
    response = token_client("boss").get("/api/v1/projects/mt/export/", {"format": "xlsx"})
    assert_error(response, 400, "format")
    assert response["Content-Type"] == "application/json"
    assert token_client("boss").get("/api/v1/projects/mt/export/").status_code == 200
    # the annotator (renamed by `answered`) may not export
    assert_error(token_client(annotator.username).get("/api/v1/projects/mt/export/"), 404)


# --------------------------------------------------------------------------- tokens


def test_tokens_are_listed_and_revoked_by_their_owners_only(annotator, manager):
    judge = token_client("judge")
    token_client("judge")  # a second token for the same account
    boss = token_client("boss")
    mine = judge.get("/api/v1/auth/tokens/").json()["results"]
    assert len(mine) == 2 and sum(t["current"] for t in mine) == 1
    other = next(t["token_key"] for t in mine if not t["current"])
    # someone else's token is not theirs to see or revoke
    assert other not in json.dumps(boss.get("/api/v1/auth/tokens/").json())
    assert_error(boss.delete(f"/api/v1/auth/tokens/{other}/"), 404)
    assert AuthToken.objects.filter(token_key=other).exists()
    assert judge.delete(f"/api/v1/auth/tokens/{other}/").status_code == 204
    assert not AuthToken.objects.filter(token_key=other).exists()
    assert len(judge.get("/api/v1/auth/tokens/").json()["results"]) == 1


# --------------------------------------------------------------------------- error shape


def test_every_refusal_has_the_one_shape(annotator, project):
    client = token_client("judge")
    assert_error(APIClient().get("/api/v1/projects/"), 401)
    assert_error(client.get("/api/v1/projects/nope/"), 404)
    assert_error(client.delete("/api/v1/projects/"), 405)
    bad_login = APIClient().post("/api/v1/auth/token/", {"username": "judge"}, format="json")
    assert_error(bad_login, 400, "password")
    wrong = client.post(
        "/api/v1/projects/mt/annotations/", {"unit": "x", "annotations": {}}, format="json"
    )
    assert "unit:" in assert_error(wrong, 400, "unit")["detail"]


# --------------------------------------------------------------------------- schema


def test_the_schema_shows_examples_and_the_error_shape(annotator):
    schema = yaml.safe_load(token_client("judge").get("/api/schema/").content)
    paths = schema["paths"]
    operations = [
        ("/api/v1/projects/", "post", "201"),
        ("/api/v1/projects/{slug}/members/", "get", "200"),
        ("/api/v1/projects/{slug}/members/", "post", "200"),
        ("/api/v1/projects/{slug}/items/", "get", "200"),
        ("/api/v1/projects/{slug}/tuples/", "get", "200"),
    ]
    for path, method, status in operations:
        content = paths[path][method]["responses"][status]["content"]["application/json"]
        assert content.get("examples"), (method, path)
        errors = [code for code in paths[path][method]["responses"] if code.startswith("4")]
        for code in errors:
            body = paths[path][method]["responses"][code]["content"]["application/json"]
            assert body["schema"] == {"$ref": "#/components/schemas/Error"}, (method, path, code)
    assert set(schema["components"]["schemas"]["Error"]["required"]) == {"detail"}
    export = paths["/api/v1/projects/{slug}/export/"]["get"]["responses"]["200"]["content"]
    assert set(export) == {"application/jsonl", "text/csv", "text/tab-separated-values"}
    upload = paths["/api/v1/projects/"]["post"]["requestBody"]["content"]
    assert set(upload) == {"multipart/form-data"}
