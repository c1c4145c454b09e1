"""The hook between a participant's flow (crowds/participants.py) and the training phase
of gold units with feedback (the config's gold.training; its page is `project-training`).

The flow asks these two functions only. The training records its outcome on
``Participant.training`` (passed or failed, crowds.gold.record_training_outcome); a
participant who failed ends with the screen-out outcome (crowds/participants.py: the
config's participants.screen_out code and address), and the members list says so to the
managers. Until the training page exists, no participant is sent to it.
"""

from __future__ import annotations

from django.urls import NoReverseMatch, reverse

from crowds.models import Participant


def training_required(participant: Participant) -> bool:
    """Whether this participant must still pass a training before their units: the config
    has a training phase and the participant has not passed (or failed) it."""
    gold = getattr(participant.project.settings, "gold", None)
    if gold is None or getattr(gold, "training_units", 0) <= 0:
        return False
    return participant.training not in (Participant.Training.PASSED, Participant.Training.FAILED)


def training_url(participant: Participant) -> str | None:
    """Where the participant's training is shown; None when the site has no such page."""
    try:
        return reverse("project-training", args=[participant.project.slug])
    except NoReverseMatch:
        return None
