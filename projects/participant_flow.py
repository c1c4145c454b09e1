"""The hook between a participant's flow (projects/participants.py) and a training phase of
gold units with feedback (the config's gold.training, built by projects.gold).

Until the gold units provide their own training, no participant is required to train: the
flow asks these two functions only, so the training plugs in here without the flow
changing. The training records its outcome on ``Participant.training`` (pending, passed or
failed); a participant who failed is thanked and stopped by the flow, and the members list
says so to the managers.
"""

from __future__ import annotations

from .models import Participant


def training_required(participant: Participant) -> bool:
    """Whether this participant must pass training before their first unit."""
    return False


def training_url(participant: Participant) -> str | None:
    """Where the participant's training is shown; None when there is none."""
    return None
