"""The media files a project stores, for the pages that play and draw them: the file itself
(with byte ranges, so a player can seek) and a point cloud's decoded points.

Both answer whoever may annotate or manage the project (the annotate page's rule) and 404
to everyone else and for any path not stored, the same response either way.
"""

import re

import numpy as np
from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404, HttpResponse, StreamingHttpResponse
from django.utils.http import content_disposition_header
from django.views.decorators.http import require_safe

from projects import selectors
from projects.access import visible_project_or_404
from projects.media import CONTENT_TYPES, POINT_CLOUDS, stored_file
from projects.pointclouds import read_points
from projects.services import project_folder

CHUNK = 64 * 1024
RANGE = re.compile(r"bytes=([0-9]*)-([0-9]*)")  # ASCII digits only


def _stored_or_404(request, slug: str, path: str, extensions=CONTENT_TYPES):
    """The stored file at ``path`` of a project the user may annotate or manage; 404 for
    anything else (no project, no access, a refused path, nothing stored there)."""
    project = visible_project_or_404(request.user, slug)
    if selectors.project_role(request.user, project) is None:
        raise Http404("No such file.")
    target = stored_file(project_folder(project), path)
    if target is None or target.suffix.lower() not in extensions:
        raise Http404("No such file.")
    return target


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
    # Readable only by who may open the project: no shared cache keeps a copy.
    response["Cache-Control"] = "private, max-age=3600"
    return response


@login_required
@require_safe
def project_media(request, slug, path):
    """A stored media file, whole or one byte range (206). Django's FileResponse sends only
    whole files, and a browser's audio/video player seeks with Range requests (Safari plays
    nothing without them), so the single-range case is answered here."""
    target = _stored_or_404(request, slug, path)
    content_type = CONTENT_TYPES[target.suffix.lower()]
    size = target.stat().st_size
    wanted = _byte_range(request.headers.get("Range", ""), size)
    if wanted is False:
        response = HttpResponse("The requested range is outside the file.", status=416)
        response["Content-Range"] = f"bytes */{size}"
        return _headers(response, "text/plain; charset=utf-8", target.name)
    if wanted is None:
        response = FileResponse(target.open("rb"), content_type=content_type)
        response["Content-Length"] = str(size)
        return _headers(response, content_type, target.name)
    first, last = wanted
    length = last - first + 1
    response = StreamingHttpResponse(_part(target, first, length), status=206)
    response["Content-Range"] = f"bytes {first}-{last}/{size}"
    response["Content-Length"] = str(length)
    return _headers(response, content_type, target.name)


@login_required
@require_safe
def project_points(request, slug, path):
    """A stored point cloud's points as little-endian float32 x, y, z, intensity, four per
    point, evenly thinned to POINT_CLOUD_MAX_POINTS; 422 with the reason for a file that
    does not decode."""
    target = _stored_or_404(request, slug, path, extensions=POINT_CLOUDS)
    try:
        points = read_points(target, max_points=settings.POINT_CLOUD_MAX_POINTS)
    except ValueError as exc:
        response = HttpResponse(
            f"This point cloud cannot be read: {exc}",
            status=422,
            content_type="text/plain; charset=utf-8",
        )
        response["X-Content-Type-Options"] = "nosniff"
        return response
    body = np.ascontiguousarray(points, dtype="<f4").tobytes()
    response = HttpResponse(body, content_type="application/octet-stream")
    response["X-Point-Count"] = str(len(points))
    response["X-Content-Type-Options"] = "nosniff"
    response["Cache-Control"] = "private, max-age=3600"
    return response
