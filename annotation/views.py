"""The pages a person works from: home (their projects and how far they are), the project
page, the annotate pages that hand out and store units, and the answers' export."""

import uuid

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import get_language, gettext

from annotation import unit_page
from annotation.annotation_files import EXPORT_TYPES, export_file
from annotation.answer_forms import submit_posted
from annotation.answers import FinalAnswerRefused, SubmitRefused, answer_is_final
from annotation.models import Assignment
from annotation.queue import WAIT_SECONDS, next_unit, person_cap, units_coming
from projects import selectors as projects_selectors
from projects.access import managed_project_or_404, visible_project_or_404
from projects.content_policy import allow_waveform_style
from projects.downloads import attachment
from projects.models import Unit
from projects.schemes import scheme_type
from projects.schemes.base import label_names, label_texts
from projects.validation import AnswerError

from . import selectors
from .instructions import show_first as show_instructions_first
from .people import rules as people


def _annotator_project_or_404(request, slug):
    """The project if the user may annotate in it: whoever may see it has a role in it
    (projects.access and project_role follow the same rule). A participant's project
    and membership came with the participant (crowds.participants.ParticipantScope)."""
    participant = getattr(request, "participant", None)
    if participant is not None and participant.project.slug == slug and participant.is_member:
        return participant.project
    return visible_project_or_404(request.user, slug)


def scheme_views(project, payload, answers, posted=None, refused=None):
    """Per scheme: its definition, the current value, its type's template and what that
    template needs to draw it (SchemeType.view). ``posted``: the refused form as sent, so
    that each scheme draws what was typed, exactly as typed; ``refused``: the AnswerError,
    whose refused table row (AnswerError.rows) is marked with its message."""
    views = []
    for scheme in project.schemes:
        kind = scheme_type(scheme["type"])
        options = scheme["options"]
        value = answers.get(scheme["name"])
        view = {
            "scheme": scheme,
            "options": options,
            "value": value,
            "labels": label_names(options),
            "label_texts": label_texts(options, get_language()),
            "field": scheme["name"],
            "template": kind.template,
            "together": kind.together,
        }
        view.update(kind.view(scheme, options, value, payload, posted=posted))
        if refused is not None and scheme["name"] in refused.rows:
            _mark_row(view, *refused.rows[scheme["name"]], refused.errors[scheme["name"]])
        views.append(view)
    return views


def _mark_row(view: dict, row: int, fields: tuple[str, ...], message: str) -> None:
    """The refused row of a table (boxes, segments) carries the message, drawn under it,
    and its cells at fault (none named: every cell of the row) are marked."""
    rows = view.get("rows") or []
    if not 0 <= row < len(rows):
        return
    view["row_error"] = True  # said under the row, not again under the scheme
    bad = rows[row]
    bad["error"] = message
    bad["error_id"] = f"{view['field']}-row-{row + 1}-error"
    bad["bad_fields"] = set(fields)
    for key, cell in (bad.get("cells") or {}).items():
        if not fields or key in fields:
            cell["invalid"] = True
    if "label" in fields or not fields:
        bad["label_invalid"] = True


def scheme_blocks(views, payload):
    """One block per type drawn `together` (the best-worst table), in the order of their
    first scheme: its template, its schemes' views, and its type's block context."""
    blocks = []
    for type_name in dict.fromkeys(view["scheme"]["type"] for view in views if view["together"]):
        kind = scheme_type(type_name)
        members = [view for view in views if view["scheme"]["type"] == type_name]
        blocks.append({"template": kind.template, "views": members, **kind.block(members, payload)})
    return blocks


def _render_unit(
    request,
    project,
    unit,
    *,
    answers,
    errors=None,
    status=200,
    posted=None,
    held=None,
    refused=None,
):
    """The unit's page. ``held``: this user's assignment of the unit when the caller has
    it (None: asked here); completed, the page changes an earlier answer. ``refused``: the
    AnswerError of a refused form (its row marked)."""
    if unit.instance_id is not None and not Unit.instance.is_cached(unit):
        unit = Unit.objects.select_related("instance").get(pk=unit.pk)
    payload = projects_selectors.unit_payload(project, unit, request.user)
    views = scheme_views(project, payload, answers, posted, refused)
    blocks = scheme_blocks(views, payload)
    if held is None:
        held = Assignment.objects.filter(unit=unit, annotator=request.user).first()
    answered = held if held is not None and held.status == Assignment.Status.COMPLETED else None
    # the units still open to them, counted up to their quota (all without one)
    quota = person_cap(project, request.user, with_training=False)
    here = unit_page.standing(project, request.user, open_limit=quota)
    previous_unit_id = here.latest_unit_id  # for a unit not answered yet, the latest answer
    if answered is not None:
        previous = selectors.previous_answer(project, request.user, unit, current=answered)
        previous_unit_id = previous.unit_id if previous is not None else None
    # The training's gold units are not counted as answered; without gold there are none.
    done = here.completed if project.settings.gold is None else None
    progress = selectors.my_progress(
        project, request.user, units=here.units, done=done, open_units=here.open_units
    )
    return render(
        request,
        "annotation/annotate.html",
        {
            "project": project,
            "unit": unit,
            "payload": payload,
            "schemes": views,
            "blocks": blocks,
            "keyboard": any(block.get("keyboard") for block in blocks),
            "errors": errors or {},
            "progress": progress,
            # The person's own count, the same for a check as for any unit (unit_page).
            "heading": unit_page.heading(
                project, request.user, unit, answered=answered, progress=progress
            ),
            "previous_unit_id": previous_unit_id,
            "editing": answered is not None,
            # a final answer (a gold unit's, or any where checks are mixed in) is shown only
            "final": answered is not None and answer_is_final(project, unit),
            "client_id": uuid.uuid4(),
        },
        status=status,
    )


def _refused_unit(request, project, unit, refused: AnswerError, held=None):
    """The unit's page again with the messages (400), every field as it was sent and the
    refused row marked."""
    return _render_unit(
        request,
        project,
        unit,
        answers={},
        errors=refused.errors,
        status=400,
        posted=request.POST,
        held=held,
        refused=refused,
    )


def waiting_page(request, project, again: str) -> HttpResponse:
    """The queue is empty but units are on their way (an adaptive design's next batch):
    "one moment", followed to ``again`` by itself (the Refresh header: no script)."""
    response = render(
        request, "annotation/annotate_wait.html", {"project": project, "again": again}
    )
    response["Refresh"] = f"{WAIT_SECONDS}; url={again}"
    return response


@login_required
@allow_waveform_style
def annotate(request, slug):
    project = _annotator_project_or_404(request, slug)
    if show_instructions_first(request.session, project, request.user):
        return redirect("project-instructions", slug=slug)
    if people.training_first(project, request.user):
        return redirect("project-training", slug=slug)  # to pass first, or failed
    unit = next_unit(project=project, user=request.user)
    if unit is None and units_coming(project=project, user=request.user):
        return waiting_page(request, project, reverse("annotate", args=[slug]))
    if unit is None:
        progress = selectors.my_progress(project, request.user)
        completed = selectors.my_completed_units(project, request.user)[:50]
        return render(
            request,
            "annotation/annotate_done.html",
            {
                "project": project,
                "progress": progress,
                "completed": unit_page.numbered(completed, progress.done),
                "screened_out": people.screening_failure(project, request.user),
            },
        )
    return _render_unit(request, project, unit, answers={})


@login_required
@allow_waveform_style
def annotate_unit(request, slug, unit_id):
    project = _annotator_project_or_404(request, slug)
    # The unit with this user's assignment of it, in one statement: no assignment, not theirs.
    held = unit_page.held_unit(project, unit_id, request.user)
    if held is None:
        raise Http404("No such unit, or not yours to annotate.")
    unit = held.unit
    if request.method != "POST":
        # Answers are stored with the assignment completed: none to read before then.
        answers = {}
        if held.status == Assignment.Status.COMPLETED:
            answers = selectors.my_answers(project, request.user, unit)
        return _render_unit(request, project, unit, answers=answers, held=held)
    try:
        submit_posted(project=project, user=request.user, unit_id=unit.pk, post=request.POST)
    except AnswerError as exc:  # refused: nothing is stored, and what was typed comes back
        return _refused_unit(request, project, unit, exc, held)
    except FinalAnswerRefused as exc:  # the stored answer stays, shown as it is
        answers = selectors.my_answers(project, request.user, unit)
        errors = {"answer": str(exc)}
        return _render_unit(
            request, project, unit, answers=answers, errors=errors, status=409, held=held
        )
    except SubmitRefused as exc:
        messages.error(request, str(exc))
    else:
        # Said on the next unit's page, so the annotator knows the last one was kept.
        messages.success(request, gettext("Saved."))
    # A participant goes straight to their next step (the next unit, reserved for them now,
    # or the completion code), as their flow would send them (crowds answers next_page).
    page = people.next_page(request)
    if page is not None:
        return HttpResponseRedirect(page)
    return redirect("annotate", slug=slug)


@login_required
def project_export(request, slug):
    """Download every answer in the interchange format (JSON Lines, CSV or TSV)."""
    project = managed_project_or_404(request.user, slug)
    fmt = request.GET.get("format", "jsonl")
    if fmt not in EXPORT_TYPES:
        raise Http404("Unknown format.")
    body, filename, content_type = export_file(project, fmt)  # the API's export too
    return attachment(body, filename=filename, content_type=content_type)
