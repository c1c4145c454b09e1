"""How many new participants one client address may make through the participant links:
PARTICIPANT_ENTRY_RATE (e.g. "30/10m": 30 new participants per 10 minutes), counted per
address (projects.login_protection.client_address, which honours TRUSTED_PROXY_COUNT) over
every study of the site. A returning participant id resumes and is not counted.

The counts live in the site's cache: Redis when REDIS_URL is set, so every web process
shares them; without Redis, each process keeps its own (the limit then holds per process).
If the cache cannot be reached the entry is let through and logged, as a panel's
participants must not be turned away by a cache outage.
"""

from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache, caches
from django.core.cache.backends.locmem import LocMemCache

security_log = logging.getLogger("annolab.security")

KEY_PREFIX = "participant-entry"
_RATE = re.compile(r"\s*(\d{1,9})\s*/\s*(\d{0,9})\s*([smh]?)\s*")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "": 1}


@dataclass(frozen=True)
class Rate:
    count: int  # 0: no limit
    seconds: int

    def describe(self) -> str:
        minutes, rest = divmod(self.seconds, 60)
        span = f"{minutes} minute{'s' if minutes != 1 else ''}" if not rest else f"{self.seconds} s"
        return f"{self.count} per {span}"


def parse_rate(text: str) -> Rate:
    """ "30/10m" -> 30 per 600 s; "30/600" -> the same; "0/1m" turns the limit off."""
    match = _RATE.fullmatch(text or "")
    if match is None:
        raise ValueError(
            f"PARTICIPANT_ENTRY_RATE {text!r}: write a count, a slash and a window, e.g. 30/10m"
        )
    count, number, unit = match.groups()
    seconds = int(number or "1") * _UNIT_SECONDS[unit]
    if seconds <= 0:
        raise ValueError(f"PARTICIPANT_ENTRY_RATE {text!r}: the window must be positive")
    return Rate(int(count), seconds)


def entry_rate() -> Rate:
    return parse_rate(settings.PARTICIPANT_ENTRY_RATE)


def take_new_participant(address: str | None) -> int:
    """Count one new participant from this address. Returns 0 when it is within the rate,
    else the seconds until the address may make another."""
    rate = entry_rate()
    if rate.count <= 0:
        return 0
    now = time.time()
    window = int(now // rate.seconds)
    key = f"{KEY_PREFIX}:{address or 'unknown'}:{rate.seconds}:{window}"
    try:
        cache.add(key, 0, timeout=rate.seconds + 5)
        used = cache.incr(key)
    except Exception:  # the cache is down: let the participant in, and say so
        security_log.warning(
            "participant entry rate not counted for %s: the cache is unavailable", address
        )
        return 0
    if used <= rate.count:
        return 0
    return max(1, int((window + 1) * rate.seconds - now) + 1)


def forget_counts() -> None:
    """Drop every address's count (an operator lifting a block, a test's fresh start); the
    cache's other keys (and, on Redis, the broker's) are left alone."""
    store = caches["default"]
    if isinstance(store, LocMemCache):
        store.clear()  # per process, holding nothing the site shares
        return
    client = getattr(getattr(store, "_cache", None), "get_client", None)
    if client is None:
        return
    redis = client(None, write=True)
    for key in redis.scan_iter(match=f"*{KEY_PREFIX}:*"):
        redis.delete(key)
