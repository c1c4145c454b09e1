"""Media cost nothing per request: a point cloud is decoded once, at import, and its points
are sent as a plain file from then on; every stored file carries a validator (ETag), a
cache lifetime and byte ranges, and behind the proxy the proxy sends it after the site's
access check (X-Accel-Redirect)."""

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from projects import pointclouds
from projects.media import MEDIA_FOLDER, POINTS_FOLDER
from projects.models import Project
from projects.services import ProjectImportError, project_folder
from projects.tests.factories import MembershipFactory, UserFactory
from projects.tests.test_media import (
    WAV,
    cloud,
    media_url,
    points_url,
    rows_with,
    untrusted_import,
    write_project,
)

pytestmark = pytest.mark.django_db

ASCII_PCD = (
    b"# .PCD v0.7\nVERSION 0.7\nFIELDS x y z intensity\nSIZE 4 4 4 4\nTYPE F F F F\n"
    b"COUNT 1 1 1 1\nWIDTH 3\nHEIGHT 1\nPOINTS 3\nDATA ascii\n"
    b"1 2 3 0.5\n4 5 6 0.25\n7 8 9 1\n"
)
PCD_POINTS = np.array([[1, 2, 3, 0.5], [4, 5, 6, 0.25], [7, 8, 9, 1]], dtype="<f4")


@pytest.fixture
def scenes(tmp_path):
    """Two stored clouds (KITTI .bin, ASCII .pcd) and a clip."""
    rows = rows_with(pointcloud="clouds/scene.bin", media_url="media/clip 01.wav", n=2)
    rows[1]["pointcloud"] = "clouds/scan.pcd"
    files = {
        "clouds/scene.bin": cloud().tobytes(),
        "clouds/scan.pcd": ASCII_PCD,
        "media/clip 01.wav": WAV,
    }
    return untrusted_import(write_project(tmp_path / "upload", rows, files=files))


@pytest.fixture
def annotator(client, scenes):
    user = UserFactory(username="annotator")
    MembershipFactory(user=user, project=scenes)
    client.force_login(user)
    return user


def body(response) -> bytes:
    return b"".join(response.streaming_content)


def points(response) -> np.ndarray:
    return np.frombuffer(body(response), dtype="<f4").reshape(-1, 4)


@pytest.fixture
def no_decoding(monkeypatch):
    """Every reader fails the test: a request that decodes a cloud is caught."""

    def decodes(*args, **kwargs):
        raise AssertionError("a point cloud was decoded during a request")

    for name in ("read_points", "parse_points", "parse_bin", "parse_pcd", "write_points"):
        monkeypatch.setattr(pointclouds, name, decodes)
    monkeypatch.setattr(np, "loadtxt", decodes)
    monkeypatch.setattr(np, "memmap", decodes)


def test_the_clouds_are_decoded_at_import_into_the_viewers_form(scenes):
    folder = project_folder(scenes) / POINTS_FOLDER / "clouds"
    assert (folder / "scene.bin.xyzi").read_bytes() == cloud().astype("<f4").tobytes()
    assert (folder / "scan.pcd.xyzi").read_bytes() == PCD_POINTS.tobytes()


def test_a_request_for_points_decodes_nothing(client, annotator, scenes, no_decoding):
    # The stored sources no longer decode: only the points decoded at import can answer.
    for name in ("scene.bin", "scan.pcd"):
        (project_folder(scenes) / MEDIA_FOLDER / "clouds" / name).write_bytes(b"\x00" * 17)
    for path, expected in (("clouds/scene.bin", cloud()), ("clouds/scan.pcd", PCD_POINTS)):
        response = client.get(points_url(scenes, path))
        assert response.status_code == 200
        assert response["X-Point-Count"] == str(len(expected))
        np.testing.assert_array_equal(points(response), expected)


def test_a_cloud_that_does_not_decode_refuses_the_import_and_keeps_nothing(tmp_path, settings):
    rows = rows_with(pointcloud="clouds/scene.bin", media_url="media/clip.wav")
    files = {"clouds/scene.bin": b"\x00" * 17, "media/clip.wav": WAV}
    with pytest.raises(ProjectImportError) as caught:
        untrusted_import(write_project(tmp_path / "upload", rows, files=files))
    message = str(caught.value)
    assert "item scene0, pointcloud 'clouds/scene.bin': not a readable point cloud" in message
    assert str(tmp_path) not in message
    assert not Project.objects.exists()
    assert not any(settings.PROJECT_FILES_ROOT.rglob("*.*"))


@pytest.mark.parametrize(
    ("url", "content_type"),
    [
        (lambda p: media_url(p, "media/clip 01.wav"), "audio/wav"),
        (lambda p: points_url(p, "clouds/scan.pcd"), "application/octet-stream"),
    ],
)
def test_a_file_carries_a_validator_and_a_cache_lifetime(
    client, annotator, scenes, url, content_type
):
    response = client.get(url(scenes))
    assert response.status_code == 200
    assert response["Content-Type"] == content_type
    assert response["Cache-Control"] == "private, max-age=3600"
    assert response["ETag"].startswith('"') and response["Last-Modified"]
    assert response["Accept-Ranges"] == "bytes"
    again = client.get(url(scenes), HTTP_IF_NONE_MATCH=response["ETag"])
    assert again.status_code == 304
    assert again["ETag"] == response["ETag"] and not again.content
    assert again["Cache-Control"] == "private, max-age=3600"


def test_points_are_sent_by_byte_ranges_too(client, annotator, scenes):
    response = client.get(points_url(scenes, "clouds/scan.pcd"), HTTP_RANGE="bytes=16-31")
    assert response.status_code == 206
    assert response["Content-Range"] == "bytes 16-31/48"
    assert body(response) == PCD_POINTS[1].tobytes()


def test_a_range_of_another_version_gets_the_whole_file(client, annotator, scenes):
    response = client.get(
        media_url(scenes, "media/clip 01.wav"), HTTP_RANGE="bytes=0-9", HTTP_IF_RANGE='"old-1"'
    )
    assert response.status_code == 200
    assert body(response) == WAV


def test_behind_the_proxy_the_proxy_sends_the_file(client, annotator, scenes, settings):
    settings.PROJECT_FILES_ACCEL_REDIRECT = "/_project_files/"
    folder = scenes.storage_folder
    response = client.get(media_url(scenes, "media/clip 01.wav"))
    assert response.status_code == 200 and response.content == b""
    assert response["X-Accel-Redirect"] == f"/_project_files/{folder}/media/media/clip%2001.wav"
    assert response["Content-Type"] == "audio/wav"
    assert response["Content-Disposition"].startswith("inline")
    assert response["Cache-Control"] == "private, max-age=3600"
    response = client.get(points_url(scenes, "clouds/scene.bin"))
    assert response["X-Accel-Redirect"] == (
        f"/_project_files/{folder}/points/clouds/scene.bin.xyzi"
    )
    assert response["X-Point-Count"] == "5"


def test_behind_the_proxy_an_outsider_still_gets_404(client, scenes, settings):
    settings.PROJECT_FILES_ACCEL_REDIRECT = "/_project_files/"
    client.force_login(UserFactory(username="outsider"))
    for url in (media_url(scenes, "media/clip 01.wav"), points_url(scenes, "clouds/scene.bin")):
        response = client.get(url)
        assert response.status_code == 404 and "X-Accel-Redirect" not in response


def test_points_not_decoded_are_404_until_prepare_points(client, annotator, scenes):
    """A project stored before clouds were decoded at import: the operator's command
    decodes them once."""
    decoded = project_folder(scenes) / POINTS_FOLDER / "clouds" / "scene.bin.xyzi"
    decoded.unlink()
    assert client.get(points_url(scenes, "clouds/scene.bin")).status_code == 404
    call_command("prepare_points")
    response = client.get(points_url(scenes, "clouds/scene.bin"))
    np.testing.assert_array_equal(points(response), cloud())


def test_prepare_points_again_follows_a_new_point_limit(scenes, settings):
    settings.POINT_CLOUD_MAX_POINTS = 2
    call_command("prepare_points", scenes.slug, "--again")
    decoded = project_folder(scenes) / POINTS_FOLDER / "clouds" / "scan.pcd.xyzi"
    assert decoded.read_bytes() == PCD_POINTS[[0, 2]].tobytes()


def test_prepare_points_names_a_cloud_that_does_not_decode(scenes):
    (project_folder(scenes) / MEDIA_FOLDER / "clouds" / "scan.pcd").write_bytes(b"junk")
    with pytest.raises(CommandError, match="1 stored point clouds do not decode"):
        call_command("prepare_points", "--again")
    with pytest.raises(CommandError, match="no project with slug nope"):
        call_command("prepare_points", "nope")
