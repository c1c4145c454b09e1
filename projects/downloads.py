"""Files the site sends as downloads: one place that builds their name and headers."""

from __future__ import annotations

import unicodedata

from django.core.exceptions import SuspiciousFileOperation
from django.http import HttpResponse
from django.utils.http import content_disposition_header
from django.utils.text import get_valid_filename

MAX_NAME_LENGTH = 100
FALLBACK_NAME = "download"


def safe_filename(name: str, *, fallback: str = FALLBACK_NAME) -> str:
    """``name`` as a plain ASCII file name: letters, digits, ``-``, ``_`` and ``.`` only,
    at most MAX_NAME_LENGTH characters with its extension kept."""
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    try:
        cleaned = get_valid_filename(ascii_name).lstrip(".")
    except SuspiciousFileOperation:
        cleaned = ""
    if not cleaned:
        return fallback
    if len(cleaned) > MAX_NAME_LENGTH:
        stem, dot, suffix = cleaned.rpartition(".")
        if dot and 0 < len(suffix) <= 10:
            cleaned = stem[: MAX_NAME_LENGTH - len(suffix) - 1] + "." + suffix
        else:
            cleaned = cleaned[:MAX_NAME_LENGTH]
    return cleaned


def attachment(body: bytes, *, filename: str, content_type: str) -> HttpResponse:
    """A response that the browser saves as ``filename`` (sanitised) instead of showing."""
    response = HttpResponse(body, content_type=content_type)
    response["Content-Disposition"] = content_disposition_header(
        as_attachment=True, filename=safe_filename(filename)
    )
    return response
