"""Reads of the agreement app: the stored reports and the figures each page shows."""

from __future__ import annotations

from django.db.models import Max
from django.utils import timezone

from agreement.core.report import CATEGORICAL_MEASURES, STRUCTURED_MEASURES
from annotation.models import Annotation
from projects.models import Project
from projects.schemes import scheme_type
from projects.selectors import excluded_names

from .models import AgreementReport

# Measures whose figures the categorical endpoint gives: chance-corrected coefficients on
# one label per unit (a BWS answer is the chosen item, a nominal label per tuple).
CATEGORICAL_REPORT_MEASURES = CATEGORICAL_MEASURES + ("bws",)


def measure(type_name: str | None) -> str | None:
    """The agreement measure of a stored scheme type (projects.schemes); None for a type
    no longer known (a report kept from before it was removed)."""
    try:
        return scheme_type(type_name).measure
    except KeyError:
        return None


def latest_report(project: Project) -> AgreementReport | None:
    """The newest successfully computed report of the project, or None."""
    return (
        AgreementReport.objects.filter(project=project, status=AgreementReport.Status.OK)
        .order_by("-computed_at", "-id")
        .first()
    )


def latest_failure(project: Project) -> AgreementReport | None:
    """The newest failed computation if it is newer than the newest good report."""
    failure = (
        AgreementReport.objects.filter(project=project, status=AgreementReport.Status.FAILED)
        .order_by("-computed_at", "-id")
        .first()
    )
    good = latest_report(project)
    if failure is None or (good is not None and good.computed_at >= failure.computed_at):
        return None
    return failure


def answers_since(report: AgreementReport) -> int:
    """Answers saved or changed after the report was computed."""
    return Annotation.objects.filter(
        project_id=report.project_id, updated_at__gt=report.computed_at
    ).count()


def is_current(report: AgreementReport) -> bool:
    """Whether the report still reflects every stored answer (none added, changed or removed)."""
    figures = Annotation.objects.filter(project_id=report.project_id).aggregate(
        latest=Max("updated_at")
    )
    count = Annotation.objects.filter(project_id=report.project_id).count()
    latest = figures["latest"]
    # A manager leaving an annotator out (or taking one back) makes the report old too.
    left_out = (report.report or {}).get("excluded_annotators", [])
    if left_out != excluded_names(report.project_id):
        return False
    return count == report.n_annotations and (latest is None or latest <= report.computed_at)


def report_age_seconds(report: AgreementReport) -> int:
    return max(0, int((timezone.now() - report.computed_at).total_seconds()))


def categorical_figures(report: AgreementReport, *, see: str) -> dict:
    """The categorical part of a report: per-scheme figures of categorical (and BWS) schemes.

    Structured schemes (3D boxes, segments, traces) are left out and named with a pointer
    (`see`) to the full IAA report, where their figures are shown as not chance-corrected.
    """
    schemes = report.report.get("schemes", {})
    return {
        "schemes": {
            name: figures
            for name, figures in schemes.items()
            if measure(figures.get("type")) in CATEGORICAL_REPORT_MEASURES
        },
        "structured_schemes": {
            name: {"type": figures.get("type"), "see": see}
            for name, figures in schemes.items()
            if measure(figures.get("type")) in STRUCTURED_MEASURES
        },
        "see": see,
    }


def report_document(
    project: Project, report: AgreementReport, *, computed_now: bool, iaa_url: str
) -> dict:
    """A report as JSON, the one shape the API, the IAA page's JSON and the categorical
    endpoint serve: when and from how much it was computed, and its figures per scheme."""
    return {
        "project": project.slug,
        "computed_at": report.computed_at.isoformat(),
        "age_seconds": report_age_seconds(report),
        "n_annotations": report.n_annotations,
        "n_records": report.report.get("n_records", 0),
        "model_annotators": report.report.get("model_annotators", []),
        "computed_in_request": computed_now,
        "iaa_url": iaa_url,
        "schemes": report.report.get("schemes", {}),
    }


def report_error_document(project: Project, error: str, *, iaa_url: str) -> dict:
    """Why no report could be computed, in the same JSON for every endpoint."""
    return {"project": project.slug, "detail": error, "error": error, "see": iaa_url}


# --------------------------------------------------------------------------- the IAA page

# key -> (name shown, what it means); in the order shown.
MEASURES = {
    "alpha_nominal": ("Krippendorff's alpha (nominal)", "chance-corrected; labels as categories"),
    "alpha_ordinal": ("Krippendorff's alpha (ordinal)", "chance-corrected; near points agree more"),
    "fleiss_kappa": ("Fleiss' kappa", "chance-corrected; needs the same number of raters per unit"),
    "cohen_kappa": ("Cohen's kappa", "chance-corrected; mean over annotator pairs (table below)"),
    "percent_agreement": ("Percent agreement", "not chance-corrected; share of agreeing pairs"),
    "best_alpha": ("Alpha on the best choice", "nominal alpha on the item picked best"),
    "worst_alpha": ("Alpha on the worst choice", "nominal alpha on the item picked worst"),
    "mean_agreement": ("Mean agreement", "not chance-corrected; 1 = identical objects and labels"),
    "mean_object_count_diff": ("Object count difference", "mean gap in objects drawn, per pair"),
    "n_items": ("Items", "items answered by two or more annotators"),
    "n_pairs": ("Comparisons", "annotator pairs times items compared"),
    "n_units": ("Units", "units (trace steps for traces) labelled by two or more annotators"),
    "n_annotators": ("Annotators", "annotators who took part in a comparison"),
}
# What each measure compares, as the IAA page names it; these object measures (not the
# trace's step labels) are not chance-corrected.
OBJECT_KINDS = {
    "boxes": "3D boxes (matched at 3D IoU ≥ 0.25)",
    "segments": "time segments (matched at temporal IoU ≥ 0.5)",
    "tiered_segments": "tiered segments (matched within a tier at IoU ≥ 0.5)",
}
KINDS = {
    **OBJECT_KINDS,
    "trace": "agent trace, one unit per step",
    "bws": "best-worst scaling",
    **dict.fromkeys(CATEGORICAL_MEASURES, "categorical"),
}
COUNT_KEYS = ("n_items", "n_pairs", "n_units", "n_annotators")


def report_cards(report: dict) -> list[dict]:
    """One card per scheme for the IAA page: its figures with their notes, and its tables."""
    cards = []
    for name, scheme in (report.get("schemes") or {}).items():
        kind = scheme.get("type", "")
        scheme_measure = measure(kind)
        # The card's banner already says that structured figures are not chance-corrected.
        notes = [n for n in scheme.get("notes") or [] if "not chance-corrected" not in n]
        rows = []
        for key, (label, meaning) in MEASURES.items():
            if key not in scheme:
                continue
            value = scheme[key]
            reason = ""
            if value is None:
                reason = next((note for note in notes if _note_of(note, key)), "")
                if reason in notes:
                    notes.remove(reason)
            rows.append(
                {
                    "key": key,
                    "label": label,
                    "meaning": meaning,
                    "value": value,
                    "is_count": key in COUNT_KEYS,
                    "is_percent": key == "percent_agreement",
                    "reason": _reason(reason, key),
                }
            )
        cards.append(
            {
                "name": name,
                "type": kind,
                "kind": KINDS.get(scheme_measure, "not compared"),
                "structured": scheme_measure in STRUCTURED_MEASURES,
                "chance_corrected": scheme_measure not in OBJECT_KINDS,
                "rows": rows,
                "pairs": scheme.get("cohen_kappa_pairs") or [],
                "judges": [
                    {"name": judge, **entry}
                    for judge, entry in (scheme.get("judge_disagreement") or {}).items()
                ],
                "split_half": scheme.get("split_half"),
                "has_split_half": "split_half" in scheme,
                "notes": notes,
            }
        )
    return cards


def _note_of(note: str, key: str) -> bool:
    return note.startswith((f"{key}:", f"{key} ")) and "undefined" in note


def _reason(note: str, key: str) -> str:
    """'alpha_nominal: undefined, only one label used' -> 'only one label used'."""
    text = note[len(key) :].lstrip(": ")
    for prefix in ("undefined, ", "undefined: ", "undefined"):
        if text.startswith(prefix):
            return text[len(prefix) :].strip()
    return text
