"""The training page: the project's training units (gold units with known answers) one at a
time, each answer followed by its feedback ("The best was X; you chose Y."), then the
result against the pass threshold. Someone who fails is thanked and stopped: the queue
gives them no unit (annotation.queue) and the quality page shows it to the managers, who may
reset them (screening_reset). An answer given here is final (annotation.answers), so the
feedback may name the expected answer."""

from __future__ import annotations

import json
import logging
import uuid

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from annotation import selectors as work
from annotation.answer_forms import submit_posted
from annotation.answers import SubmitRefused
from annotation.queue import QueuePolicy
from annotation.views import scheme_blocks, scheme_views
from crowds import gold
from projects import selectors
from projects.access import managed_project_or_404, visible_project_or_404
from projects.models import Item, Unit
from projects.validation import AnswerError


def _project(request, slug):
    project = visible_project_or_404(request.user, slug)
    if selectors.project_role(request.user, project) is None:
        raise Http404
    return project


@login_required
def training(request, slug):
    project = _project(request, slug)
    result = gold.training_result(project, request.user)
    if result.status == gold.TrainingStatus.NOT_REQUIRED:
        return redirect("annotate", slug=slug)
    if request.method == "POST":
        return _answer(request, project, result)
    feedback = _feedback(project, request.user, request.GET.get("feedback"))
    if feedback is None and result.status in (
        gold.TrainingStatus.NOT_STARTED,
        gold.TrainingStatus.IN_PROGRESS,
    ):
        unit = gold.next_training_unit(project, request.user, QueuePolicy.of(project).lease)
        return _question(request, project, unit, result)
    return render(
        request,
        "crowds/training_feedback.html",
        {
            "project": project,
            "result": result,
            "feedback": feedback,
            "continue_url": reverse("annotate", args=[slug]),
        },
    )


def _question(
    request, project, unit, result, *, errors=None, posted=None, status=200, refused=None
):
    unit = Unit.objects.select_related("instance").get(pk=unit.pk)
    payload = selectors.unit_payload(project, unit, request.user)
    views = scheme_views(project, payload, {}, posted, refused)
    blocks = scheme_blocks(views, payload)
    return render(
        request,
        "crowds/training.html",
        {
            "project": project,
            "unit": unit,
            "payload": payload,
            "schemes": views,
            "blocks": blocks,
            "keyboard": any(block.get("keyboard") for block in blocks),
            "errors": errors or {},
            "progress": work.my_progress(project, request.user),
            "editing": False,
            "result": result,
            "number": result.answered + 1,
            "client_id": uuid.uuid4(),
        },
        status=status,
    )


def _answer(request, project, result):
    unit = gold.next_training_unit(project, request.user, QueuePolicy.of(project).lease)
    if unit is None:
        return redirect("project-training", slug=project.slug)
    try:
        submit_posted(project=project, user=request.user, unit_id=unit.pk, post=request.POST)
    except AnswerError as exc:
        return _question(
            request,
            project,
            unit,
            result,
            errors=exc.errors,
            posted=request.POST,
            status=400,
            refused=exc,
        )
    except SubmitRefused:
        return redirect("project-training", slug=project.slug)
    gold.record_training_outcome(project, request.user)
    return redirect(f"{reverse('project-training', args=[project.slug])}?feedback={unit.pk}")


def _feedback(project, user, unit_id) -> dict | None:
    """What the person is told about their answer to a training unit: only once they gave
    it (a gold answer cannot change after that), never for one merely handed to them."""
    if not unit_id or not str(unit_id).isdigit():
        return None
    units = gold.training_units(project)
    unit = next((u for u in units if u.pk == int(unit_id)), None)
    if unit is None:
        return None
    given = gold.answers_by_unit(project, user, [unit]).get(unit.pk)
    if given is None:
        return None
    texts = _item_texts(project, unit)
    lines = []
    for scheme, want in (unit.gold or {}).get("answers", {}).items():
        got = given.get(scheme)
        name = "" if len(project.schemes) == 1 else f"{scheme}: "
        if isinstance(want, dict) and set(want) == {"best", "worst"}:
            got = got if isinstance(got, dict) else {}
            for key in ("best", "worst"):
                lines.append(
                    f"{name}The {key} was {texts.get(want[key], want[key])}; you chose "
                    f"{texts.get(got.get(key), got.get(key) or 'nothing')}."
                )
        else:
            lines.append(
                f"{name}The expected answer was {_shown(want)}; you answered {_shown(got)}."
            )
    return {
        "number": units.index(unit) + 1,
        "right": gold.grade(unit, given).correct,
        "lines": lines,
    }


def _item_texts(project, unit) -> dict:
    texts = dict(
        Item.objects.filter(project=project, item_id__in=unit.item_ids).values_list(
            "item_id", "text"
        )
    )
    if unit.instance_id is not None:
        for entry in unit.instance.items or []:
            if entry.get("text"):
                texts[entry["id"]] = entry["text"]
    return {key: f"“{text}”" if text else key for key, text in texts.items()}


def _shown(value) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, str):
        return f"“{value}”"
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return ", ".join(f"“{v}”" for v in value) or "nothing"
    return json.dumps(value, ensure_ascii=False)


@login_required
@require_POST
def screening_reset(request, slug):
    """A manager lets a person who failed the training or too many attention checks start
    again (crowds.gold.reset_screening): from the quality page."""
    try:
        project = managed_project_or_404(request.user, slug)
    except Http404:
        logging.getLogger("annolab.security").warning(
            "refused: %s (user %s) tried to reset a person in project %r, which they do not manage",
            request.user.get_username(),
            request.user.pk,
            slug,
        )
        raise
    username = request.POST.get("annotator", "").strip()
    try:
        person = gold.person_to_reset(project, username, by=request.user)
        result = gold.reset_screening(project=project, user=person, by=request.user)
    except gold.ResetRefused as exc:
        return HttpResponseBadRequest(str(exc), content_type="text/plain; charset=utf-8")
    messages.success(
        request,
        f"{username} may start again: they had {result.reason}; their {result.answers} "
        "gold answers were deleted.",
    )
    return redirect("project-quality", slug=slug)
