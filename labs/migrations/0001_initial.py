"""PasswordResetRequest moved here from the projects app. Their tables keep the names they were
made with (projects_*), so only the state changes: no table is made, altered or copied, and
every row stays where it is."""

from django.db import migrations, models

APP = "labs"
MODELS = ["passwordresetrequest"]


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
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.CreateModel(
                    name="PasswordResetRequest",
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
                        ("address", models.GenericIPAddressField(null=True)),
                        ("email_digest", models.CharField(max_length=64)),
                        ("requested_at", models.DateTimeField(db_index=True)),
                    ],
                    options={
                        "db_table": "projects_passwordresetrequest",
                        "indexes": [
                            models.Index(
                                fields=["address", "requested_at"],
                                name="projects_pa_address_20decb_idx",
                            ),
                            models.Index(
                                fields=["email_digest", "requested_at"],
                                name="projects_pa_email_d_d729e2_idx",
                            ),
                        ],
                    },
                ),
            ],
        ),
        migrations.RunPython(move_content_types, restore_content_types),
    ]
