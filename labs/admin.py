from django.contrib import admin

from labs.models import PasswordResetRequest


@admin.register(PasswordResetRequest)
class PasswordResetRequestAdmin(admin.ModelAdmin):
    """Recent reset requests, as the reset throttle counts them (deleting one frees a slot)."""

    list_display = ["requested_at", "address"]
    readonly_fields = ["address", "email_digest", "requested_at"]
    search_fields = ["address"]
