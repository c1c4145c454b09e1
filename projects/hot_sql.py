"""Hand-written SQL for the queue's hot path (queue/next and answers), read into models.

The ORM builds the same few statements on every queue request, and building them (the
query, its compiler, its joins) costs more CPU than PostgreSQL spends running them. Here
the statements are written once, with the columns listed from the models, and their rows
are read into model instances through the same converters the ORM applies, so callers get
the objects the ORM would have given them. Standard SQL that PostgreSQL and SQLite both
run; row locks only where the database has them (PostgreSQL: FOR UPDATE ... SKIP LOCKED).
The statements' results are tested against the ORM's in projects/tests/test_hot_sql.py.
"""

from __future__ import annotations

from functools import cache

from django.db import connection, models


def quote(name: str) -> str:
    return connection.ops.quote_name(name)


@cache
def _fields(model: type[models.Model]) -> tuple:
    return tuple(model._meta.concrete_fields)


@cache
def _columns(vendor: str, model: type[models.Model], alias: str) -> str:
    return ", ".join(f"{alias}.{quote(field.column)}" for field in _fields(model))


def columns(model: type[models.Model], alias: str) -> str:
    """The model's columns, as the ORM selects them, under a table alias."""
    return _columns(connection.vendor, model, alias)


def width(model: type[models.Model]) -> int:
    return len(_fields(model))


@cache
def _converters(vendor: str, model: type[models.Model]) -> tuple:
    """The columns that need converting (JSON; dates and booleans on SQLite...): their
    place, their column expression and the backend's and the field's converters."""
    found = []
    for i, field in enumerate(_fields(model)):
        col = field.get_col(model._meta.db_table)
        chain = connection.ops.get_db_converters(col) + field.get_db_converters(connection)
        if chain:
            found.append((i, col, tuple(chain)))
    return tuple(found)


@cache
def _attnames(model: type[models.Model]) -> list[str]:
    return [field.attname for field in _fields(model)]


def load(model: type[models.Model], values) -> models.Model | None:
    """A model instance from its columns (in columns() order), as the ORM would build it;
    None when the primary key is NULL (the missing side of an outer join)."""
    converted = list(values)
    if converted[0] is None:
        return None
    for i, col, chain in _converters(connection.vendor, model):
        for convert in chain:
            converted[i] = convert(converted[i], col, connection)
    return model.from_db(connection.alias, _attnames(model), converted)


def for_update(alias: str, *, skip_locked: bool = False) -> str:
    """A row lock: FOR UPDATE OF the alias (skipping rows another transaction holds, with
    ``skip_locked``) where the database has it; nothing on SQLite, whose IMMEDIATE
    transactions hold the whole database (settings: transaction_mode)."""
    features = connection.features
    if not features.has_select_for_update:
        return ""
    clause = " FOR UPDATE"
    if features.has_select_for_update_of:
        clause += f" OF {alias}"
    if skip_locked and features.has_select_for_update_skip_locked:
        clause += " SKIP LOCKED"
    return clause


def value(model: type[models.Model], name: str, python_value):
    """A value as the database takes it for this field (a UUID, a datetime, JSON)."""
    field = model._meta.get_field(name)
    return field.get_db_prep_save(python_value, connection)
