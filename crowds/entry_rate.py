"""How many new participants one client address may make through the participant links:
PARTICIPANT_ENTRY_RATE (e.g. "30/10m": 30 new participants in any 10 minutes), counted per
address (labs.login_protection.client_address, which honours TRUSTED_PROXY_COUNT) over
every study of the site. A returning participant id resumes and is not counted, nor is a
visitor who was turned away.

The count is read from the participants themselves: each keeps a keyed hash of the address
it was made from (Participant.entry_digest), so every web process sees the same count, with
or without Redis, and the address itself is kept nowhere.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db.models import Count, Min
from django.utils import timezone
from django.utils.crypto import salted_hmac
from django.utils.translation import ngettext

from crowds.models import Participant

DIGEST_SALT = "annolab.projects.entry_rate"
_RATE = re.compile(r"\s*(\d{1,9})\s*/\s*(\d{0,9})\s*([smh]?)\s*")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "": 1}


@dataclass(frozen=True)
class Rate:
    count: int  # 0: no limit
    seconds: int

    def describe(self) -> str:
        """ "30 per 10 minutes", in the active language."""
        minutes, rest = divmod(self.seconds, 60)
        if rest:
            text = ngettext(
                "%(count)s per %(seconds)s second",
                "%(count)s per %(seconds)s seconds",
                self.seconds,
            )
        else:
            text = ngettext(
                "%(count)s per %(minutes)s minute", "%(count)s per %(minutes)s minutes", minutes
            )
        return text % {"count": self.count, "seconds": self.seconds, "minutes": minutes}


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


def address_digest(address: str | None) -> str:
    """The keyed hash a participant keeps of the address it was made from."""
    return salted_hmac(DIGEST_SALT, address or "unknown", algorithm="sha256").hexdigest()


def wait_before_new_participant(digest: str, now=None) -> int:
    """0 when the address of this digest may make one more participant now, else the
    seconds until the oldest of its participants in the window leaves it."""
    rate = entry_rate()
    if rate.count <= 0:
        return 0
    now = now or timezone.now()
    window = timedelta(seconds=rate.seconds)
    recent = Participant.objects.filter(entry_digest=digest, created_at__gt=now - window)
    made = recent.aggregate(n=Count("id"), oldest=Min("created_at"))
    if made["n"] < rate.count:
        return 0
    return max(1, math.ceil((made["oldest"] + window - now).total_seconds()))
