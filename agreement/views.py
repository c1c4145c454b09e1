"""Agreement pages for a project's managers: the IAA report and its categorical JSON."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from agreement.core.report import AgreementInputError
from projects import selectors as project_selectors

from . import selectors, services


def managed_project_or_404(user, slug):
    """The project if the user manages it (managers, lab admins, staff); 404 otherwise."""
    project = get_object_or_404(project_selectors.visible_projects(user), slug=slug)
    if not project_selectors.can_manage(user, project):
        raise Http404("No such project.")
    return project


@login_required
@require_http_methods(["GET", "POST"])
def iaa_report(request, slug):
    project = managed_project_or_404(request.user, slug)
    if request.method == "POST":
        try:
            services.compute_report(project=project)
        except AgreementInputError as exc:
            messages.error(request, f"The report could not be computed: {exc}")
        else:
            messages.success(request, "Agreement recomputed from every stored answer.")
        return redirect("agreement-iaa", slug=project.slug)
    report, computed_now, error = _report(project)
    if request.GET.get("format") == "json":
        if report is None:
            return JsonResponse({"project": project.slug, "error": error}, status=422)
        return JsonResponse(
            {
                "project": project.slug,
                **selectors.report_meta(report),
                "computed_in_request": computed_now,
                "report": report.report,
            }
        )
    return render(
        request,
        "agreement/iaa_report.html",
        {
            "project": project,
            "report": report,
            "computed_now": computed_now,
            "error": error,
            "cards": selectors.report_cards(report.report) if report else [],
            "answers_since": selectors.answers_since(report) if report else 0,
            "failure": selectors.latest_failure(project),
        },
    )


@login_required
@require_GET
def categorical_agreement(request, slug):
    project = managed_project_or_404(request.user, slug)
    see = request.build_absolute_uri(reverse("agreement-iaa", args=[project.slug]))
    report, computed_now, error = _report(project)
    if report is None:
        return JsonResponse({"project": project.slug, "error": error, "see": see}, status=422)
    return JsonResponse(
        {
            "project": project.slug,
            **selectors.report_meta(report),
            "computed_in_request": computed_now,
            **selectors.categorical_figures(report, see=see),
        }
    )


def _report(project):
    """(report, computed_now, error): the latest report, or a first one computed now."""
    try:
        report, computed_now = services.latest_or_compute(project=project)
    except AgreementInputError as exc:
        return None, False, str(exc)
    return report, computed_now, ""
