"""Media files a project stores: the files its instances name by relative path are checked
and copied into the project's own folder at import, served to who may annotate the project
(with byte ranges, for seeking), decoded once at import when they are point clouds, and
named by their URLs in the annotation page's context and the API's unit."""

import json
import os
import re

import numpy as np
import pytest
from django.urls import reverse

from projects.media import MEDIA_FOLDER
from projects.models import Project
from projects.services import ProjectImportError, import_project, project_folder
from projects.tests.factories import MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db

CONFIG = """annotation_task_name: Scenes and clips
data_files: [data.jsonl]
annotation_schemes:
  - {annotation_type: spatial_annotation, name: boxes, description: Cars, labels: [car]}
  - {annotation_type: temporal_grounding, name: events, description: When, labels: [go]}
"""

WAV = b"RIFF" + bytes(range(256)) * 4  # not a real clip: the server never decodes audio


def cloud(n: int = 5) -> np.ndarray:
    """n points with distinct coordinates and intensities."""
    return np.arange(n * 4, dtype="<f4").reshape(n, 4) / 4


def write_project(folder, rows, config=CONFIG, files=None):
    """A config folder: the config, its data file, and the files (relative path -> bytes)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.yaml").write_text(config)
    (folder / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    for relative, content in (files or {}).items():
        target = folder / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
    return folder / "config.yaml"


def rows_with(pointcloud=None, media_url=None, n=1):
    rows = []
    for i in range(n):
        row = {"id": f"scene{i}", "text": f"Scene {i}"}
        if pointcloud is not None:
            row["pointcloud"] = pointcloud
        if media_url is not None:
            row["media_url"] = media_url
        rows.append(row)
    return rows


def untrusted_import(config_path, slug="scenes"):
    return import_project(config_path=config_path, slug=slug, trusted=False).project


@pytest.fixture
def scenes(tmp_path):
    """A project whose instances name a stored cloud and a stored clip."""
    config = write_project(
        tmp_path / "upload",
        rows_with(pointcloud="clouds/scene.bin", media_url="media/clip_01.wav"),
        files={"clouds/scene.bin": cloud().tobytes(), "media/clip_01.wav": WAV},
    )
    return untrusted_import(config)


@pytest.fixture
def annotator(client, scenes):
    user = UserFactory(username="annotator")
    MembershipFactory(user=user, project=scenes)
    client.force_login(user)
    return user


def media_url(project, path):
    return reverse("project-media", kwargs={"slug": project.slug, "path": path})


def points_url(project, path):
    return reverse("project-points", kwargs={"slug": project.slug, "path": path})


# --------------------------------------------------------------------------- import


def test_import_copies_the_named_files_into_the_project_folder(tmp_path, scenes):
    stored = project_folder(scenes) / MEDIA_FOLDER
    assert (stored / "clouds" / "scene.bin").read_bytes() == cloud().tobytes()
    assert (stored / "media" / "clip_01.wav").read_bytes() == WAV
    # The project no longer needs the folder it was imported from.
    for path in (tmp_path / "upload").rglob("*"):
        if path.is_file():
            path.unlink()
    assert (stored / "media" / "clip_01.wav").read_bytes() == WAV


def test_urls_and_missing_fields_store_nothing(tmp_path):
    rows = rows_with(pointcloud="https://example.org/scene.bin", media_url="/static/clip.mp4")
    rows.append({"id": "bare", "text": "No media at all"})
    config = write_project(tmp_path / "p", rows)
    project = untrusted_import(config)
    assert not (project_folder(project) / MEDIA_FOLDER).exists()


def test_a_site_path_is_a_url_never_a_server_file(tmp_path):
    """A value starting with / is kept as a URL: nothing is read from that path."""
    config = write_project(tmp_path / "p", rows_with(pointcloud="/etc/passwd.bin"))
    project = untrusted_import(config)
    assert not (project_folder(project) / MEDIA_FOLDER).exists()


def refused(config_path) -> str:
    with pytest.raises(ProjectImportError) as caught:
        untrusted_import(config_path)
    assert not Project.objects.exists(), "a refused import stores no project"
    return str(caught.value)


@pytest.mark.parametrize(
    "written",
    ["../outside.bin", "clouds/../../outside.bin", "~/outside.bin", "file:///etc/outside.bin"],
)
def test_a_path_leading_out_of_the_task_folder_is_refused(tmp_path, settings, written):
    (tmp_path / "outside.bin").write_bytes(cloud().tobytes())
    message = refused(write_project(tmp_path / "upload", rows_with(pointcloud=written)))
    assert "item scene0" in message and "pointcloud" in message and repr(written) in message
    assert "inside the config's task folder" in message
    assert str(tmp_path) not in message
    assert not any(settings.PROJECT_FILES_ROOT.rglob("*.bin"))


def test_a_link_leading_out_is_refused(tmp_path):
    (tmp_path / "secret.bin").write_bytes(cloud().tobytes())
    folder = tmp_path / "upload"
    config = write_project(folder, rows_with(pointcloud="clouds/scene.bin"))
    (folder / "clouds").mkdir()
    os.symlink(tmp_path / "secret.bin", folder / "clouds" / "scene.bin")
    message = refused(config)
    assert "'clouds/scene.bin'" in message and "link leading outside" in message
    assert str(tmp_path) not in message


def test_a_missing_file_is_refused_with_its_item(tmp_path):
    rows = rows_with(pointcloud="clouds/scene.bin", n=2)
    rows[1]["pointcloud"] = "clouds/gone.bin"
    config = write_project(tmp_path / "upload", rows, files={"clouds/scene.bin": cloud().tobytes()})
    message = refused(config)
    assert message.startswith("item scene1, pointcloud 'clouds/gone.bin': file not found")
    assert str(tmp_path) not in message


@pytest.mark.parametrize(
    ("row", "allowed"),
    [
        (rows_with(pointcloud="clouds/scene.wav"), ".bin, .pcd"),
        (rows_with(media_url="media/clip.bin"), ".wav"),
        (rows_with(media_url="media/page.html"), ".mp4"),
    ],
)
def test_a_wrong_extension_is_refused(tmp_path, row, allowed):
    files = {"clouds/scene.wav": WAV, "media/clip.bin": b"", "media/page.html": b"<b>"}
    message = refused(write_project(tmp_path / "upload", row, files=files))
    assert "item scene0" in message and "the file must end in one of" in message
    assert allowed in message


def test_a_malformed_point_cloud_is_refused_at_import(tmp_path):
    config = write_project(
        tmp_path / "upload",
        rows_with(pointcloud="clouds/scene.bin"),
        files={"clouds/scene.bin": b"\x00" * 17},
    )
    message = refused(config)
    assert "item scene0, pointcloud 'clouds/scene.bin': not a readable point cloud" in message
    assert "not a multiple of 16" in message


def test_a_file_over_the_size_limit_is_refused_naming_the_limit(tmp_path, settings):
    settings.PROJECT_MEDIA_MAX_FILE_MB = 1
    big = b"\x00" * (1024 * 1024 + 16)
    config = write_project(
        tmp_path / "upload", rows_with(media_url="media/long.wav"), files={"media/long.wav": big}
    )
    message = refused(config)
    assert "item scene0, media_url 'media/long.wav'" in message
    assert "limit of 1 MB (PROJECT_MEDIA_MAX_FILE_MB)" in message
    assert not any(settings.PROJECT_FILES_ROOT.rglob("long.wav"))


def test_files_over_the_total_limit_are_refused_naming_the_limit(tmp_path, settings):
    settings.PROJECT_MEDIA_MAX_TOTAL_MB = 1
    half = b"\x00" * (600 * 1024)
    rows = rows_with(media_url="media/a.wav", n=2)
    rows[1]["media_url"] = "media/b.wav"
    config = write_project(
        tmp_path / "upload", rows, files={"media/a.wav": half, "media/b.wav": half}
    )
    message = refused(config)
    assert message.startswith("item scene1, media_url 'media/b.wav'")
    assert "limit of 1 MB (PROJECT_MEDIA_MAX_TOTAL_MB)" in message


def test_files_over_the_count_limit_are_refused_naming_the_limit(tmp_path, settings):
    settings.PROJECT_MEDIA_MAX_FILES = 2
    rows = rows_with(media_url="media/0.wav", n=3)
    for n, row in enumerate(rows):
        row["media_url"] = f"media/{n}.wav"
    files = {f"media/{n}.wav": WAV for n in range(3)}
    message = refused(write_project(tmp_path / "upload", rows, files=files))
    assert message.startswith("item scene2, media_url 'media/2.wav'")
    assert "limit of 2 (PROJECT_MEDIA_MAX_FILES)" in message


def test_one_file_named_by_many_items_is_stored_once(tmp_path, settings):
    settings.PROJECT_MEDIA_MAX_FILES = 1
    config = write_project(
        tmp_path / "upload",
        rows_with(media_url="media/clip.wav", n=3),
        files={"media/clip.wav": WAV},
    )
    project = untrusted_import(config)
    assert (project_folder(project) / MEDIA_FOLDER / "media" / "clip.wav").is_file()


def test_a_custom_pointcloud_key_names_the_field(tmp_path):
    config = CONFIG.replace("labels: [car]}", "labels: [car], pointcloud_key: scan}")
    rows = [{"id": "s", "text": "S", "scan": "scan.pcd", "pointcloud": "not/read.bin"}]
    pcd = (
        b"FIELDS x y z\nSIZE 4 4 4\nTYPE F F F\nCOUNT 1 1 1\nWIDTH 1\nPOINTS 1\nDATA ascii\n1 2 3\n"
    )
    project = untrusted_import(write_project(tmp_path / "p", rows, config, {"scan.pcd": pcd}))
    assert (project_folder(project) / MEDIA_FOLDER / "scan.pcd").read_bytes() == pcd


# --------------------------------------------------------------------------- serving


def test_an_annotator_gets_the_stored_file(client, annotator, scenes):
    response = client.get(media_url(scenes, "media/clip_01.wav"))
    assert response.status_code == 200
    assert b"".join(response.streaming_content) == WAV
    assert response["Content-Type"] == "audio/wav"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Content-Disposition"].startswith("inline")
    assert response["Accept-Ranges"] == "bytes"
    assert response["Content-Length"] == str(len(WAV))


def test_a_point_cloud_file_is_served_as_bytes(client, annotator, scenes):
    response = client.get(media_url(scenes, "clouds/scene.bin"))
    assert response["Content-Type"] == "application/octet-stream"
    assert b"".join(response.streaming_content) == cloud().tobytes()


@pytest.mark.parametrize(
    ("header", "first", "last"),
    [
        ("bytes=0-9", 0, 9),
        ("bytes=100-", 100, len(WAV) - 1),
        ("bytes=-10", len(WAV) - 10, len(WAV) - 1),
        ("bytes=1000-99999", 1000, len(WAV) - 1),
    ],
)
def test_a_range_request_gets_that_range(client, annotator, scenes, header, first, last):
    response = client.get(media_url(scenes, "media/clip_01.wav"), HTTP_RANGE=header)
    assert response.status_code == 206
    assert b"".join(response.streaming_content) == WAV[first : last + 1]
    assert response["Content-Range"] == f"bytes {first}-{last}/{len(WAV)}"
    assert response["Content-Length"] == str(last - first + 1)
    assert response["Content-Type"] == "audio/wav"


def test_a_range_past_the_end_is_416(client, annotator, scenes):
    response = client.get(media_url(scenes, "media/clip_01.wav"), HTTP_RANGE="bytes=5000-")
    assert response.status_code == 416
    assert response["Content-Range"] == f"bytes */{len(WAV)}"


def test_several_ranges_get_the_whole_file(client, annotator, scenes):
    response = client.get(media_url(scenes, "media/clip_01.wav"), HTTP_RANGE="bytes=0-1,5-6")
    assert response.status_code == 200
    assert b"".join(response.streaming_content) == WAV


def test_someone_outside_the_project_gets_404(client, scenes):
    client.force_login(UserFactory(username="outsider"))
    assert client.get(media_url(scenes, "media/clip_01.wav")).status_code == 404
    assert client.get(points_url(scenes, "clouds/scene.bin")).status_code == 404


def test_an_anonymous_visitor_is_sent_to_log_in(client, scenes):
    response = client.get(media_url(scenes, "media/clip_01.wav"))
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_what_is_not_stored_is_404_alike(client, annotator, scenes, tmp_path):
    """The answer is the same whether a file exists outside the media folder or not (the
    page quotes the path asked for, and its form's CSRF token is new each time)."""
    (project_folder(scenes) / "secret.wav").write_bytes(WAV)
    (project_folder(scenes) / MEDIA_FOLDER / "page.html").write_bytes(b"<script>")

    def page(path):
        url = f"/projects/{scenes.slug}/media/{path}"
        response = client.get(url)
        assert response.status_code == 404, path
        text = response.content.decode().replace(url, "URL")
        return re.sub(r'name="csrfmiddlewaretoken" value="\w+"', "", text)

    missing = page("media/none.wav")
    for path in ("../secret.wav", "media/../../secret.wav", "page.html", "/etc/passwd"):
        assert page(path) == missing, path


def test_a_link_in_the_media_folder_is_not_followed(client, annotator, scenes):
    (project_folder(scenes) / "secret.wav").write_bytes(WAV)
    os.symlink(
        project_folder(scenes) / "secret.wav", project_folder(scenes) / MEDIA_FOLDER / "link.wav"
    )
    # A link inside the project's own folder stays inside it, but not inside media/.
    assert client.get(media_url(scenes, "link.wav")).status_code == 404


# --------------------------------------------------------------------------- points


def decoded(response) -> np.ndarray:
    return np.frombuffer(b"".join(response.streaming_content), dtype="<f4").reshape(-1, 4)


def test_the_points_endpoint_sends_the_decoded_points(client, annotator, scenes):
    response = client.get(points_url(scenes, "clouds/scene.bin"))
    assert response.status_code == 200
    assert response["Content-Type"] == "application/octet-stream"
    assert response["X-Point-Count"] == "5"
    np.testing.assert_array_equal(decoded(response), cloud())


def test_a_large_cloud_is_evenly_thinned_at_import(client, tmp_path, settings):
    settings.POINT_CLOUD_MAX_POINTS = 3
    config = write_project(
        tmp_path / "upload",
        rows_with(pointcloud="clouds/scene.bin"),
        files={"clouds/scene.bin": cloud(101).tobytes()},
    )
    project = untrusted_import(config)
    user = UserFactory(username="annotator")
    MembershipFactory(user=user, project=project)
    client.force_login(user)
    response = client.get(points_url(project, "clouds/scene.bin"))
    assert response["X-Point-Count"] == "3"
    # The first, the middle and the last point: spread over the cloud, not its start.
    np.testing.assert_array_equal(decoded(response), cloud(101)[[0, 50, 100]])


def test_the_points_endpoint_serves_only_point_clouds(client, annotator, scenes):
    assert client.get(points_url(scenes, "media/clip_01.wav")).status_code == 404


# --------------------------------------------------------------------------- context


def scheme_views(response) -> dict:
    return {view["scheme"]["name"]: view for view in response.context["schemes"]}


def test_the_page_names_the_stored_files(client, annotator, scenes):
    response = client.get(reverse("annotate", args=[scenes.slug]))
    views = scheme_views(response)
    assert views["boxes"]["points_url"] == points_url(scenes, "clouds/scene.bin")
    events = views["events"]
    assert events["media_url"] == media_url(scenes, "media/clip_01.wav")
    assert events["media"] == events["media_url"]
    assert events["media_kind"] == "audio"
    # The fields a scheme draws are not repeated as text in the context.
    shown = [field["key"] for field in response.context["payload"]["context"]]
    assert "pointcloud" not in shown and "media_url" not in shown
    # What the page loads is what the server serves.
    assert client.get(views["boxes"]["points_url"]).status_code == 200
    assert client.get(events["media_url"]).status_code == 200


def test_urls_in_the_data_are_used_as_written(client, tmp_path):
    rows = rows_with(pointcloud="https://example.org/scene.pcd", media_url="/static/clip.webm")
    project = untrusted_import(write_project(tmp_path / "p", rows))
    user = UserFactory(username="viewer")
    MembershipFactory(user=user, project=project)
    client.force_login(user)
    views = scheme_views(client.get(reverse("annotate", args=[project.slug])))
    assert views["boxes"]["points_url"] is None  # only stored files are decoded
    assert views["events"]["media_url"] == "/static/clip.webm"
    assert views["events"]["media_kind"] == "video"


def test_an_instance_without_media_draws_none(client, tmp_path):
    project = untrusted_import(write_project(tmp_path / "p", rows_with()))
    user = UserFactory(username="viewer")
    MembershipFactory(user=user, project=project)
    client.force_login(user)
    views = scheme_views(client.get(reverse("annotate", args=[project.slug])))
    assert views["boxes"]["points_url"] is None
    assert views["events"]["media_url"] is None


def test_the_api_unit_names_the_stored_files(client, annotator, scenes):
    response = client.post(
        reverse("api-queue-next", args=[scenes.slug]), {}, content_type="application/json"
    )
    assert response.status_code == 200
    unit = response.json()
    assert unit["data"]["pointcloud"] == "clouds/scene.bin"  # as written in the data
    assert unit["media"]["pointcloud"]["points_url"] == points_url(scenes, "clouds/scene.bin")
    assert unit["media"]["media_url"] == {
        "url": media_url(scenes, "media/clip_01.wav"),
        "kind": "audio",
        "stored": True,
        "points_url": None,
    }


# --------------------------------------------------------------------------- web upload


def upload_scenes(client, settings, media_files, rows):
    """POST the upload form as a lab admin: the config, its data file and the media files."""
    from django.core.files.uploadedfile import SimpleUploadedFile

    from projects.tests.factories import LabFactory, LabMembershipFactory

    lab = LabFactory()
    admin = UserFactory(username="labadmin")
    LabMembershipFactory(lab=lab, user=admin, is_admin=True)
    client.force_login(admin)
    data = "".join(json.dumps(r) + "\n" for r in rows).encode()
    files = [SimpleUploadedFile("data.jsonl", data)]
    files += [SimpleUploadedFile(name, content) for name, content in media_files.items()]
    return client.post(
        reverse("project-create"),
        {
            "lab": lab.pk,
            "config_file": SimpleUploadedFile("config.yaml", CONFIG.encode()),
            "data_files": files,
        },
    )


def test_an_upload_finds_its_media_by_file_name(client, settings):
    """Uploaded files arrive side by side; the data names them in folders all the same."""
    rows = rows_with(pointcloud="clouds/scene.bin", media_url="media/clip_01.wav")
    files = {"scene.bin": cloud().tobytes(), "clip_01.wav": WAV}
    response = upload_scenes(client, settings, files, rows)
    assert response.status_code == 302, response.content.decode()
    project = Project.objects.get()
    stored = project_folder(project) / MEDIA_FOLDER
    assert (stored / "clouds" / "scene.bin").read_bytes() == cloud().tobytes()
    assert (stored / "media" / "clip_01.wav").read_bytes() == WAV
    views = scheme_views(client.get(reverse("annotate", args=[project.slug])))
    assert client.get(views["boxes"]["points_url"])["X-Point-Count"] == "5"


def test_an_upload_missing_a_media_file_is_refused_and_keeps_nothing(client, settings):
    rows = rows_with(pointcloud="clouds/scene.bin", media_url="media/clip_01.wav")
    response = upload_scenes(client, settings, {"scene.bin": cloud().tobytes()}, rows)
    assert response.status_code == 400
    text = response.content.decode()
    assert "item scene0, media_url &#x27;media/clip_01.wav&#x27;: file not found" in text
    assert str(settings.PROJECT_FILES_ROOT) not in text
    assert not Project.objects.exists()
    assert not any(settings.PROJECT_FILES_ROOT.iterdir())


# --------------------------------------------------------------------------- more cases


def test_a_file_name_with_spaces_and_signs_is_served_by_its_url(client, tmp_path):
    name = "media/take #1 été?.wav"
    project = untrusted_import(
        write_project(tmp_path / "p", rows_with(media_url=name), files={name: WAV})
    )
    user = UserFactory(username="viewer")
    MembershipFactory(user=user, project=project)
    client.force_login(user)
    views = scheme_views(client.get(reverse("annotate", args=[project.slug])))
    url = views["events"]["media_url"]
    assert "#" not in url and "?" not in url  # quoted, so the browser asks for the file
    response = client.get(url)
    assert response.status_code == 200 and b"".join(response.streaming_content) == WAV


def test_a_tiered_scheme_stores_and_names_its_video(client, tmp_path):
    config = CONFIG.replace(
        "{annotation_type: temporal_grounding, name: events, description: When, labels: [go]}",
        "{annotation_type: tiered_annotation, name: events, description: Who, labels: [talk],"
        " tiers: [A, B], media_key: video}",
    )
    rows = [{"id": "v", "text": "V", "video": "clips/v.webm"}]
    files = {"clips/v.webm": b"\x1a\x45\xdf\xa3"}
    project = untrusted_import(write_project(tmp_path / "p", rows, config, files))
    user = UserFactory(username="viewer")
    MembershipFactory(user=user, project=project)
    client.force_login(user)
    views = scheme_views(client.get(reverse("annotate", args=[project.slug])))
    assert views["events"]["media_url"] == media_url(project, "clips/v.webm")
    assert views["events"]["media_kind"] == "video"
    assert client.get(views["events"]["media_url"])["Content-Type"] == "video/webm"


def test_a_lab_admin_who_manages_the_project_gets_the_file(client, scenes):
    from projects.tests.factories import LabMembershipFactory

    admin = UserFactory(username="labadmin")
    LabMembershipFactory(lab=scenes.lab, user=admin, is_admin=True)
    client.force_login(admin)
    assert client.get(media_url(scenes, "media/clip_01.wav")).status_code == 200
    assert client.get(points_url(scenes, "clouds/scene.bin")).status_code == 200


def test_a_refused_form_keeps_the_media_urls(client, annotator, scenes):
    page = client.get(reverse("annotate", args=[scenes.slug]))
    unit = page.context["unit"]
    response = client.post(
        reverse("annotate-unit", args=[scenes.slug, unit.pk]),
        {"boxes__cx": ["not a number"], "events__start": ["x"]},
    )
    assert response.status_code == 400
    views = scheme_views(response)
    assert views["boxes"]["points_url"] == points_url(scenes, "clouds/scene.bin")
    assert views["events"]["media_url"] == media_url(scenes, "media/clip_01.wav")


def test_a_head_request_gets_the_headers_only(client, annotator, scenes):
    response = client.head(media_url(scenes, "media/clip_01.wav"))
    assert response.status_code == 200
    assert response["Content-Length"] == str(len(WAV))
    assert client.post(media_url(scenes, "media/clip_01.wav")).status_code == 405


def test_an_import_refused_after_copying_leaves_no_file_behind(tmp_path, settings, monkeypatch):
    """A design refused while the project is built, after the media were copied: the
    copies go, with the folders made for them."""
    from projects import events

    def refuse(**kwargs):
        raise events.BuildRefused("the design is refused")

    monkeypatch.setattr(events, "built_project", refuse)
    config = write_project(
        tmp_path / "upload",
        rows_with(pointcloud="clouds/scene.bin", media_url="media/clip_01.wav"),
        files={"clouds/scene.bin": cloud().tobytes(), "media/clip_01.wav": WAV},
    )
    message = refused(config)
    assert "the design is refused" in message
    assert not any(settings.PROJECT_FILES_ROOT.iterdir())
    assert (tmp_path / "upload" / "media" / "clip_01.wav").read_bytes() == WAV  # the source
