"""The models of answers, participants and password-reset requests moved to the apps that
own them (annotation, crowds, labs). Their tables stay as they are: this migration only
takes them out of the projects app's state, after each new app's 0001 put them into its own
(those declare run_before this one). The help texts name the modules' new homes."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("projects", "0005_participant_entry_digest"),
    ]

    operations = [
        migrations.AlterField(
            model_name="membership",
            name="excluded",
            field=models.BooleanField(
                default=False,
                help_text="A manager left this annotator out: their answers count toward no score and no agreement figure, and exports mark them (crowds.gold).",
            ),
        ),
        migrations.AlterField(
            model_name="unit",
            name="is_gold",
            field=models.BooleanField(
                default=False,
                help_text="A gold unit (known answer): a training unit or an attention check, never counted in scores, agreement or progress (crowds.gold).",
            ),
        ),
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.RemoveField(
                    model_name="annotation",
                    name="annotator",
                ),
                migrations.RemoveField(
                    model_name="annotation",
                    name="project",
                ),
                migrations.RemoveField(
                    model_name="annotation",
                    name="unit",
                ),
                migrations.RemoveField(
                    model_name="assignment",
                    name="annotator",
                ),
                migrations.RemoveField(
                    model_name="assignment",
                    name="project",
                ),
                migrations.RemoveField(
                    model_name="assignment",
                    name="unit",
                ),
                migrations.RemoveField(
                    model_name="participant",
                    name="project",
                ),
                migrations.RemoveField(
                    model_name="participant",
                    name="user",
                ),
                migrations.DeleteModel(
                    name="PasswordResetRequest",
                ),
                migrations.RemoveField(
                    model_name="submission",
                    name="annotator",
                ),
                migrations.RemoveField(
                    model_name="submission",
                    name="unit",
                ),
                migrations.DeleteModel(
                    name="Annotation",
                ),
                migrations.DeleteModel(
                    name="Assignment",
                ),
                migrations.DeleteModel(
                    name="Participant",
                ),
                migrations.DeleteModel(
                    name="Submission",
                ),
            ],
        ),
    ]
