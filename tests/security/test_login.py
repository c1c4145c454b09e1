"""Guessing passwords: every login path (web, admin, API token) locks an account after a
few failures and an address after more, keyed by the real client address; password reset
is throttled; API tokens expire, are listed without their keys, revoked by their owner and
on a password change; logins keep working while Redis is down."""

import os
import subprocess
import sys
from datetime import timedelta
from urllib.parse import quote

import pytest
from axes.models import AccessAttempt
from django.conf import settings as django_settings
from django.contrib.auth.hashers import PBKDF2PasswordHasher
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils import timezone
from knox.models import AuthToken
from rest_framework.test import APIClient

from labs.models import PasswordResetRequest
from projects.tests.factories import UserFactory

pytestmark = pytest.mark.django_db
PASSWORD = "pw-for-tests-123"
TOKEN_URL = "/api/v1/auth/token/"


class OneRoundPBKDF2(PBKDF2PasswordHasher):
    """PBKDF2 at one round: a hasher that check_password() upgrades MD5 hashes to, cheaply."""

    iterations = 1


@pytest.fixture(autouse=True)
def small_limits(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.LOGIN_FAILURE_LIMIT = 3
    settings.LOGIN_ADDRESS_FAILURE_LIMIT = 6
    settings.LOGIN_COOLOFF_MINUTES = 15
    settings.TRUSTED_PROXY_COUNT = 0
    return settings


def web_login(client, username, password, **extra):
    return client.post(reverse("login"), {"username": username, "password": password}, **extra)


def token_login(username, password, **extra):
    return APIClient().post(
        TOKEN_URL, {"username": username, "password": password}, format="json", **extra
    )


def token_client(username, password=PASSWORD):
    response = token_login(username, password)
    assert response.status_code == 200, response.content
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {response.json()['token']}")
    return client, response.json()


def shared_database_url() -> str:
    """A URL of the test database, for a second process to share it."""
    db = django_settings.DATABASES["default"]
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{db['NAME']}"
    user, password = quote(db["USER"] or "", safe=""), quote(db["PASSWORD"] or "", safe="")
    host, port = db["HOST"] or "localhost", db["PORT"] or 5432
    return f"postgres://{user}:{password}@{host}:{port}/{db['NAME']}"


# --- lockouts -------------------------------------------------------------------------


def test_admin_login_refuses_the_right_password_once_locked(client):
    UserFactory(username="root", is_staff=True, is_superuser=True)
    for _ in range(3):
        client.post("/admin/login/", {"username": "root", "password": "guess"})
    response = client.post("/admin/login/?next=/admin/", {"username": "root", "password": PASSWORD})
    assert response.status_code == 429
    assert "Too many failed log-in attempts" in response.content.decode()
    assert "_auth_user_id" not in client.session
    assert client.get("/admin/").status_code == 302  # still sent to the login page


def test_web_login_lockout_shows_the_form_with_the_cool_off(client):
    UserFactory(username="vic")
    statuses = [web_login(client, "vic", "guess").status_code for _ in range(3)]
    assert statuses == [200, 200, 429]
    response = web_login(client, "vic", PASSWORD)
    assert response.status_code == 429
    page = response.content.decode()
    assert "Too many failed log-in attempts" in page and "15 minutes" in page
    assert 'name="password"' in page  # the form is there to try again later
    assert response["Retry-After"] == "900"
    assert "_auth_user_id" not in client.session


def test_token_endpoint_ignores_a_rotating_forwarded_for_by_default():
    UserFactory(username="judge")
    for n in range(3):
        token_login("judge", "guess", HTTP_X_FORWARDED_FOR=f"10.0.0.{n}")
    response = token_login("judge", PASSWORD, HTTP_X_FORWARDED_FOR="10.0.0.99")
    assert response.status_code == 429
    assert "Too many failed log-in attempts" in response.json()["detail"]
    assert "Retry-After" in response
    assert set(AccessAttempt.objects.values_list("ip_address", flat=True)) == {"127.0.0.1"}
    assert not AuthToken.objects.exists()


def test_with_one_trusted_proxy_the_client_is_the_last_forwarded_address(settings):
    settings.TRUSTED_PROXY_COUNT = 1
    UserFactory(username="judge")
    # The client forges the left part; the proxy appends the address it saw.
    for n in range(6):
        token_login(f"nobody{n}", "guess", HTTP_X_FORWARDED_FOR=f"10.0.0.{n}, 198.51.100.7")
    assert set(AccessAttempt.objects.values_list("ip_address", flat=True)) == {"198.51.100.7"}
    locked = token_login("judge", PASSWORD, HTTP_X_FORWARDED_FOR="198.51.100.7")
    assert locked.status_code == 429
    other_client = token_login("judge", PASSWORD, HTTP_X_FORWARDED_FOR="198.51.100.8")
    assert other_client.status_code == 200


def test_spraying_usernames_from_one_address_is_limited(client):
    UserFactory(username="carol")
    for n in range(6):  # two failures each on three accounts: no account reaches its limit
        web_login(client, f"user{n % 3}", "guess")
    assert web_login(client, "carol", PASSWORD).status_code == 429
    assert token_login("carol", PASSWORD).status_code == 429
    # Another address is not affected.
    assert web_login(client, "carol", PASSWORD, REMOTE_ADDR="192.0.2.50").status_code == 302


def test_failures_on_one_account_do_not_lock_another_from_the_same_address(client):
    UserFactory(username="xavier")
    UserFactory(username="yasmin")
    for _ in range(10):  # locked after 3; the refused ones are not counted
        web_login(client, "xavier", "guess")
    assert web_login(client, "xavier", PASSWORD).status_code == 429
    assert web_login(client, "yasmin", PASSWORD).status_code == 302


def test_guessing_one_account_from_many_addresses_is_limited(client):
    UserFactory(username="dana")
    for n in range(3):
        web_login(client, "dana", "guess", REMOTE_ADDR=f"192.0.2.{n}")
    assert web_login(client, "dana", PASSWORD, REMOTE_ADDR="192.0.2.200").status_code == 429


def test_the_lock_ends_after_the_cool_off(client):
    UserFactory(username="eve")
    for _ in range(3):
        web_login(client, "eve", "guess")
    assert web_login(client, "eve", PASSWORD).status_code == 429
    AccessAttempt.objects.update(attempt_time=timezone.now() - timedelta(minutes=16))
    assert web_login(client, "eve", PASSWORD).status_code == 302


def test_a_new_password_lifts_the_accounts_lock(client):
    user = UserFactory(username="fay")
    for _ in range(3):
        web_login(client, "fay", "guess")
    user.set_password("a-new-Secret-42")
    user.save()
    assert web_login(client, "fay", "a-new-Secret-42").status_code == 302


def test_counters_live_in_the_database_shared_by_processes(transactional_db, client):
    """Failures made by another process (a second gunicorn worker) lock this one out."""
    UserFactory(username="gil")
    script = (
        "import django; django.setup()\n"
        "from django.test import Client\n"
        "c = Client()\n"
        "print([c.post('/api/v1/auth/token/', {'username': 'gil', 'password': 'guess'},"
        " content_type='application/json').status_code for _ in range(3)])\n"
    )
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": shared_database_url(),
        "LOGIN_FAILURE_LIMIT": "3",
        "LOGIN_ADDRESS_FAILURE_LIMIT": "6",
        "REDIS_URL": "",
    }
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=django_settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().splitlines()[-1] == "[400, 400, 429]"
    assert AccessAttempt.objects.get(username="gil").failures_since_start == 3
    assert web_login(client, "gil", PASSWORD).status_code == 429


# --- password reset -------------------------------------------------------------------


def test_password_reset_is_throttled_per_email(client, settings, mailoutbox):
    settings.PASSWORD_RESET_EMAIL_LIMIT = 2
    UserFactory(username="hal", email="hal@example.org")
    statuses = [
        client.post(reverse("password_reset"), {"email": "hal@example.org"}).status_code
        for _ in range(3)
    ]
    assert statuses == [302, 302, 429]
    assert len(mailoutbox) == 2
    response = client.post(reverse("password_reset"), {"email": "HAL@example.org"})
    assert response.status_code == 429
    assert "Try again in 60 minutes" in response.content.decode()
    # Addresses without an account count the same, so the refusal reveals nothing.
    unknown = [
        client.post(reverse("password_reset"), {"email": "ghost@example.org"}).status_code
        for _ in range(3)
    ]
    assert unknown == [302, 302, 429]
    assert "hal@example.org" not in str(list(PasswordResetRequest.objects.values()))


def test_password_reset_is_throttled_per_address(client, settings, mailoutbox):
    settings.PASSWORD_RESET_ADDRESS_LIMIT = 3
    statuses = [
        client.post(reverse("password_reset"), {"email": f"p{n}@example.org"}).status_code
        for n in range(4)
    ]
    assert statuses == [302, 302, 302, 429]
    other = client.post(
        reverse("password_reset"), {"email": "p9@example.org"}, REMOTE_ADDR="192.0.2.9"
    )
    assert other.status_code == 302


# --- tokens ---------------------------------------------------------------------------


def test_tokens_expire(settings):
    settings.API_TOKEN_TTL_HOURS = 2
    UserFactory(username="ivy")
    client, reply = token_client("ivy")
    expiry = AuthToken.objects.get().expiry
    assert timedelta(hours=1.9) < expiry - timezone.now() <= timedelta(hours=2)
    assert reply["expiry"]
    assert client.get("/api/v1/projects/").status_code == 200
    AuthToken.objects.update(expiry=timezone.now() - timedelta(seconds=1))
    assert client.get("/api/v1/projects/").status_code == 401


def test_token_list_shows_no_key():
    UserFactory(username="jon")
    client, reply = token_client("jon")
    token_client("jon")
    body = client.get("/api/v1/auth/tokens/")
    assert body.status_code == 200
    rows = body.json()["results"]
    assert len(rows) == 2
    assert set(rows[0]) == {"token_key", "created", "expiry", "current"}
    assert reply["token"] not in body.content.decode()
    assert [r["current"] for r in rows if r["token_key"] == reply["token_key"]] == [True]


def test_owner_revokes_one_token_or_all():
    UserFactory(username="kim")
    UserFactory(username="lee")
    first, first_reply = token_client("kim")
    second, _ = token_client("kim")
    other, other_reply = token_client("lee")
    # Nobody revokes someone else's token.
    gone = first.delete(f"/api/v1/auth/tokens/{other_reply['token_key']}/")
    assert gone.status_code == 404
    assert other.get("/api/v1/projects/").status_code == 200

    assert second.delete("/api/v1/auth/tokens/no%00such/").status_code == 404
    assert second.delete(f"/api/v1/auth/tokens/{first_reply['token_key']}/").status_code == 204
    assert first.get("/api/v1/projects/").status_code == 401
    assert second.get("/api/v1/projects/").status_code == 200

    third, _ = token_client("kim")
    assert second.post("/api/v1/auth/tokens/revoke-all/").json() == {"revoked": 2}
    assert second.get("/api/v1/projects/").status_code == 401
    assert third.get("/api/v1/projects/").status_code == 401
    assert other.get("/api/v1/projects/").status_code == 200


def test_tokens_are_revoked_when_the_password_changes_on_the_web(client):
    user = UserFactory(username="max")
    api, _ = token_client("max")
    client.force_login(user)
    response = client.post(
        reverse("password_change"),
        {
            "old_password": PASSWORD,
            "new_password1": "another-Secret-42",
            "new_password2": "another-Secret-42",
        },
    )
    assert response.status_code == 302
    assert api.get("/api/v1/projects/").status_code == 401


def test_tokens_are_revoked_when_an_admin_sets_the_password(admin_client):
    user = UserFactory(username="ned")
    api, _ = token_client("ned")
    response = admin_client.post(
        f"/admin/auth/user/{user.pk}/password/",
        {"password1": "another-Secret-42", "password2": "another-Secret-42"},
    )
    assert response.status_code == 302
    assert api.get("/api/v1/projects/").status_code == 401


def test_tokens_are_revoked_by_set_password_in_code():
    user = UserFactory(username="ora")
    api, _ = token_client("ora")
    user.set_password("another-Secret-42")
    user.save(update_fields=["password"])
    assert api.get("/api/v1/projects/").status_code == 401


def test_tokens_survive_a_password_hash_upgrade(settings):
    """A login that re-hashes the same password (new hasher settings) is no change."""
    UserFactory(username="pat")
    api, _ = token_client("pat")
    settings.PASSWORD_HASHERS = [
        "tests.security.test_login.OneRoundPBKDF2",
        "django.contrib.auth.hashers.MD5PasswordHasher",
    ]
    assert token_login("pat", PASSWORD).status_code == 200
    assert AuthToken.objects.count() == 2
    assert api.get("/api/v1/projects/").status_code == 200


def test_the_schema_documents_the_token_endpoints(client):
    client.force_login(UserFactory())
    schema = client.get("/api/schema/").content.decode()
    for path in ("/api/v1/auth/token/", "/api/v1/auth/tokens/", "/api/v1/auth/tokens/revoke-all/"):
        assert path in schema
    assert "/api/v1/auth/tokens/{token_key}/" in schema


# --- Redis down -----------------------------------------------------------------------


def test_logins_work_and_count_while_redis_is_unreachable(client, settings):
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "redis://127.0.0.1:1/0",
        }
    }
    UserFactory(username="quinn")
    UserFactory(username="root", is_staff=True, is_superuser=True)
    assert web_login(client, "quinn", PASSWORD).status_code == 302
    admin = client.post("/admin/login/?next=/admin/", {"username": "root", "password": PASSWORD})
    assert admin.status_code == 302
    assert token_login("quinn", PASSWORD).status_code == 200
    # Still protected.
    for _ in range(3):
        token_login("quinn", "guess")
    assert token_login("quinn", PASSWORD).status_code == 429


# --- settings and passwords -----------------------------------------------------------


def test_postgres_connections_are_health_checked():
    script = (
        "import django; django.setup()\n"
        "from django.conf import settings\n"
        "d = settings.DATABASES['default']\n"
        "print(d['ENGINE'], d['CONN_MAX_AGE'], d['CONN_HEALTH_CHECKS'])\n"
    )
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": "postgres://annolab:x@127.0.0.1:1/annolab",  # never connected to
    }
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=django_settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split()[-3:] == ["django.db.backends.postgresql", "60", "True"]


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_connection_dropped_by_a_database_restart_costs_no_request(client):
    import psycopg
    from django.db import close_old_connections, connection

    UserFactory(username="rita")
    connection.ensure_connection()
    db = connection.settings_dict
    assert db["CONN_MAX_AGE"] > 0  # the connection outlives a request, as in production
    with psycopg.connect(
        dbname=db["NAME"],
        user=db["USER"],
        password=db["PASSWORD"],
        host=db["HOST"] or None,
        port=db["PORT"] or None,
        autocommit=True,
    ) as other:
        other.execute("SELECT pg_terminate_backend(%s)", [connection.connection.info.backend_pid])
    close_old_connections()  # what every request starts with (the test client skips it)
    assert web_login(client, "rita", PASSWORD).status_code == 302


def test_add_members_refuses_a_weak_password():
    from projects.tests.factories import ProjectFactory

    ProjectFactory(slug="mt")
    for weak, reason in [("password1", "too common"), ("20261130", "entirely numeric")]:
        with pytest.raises(CommandError, match=reason):
            call_command(
                "add_members", "mt", "--role", "annotator", "--create", "--password", weak, "ann"
            )
    call_command(
        "add_members", "mt", "--role", "annotator", "--create", "--password", "pw-123456", "ann"
    )


def test_demo_passwords_pass_the_validators():
    from django.contrib.auth import get_user_model
    from django.contrib.auth.password_validation import validate_password

    from demo.management.commands.load_demo import DEMO_USERS

    for username, password, _ in DEMO_USERS:
        user = get_user_model()(username=username, email=f"{username}@example.org")
        validate_password(password, user=user)
