"""Who may open a project's pages: one rule, shared by every app's views and API.

A project the user may not see, or may not manage where managing is needed, is a 404,
never a 403, so no page reveals that a project exists.
"""

from django.http import Http404

from . import selectors
from .models import Project


def visible_project_or_404(user, slug: str) -> Project:
    """The project with this slug if the user may see it; 404 otherwise."""
    project = selectors.project_for(user, slug)
    if project is None:
        raise Http404("No such project.")
    return project


def managed_project_or_404(user, slug: str) -> Project:
    """The project if the user manages it (its managers, its lab's admins, staff); 404 otherwise."""
    project = visible_project_or_404(user, slug)
    if not selectors.can_manage(user, project):
        raise Http404("No such project.")
    return project
