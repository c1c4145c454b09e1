"""Crowd participants: people who came in through a project's participant link.

The table keeps the name it was made with (projects_participant)."""

from django.conf import settings
from django.db import models

from projects.models import Project


class Participant(models.Model):
    """A crowd participant who came in through a project's participant link: an annotator
    account of that project only, named by the panel's id (crowds/participants.py)."""

    class Training(models.TextChoices):
        NONE = "none", "No training"
        PENDING = "pending", "In training"
        PASSED = "passed", "Passed training"
        FAILED = "failed", "Failed training"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="participants")
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="participant"
    )
    external_id = models.CharField(max_length=64, help_text="The panel's id (e.g. PROLIFIC_PID).")
    params = models.JSONField(
        default=dict, blank=True, help_text="The link's other query parameters, as last sent."
    )
    consent_at = models.DateTimeField(null=True, blank=True)
    instructions_seen_at = models.DateTimeField(null=True, blank=True)

    class Outcome(models.TextChoices):
        NONE = "", "Not ended"
        COMPLETED = "completed", "Completed"
        PARTIAL = "partial", "No more work (partial)"
        SCREENED_OUT = "screened_out", "Screened out"

    training = models.CharField(max_length=10, choices=Training.choices, default=Training.NONE)
    completed_at = models.DateTimeField(null=True, blank=True)
    outcome = models.CharField(
        max_length=20,
        choices=Outcome.choices,
        default=Outcome.NONE,
        blank=True,
        help_text="How the participant's part ended: the quota answered (the completion "
        "code), no work left before the quota (the partial code), or screened out.",
    )
    outcome_at = models.DateTimeField(null=True, blank=True)
    outcome_reason = models.CharField(max_length=200, blank=True)
    entry_digest = models.CharField(
        max_length=64,
        blank=True,
        help_text="A keyed hash of the client address the participant was made from, so that "
        "new participants are counted per address (crowds/entry_rate.py) without keeping "
        "the address.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    last_seen_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "projects_participant"
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "external_id"], name="unique_participant_id"
            ),
        ]
        indexes = [
            models.Index(fields=["entry_digest", "created_at"], name="participant_entries"),
        ]

    def __str__(self) -> str:
        return f"participant {self.external_id} of {self.project}"
