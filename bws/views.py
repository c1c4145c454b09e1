"""The BWS tab of the project dashboard: charts, reliability, the ranked table, re-scoring
with another method, and score downloads. Managers and staff only."""

import tempfile
from pathlib import Path
from urllib.parse import urlencode

import numpy as np
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from bws.comparisons import CompareRefused, compare_items
from projects import selectors as project_selectors
from projects.access import managed_project_or_404
from projects.downloads import attachment

from . import adaptive, charts, freshness, scheduling, selectors, services
from .core.scoring import METHOD_NAMES, METHODS
from .core.tail_coverage import OuterCuts
from .models import ItemScore, ScoreRun


def _managed_bws_project(request, slug):
    project = managed_project_or_404(request.user, slug)
    schemes = selectors.bws_scheme_names(project)
    if not schemes:
        raise Http404("This project has no best-worst scheme.")
    return project, schemes


def _chosen(request, project, schemes):
    scheme = request.GET.get("scheme") or request.POST.get("scheme") or schemes[0]
    if scheme not in schemes:
        raise Http404(f"No best-worst scheme {scheme!r}.")
    method = request.GET.get("method") or ""
    if method and method not in METHODS:
        raise Http404(f"No method {method!r}.")
    return scheme, method


@login_required
def dashboard(request, slug):
    project, schemes = _managed_bws_project(request, slug)
    scheme, method = _chosen(request, project, schemes)
    run = selectors.latest_good_run(project, scheme, method or None)
    pending = selectors.pending_runs(project, scheme).order_by("-created_at").first()
    failed = selectors.latest_failed_run(project, scheme)
    context = {
        "project": project,
        "schemes": schemes,
        "scheme": scheme,
        "method": method
        or (run.method if run else services.scoring_options(project, scheme)["method"]),
        "methods": [(m, METHOD_NAMES[m]) for m in METHODS],
        "run": run,
        "pending": pending,
        "failed": failed,
        "progress": project_selectors.project_progress([project])[project.pk],
        "recent_runs": selectors.recent_runs(project),
        "answers_since": selectors.answers_since(run) if run else 0,
        "run_method_name": METHOD_NAMES.get(run.method, run.method) if run else "",
        "reliability_width": round(
            300 * min(max((run.reliability or {}).get("mean") or 0, 0), 1) if run else 0, 1
        ),
    }
    context["adaptive"] = adaptive.design_status(project)
    automatic = services.scoring_options(project, scheme)["auto_compute"]
    context["freshness"] = freshness.scores_freshness(project, run, automatic=automatic)
    diagnostics = selectors.run_diagnostics(run)
    context["diagnostics"] = diagnostics.messages
    if run is not None and run.n_judgments:
        context.update(_scores_context(project, run, request.GET.get("page"), diagnostics))
        context.update(_systems_context(run))
        context["compared"] = _compared(project, scheme, run, request.GET.get("compare"))
    return render(request, "bws/dashboard.html", context)


def _compared(project, scheme: str, run: ScoreRun, asked: str | None) -> dict | None:
    """The pairwise questions of the dashboard's form (?compare=a,b,c), or the refusal."""
    if not asked:
        return None
    ids = [part.strip() for part in asked.split(",") if part.strip()]
    try:
        found = compare_items(project, scheme=scheme, method=run.method, item_ids=ids)
    except CompareRefused as exc:
        return {"asked": asked, "error": str(exc)}
    return {"asked": asked, **found}


def _scores_context(project, run: ScoreRun, page_number, diagnostics) -> dict:
    """The charts and one page of the ranked table of a run that has judgments.

    Each row says whether its interval is approximate (and why, for the mark's title),
    whether it has zero width (shown as approximate, never as a range of zero width) and,
    when the items fall into separate groups, its group."""
    scores = list(
        ItemScore.objects.filter(run=run).values_list("score", "ci_low", "ci_high", "appearances")
    )
    values = [s for s, *_ in scores if s is not None]
    lows = [lo for _, lo, _, _ in scores if lo is not None] or values
    highs = [hi for _, _, hi, _ in scores if hi is not None] or values
    lo, hi = min(lows), max(highs)
    # The items estimated in the outer tenths carry a mark with the coverage measured for
    # such items (bws/core/tail_coverage.py).
    cuts = OuterCuts.of(run.method, values)
    page = Paginator(selectors.ranked_items(run), 50).get_page(page_number)
    texts = dict(
        project.items.filter(item_id__in=[i.item_id for i in page]).values_list("item_id", "text")
    )
    ranked = (run.ranks or {}).get("items") or {}
    return {
        "histogram": charts.histogram(values),
        "coverage": charts.coverage([a for *_, a in scores]),
        "convergence": charts.convergence(run.convergence or []),
        "page": page,
        "rows": [
            {
                "item": item,
                "text": texts.get(item.item_id, ""),
                "bar": charts.interval_bar(item.score, item.ci_low, item.ci_high, lo, hi),
                "approximate": diagnostics.approximate(item.item_index),
                "zero_width": diagnostics.zero_width(item.item_index),
                "note": diagnostics.note(item.item_index, item.appearances),
                "group": diagnostics.group(item.item_index) if item.score is not None else None,
                "tail": cuts.mark(item.score, item.appearances),
                "rank_span": _span(ranked.get(item.item_id)),
            }
            for item in page
        ],
        "range": (lo, hi),
        "tail_note": cuts.footnote(float(np.median([a for *_, a in scores]))),
        # With a group_key, ranks are within groups and the design's groups are shown; the
        # separate groups diagnostics finds are then those same groups.
        "group_key": _group_key(project, page),
        "n_groups": diagnostics.n_groups,
        "any_approximate": bool(run.diagnostics and run.diagnostics.get("n_approximate")),
        "ranks": _ranks_context(run, texts),
    }


def _span(found) -> str | None:
    """ "1-3" (or "2") for an item's marginal 95% rank interval; None without one."""
    if not found:
        return None
    low, high = found[0], found[1]
    return str(low) if low == high else f"{low}–{high}"


def _ranks_context(run: ScoreRun, texts: dict) -> dict | None:
    """The top-k card: the items surely among the top k and those that may be."""
    top = (run.ranks or {}).get("top_k")
    if not top:
        return None
    return {
        "k": top["k"],
        "level": round(100 * run.ranks["level"]),
        "confident": top["confident"],
        "possible": [i for i in top["possible"] if i not in set(top["confident"])],
        "procedure": run.ranks["procedure"],
        "note": run.ranks.get("note"),
    }


def _group_key(project, page) -> str | None:
    """The design's group_key when the run's items carry their groups (ranks within them)."""
    bws = project.settings.bws
    key = bws.group_key if bws is not None and not bws.items_key else None
    return key if key and any(item.design_group for item in page) else None


def _systems_context(run: ScoreRun | None) -> dict:
    """The systems ranked card's table and chart, when the run ranked systems."""
    if run is None or not run.sources:
        return {}
    return {"sources": run.sources, "systems_chart": charts.systems(run.sources)}


@login_required
@require_POST
def rescore(request, slug):
    project, schemes = _managed_bws_project(request, slug)
    scheme = request.POST.get("scheme") or schemes[0]
    method = request.POST.get("method") or None
    if scheme not in schemes:
        raise Http404
    try:
        run, created = scheduling.ask_for_run(
            project=project, scheme=scheme, method=method, trigger=ScoreRun.Trigger.MANUAL
        )
    except ValueError as exc:
        messages.error(request, str(exc))
        return redirect(_dashboard_url(project, scheme))
    except scheduling.RunRefused as exc:  # SCORING_MANUAL_RUNS_PER_HOUR
        refused = HttpResponse(str(exc), status=429, content_type="text/plain; charset=utf-8")
        refused["Retry-After"] = str(int(exc.retry_after))
        return refused
    if not created:
        messages.info(
            request,
            f"The run of {scheme} queued already computes {METHOD_NAMES[run.method]} scores; "
            "it reads every answer stored before it starts.",
        )
    elif scheduling.queue_run(run):
        messages.success(
            request, f"Scoring {scheme} with {METHOD_NAMES[run.method]}: this page updates itself."
        )
    else:
        messages.error(
            request, "The task queue is not reachable; the run will start when it is back."
        )
    return redirect(_dashboard_url(project, scheme, run.method))


def _dashboard_url(project, scheme, method=None) -> str:
    query = {"scheme": scheme, **({"method": method} if method else {})}
    return f"{reverse('bws-dashboard', args=[project.slug])}?{urlencode(query)}"


@login_required
def download(request, slug):
    project, schemes = _managed_bws_project(request, slug)
    scheme, method = _chosen(request, project, schemes)
    run = selectors.latest_good_run(project, scheme, method or None)
    if run is None:
        raise Http404("No scores yet.")
    fmt = "csv" if request.GET.get("format") == "csv" else "tsv"
    with tempfile.TemporaryDirectory() as folder:
        path = services.write_run_table(run, Path(folder) / f"scores.{fmt}")
        body = path.read_bytes()
    return attachment(
        body,
        filename=f"{project.slug}-{scheme}-{run.method}.{fmt}",
        content_type="text/csv" if fmt == "csv" else "text/tab-separated-values",
    )
