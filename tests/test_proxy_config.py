"""The shipped nginx configuration (platform/nginx) is valid for Debian's nginx and agrees
with the site's settings: the upload limits, the internal location of the project files,
the client address as TRUSTED_PROXY_COUNT reads it, keep-alive beyond think times."""

import http.client
import os
import re
import shutil
import socket
import subprocess
from pathlib import Path

import pytest
import yaml
from django.conf import settings

from benchmarks.proxy import Proxy  # starts nginx with the shipped server configuration
from projects.services import project_folder
from projects.tests.factories import MembershipFactory, ProjectFactory, UserFactory

ROOT = Path(__file__).resolve().parents[1]
NGINX = ROOT / "platform" / "nginx"
SITE = NGINX / "annolab.conf"
SERVER = NGINX / "annolab-server.conf"
ENV_EXAMPLE = ROOT / "platform" / "annolab.env.example"
NGINX_BIN = shutil.which("nginx", path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin")


def directive(name: str, text: str) -> str:
    found = re.findall(rf"^\s*{name}\s+([^;]+);", text, flags=re.MULTILINE)
    assert len(found) == 1, f"{name}: {found}"
    return found[0].strip()


def env_example() -> dict[str, str]:
    pairs = (line.split("=", 1) for line in ENV_EXAMPLE.read_text().splitlines() if "=" in line)
    return {key.strip(): value.strip() for key, value in pairs if not key.startswith("#")}


def self_signed(folder: Path) -> tuple[Path, Path]:
    cert, key = folder / "fullchain.pem", folder / "privkey.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
         "/CN=annolab.example.org", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    return cert, key


@pytest.mark.skipif(NGINX_BIN is None, reason="needs Debian's nginx (apt-get install nginx)")
def test_nginx_accepts_the_shipped_site(tmp_path):
    """`nginx -t` on the site file as Debian's nginx.conf includes it, with only the
    deployment's paths (certificate, checkout) pointing into a scratch folder."""
    cert, key = self_signed(tmp_path)
    site = SITE.read_text()
    for old, new in (
        ("/etc/annolab/tls/fullchain.pem", cert),
        ("/etc/annolab/tls/privkey.pem", key),
        ("/srv/annolab/app/platform/nginx/annolab-server.conf", SERVER),
    ):
        assert old in site, old
        site = site.replace(old, str(new))
    (tmp_path / "annolab.conf").write_text(site)
    (tmp_path / "nginx.conf").write_text(
        f"pid {tmp_path / 'nginx.pid'};\n"
        "events { worker_connections 768; }\n"
        "http {\n"
        "    include /etc/nginx/mime.types;\n"
        f"    access_log {tmp_path / 'access.log'};\n"
        f"    include {tmp_path / 'annolab.conf'};\n"
        "}\n"
    )
    done = subprocess.run(
        [NGINX_BIN, "-t", "-c", str(tmp_path / "nginx.conf"), "-p", str(tmp_path),
         "-e", str(tmp_path / "error.log")],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "syntax is ok" in done.stderr and "test is successful" in done.stderr


def test_the_body_limit_admits_the_largest_upload():
    value = directive("client_max_body_size", SERVER.read_text())
    megabytes = int(value.rstrip("mM"))
    largest = settings.UPLOAD_MAX_TOTAL_MB * 2**20 + settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    assert megabytes * 2**20 > largest


def test_requests_and_responses_are_buffered_and_connections_kept_past_think_times():
    text = SERVER.read_text()
    assert directive("proxy_request_buffering", text) == "on"
    assert directive("proxy_buffering", text) == "on"
    assert int(directive("keepalive_timeout", text).rstrip("s")) >= 120
    # gunicorn's own time limit acts before the proxy gives up on it.
    assert int(directive("proxy_read_timeout", text).rstrip("s")) > 60


def test_the_client_address_is_appended_for_one_trusted_proxy():
    text = SERVER.read_text()
    assert "proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;" in text
    assert "proxy_set_header X-Forwarded-Proto $scheme;" in text
    env = env_example()
    assert env["TRUSTED_PROXY_COUNT"] == "1"
    assert env["SECURE_PROXY_SSL_HEADER"] == "X-Forwarded-Proto"


def test_project_files_are_internal_and_where_the_settings_put_them():
    env = env_example()
    prefix = env["PROJECT_FILES_ACCEL_REDIRECT"]
    block = re.search(rf"location {re.escape(prefix)} \{{(.*?)\}}", SERVER.read_text(), re.S)
    assert block, f"no location {prefix}"
    body = block.group(1)
    assert "internal;" in body
    root = env.get("PROJECT_FILES_ROOT") or env["MEDIA_ROOT"].rstrip("/") + "/projects"
    assert directive("alias", body) == root.rstrip("/") + "/"
    static = re.search(r"location /static/ \{\s*alias ([^;]+);", SERVER.read_text())
    assert static.group(1) == env["STATIC_ROOT"].rstrip("/") + "/"


def test_compose_puts_the_proxy_in_front_of_the_web_process():
    compose = yaml.safe_load((ROOT / "platform" / "compose.yaml").read_text())["services"]
    assert "ports" not in compose["web"], "gunicorn is reached through the proxy only"
    proxy = compose["proxy"]
    assert any(str(port).endswith(":443") for port in proxy["ports"])
    assert compose["web"]["environment"]["PROJECT_FILES_ACCEL_REDIRECT"] == "/_project_files/"


@pytest.mark.skipif(NGINX_BIN is None, reason="needs Debian's nginx (apt-get install nginx)")
@pytest.mark.django_db(transaction=True)
def test_through_the_shipped_proxy_media_come_after_the_access_check(
    live_server, settings, tmp_path, client
):
    """The shipped server configuration in front of the site: a member gets a stored
    file sent by nginx (X-Accel-Redirect) with Django's headers, a range and a 304; an
    outsider gets 404, and the internal location is not reachable from outside."""
    settings.PROJECT_FILES_ACCEL_REDIRECT = "/_project_files/"
    project = ProjectFactory()
    stored = project_folder(project) / "media" / "a b.wav"
    stored.parent.mkdir(parents=True)
    stored.write_bytes(b"RIFF" + bytes(range(256)) * 4)
    member, outsider = UserFactory(), UserFactory()
    MembershipFactory(user=member, project=project)
    (tmp_path / "static").mkdir()
    (tmp_path / "static" / "site.css").write_text("body {}")
    upstream = live_server.url.removeprefix("http://")
    proxy = Proxy(free_port(), upstream, tmp_path / "static", settings.PROJECT_FILES_ROOT)
    try:
        proxy.wait_ready(path="/static/site.css")

        def get(path, user=None, **headers):
            if user is not None:
                client.force_login(user)
                headers["Cookie"] = f"sessionid={client.cookies['sessionid'].value}"
            conn = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=30)
            conn.request("GET", path, headers=headers)
            response = conn.getresponse()
            return response, response.read()

        url = f"/projects/{project.slug}/media/a%20b.wav"
        response, body = get(url, member)
        assert response.status == 200 and body == stored.read_bytes()
        assert response.getheader("Content-Type") == "audio/wav"
        assert response.getheader("Cache-Control") == "private, max-age=3600"
        assert response.getheader("X-Content-Type-Options") == "nosniff"
        assert response.getheader("Content-Disposition").startswith("inline")
        etag = response.getheader("ETag")
        response, body = get(url, member, Range="bytes=4-7")
        assert response.status == 206 and body == bytes(range(4))
        response, body = get(url, member, **{"If-None-Match": etag})
        assert response.status == 304 and body == b""
        assert get(url, outsider)[0].status == 404
        project.refresh_from_db()
        assert get(f"/_project_files/{project.storage_folder}/media/a%20b.wav")[0].status == 404
    finally:
        proxy.stop()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
