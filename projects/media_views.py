"""The media files a project stores, for the pages that play and draw them: the file itself
and a point cloud's points as decoded at import (projects.media), both sent as plain files.

Both answer whoever may annotate or manage the project (the annotate page's rule) and 404
to everyone else and for any path not stored, the same response either way. Nothing is
decoded here: a response costs the access check and a stat, whatever the file.

Behind nginx (PROJECT_FILES_ACCEL_REDIRECT set, platform/nginx/annolab.conf), the answer is
an X-Accel-Redirect to the file and nginx sends it (ranges, ETag, conditional requests),
so a slow download holds no gunicorn thread. Without it the file is sent from here with
the same headers: ETag and Last-Modified (304 to a request that has it already),
Cache-Control, and one byte range (206), which a browser's player needs to seek.
"""

import re
from pathlib import Path
from urllib.parse import quote

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404, HttpResponse, StreamingHttpResponse
from django.utils.cache import get_conditional_response
from django.utils.http import content_disposition_header, http_date
from django.views.decorators.http import require_safe

from projects.access import visible_project_or_404
from projects.media import CONTENT_TYPES, stored_file, stored_points
from projects.pointclouds import POINT_BYTES
from projects.services import project_folder

CHUNK = 64 * 1024
RANGE = re.compile(r"bytes=([0-9]*)-([0-9]*)")  # ASCII digits only
POINTS_TYPE = "application/octet-stream"
# Readable only by who may open the project: no shared cache keeps a copy.
CACHE_CONTROL = "private, max-age=3600"


def _project_root_or_404(request, slug: str) -> Path:
    """The folder of a project the user may annotate or manage; 404 for anything else.
    Whoever may see a project has a role in it (selectors.project_role): staff and the
    lab's admins manage it, members have theirs, and an open project takes everyone its
    managers did not remove. So the one statement of visible_project_or_404 decides."""
    return project_folder(visible_project_or_404(request.user, slug))


def _byte_range(header: str, size: int) -> tuple[int, int] | None | bool:
    """The (first, last) bytes a single-range header asks for; None to send the whole file
    (no header, several ranges or a malformed one, which HTTP lets a server ignore); False
    when the range cannot be satisfied."""
    match = RANGE.fullmatch(header.strip())
    if match is None:
        return None
    first, last = match.groups()
    if not first and not last:
        return None
    if not first:  # the last N bytes
        length = int(last)
        if length == 0 or size == 0:
            return False
        return max(0, size - length), size - 1
    first_byte = int(first)
    last_byte = int(last) if last else size - 1
    if last and last_byte < first_byte:
        return None  # malformed: ignored
    if first_byte >= size:
        return False
    return first_byte, min(last_byte, size - 1)


def _part(path, first: int, length: int):
    with path.open("rb") as stream:
        stream.seek(first)
        while length > 0:
            chunk = stream.read(min(CHUNK, length))
            if not chunk:
                return
            length -= len(chunk)
            yield chunk


def _headers(response, content_type: str, name: str):
    response["Content-Type"] = content_type
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Disposition"] = content_disposition_header(False, name)
    response["Accept-Ranges"] = "bytes"
    response["Cache-Control"] = CACHE_CONTROL
    return response


def _send_file(request, target: Path, content_type: str, name: str):
    """``target`` (a file inside PROJECT_FILES_ROOT) as a file is served: through the
    proxy when it serves the project files, else from here."""
    stat = target.stat()
    size = stat.st_size
    accel = settings.PROJECT_FILES_ACCEL_REDIRECT
    if accel:
        # nginx sends the file and answers ranges and conditional requests itself; it keeps
        # this response's Content-Type, Content-Disposition and Cache-Control.
        inside = target.relative_to(Path(settings.PROJECT_FILES_ROOT).resolve())
        response = HttpResponse()
        response["X-Accel-Redirect"] = accel.rstrip("/") + "/" + quote(inside.as_posix())
        _headers(response, content_type, name)
        del response["Accept-Ranges"]  # nginx says it for the file it sends
        return response
    # nginx's form of ETag (modification time and size, in hex), so a validator a client
    # got from either server is recognised by both.
    etag = f'"{int(stat.st_mtime):x}-{size:x}"'
    conditional = get_conditional_response(request, etag=etag, last_modified=int(stat.st_mtime))
    if conditional is not None:  # 304 Not Modified (or 412 to an If-Match it fails)
        conditional["ETag"] = etag
        conditional["Cache-Control"] = CACHE_CONTROL
        return conditional
    wanted = _byte_range(request.headers.get("Range", ""), size)
    if_range = request.headers.get("If-Range")
    if if_range is not None and if_range.strip() != etag:
        wanted = None  # the client's copy is another version: the whole file
    if wanted is False:
        response = HttpResponse("The requested range is outside the file.", status=416)
        response["Content-Range"] = f"bytes */{size}"
        _headers(response, "text/plain; charset=utf-8", name)
    elif wanted is None:
        response = FileResponse(target.open("rb"), content_type=content_type)
        response["Content-Length"] = str(size)
        _headers(response, content_type, name)
    else:
        first, last = wanted
        length = last - first + 1
        response = StreamingHttpResponse(_part(target, first, length), status=206)
        response["Content-Range"] = f"bytes {first}-{last}/{size}"
        response["Content-Length"] = str(length)
        _headers(response, content_type, name)
    response["ETag"] = etag
    response["Last-Modified"] = http_date(stat.st_mtime)
    return response


@login_required
@require_safe
def project_media(request, slug, path):
    """A stored media file, whole or one byte range (206)."""
    target = stored_file(_project_root_or_404(request, slug), path)
    if target is None:
        raise Http404("No such file.")
    return _send_file(request, target, CONTENT_TYPES[target.suffix.lower()], target.name)


@login_required
@require_safe
def project_points(request, slug, path):
    """A stored point cloud's points as decoded at import: little-endian float32 x, y, z,
    intensity, four per point, evenly thinned to POINT_CLOUD_MAX_POINTS. Sent as a file;
    X-Point-Count says how many points it holds."""
    target = stored_points(_project_root_or_404(request, slug), path)
    if target is None:
        raise Http404("No such file.")
    response = _send_file(request, target, POINTS_TYPE, target.name)
    response["X-Point-Count"] = str(target.stat().st_size // POINT_BYTES)
    return response
