"""Media files a project stores: audio, video and point clouds named by its instances.

An instance field that names media (a segment scheme's ``media_key``, a box scheme's
``pointcloud_key``: SchemeType.media_fields) holds either a URL, used as written (``https://``,
``http://``, or a site path starting with ``/``), or a relative path to a file sent with
the config. Relative paths are resolved in the config's task folder and may not leave it
(projects.paths.confine); at import each file is checked (extension, size) and copied into
the project's own folder under ``media/``, at the same relative path, so the project never
depends on the folder it was imported from. A point cloud is decoded there, once: the
points the viewer draws go to ``points/<path>.xyzi`` (projects.pointclouds.write_points).
The pages and the API then name a file by its ``project-media`` URL (and a cloud's points
by its ``project-points`` URL); both are served as plain files, never decoded again.
"""

from __future__ import annotations

import os
import posixpath
import re
import secrets
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from django.conf import settings
from django.urls import reverse

from projects.limits import Limits
from projects.paths import PathRefused, confine
from projects.pointclouds import POINTS_SUFFIX, write_points
from projects.schemes import scheme_type

MB = 1024 * 1024
MEDIA_FOLDER = "media"  # inside the project's folder
POINTS_FOLDER = "points"  # the decoded clouds, beside media/

AUDIO = {
    ".wav": "audio/wav",
    ".mp3": "audio/mpeg",
    ".ogg": "audio/ogg",
    ".oga": "audio/ogg",
    ".flac": "audio/flac",
    ".m4a": "audio/mp4",
}
VIDEO = {".mp4": "video/mp4", ".webm": "video/webm", ".ogv": "video/ogg"}
POINT_CLOUDS = {".bin": "application/octet-stream", ".pcd": "application/octet-stream"}
CONTENT_TYPES = {**AUDIO, **VIDEO, **POINT_CLOUDS}

# What a scheme's media field may name (SchemeType.media_fields gives field -> kind).
KIND_EXTENSIONS = {"timeline": {**AUDIO, **VIDEO}, "pointcloud": POINT_CLOUDS}

URL_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")


class MediaRefused(ValueError):
    """A media file an import cannot store; the message names the item, the field and the
    path as written, never a server path."""


@dataclass(frozen=True)
class MediaFile:
    """One file to store: where it is read, and its path inside the project's media/;
    ``kind`` its field's media kind, ``where`` the item and field a refusal names."""

    source: Path
    relative: str
    size: int
    kind: str = "timeline"
    where: str = ""


def is_url(value: str) -> bool:
    """Whether a media value is a URL (used as written) rather than a stored file's path."""
    return value.startswith(("/", "http://", "https://"))


def media_fields(schemes: Iterable[Mapping]) -> dict[str, str]:
    """Instance field -> media kind ("timeline" or "pointcloud") over a project's schemes."""
    fields: dict[str, str] = {}
    for scheme in schemes:
        fields.update(scheme_type(scheme["type"]).media_fields(scheme["options"]))
    return fields


def media_kind(value: str) -> str:
    """Whether a timeline's media is "audio" or "video", by its extension (video when
    unknown)."""
    path = value.split("?", 1)[0].split("#", 1)[0]
    return "audio" if PurePosixPath(path).suffix.lower() in AUDIO else "video"


def relative_path(value: str) -> str:
    """A stored file's normal relative path (``a/./b.wav`` -> ``a/b.wav``); PathRefused when
    it is absolute, leads out through '..', or names another URL scheme."""
    if (
        not value
        or "\\" in value
        or "\x00" in value
        or value.startswith("~")
        or URL_SCHEME.match(value)
        or is_url(value)
    ):
        raise PathRefused("media")
    normal = posixpath.normpath(value)
    if normal in (".", "..") or normal.startswith("../"):
        raise PathRefused("media")
    return normal


def check_media(config, data, limits: Limits, *, by_name: Path | None = None) -> list[MediaFile]:
    """The files a project's instances name, each checked: inside the task folder, an
    allowed extension, present, within the limits (a point cloud is decoded when stored,
    store_media). MediaRefused for the first that is not, naming its item, field and path
    as written.

    ``by_name``: a folder where a file not found at its path is looked for by its file name
    alone (a web upload's folder, where the uploaded files land side by side)."""
    fields = media_fields(scheme.model_dump(mode="json") for scheme in config.schemes)
    if not fields:
        return []
    root = Path(config.base_dir)
    files: dict[str, MediaFile] = {}
    total = 0
    for instance in data.instances:
        for key, kind in fields.items():
            value = (instance.context or {}).get(key)
            where = f"item {instance.instance_id}, {key} {value!r}"
            found = _media_file(value, kind, root, where, known=files, by_name=by_name)
            if found is None:
                continue
            if len(files) + 1 > limits.media_files:
                raise MediaRefused(
                    f"{where}: the project names more media files than the limit of "
                    f"{limits.media_files} (PROJECT_MEDIA_MAX_FILES)"
                )
            if found.size > limits.media_file_mb * MB:
                raise MediaRefused(
                    f"{where}: the file is larger than the limit of {limits.media_file_mb} MB "
                    "(PROJECT_MEDIA_MAX_FILE_MB)"
                )
            total += found.size
            if total > limits.media_total_mb * MB:
                raise MediaRefused(
                    f"{where}: the media files together are larger than the limit of "
                    f"{limits.media_total_mb} MB (PROJECT_MEDIA_MAX_TOTAL_MB)"
                )
            files[found.relative] = found
    return list(files.values())


def _media_file(value, kind, root: Path, where: str, known: dict, by_name) -> MediaFile | None:
    """The file a media value names, found in the task folder ``root``; None for no value,
    a URL, or a file ``known`` already; MediaRefused (saying ``where``) for a bad one."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise MediaRefused(f"{where}: must be a text: a URL or a relative path to a file")
    if is_url(value):
        return None
    try:
        relative = relative_path(value)
        source = confine("media", relative, root)
    except PathRefused:
        raise MediaRefused(
            f"{where}: must be an http(s) URL, a site path starting with '/', or a relative "
            "path inside the config's task folder (no absolute path, no '..' or link leading "
            "outside it)"
        ) from None
    allowed = KIND_EXTENSIONS[kind]
    if PurePosixPath(relative).suffix.lower() not in allowed:
        raise MediaRefused(f"{where}: the file must end in one of {', '.join(allowed)}")
    if relative in known:
        return None
    if not source.is_file() and by_name is not None:
        try:
            source = confine("media", PurePosixPath(relative).name, by_name)
        except PathRefused:
            pass
    if not source.is_file():
        raise MediaRefused(f"{where}: file not found in the config's task folder")
    size = source.stat().st_size
    return MediaFile(source=source, relative=relative, size=size, kind=kind, where=where)


def store_media(files: list[MediaFile], project_root: Path) -> list[Path]:
    """Copy the checked files into ``project_root``/media/ at their relative paths and
    decode each point cloud once into points/ (POINT_CLOUD_MAX_POINTS at most); the files
    written (a file already in its place, as in an upload's own folder, is kept).
    MediaRefused for a cloud that does not decode. On failure nothing written stays."""
    if not files:
        return []
    folder = Path(project_root) / MEDIA_FOLDER
    written: list[Path] = []
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for media in files:
            target = confine("media", media.relative, folder)
            if target.exists() and os.path.samefile(target, media.source):
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            temporary = target.with_name(f".{target.name}.{secrets.token_hex(6)}.tmp")
            try:
                with media.source.open("rb") as source, temporary.open("xb") as out:
                    # At most the size checked: a file that grew since is cut, not trusted.
                    shutil.copyfileobj(_limited(source, media.size), out)
                os.replace(temporary, target)
            except BaseException:
                temporary.unlink(missing_ok=True)
                raise
            written.append(target)
        for media in files:
            if media.kind == "pointcloud":
                written.append(_decode_cloud(media, folder, Path(project_root)))
    except BaseException:
        remove_media(written, project_root)
        raise
    return written


def _decode_cloud(media: MediaFile, folder: Path, project_root: Path) -> Path:
    """Decode the stored copy of a cloud (not its source, which may have changed since)."""
    target = points_path(project_root, media.relative)
    try:
        write_points(
            confine("media", media.relative, folder),
            target,
            max_points=settings.POINT_CLOUD_MAX_POINTS,
        )
    except ValueError as exc:
        raise MediaRefused(f"{media.where}: not a readable point cloud: {exc}") from None
    return target


def points_path(project_root: Path, relative: str) -> Path:
    """Where the decoded points of the stored cloud at ``relative`` (a normal relative
    path, relative_path) are kept, inside the project's points/ folder."""
    return confine("media", relative + POINTS_SUFFIX, Path(project_root) / POINTS_FOLDER)


def prepare_points(project_root: Path, *, again: bool = False) -> tuple[int, list[str]]:
    """Decode every stored cloud of a project that has no decoded points yet (all of them
    with ``again``): for projects stored before clouds were decoded at import, or after
    POINT_CLOUD_MAX_POINTS changed. The number decoded and the clouds that do not decode."""
    folder = Path(project_root) / MEDIA_FOLDER
    done, failed = 0, []
    if not folder.is_dir():
        return done, failed
    for source in sorted(folder.rglob("*")):
        if source.suffix.lower() not in POINT_CLOUDS or not source.is_file():
            continue
        relative = source.relative_to(folder).as_posix()
        try:
            source = confine("media", relative, folder)  # no link leading out of media/
            target = points_path(project_root, relative)
        except PathRefused:
            failed.append(f"{relative}: a link leading out of the project's media folder")
            continue
        if target.is_file() and not again:
            continue
        try:
            write_points(source, target, max_points=settings.POINT_CLOUD_MAX_POINTS)
        except ValueError as exc:
            failed.append(f"{relative}: {exc}")
            continue
        done += 1
    return done, failed


def remove_media(paths: list[Path], project_root: Path | None = None) -> None:
    """Remove files store_media wrote (an import that failed after storing them), then the
    folders left empty under ``project_root``, itself included."""
    for path in paths:
        path.unlink(missing_ok=True)
    if project_root is None:
        return
    root = Path(project_root)
    for folder in sorted({p.parent for p in paths}, key=lambda p: len(p.parts), reverse=True):
        while folder != root and folder.is_relative_to(root):
            try:
                folder.rmdir()  # only an empty folder goes
            except OSError:
                break
            folder = folder.parent
    try:
        root.rmdir()
    except OSError:
        pass


class _limited:
    """A binary file read up to ``size`` bytes."""

    def __init__(self, stream, size: int):
        self.stream, self.left = stream, size

    def read(self, n: int = -1) -> bytes:
        if self.left <= 0:
            return b""
        n = self.left if n is None or n < 0 else min(n, self.left)
        chunk = self.stream.read(n)
        self.left -= len(chunk)
        return chunk


def stored_file(project_root: Path, path: str) -> Path | None:
    """The stored media file at ``path`` (as a URL names it), confined to the project's
    media folder again; None when refused, of another extension, or not stored."""
    try:
        relative = relative_path(path)
        target = confine("media", relative, Path(project_root) / MEDIA_FOLDER)
    except PathRefused:
        return None
    if target.suffix.lower() not in CONTENT_TYPES or not target.is_file():
        return None
    return target


def stored_points(project_root: Path, path: str) -> Path | None:
    """The decoded points of the stored cloud at ``path`` (as a URL names it), confined to
    the project's points folder; None when refused, not a cloud, or not decoded."""
    try:
        relative = relative_path(path)
        if PurePosixPath(relative).suffix.lower() not in POINT_CLOUDS:
            return None
        target = points_path(project_root, relative)
    except PathRefused:
        return None
    return target if target.is_file() else None


def unit_media(project, data: Mapping[str, Any]) -> dict[str, dict]:
    """For each media field the unit's instance fills: {"url": what the page loads, "kind":
    "audio" / "video" / "pointcloud", "stored": whether the project holds the file,
    "points_url": the decoded points' URL for a stored point cloud, else None}."""
    entries: dict[str, dict] = {}
    for key, kind in media_fields(project.schemes).items():
        value = data.get(key)
        if not isinstance(value, str) or not value:
            continue
        stored = not is_url(value)
        if stored:
            try:
                relative = relative_path(value)
            except PathRefused:  # refused at import; a project stored before is not served
                continue
            url = reverse("project-media", kwargs={"slug": project.slug, "path": relative})
        else:
            url = value
        points_url = None
        if kind == "pointcloud" and stored:
            points_url = reverse("project-points", kwargs={"slug": project.slug, "path": relative})
        entries[key] = {
            "url": url,
            "kind": "pointcloud" if kind == "pointcloud" else media_kind(value),
            "stored": stored,
            "points_url": points_url,
        }
    return entries
