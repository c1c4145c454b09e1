"""A database made before the apps were split migrates to the new layout with every row kept.

The test takes the database back to the migration state the split started from (projects
0005, before labs, annotation and crowds had models), puts one row in every table of the
apps' historical models there, through those models, then migrates forward and compares
every table's rows: the moved models changed app in the state only, so no row may change,
except the content types of the moved models, which now name their new app.
"""

import datetime
import decimal
import uuid

import pytest
from django.db import connection, models
from django.db.migrations.executor import MigrationExecutor

BEFORE_THE_SPLIT = [
    ("projects", "0005_participant_entry_digest"),
    ("labs", None),
    ("annotation", None),
    ("crowds", None),
]
MOVED = {
    "passwordresetrequest": "labs",
    "assignment": "annotation",
    "annotation": "annotation",
    "submission": "annotation",
    "participant": "crowds",
}
APPS = ("projects", "bws", "agreement")


def _value(field: models.Field, n: int):
    """A value the column accepts, different for each n."""
    if field.choices:
        return field.choices[0][0]
    if isinstance(field, models.JSONField):
        return {"n": n}
    if isinstance(field, models.BooleanField):
        return False
    if isinstance(field, models.DateTimeField):
        return datetime.datetime(2026, 1, 1, 12, n % 60, tzinfo=datetime.UTC)
    if isinstance(field, models.DateField):
        return datetime.date(2026, 1, 1)
    if isinstance(field, models.UUIDField):
        return uuid.UUID(int=n)
    if isinstance(field, models.GenericIPAddressField):
        return "127.0.0.1"
    if isinstance(field, models.DecimalField):
        return decimal.Decimal(1)
    if isinstance(field, (models.IntegerField, models.FloatField)):
        return n
    if isinstance(field, models.BinaryField):
        return b"x"
    if isinstance(field, (models.CharField, models.TextField)):
        return f"v{n}"[: field.max_length or 100]
    raise AssertionError(f"no sample value for {field!r}")


def _ordered_models(apps):
    """The historical models of our apps, each after the models its foreign keys name."""
    pending = [m for m in apps.get_models() if m._meta.app_label in APPS]
    ordered: list = []
    while pending:
        for model in pending:
            targets = {
                f.related_model
                for f in model._meta.concrete_fields
                if f.is_relation and f.related_model is not model
            }
            if all(t in ordered or t._meta.app_label not in APPS for t in targets):
                ordered.append(model)
                pending.remove(model)
                break
        else:
            raise AssertionError(f"foreign keys in a circle: {pending}")
    return ordered


def _fill(apps) -> int:
    """One row in every table of our apps (and a user for the foreign keys to accounts)."""
    user = apps.get_model("auth", "User").objects.create(username="before-the-split")
    made: dict = {}
    for n, model in enumerate(_ordered_models(apps), start=1):
        values = {}
        for field in model._meta.concrete_fields:
            if field.primary_key and field.auto_created:
                continue
            if field.is_relation:
                target = field.related_model
                values[field.name] = user if target._meta.label == "auth.User" else made[target]
            elif field.has_default() or getattr(field, "auto_now", False):
                continue
            elif getattr(field, "auto_now_add", False):
                continue
            else:
                values[field.name] = _value(field, n)
        made[model] = model.objects.create(**values)
    for model in apps.get_models():  # the many-to-many tables with no model of their own
        for field in model._meta.local_many_to_many:
            through = field.remote_field.through
            if model._meta.app_label in APPS and through._meta.auto_created:
                getattr(made[model], field.name).add(user)
    return len(made)


def _rows() -> dict[str, list]:
    with connection.cursor() as cursor:
        tables = sorted(
            t for t in connection.introspection.table_names(cursor) if t != "django_migrations"
        )
        found = {}
        for table in tables:
            cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)}")
            found[table] = sorted(map(repr, cursor.fetchall()))
    return found


def _migrate(targets):
    """Migrate to the targets; the apps (historical models) of the state reached."""
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    executor.loader.build_graph()
    gone = {app for app, name in targets if name is None}
    named = {app for app, name in targets if name is not None}
    nodes = [n for n in executor.loader.graph.leaf_nodes() if n[0] not in gone | named]
    nodes += [n for n in targets if n[1] is not None]
    return executor.loader.project_state(nodes).apps


@pytest.mark.django_db(transaction=True)
def test_a_database_from_before_the_split_keeps_every_row():
    latest = MigrationExecutor(connection).loader.graph.leaf_nodes()
    old = _migrate(BEFORE_THE_SPLIT)
    try:
        assert {"Participant", "Annotation", "PasswordResetRequest"} <= {
            m.__name__ for m in old.get_app_config("projects").get_models()
        }
        filled = _fill(old)
        assert filled >= 20  # every model of projects, bws and agreement
        content_type = old.get_model("contenttypes", "ContentType")
        for name in MOVED:
            content_type.objects.get_or_create(app_label="projects", model=name)
        before = _rows()
        assert all(before[t] for t in before if t.startswith(("projects_", "bws_", "agreement_")))
    finally:
        new = _migrate(latest)
    after = _rows()
    assert set(after) == set(before)
    for table in before:
        if table != "django_content_type":
            assert after[table] == before[table], f"rows of {table} changed"
    # The moved models read their rows where they live now, and their content types moved.
    for name, app in MOVED.items():
        model = new.get_model(app, name)
        assert model._meta.db_table == f"projects_{name}"
        assert model.objects.count() == 1
    labels = dict(
        new.get_model("contenttypes", "ContentType")
        .objects.filter(model__in=MOVED)
        .values_list("model", "app_label")
    )
    assert labels == MOVED
    assert len(after["django_content_type"]) == len(before["django_content_type"])


@pytest.mark.django_db(transaction=True)
def test_the_split_migrates_back_too():
    latest = MigrationExecutor(connection).loader.graph.leaf_nodes()
    try:
        old = _migrate(BEFORE_THE_SPLIT)
        assert old.get_model("projects", "Assignment")._meta.db_table == "projects_assignment"
    finally:
        new = _migrate(latest)
    assert new.get_model("annotation", "Assignment")._meta.db_table == "projects_assignment"
