"""The work annotators are given and the answers they give: assignments under leases,
answers, and the submission ids that make a retried request store its answers once.

The tables keep the names they were made with (projects_*): the models moved here from
`projects` without the database noticing (migrations 0001 of this app)."""

from django.conf import settings
from django.db import models

from projects.models import Project, Unit


class Assignment(models.Model):
    """A unit handed to an annotator: reserved under a lease, then completed."""

    class Status(models.TextChoices):
        RESERVED = "reserved", "Reserved"
        COMPLETED = "completed", "Completed"

    unit = models.ForeignKey(Unit, on_delete=models.CASCADE, related_name="assignments")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assignments"
    )
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="assignments")
    status = models.CharField(max_length=10, choices=Status.choices)
    leased_until = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "projects_assignment"
        ordering = ["created_at"]
        constraints = [
            models.UniqueConstraint(fields=["unit", "annotator"], name="one_assignment_per_unit"),
        ]
        indexes = [
            models.Index(fields=["project", "annotator", "status"], name="assignment_by_annotator"),
            models.Index(fields=["project", "status", "leased_until"], name="assignment_leases"),
        ]

    def __str__(self) -> str:
        return f"{self.unit} to {self.annotator} ({self.status})"


class Annotation(models.Model):
    """One annotator's answer to one scheme on one unit. BWS answers also keep the chosen
    items as Item.index values, so scoring reads integer arrays in one query."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="annotations")
    unit = models.ForeignKey(Unit, on_delete=models.CASCADE, related_name="annotations")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="annotations"
    )
    scheme = models.CharField(max_length=200)
    value = models.JSONField()
    best_index = models.PositiveIntegerField(null=True, blank=True)
    worst_index = models.PositiveIntegerField(null=True, blank=True)
    time_taken_ms = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True, help_text="When it was last stored.")
    answered_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When the annotator gave it, where that is earlier than when it was "
        "stored (an imported answer keeps its file's timestamp).",
    )

    class Meta:
        db_table = "projects_annotation"
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["unit", "annotator", "scheme"], name="one_answer_per_unit_scheme"
            ),
        ]
        indexes = [models.Index(fields=["project", "scheme", "created_at"])]

    def __str__(self) -> str:
        return f"{self.annotator} on {self.unit} ({self.scheme})"


class Submission(models.Model):
    """A client's submission id, so a retried request stores its answers once."""

    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="submissions"
    )
    client_id = models.UUIDField()
    unit = models.ForeignKey(Unit, on_delete=models.CASCADE, related_name="submissions")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "projects_submission"
        constraints = [
            models.UniqueConstraint(fields=["annotator", "client_id"], name="unique_client_id"),
        ]

    def __str__(self) -> str:
        return f"{self.client_id} by {self.annotator}"
