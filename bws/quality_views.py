"""The quality page for a project's managers: per annotator, answers, gold accuracy,
training, agreement with the others' consensus, time per unit and the random-clicking flag,
with a button to leave an annotator out of scores and agreement (or take them back)."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from crowds import gold
from projects import services
from projects.access import managed_project_or_404
from projects.models import Membership

from .quality import project_quality


@login_required
def quality_page(request, slug):
    project = managed_project_or_404(request.user, slug)
    report = project_quality(project)
    screened = gold.screened_out(project)
    return render(
        request,
        "bws/quality.html",
        {
            "project": project,
            "report": report,
            "is_bws": bool(project.settings.bws_schemes),
            "gold": project.settings.gold,
            # who failed the training or too many attention checks: a manager may reset them
            "screened": {row.username for row in report.rows if row.user_id in screened},
        },
    )


@login_required
@require_POST
def quality_exclude(request, slug):
    """Leave an annotator out (action=exclude) or take them back (action=include)."""
    project = managed_project_or_404(request.user, slug)
    action = request.POST.get("action")
    username = request.POST.get("annotator", "")
    if action not in ("exclude", "include"):
        return HttpResponseBadRequest("Say exclude or include (action).")
    member = (
        Membership.objects.filter(project=project, user__username=username)
        .select_related("user")
        .first()
    )
    if member is None:
        return HttpResponseBadRequest("No such member of this project (annotator).")
    if member.role == Membership.Role.MANAGER:
        return HttpResponseBadRequest("A manager cannot be left out.")
    changed = services.set_excluded(project=project, user=member.user, excluded=action == "exclude")
    if changed and action == "exclude":
        messages.success(
            request,
            f"{username} is left out: scores and agreement are computed again without their "
            "answers; exports mark them.",
        )
    elif changed:
        messages.success(request, f"{username} counts again: scores and agreement are recomputed.")
    return redirect("project-quality", slug=slug)
