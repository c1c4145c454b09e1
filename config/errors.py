"""The server-error handler (``handler500``): while the database cannot be reached (a
restart, a failover) the answer is a 503 with Retry-After that says so, a page for people
and JSON for programs, so a client waits and tries again instead of reading a crash.
Every other error is Django's 500 page."""

import logging
import sys

from django.db import Error as DatabaseError
from django.db import InterfaceError, OperationalError
from django.http import HttpResponse, JsonResponse
from django.template import loader
from django.views import defaults
from django.views.decorators.csrf import requires_csrf_token

log = logging.getLogger("annolab.errors")

RETRY_AFTER = 5  # seconds: about one database restart
UNAVAILABLE = (
    "The database cannot be reached at the moment (it may be restarting). Please try "
    "again in a few seconds; an answer this request did not confirm may not be stored."
)


def database_unavailable(error: BaseException | None) -> bool:
    """Whether ``error`` (or an error it was raised from) says the database is out of
    reach: a lost or refused connection, not a wrong query."""
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, OperationalError | InterfaceError):
            return True
        if isinstance(error, DatabaseError):
            return False
        error = error.__cause__ or error.__context__
    return False


def _wants_json(request) -> bool:
    accept = request.headers.get("Accept", "")
    return request.path.startswith("/api/") or "application/json" in accept


@requires_csrf_token
def server_error(request, template_name="500.html"):
    """handler500: a 503 with Retry-After when the database is out of reach, else a 500."""
    if database_unavailable(sys.exc_info()[1]):
        log.warning("%s %s: database unavailable, answered 503", request.method, request.path)
        if _wants_json(request):
            response = JsonResponse({"detail": UNAVAILABLE}, status=503)
        else:
            body = loader.render_to_string("503.html", {"message": UNAVAILABLE})
            response = HttpResponse(body, status=503)
        response["Retry-After"] = str(RETRY_AFTER)
        response["Cache-Control"] = "no-store"
        return response
    return defaults.server_error(request, template_name)
