"""The API docs as a reader meets them: titled "Annolab API", operations grouped by what they
are for with readable names, a real sample for the project list, and nothing fetched from
another host. Also the site's favicon and the logout message."""

import json
import re
from html import unescape
from pathlib import Path

import pytest
import yaml
from django.conf import settings
from django.contrib.staticfiles import finders
from django.urls import reverse

from projects.tests.factories import UserFactory

pytestmark = pytest.mark.django_db
TAGS = [
    "Auth",
    "Projects",
    "Queue",
    "Answers",
    "Scores",
    "Runs",
    "Agreement",
    "Labs",
    "Members",
    "Items",
    "Export",
    "Quality",
    "Participants",
]


@pytest.fixture
def logged_in(client):
    client.force_login(UserFactory(username="reader"))
    return client


@pytest.fixture
def schema(logged_in):
    response = logged_in.get(reverse("api-schema"))
    assert response.status_code == 200
    return yaml.safe_load(response.content)


def operations(schema):
    for path, methods in schema["paths"].items():
        for method, operation in methods.items():
            yield method.upper(), path, operation


def test_the_schema_is_titled_without_a_version_suffix(schema):
    assert schema["info"]["title"] == "Annolab API"
    assert not schema["info"]["version"]  # the docs page would print "(1)" after the title
    assert "/api/v1/" in schema["info"]["description"]


def test_every_operation_has_one_known_tag_a_readable_id_and_a_summary(schema):
    assert [tag["name"] for tag in schema["tags"]] == TAGS
    seen = {}
    for method, path, operation in operations(schema):
        assert len(operation["tags"]) == 1 and operation["tags"][0] in TAGS, (method, path)
        assert not operation["operationId"].startswith("v1_"), (method, path)
        assert operation.get("summary"), (method, path)
        seen[(method, path)] = (operation["tags"][0], operation["operationId"])
    assert seen[("POST", "/api/v1/auth/token/")] == ("Auth", "token_create")
    assert seen[("GET", "/api/v1/projects/")] == ("Projects", "projects_list")
    assert seen[("POST", "/api/v1/projects/{slug}/queue/next/")] == ("Queue", "queue_next")
    assert seen[("POST", "/api/v1/projects/{slug}/annotations/")][0] == "Answers"
    assert seen[("GET", "/api/v1/projects/{slug}/scores/runs/{run_id}/")][0] == "Runs"
    assert seen[("POST", "/api/v1/projects/")] == ("Projects", "project_create")
    assert seen[("DELETE", "/api/v1/projects/{slug}/members/")] == ("Members", "member_remove")
    assert seen[("GET", "/api/v1/projects/{slug}/tuples/")] == ("Items", "tuples_list")
    assert seen[("GET", "/api/v1/projects/{slug}/export/")] == ("Export", "project_export")
    assert seen[("GET", "/api/v1/projects/{slug}/quality/")] == ("Quality", "quality_list")
    assert seen[("POST", "/api/v1/projects/{slug}/exclusions/")] == ("Quality", "exclusion_set")
    participants = seen[("GET", "/api/v1/projects/{slug}/participants/")]
    assert participants == ("Participants", "participants_list")
    assert {tag for tag, _ in seen.values()} == set(TAGS)


def test_the_project_list_has_a_real_example(schema):
    content = schema["paths"]["/api/v1/projects/"]["get"]["responses"]["200"]["content"]
    (example,) = content["application/json"]["examples"].values()
    page = example["value"]
    assert page["count"] == 1 and page["next"] is None
    (project,) = page["results"]
    assert project["slug"] and project["name"] and project["role"] in ("annotator", "manager")
    assert set(project["progress"]) == {"done", "total", "percent"}
    progress = schema["components"]["schemas"]["Progress"]["properties"]
    assert set(progress) == {"done", "total", "percent"}


def foreign_urls(text: str) -> list[str]:
    """http(s) URLs in a text that do not point at this site."""
    return [
        url
        for url in re.findall(r"""https?://[^\s"'<>)]+""", text)
        if not url.startswith("http://testserver/")
    ]


def test_the_docs_page_has_the_sites_header_and_a_way_back(logged_in):
    html = logged_in.get(reverse("api-docs")).content.decode()
    header = html[html.index('<header class="topbar">') : html.index("</header>")]
    assert f'href="{reverse("home")}">My projects</a>' in header
    assert "Log out" in header
    back = re.search(r'<a href="([^"]+)">← Back to my projects</a>', html)
    assert back and back.group(1) == reverse("home")
    assert html.index("</header>") < html.index('id="redoc-container"')


def test_the_docs_page_loads_nothing_from_another_host(logged_in):
    response = logged_in.get(reverse("api-docs"))
    assert response.status_code == 200
    html = response.content.decode()
    assert "<title>Annolab API</title>" in html
    assert foreign_urls(html) == []
    sources = re.findall(r'<(?:script|link)[^>]+(?:src|href)="([^"]+)"', html)
    assert sources and all(s.startswith("/static/") for s in sources), sources
    init = Path(finders.find("annolab/redoc-init.js")).read_text()
    assert foreign_urls(init) == []
    # Redoc's bundle draws its maker's logo from their server: the start-up script swaps any
    # image from another host for ours, and the page names ours.
    assert "ownIfForeign" in init
    # samples open down to a page's results (Redoc folds them to [{…}] by default)
    redoc_settings = re.search(r'data-settings="([^"]+)"', html).group(1)
    assert json.loads(unescape(redoc_settings))["jsonSampleExpandLevel"] >= 3
    logo = re.search(r'data-logo-url="([^"]+)"', html).group(1)
    assert logo.startswith("/static/") and logo.endswith("favicon.svg")
    parts = [part.split() for part in response["Content-Security-Policy"].split(";")]
    directives = {words[0]: words[1:] for words in parts if words}
    for kind in ("script-src", "img-src", "style-src", "font-src", "connect-src"):
        allowed = directives.get(kind, directives["default-src"])
        assert all(s.startswith("'") or s in ("data:", "blob:") for s in allowed), kind


def test_the_favicon_is_served(client):
    page = client.get(reverse("login")).content.decode()
    icon = re.search(r'<link rel="icon" href="([^"]+)"', page).group(1)
    assert icon.endswith("favicon.svg")
    assert finders.find("annolab/favicon.svg")
    response = client.get("/favicon.ico")
    assert response.status_code == 301 and response["Location"] == icon
    svg = client.get(icon)
    assert svg.status_code == 200
    body = b"".join(svg.streaming_content) if svg.streaming else svg.content
    assert body.startswith(b"<svg")
    assert Path(settings.BASE_DIR, "static", "annolab", "favicon.svg").exists()


def test_logging_out_says_so(client):
    UserFactory(username="leaver")
    client.post(reverse("login"), {"username": "leaver", "password": "pw-for-tests-123"})
    response = client.post(reverse("logout"), follow=True)
    assert response.redirect_chain[-1][0] == reverse("login")
    assert "You have logged out." in response.content.decode()
    # said once, not again on the next page
    assert "You have logged out." not in client.get(reverse("login")).content.decode()
