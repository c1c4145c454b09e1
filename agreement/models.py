"""Stored agreement reports: one row per computation, so a project keeps its history."""

from django.db import models
from django.utils import timezone


class AgreementReport(models.Model):
    """The agreement report of a project at one moment (agreement.core.report's JSON)."""

    class Status(models.TextChoices):
        OK = "ok", "Computed"
        FAILED = "failed", "Failed"

    project = models.ForeignKey(
        "projects.Project", on_delete=models.CASCADE, related_name="agreement_reports"
    )
    computed_at = models.DateTimeField(
        default=timezone.now, help_text="When the answers were read."
    )
    n_annotations = models.PositiveIntegerField(
        default=0, help_text="Stored answers (one per annotator, unit and scheme) read."
    )
    report = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OK)
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["-computed_at", "-id"]
        indexes = [
            models.Index(fields=["project", "status", "-computed_at"], name="agreement_latest"),
        ]

    def __str__(self) -> str:
        return f"agreement of {self.project} at {self.computed_at:%Y-%m-%d %H:%M} ({self.status})"
