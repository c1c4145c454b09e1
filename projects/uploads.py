"""Upload sizes bounded while the request is read, before anything reaches the disk.

``LimitedUploadHandler`` runs first among settings.FILE_UPLOAD_HANDLERS: a file larger than
UPLOAD_MAX_FILE_MB, or every file once the request's files pass UPLOAD_MAX_TOTAL_MB, is
skipped (its bytes are read off the connection and dropped). What was refused is listed in
``request.upload_refusals`` for the view to report; the form checks sizes again, so a
request that reaches it some other way meets the same limits.
"""

from django.conf import settings
from django.core.files.uploadhandler import FileUploadHandler, SkipFile

MB = 1024 * 1024


def file_limit_bytes() -> int:
    return settings.UPLOAD_MAX_FILE_MB * MB


def total_limit_bytes() -> int:
    return settings.UPLOAD_MAX_TOTAL_MB * MB


def file_too_large(name: str) -> str:
    return (
        f"{name}: the file is larger than the limit of {settings.UPLOAD_MAX_FILE_MB} MB "
        "(UPLOAD_MAX_FILE_MB)"
    )


def total_too_large() -> str:
    return (
        f"the files together are larger than the limit of {settings.UPLOAD_MAX_TOTAL_MB} MB "
        "(UPLOAD_MAX_TOTAL_MB)"
    )


class LimitedUploadHandler(FileUploadHandler):
    """Skips files over the per-file limit and every file past the total limit."""

    def __init__(self, request=None):
        super().__init__(request)
        self.total = 0
        self.file_size = 0
        if request is not None and not hasattr(request, "upload_refusals"):
            request.upload_refusals = []

    def _refuse(self, message: str) -> None:
        refusals = getattr(self.request, "upload_refusals", None)
        if refusals is not None and message not in refusals:
            refusals.append(message)
        raise SkipFile(message)

    def new_file(self, *args, **kwargs):
        super().new_file(*args, **kwargs)
        self.file_size = 0

    def receive_data_chunk(self, raw_data, start):
        self.file_size += len(raw_data)
        self.total += len(raw_data)
        if self.file_size > file_limit_bytes():
            self._refuse(file_too_large(self.file_name or "a file"))
        if self.total > total_limit_bytes():
            self._refuse(total_too_large())
        return raw_data

    def file_complete(self, file_size):
        return None
