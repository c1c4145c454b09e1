"""Participant moved here from the projects app. Their tables keep the names they were
made with (projects_*), so only the state changes: no table is made, altered or copied, and
every row stays where it is."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

APP = "crowds"
MODELS = ["participant"]


def move_content_types(apps, schema_editor):
    """Admin history and permissions follow the models: their content types change app."""
    content_type = apps.get_model("contenttypes", "ContentType")
    content_type.objects.filter(app_label="projects", model__in=MODELS).update(app_label=APP)


def restore_content_types(apps, schema_editor):
    content_type = apps.get_model("contenttypes", "ContentType")
    content_type.objects.filter(app_label=APP, model__in=MODELS).update(app_label="projects")


class Migration(migrations.Migration):
    run_before = [("projects", "0006_models_moved_to_their_apps")]

    initial = True

    dependencies = [
        ("projects", "0005_participant_entry_digest"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.CreateModel(
                    name="Participant",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        (
                            "external_id",
                            models.CharField(
                                help_text="The panel's id (e.g. PROLIFIC_PID).", max_length=64
                            ),
                        ),
                        (
                            "params",
                            models.JSONField(
                                blank=True,
                                default=dict,
                                help_text="The link's other query parameters, as last sent.",
                            ),
                        ),
                        ("consent_at", models.DateTimeField(blank=True, null=True)),
                        ("instructions_seen_at", models.DateTimeField(blank=True, null=True)),
                        (
                            "training",
                            models.CharField(
                                choices=[
                                    ("none", "No training"),
                                    ("pending", "In training"),
                                    ("passed", "Passed training"),
                                    ("failed", "Failed training"),
                                ],
                                default="none",
                                max_length=10,
                            ),
                        ),
                        ("completed_at", models.DateTimeField(blank=True, null=True)),
                        (
                            "outcome",
                            models.CharField(
                                blank=True,
                                choices=[
                                    ("", "Not ended"),
                                    ("completed", "Completed"),
                                    ("partial", "No more work (partial)"),
                                    ("screened_out", "Screened out"),
                                ],
                                default="",
                                help_text="How the participant's part ended: the quota answered (the completion code), no work left before the quota (the partial code), or screened out.",
                                max_length=20,
                            ),
                        ),
                        ("outcome_at", models.DateTimeField(blank=True, null=True)),
                        ("outcome_reason", models.CharField(blank=True, max_length=200)),
                        (
                            "entry_digest",
                            models.CharField(
                                blank=True,
                                help_text="A keyed hash of the client address the participant was made from, so that new participants are counted per address (crowds/entry_rate.py) without keeping the address.",
                                max_length=64,
                            ),
                        ),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("last_seen_at", models.DateTimeField(blank=True, null=True)),
                        (
                            "project",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="participants",
                                to="projects.project",
                            ),
                        ),
                        (
                            "user",
                            models.OneToOneField(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="participant",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                    ],
                    options={
                        "db_table": "projects_participant",
                        "ordering": ["created_at", "id"],
                        "indexes": [
                            models.Index(
                                fields=["entry_digest", "created_at"], name="participant_entries"
                            )
                        ],
                        "constraints": [
                            models.UniqueConstraint(
                                fields=("project", "external_id"), name="unique_participant_id"
                            )
                        ],
                    },
                ),
            ],
        ),
        migrations.RunPython(move_content_types, restore_content_types),
    ]
