"""Agreement pages for a project's managers: the IAA report and its categorical JSON."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from agreement.core.report import AgreementInputError
from projects.access import managed_project_or_404
from projects.rate_limits import Refused

from . import selectors, services


@login_required
@require_http_methods(["GET", "POST"])
def iaa_report(request, slug):
    project = managed_project_or_404(request.user, slug)
    if request.method == "POST":
        try:
            services.recompute_on_request(project=project)
        except AgreementInputError as exc:
            messages.error(request, f"The report could not be computed: {exc}")
        except Refused as exc:  # AGREEMENT_MANUAL_RUNS_PER_HOUR
            refused = HttpResponse(str(exc), status=429, content_type="text/plain; charset=utf-8")
            refused["Retry-After"] = str(int(exc.retry_after))
            return refused
        else:
            messages.success(request, "Agreement recomputed from every stored answer.")
        return redirect("agreement-iaa", slug=project.slug)
    report, computed_now, error = _report(project)
    if request.GET.get("format") == "json":
        return _json(request, project, report, computed_now, error, full=True)
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
    """The report's JSON with only the categorical schemes' figures (and BWS choices)."""
    project = managed_project_or_404(request.user, slug)
    report, computed_now, error = _report(project)
    return _json(request, project, report, computed_now, error, full=False)


def _json(request, project, report, computed_now, error, *, full):
    """The report document; with the stored report in full, or with categorical figures."""
    iaa_url = request.build_absolute_uri(reverse("agreement-iaa", args=[project.slug]))
    if report is None:
        body = selectors.report_error_document(project, error, iaa_url=iaa_url)
        return JsonResponse(body, status=422)
    body = selectors.report_document(project, report, computed_now=computed_now, iaa_url=iaa_url)
    if full:
        body["report"] = report.report
    else:
        body.update(selectors.categorical_figures(report, see=iaa_url))
    return JsonResponse(body)


def _report(project):
    """(report, computed_now, error): the latest report, or a first one computed now."""
    try:
        report, computed_now = services.latest_or_compute(project=project)
    except AgreementInputError as exc:
        return None, False, str(exc)
    return report, computed_now, ""
