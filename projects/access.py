"""Who may open a project's pages: one rule, shared by every app's views and API.

A project the user may not see, or may not manage where managing is needed, is a 404,
never a 403, so no page reveals that a project exists.
"""

from functools import cache

from django.db import connection
from django.http import Http404

from projects import hot_sql, selectors
from projects.models import Lab, LabMembership, Membership, Project, Removal


def visible_project_or_404(user, slug: str) -> Project:
    """The project with this slug if the user may see it (staff; everyone signed in but the
    people its managers removed, on an open project; its members; its lab's admins: the rule
    of selectors.visible_projects);
    404 otherwise. One statement: the project, its lab, and whether the user is a member
    or an admin of the lab."""
    if not user.is_authenticated:
        raise Http404("No such project.")
    found = _project_with_access(user, slug)
    if found is None:
        raise Http404("No such project.")
    project, member, lab_admin, removed = found
    # An open project takes every signed-in user, but not one its managers removed.
    if not (user.is_staff or member or lab_admin or (project.allow_all_users and not removed)):
        raise Http404("No such project.")
    return project


def managed_project_or_404(user, slug: str) -> Project:
    """The project if the user manages it (its managers, its lab's admins, staff); 404 otherwise."""
    project = visible_project_or_404(user, slug)
    if not selectors.can_manage(user, project):
        raise Http404("No such project.")
    return project


@cache
def _access_sql(vendor: str) -> str:
    q = hot_sql.quote
    return (
        f"SELECT {hot_sql.columns(Project, 'p')}, {hot_sql.columns(Lab, 'l')}, "
        f"EXISTS(SELECT 1 FROM {q(Membership._meta.db_table)} m "
        f"WHERE m.{q('project_id')} = p.{q('id')} AND m.{q('user_id')} = %s), "
        f"EXISTS(SELECT 1 FROM {q(LabMembership._meta.db_table)} a "
        f"WHERE a.{q('lab_id')} = p.{q('lab_id')} AND a.{q('user_id')} = %s "
        f"AND a.{q('is_admin')} = %s), "
        f"EXISTS(SELECT 1 FROM {q(Removal._meta.db_table)} r "
        f"WHERE r.{q('project_id')} = p.{q('id')} AND r.{q('user_id')} = %s) "
        f"FROM {q(Project._meta.db_table)} p INNER JOIN {q(Lab._meta.db_table)} l "
        f"ON l.{q('id')} = p.{q('lab_id')} WHERE p.{q('slug')} = %s"
    )


def _project_with_access(user, slug: str) -> tuple[Project, bool, bool, bool] | None:
    with connection.cursor() as cursor:
        cursor.execute(_access_sql(connection.vendor), [user.pk, user.pk, True, user.pk, slug])
        row = cursor.fetchone()
    if row is None:
        return None
    n = hot_sql.width(Project)
    project = hot_sql.load(Project, row[:n])
    project.lab = hot_sql.load(Lab, row[n : n + hot_sql.width(Lab)])
    return project, bool(row[-3]), bool(row[-2]), bool(row[-1])
