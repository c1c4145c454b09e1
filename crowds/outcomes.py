"""What a participant's outcome shows them (crowds/participants.py records it once):

    completed     "Thank you, you are done", the completion code and completion_url
    partial       "No more work for you", participants.partial's code, url and message
    screened_out  "Thank you for your time", participants.screen_out's code, url and message

An outcome shows its own code only, never another's: a participant who ran out of work or
was screened out never sees the completion code. Without a code or an address in the
config, the page says so and asks them to return to the panel.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.utils.translation import get_language, gettext, gettext_lazy

from crowds.models import Participant
from projects.texts import pick

# An address fit for the Refresh header and a link: checked at upload already
# (projects/configuration/schema.py); a config stored before that check is held to it here.
_HEADER_SAFE_URL = re.compile(r"https?://[\x21-\x7e]+", re.IGNORECASE)

DEFAULT_MESSAGES = {
    Participant.Outcome.COMPLETED: gettext_lazy("You answered every unit this study asked of you."),
    Participant.Outcome.PARTIAL: gettext_lazy(
        "There is no unit left for you in this study before your full share: other "
        "participants took the rest. Your part ends here; the researchers see how many units "
        "you answered. Return to the panel with the code below, if there is one."
    ),
    Participant.Outcome.SCREENED_OUT: gettext_lazy(
        "Your answers to the study's checks did not reach the level this study needs, so the "
        "study ends here for you. Thank you for taking part; return to the panel you came "
        "from."
    ),
}
TITLES = {
    Participant.Outcome.COMPLETED: gettext_lazy("Thank you, you are done"),
    Participant.Outcome.PARTIAL: gettext_lazy("No more work for you"),
    Participant.Outcome.SCREENED_OUT: gettext_lazy("Thank you for your time"),
}


@dataclass(frozen=True)
class Shown:
    title: str
    message: str
    code: str | None
    url: str | None


def _safe(url: str | None) -> str | None:
    return url if url and _HEADER_SAFE_URL.fullmatch(url) else None


def shown(participant: Participant) -> Shown:
    """The title, message, code and panel address of the participant's outcome."""
    outcome = participant.outcome
    block = participant.project.settings.participants
    code = url = message = None
    if block is not None and outcome == Participant.Outcome.COMPLETED:
        code, url = block.completion_code, block.completion_url
    elif block is not None and outcome == Participant.Outcome.PARTIAL:
        code, url, message = block.partial.code, block.partial.url, block.partial.message
    elif block is not None and outcome == Participant.Outcome.SCREENED_OUT:
        code, url = block.screen_out.code, block.screen_out.url
        message = block.screen_out.message
    return Shown(
        title=str(TITLES.get(outcome, gettext("Thank you"))),
        message=pick(message, get_language()) or str(DEFAULT_MESSAGES.get(outcome, "")),
        code=code,
        url=_safe(url),
    )
