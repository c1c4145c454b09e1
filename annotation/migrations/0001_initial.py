"""Assignment, Annotation and Submission moved here from the projects app. Their tables keep the names they were
made with (projects_*), so only the state changes: no table is made, altered or copied, and
every row stays where it is."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

APP = "annotation"
MODELS = ["annotation", "assignment", "submission"]


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
                    name="Annotation",
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
                        ("scheme", models.CharField(max_length=200)),
                        ("value", models.JSONField()),
                        ("best_index", models.PositiveIntegerField(blank=True, null=True)),
                        ("worst_index", models.PositiveIntegerField(blank=True, null=True)),
                        ("time_taken_ms", models.PositiveIntegerField(blank=True, null=True)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        (
                            "updated_at",
                            models.DateTimeField(
                                auto_now=True, help_text="When it was last stored."
                            ),
                        ),
                        (
                            "answered_at",
                            models.DateTimeField(
                                blank=True,
                                help_text="When the annotator gave it, where that is earlier than when it was stored (an imported answer keeps its file's timestamp).",
                                null=True,
                            ),
                        ),
                        (
                            "annotator",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="annotations",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                        (
                            "project",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="annotations",
                                to="projects.project",
                            ),
                        ),
                        (
                            "unit",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="annotations",
                                to="projects.unit",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "projects_annotation",
                        "ordering": ["created_at", "id"],
                        "indexes": [
                            models.Index(
                                fields=["project", "scheme", "created_at"],
                                name="projects_an_project_230d6b_idx",
                            )
                        ],
                        "constraints": [
                            models.UniqueConstraint(
                                fields=("unit", "annotator", "scheme"),
                                name="one_answer_per_unit_scheme",
                            )
                        ],
                    },
                ),
                migrations.CreateModel(
                    name="Assignment",
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
                            "status",
                            models.CharField(
                                choices=[("reserved", "Reserved"), ("completed", "Completed")],
                                max_length=10,
                            ),
                        ),
                        ("leased_until", models.DateTimeField(blank=True, null=True)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("completed_at", models.DateTimeField(blank=True, null=True)),
                        (
                            "annotator",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="assignments",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                        (
                            "project",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="assignments",
                                to="projects.project",
                            ),
                        ),
                        (
                            "unit",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="assignments",
                                to="projects.unit",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "projects_assignment",
                        "ordering": ["created_at"],
                        "indexes": [
                            models.Index(
                                fields=["project", "annotator", "status"],
                                name="assignment_by_annotator",
                            ),
                            models.Index(
                                fields=["project", "status", "leased_until"],
                                name="assignment_leases",
                            ),
                        ],
                        "constraints": [
                            models.UniqueConstraint(
                                fields=("unit", "annotator"), name="one_assignment_per_unit"
                            )
                        ],
                    },
                ),
                migrations.CreateModel(
                    name="Submission",
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
                        ("client_id", models.UUIDField()),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        (
                            "annotator",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="submissions",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                        (
                            "unit",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="submissions",
                                to="projects.unit",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "projects_submission",
                        "constraints": [
                            models.UniqueConstraint(
                                fields=("annotator", "client_id"), name="unique_client_id"
                            )
                        ],
                    },
                ),
            ],
        ),
        migrations.RunPython(move_content_types, restore_content_types),
    ]
