"""Account facts the login protection keeps (the table keeps its first name, projects_*)."""

from django.db import models


class PasswordResetRequest(models.Model):
    """A request for a password-reset e-mail, kept while the reset throttle's window lasts
    (labs/login_protection.py); the e-mail address is stored only as a keyed hash."""

    address = models.GenericIPAddressField(null=True)
    email_digest = models.CharField(max_length=64)
    requested_at = models.DateTimeField(db_index=True)

    class Meta:
        db_table = "projects_passwordresetrequest"
        indexes = [
            models.Index(fields=["address", "requested_at"]),
            models.Index(fields=["email_digest", "requested_at"]),
        ]

    def __str__(self) -> str:
        return f"reset request from {self.address} at {self.requested_at}"
