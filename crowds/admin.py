from django.contrib import admin

from crowds.models import Participant


@admin.register(Participant)
class ParticipantAdmin(admin.ModelAdmin):
    """Crowd participants who came in by a project's participant link."""

    list_display = ["external_id", "project", "training", "outcome", "consent_at", "outcome_at"]
    list_filter = ["training", "outcome"]
    search_fields = ["external_id", "project__slug"]
    raw_id_fields = ["user", "project"]
