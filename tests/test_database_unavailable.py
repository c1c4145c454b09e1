"""While the database cannot be reached (a restart), requests get a 503 with Retry-After
and a sentence that says so, JSON to programs and a page to people, instead of a server
error; other errors stay 500s."""

import pytest
from django.db import OperationalError, ProgrammingError
from django.test import Client
from rest_framework.test import APIClient

from annotation import api, views
from config.errors import database_unavailable
from projects.models import Membership
from projects.tests.factories import ProjectFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def annotator():
    project = ProjectFactory(slug="p")
    user = UserFactory(username="ann")
    Membership.objects.create(user=user, project=project, role="annotator")
    return user


def lost(*args, **kwargs):
    raise OperationalError("server closed the connection unexpectedly")


def test_the_api_says_503_with_retry_after_while_the_database_is_away(annotator, monkeypatch):
    monkeypatch.setattr(api, "next_unit", lost)
    client = APIClient(raise_request_exception=False)
    client.force_authenticate(annotator)
    response = client.post("/api/v1/projects/p/queue/next/")
    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert "database cannot be reached" in response.json()["detail"]


def test_a_page_says_503_and_tries_again_by_itself(annotator, monkeypatch):
    monkeypatch.setattr(views, "visible_project_or_404", lost)
    client = Client(raise_request_exception=False)
    client.force_login(annotator)
    response = client.get("/projects/p/annotate/")
    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    html = response.content.decode()
    assert "Back in a moment" in html and 'http-equiv="refresh"' in html


def test_a_wrong_query_is_still_a_server_error(annotator, monkeypatch):
    def wrong(*args, **kwargs):
        raise ProgrammingError('relation "nothing" does not exist')

    monkeypatch.setattr(api, "next_unit", wrong)
    client = APIClient(raise_request_exception=False)
    client.force_authenticate(annotator)
    response = client.post("/api/v1/projects/p/queue/next/")
    assert response.status_code == 500
    assert "Retry-After" not in response


def test_a_lost_connection_is_found_behind_the_error_it_caused():
    try:
        try:
            raise OperationalError("connection refused")
        except OperationalError as exc:
            raise RuntimeError("could not read the session") from exc
    except RuntimeError as outer:
        assert database_unavailable(outer)
    assert not database_unavailable(ProgrammingError("syntax error"))
    assert not database_unavailable(ValueError("no"))
