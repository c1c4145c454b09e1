"""The project's instructions page: what annotators read before their first unit, and can
open again from every unit page."""

from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import render
from django.utils.translation import get_language

from annotation.instructions import mark_seen, render_instructions
from projects import selectors
from projects.access import visible_project_or_404
from projects.texts import pick


@login_required
def project_instructions(request, slug):
    """For those who may annotate or manage the project; reading it counts as shown."""
    project = visible_project_or_404(request.user, slug)
    if selectors.project_role(request.user, project) is None:
        raise Http404("No such project.")
    mark_seen(request.session, project)
    config = project.settings
    text = pick(config.instructions, get_language(), config.language)
    return render(
        request,
        "annotation/instructions.html",
        {
            "project": project,
            "instructions": render_instructions(text) if text else "",
            "started": project.assignments.filter(annotator=request.user).exists(),
        },
    )
