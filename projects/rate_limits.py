"""Work a project's managers may ask for by hand, limited per project: REST framework's
sliding window in the cache, keyed by the scope and the project. One lab's managers
cannot keep the workers or the web busy for every other lab (bws: score runs; agreement:
report recomputations)."""

import logging

from rest_framework.throttling import SimpleRateThrottle

log = logging.getLogger(__name__)


class Refused(Exception):
    """A request for work, refused: ask again in ``retry_after`` seconds."""

    def __init__(self, message: str, retry_after: float):
        super().__init__(message)
        self.retry_after = retry_after


class ProjectRateLimit(SimpleRateThrottle):
    """``per_hour`` requests of ``scope`` per project."""

    def __init__(self, scope: str, project_id: int, per_hour: int):
        self.scope, self.project_id, self.per_hour = scope, project_id, per_hour
        super().__init__()

    def get_rate(self) -> str:
        return f"{self.per_hour}/hour"

    def get_cache_key(self, request, view) -> str:
        return self.cache_format % {"scope": self.scope, "ident": self.project_id}

    def admit(self) -> float | None:
        """None when one more request is allowed (and counted), else the seconds to wait."""
        try:
            if self.allow_request(None, None):
                return None
        except Exception:  # the cache lives in Redis: a limit that cannot count admits
            log.warning("could not count %s of project %s", self.scope, self.project_id)
            return None
        return max(1.0, self.wait() or 1.0)


def admit_or_refuse(scope: str, project_id: int, per_hour: int, setting: str, what: str) -> None:
    """Count one request, or raise Refused naming the setting and when to ask again."""
    wait = ProjectRateLimit(scope, project_id, per_hour).admit()
    if wait is not None:
        raise Refused(
            f"at most {per_hour} {what} per hour may be asked for in a project ({setting}); "
            f"ask again in {int(wait)} s",
            retry_after=wait,
        )
