"""Production settings: no start without a secret key, `check --deploy` clean under the
documented environment, a Content-Security-Policy without inline script on every page, a
JSON-only API, and the schema and docs behind login."""

import os
import re
import secrets
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client
from django.urls import reverse

from projects.content_policy import WAVEFORM_STYLE_HASH
from projects.models import Membership
from projects.tests.factories import MembershipFactory, UserFactory

from .conftest import PASSWORD

ROOT = Path(settings.BASE_DIR)
PRODUCTION_ENV = ROOT / "platform" / "annolab.env.example"
TIMEOUT = 120


def production_environment() -> dict[str, str]:
    """platform/annolab.env.example (the environment DEPLOY.md documents and .ci/run uses),
    with a fresh random key in place of its placeholder."""
    env = {}
    for line in PRODUCTION_ENV.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            name, _, value = line.partition("=")
            env[name.strip()] = value.strip()
    assert env["SECRET_KEY"].startswith("change-me"), "the example ships a placeholder"
    env["SECRET_KEY"] = secrets.token_urlsafe(50)
    return env


def run_python(env: dict[str, str], *argv: str) -> subprocess.CompletedProcess:
    """Python in a subprocess with exactly this environment (plus what finds the code)."""
    base = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "HOME": os.environ.get("HOME", "/tmp"),
    }
    return subprocess.run(
        [sys.executable, *argv],
        cwd=ROOT,
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )


SETUP = ["-c", "import django; django.setup(); print('started')"]


# --------------------------------------------------------------------------- secret key


def test_debug_off_without_secret_key_refuses_to_start():
    done = run_python({"DEBUG": "0"}, *SETUP)
    assert done.returncode != 0 and "started" not in done.stdout
    assert "ImproperlyConfigured: SECRET_KEY is not set" in done.stderr
    assert "platform/DEPLOY.md" in done.stderr  # the message says where to read on


def test_manage_py_refuses_too():
    done = run_python({}, "manage.py", "check")
    assert done.returncode != 0
    assert "SECRET_KEY is not set" in done.stderr


def test_the_examples_placeholder_key_is_refused():
    done = run_python({"DEBUG": "0", "SECRET_KEY": "change-me-to-a-long-random-string"}, *SETUP)
    assert done.returncode != 0
    assert "placeholder" in done.stderr


@pytest.mark.parametrize(
    "env", [{"DEBUG": "1"}, {"DEBUG": "0", "SECRET_KEY": "a-key-of-this-sites-own-" * 3}]
)
def test_debug_or_a_key_of_its_own_starts(env):
    done = run_python(env, *SETUP)
    assert done.returncode == 0, done.stderr
    assert "started" in done.stdout


# --------------------------------------------------------------------------- check --deploy


def test_check_deploy_is_clean_under_the_documented_environment():
    done = run_python(
        production_environment(), "manage.py", "check", "--deploy", "--fail-level", "WARNING"
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no issues" in done.stdout


def test_check_deploy_fails_on_a_warning():
    # The same check notices what the environment leaves out (so a clean run means something).
    env = production_environment()
    del env["SECURE_HSTS_SECONDS"]
    done = run_python(env, "manage.py", "check", "--deploy", "--fail-level", "WARNING")
    assert done.returncode != 0
    assert "security.W004" in done.stderr


def test_documented_environment_trusts_the_proxy_header_and_secures_cookies():
    code = (
        "import django, json; django.setup(); from django.conf import settings as s; "
        "print(json.dumps([s.SECURE_PROXY_SSL_HEADER, s.SECURE_SSL_REDIRECT, "
        "s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, s.DEBUG, "
        "s.REST_FRAMEWORK['DEFAULT_RENDERER_CLASSES']]))"
    )
    done = run_python(production_environment(), "-c", code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (
        '[["HTTP_X_FORWARDED_PROTO", "https"], true, true, true, false, '
        '["rest_framework.renderers.JSONRenderer"]]'
    )


@pytest.mark.django_db
def test_reset_links_are_https_behind_the_tls_proxy(client, settings, mailoutbox):
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    settings.ALLOWED_HOSTS = ["annolab.example.org"]
    user = UserFactory(username="forgetful")
    # What the TLS proxy passes on: the site's host name and the scheme the client used.
    proxied = {"host": "annolab.example.org", "x-forwarded-proto": "https"}
    response = client.post(reverse("password_reset"), {"email": user.email}, headers=proxied)
    assert response.status_code == 302
    (mail,) = mailoutbox
    assert re.search(r"https://annolab\.example\.org/accounts/reset/\S+", mail.body)
    assert "http://" not in mail.body


# --------------------------------------------------------------------------- CSP, no inline script


class _PageScan(HTMLParser):
    """What a Content-Security-Policy without 'unsafe-inline' would block in a page."""

    def __init__(self):
        super().__init__()
        self.inline_scripts = []
        self.handlers = []
        self.javascript_urls = []
        self.style_attributes = []
        self.style_elements = 0
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag == "script":
            kind = (attributes.get("type") or "").lower()
            # JSON data blocks (Django's json_script) are never run.
            self._in_script = "src" not in attributes and kind != "application/json"
        if tag == "style":
            self.style_elements += 1
        for name, value in attrs:
            if re.fullmatch(r"on\w+", name):
                self.handlers.append(f"<{tag} {name}>")
            if name == "style":
                self.style_attributes.append(f"<{tag} style={value!r}>")
            if value and value.strip().lower().startswith("javascript:"):
                self.javascript_urls.append(f"<{tag} {name}={value!r}>")

    def handle_endtag(self, tag):
        if tag == "script":
            self._in_script = False

    def handle_data(self, data):
        if self._in_script and data.strip():
            self.inline_scripts.append(data.strip()[:80])


def scan(html: str) -> _PageScan:
    page = _PageScan()
    page.feed(html)
    return page


def directives(header: str) -> dict[str, list[str]]:
    parts = (part.strip().split() for part in header.split(";") if part.strip())
    return {words[0]: words[1:] for words in parts}


@pytest.fixture
def pages(world, client):
    """(name, client, url) for every kind of page, each fetched as someone who may see it."""
    project = world.project
    newcomer = UserFactory(username="newcomer", password=PASSWORD)
    MembershipFactory(user=newcomer, project=project, role=Membership.Role.ANNOTATOR)

    def as_user(user):
        browser = Client()
        if user is not None:
            browser.force_login(user)
        return browser

    admin = world.user("lab_admin")
    annotate = reverse("annotate", args=[project.slug])
    return [
        ("login", as_user(None), reverse("login")),
        ("password reset", as_user(None), reverse("password_reset")),
        ("admin login", as_user(None), reverse("admin:login")),
        ("home", as_user(admin), reverse("home")),
        ("project detail", as_user(admin), reverse("project-detail", args=[project.slug])),
        ("annotate", as_user(newcomer), annotate),
        (
            "annotate, done",
            as_user(world.user("annotator")),
            reverse("annotate", args=[project.slug]),
        ),
        ("bws dashboard", as_user(admin), reverse("bws-dashboard", args=[project.slug])),
        ("iaa", as_user(admin), reverse("agreement-iaa", args=[project.slug])),
        ("lab", as_user(admin), reverse("lab-detail", args=[world.lab.slug])),
        ("admin index", as_user(world.user("superuser")), reverse("admin:index")),
        (
            "admin change list",
            as_user(world.user("superuser")),
            reverse("admin:projects_project_changelist"),
        ),
        ("api docs", as_user(admin), reverse("api-docs")),
        ("not found", as_user(admin), "/no/such/page/"),
    ]


@pytest.mark.django_db
def test_every_page_has_a_csp_and_no_inline_script(pages):
    for name, browser, url in pages:
        response = browser.get(url, follow=True)
        assert response.status_code in (200, 404), (name, response.status_code)
        policy = directives(response.headers.get("Content-Security-Policy", ""))
        assert policy.get("default-src") == ["'self'"], name
        assert policy.get("script-src") == ["'self'"], name
        assert policy.get("object-src") == ["'none'"] and policy.get("frame-ancestors") == [
            "'none'"
        ], name
        page = scan(response.content.decode())
        assert page.inline_scripts == [], (name, page.inline_scripts)
        assert page.handlers == [], (name, page.handlers)
        assert page.javascript_urls == [], (name, page.javascript_urls)
        if name == "api docs":
            # Redoc injects styles at run time: that page alone allows inline styles.
            assert "'unsafe-inline'" in policy["style-src"]
        elif name in ("annotate", "annotate, done"):
            # The timeline's one constant style element, by its hash; nothing inline else.
            assert policy.get("style-src") == ["'self'", WAVEFORM_STYLE_HASH], name
            assert page.style_attributes == [] and page.style_elements == 0, name
        else:
            assert policy.get("style-src") == ["'self'"], name
            assert page.style_attributes == [] and page.style_elements == 0, name


@pytest.mark.django_db
def test_api_responses_carry_the_policy_too(world):
    browser = Client()
    browser.force_login(world.user("annotator"))
    response = browser.get("/api/v1/projects/")
    assert "default-src 'self'" in response["Content-Security-Policy"]


# --------------------------------------------------------------------------- API in production


@pytest.mark.django_db
def test_browsable_api_is_not_served(world):
    assert not settings.DEBUG
    browser = Client()
    browser.force_login(world.user("annotator"))
    # What a browser asks for: HTML first, anything else after it.
    accept = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
    response = browser.get("/api/v1/projects/", headers={"accept": accept})
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert b"<html" not in response.content
    only_html = browser.get("/api/v1/projects/", headers={"accept": "text/html"})
    assert only_html.status_code == 406 and b"<html" not in only_html.content
    assert browser.get("/api/v1/projects/", {"format": "api"}).status_code == 404


@pytest.mark.django_db
def test_schema_and_docs_need_a_login(world):
    anonymous = Client()
    assert anonymous.get(reverse("api-schema")).status_code == 401
    docs = anonymous.get(reverse("api-docs"))
    assert docs.status_code == 302 and docs["Location"].startswith(reverse("login"))
    member = Client()
    member.force_login(world.user("no_lab"))
    assert member.get(reverse("api-schema")).status_code == 200
    page = member.get(reverse("api-docs"))
    assert page.status_code == 200 and b"redoc-init.js" in page.content
