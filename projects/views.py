"""Server-rendered pages: home, project pages for managers, project upload, lab people."""

import uuid
from pathlib import Path

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from annotation import unit_page
from annotation.annotation_files import EXPORT_TYPES, export_file
from annotation.answer_forms import submit_posted
from annotation.answers import FinalAnswerRefused, SubmitRefused, answer_is_final
from annotation.models import Assignment
from annotation.queue import next_unit
from crowds import gold
from crowds.instructions import show_first as show_instructions_first
from crowds.participants import next_step as participant_next_step
from labs import services as lab_services
from labs.invite_views import InviteForm, pop_invite_links, remember_invites
from labs.invites import create_missing_accounts, invitable_member_ids
from projects import selectors, services
from projects.access import managed_project_or_404, visible_project_or_404
from projects.content_policy import allow_waveform_style
from projects.downloads import attachment
from projects.forms import AddMembersForm, ProjectUploadForm
from projects.models import Instance, Item, Membership, Unit
from projects.schemes import scheme_type
from projects.schemes.base import label_names
from projects.validation import AnswerError


@login_required
def home(request):
    projects = list(selectors.visible_projects(request.user).order_by("lab__name", "name"))
    progress = selectors.project_progress(projects)
    rows = []
    for p in projects:
        role = selectors.project_role(request.user, p)
        # An annotator sees what they did; a manager (or a lab admin) the project's figure.
        mine = role == Membership.Role.ANNOTATOR
        shown = selectors.my_progress(p, request.user) if mine else progress[p.pk]
        rows.append({"project": p, "progress": shown, "role": role})
    return render(
        request,
        "projects/home.html",
        {
            "rows": rows,
            "can_create": selectors.labs_for_project_creation(request.user).exists(),
            "labs": selectors.visible_labs(request.user),
        },
    )


@login_required
def project_detail(request, slug):
    project = visible_project_or_404(request.user, slug)
    role = selectors.project_role(request.user, project)
    if role != Membership.Role.MANAGER:
        progress = selectors.my_progress(project, request.user)
        return render(
            request,
            "projects/project_annotator.html",
            {"project": project, "progress": progress, "role": role},
        )
    progress = selectors.project_progress([project])[project.pk]
    overview = selectors.project_overview(project)
    items = Paginator(Item.objects.filter(project=project).order_by("index"), 50).get_page(
        request.GET.get("items")
    )
    # A project of whole records (no items) lists its instances instead.
    instances = None
    if not overview.n_items and overview.n_instances:
        instances = Paginator(
            Instance.objects.filter(project=project).order_by("position"), 50
        ).get_page(request.GET.get("instances"))
    tuples = Paginator(
        Unit.objects.filter(project=project, kind=Unit.Kind.TUPLE)
        .select_related("instance")
        .order_by("position"),
        50,
    ).get_page(request.GET.get("tuples"))
    return render(
        request,
        "projects/project_detail.html",
        {
            "project": project,
            "config": project.settings,
            "progress": progress,
            "overview": overview,
            "items": items,
            "instances": instances,
            "instance_rows": [
                (i.position, i.instance_id, str(i.data.get(project.settings.text_key, "")))
                for i in instances or []
            ],
            "tuples": tuples,
            "member_form": AddMembersForm(),
            "member_results": _pop_member_results(request, project),
            # the invite form as posted when project_invite refused it, else a blank one
            "invite_form": getattr(request, "invite_form", None) or InviteForm(),
            "invite_links": pop_invite_links(request, project),
            "invitable": invitable_member_ids(
                inviter=request.user, project=project, memberships=overview.members
            ),
        },
    )


def _refused(response):
    """A page shown again with its error messages, answering the bad form with a 400."""
    response.status_code = 400
    return response


def _user_to_remove(request):
    """The account named by the form's `remove` field, or None with a message saying why."""
    text = request.POST.get("remove", "").strip()
    user = None
    if text.isascii() and text.isdigit() and len(text) <= 18:
        user = get_user_model().objects.filter(pk=int(text)).first()
    if user is None:
        messages.error(request, "Nobody to remove: the form named no known account.")
    return user


_MEMBER_RESULTS = "member_results"


def _pop_member_results(request, project) -> list[dict]:
    """The per-entry results of the last bulk add to this project, shown once."""
    results = request.session.get(_MEMBER_RESULTS)
    if not results or results.get("project") != project.pk:
        return []
    del request.session[_MEMBER_RESULTS]
    return results["rows"]


@login_required
@require_POST
def project_members(request, slug):
    project = managed_project_or_404(request.user, slug)
    if "remove" in request.POST:
        user = _user_to_remove(request)
        if user is None:
            return _refused(project_detail(request, slug))
        lab_services.remove_project_member(project=project, user=user, removed_by=request.user)
        messages.success(request, f"{user.username} no longer belongs to this project.")
        return redirect("project-detail", slug=slug)
    form = AddMembersForm(request.POST)
    if form.is_valid():
        entries, role = form.cleaned_data["usernames"], form.cleaned_data["role"]
        if form.cleaned_data["create_missing"]:
            invites = create_missing_accounts(entries, project=project, role=role)
            remember_invites(request, project, invites)
        known = [e.user.username for e in entries if e.user is not None]
        changes = lab_services.add_project_members(project=project, usernames=known, role=role)
        request.session[_MEMBER_RESULTS] = {
            "project": project.pk,
            "rows": lab_services.member_results(entries, {c.username: c for c in changes}),
        }
        # accounts made just now joined the project with their invite link (invites.py)
        new = {e.user.username for e in entries if e.outcome == "created"}
        added = sum(1 for c in changes if c.previous_role is None or c.username in new)
        members, skipped = len(changes) - added, len(entries) - len(changes)
        parts = [f"{added} added as {role}"] if added else []
        if created := sum(1 for e in entries if e.outcome == "created"):
            parts.append(f"{created} new account{'s' if created > 1 else ''} (invite links below)")
        if members:
            parts.append(f"{members} already {'a member' if members == 1 else 'members'}")
        if skipped:
            parts.append(f"{skipped} not added")
        if skipped:  # shown as an error: someone on the list still has to be dealt with
            messages.error(request, ", ".join(parts) + ": see why in the list under Members.")
        else:
            messages.success(request, ", ".join(parts) + ".")
        return redirect(f"{reverse('project-detail', args=[slug])}#members")
    for error in form.errors.get("usernames", []) + form.errors.get("role", []):
        messages.error(request, error)
    return _refused(project_detail(request, slug))


@login_required
def project_create(request):
    labs = selectors.labs_for_project_creation(request.user)
    if not labs.exists():
        raise Http404("Only lab admins create projects.")
    errors: list[str] = []
    status = 200
    if request.method == "POST":
        form = ProjectUploadForm(request.POST, request.FILES, labs=labs)
        # Files the upload handler dropped for their size (projects/uploads.py).
        errors = list(getattr(request, "upload_refusals", []))
        if errors:
            status = 400
        elif form.is_valid():
            try:
                result = services.create_project_from_upload(
                    config_file=form.cleaned_data["config_file"],
                    data_files=form.cleaned_data["data_files"],
                    lab=form.cleaned_data["lab"],
                    owner=request.user,
                )
            except services.ProjectImportError as exc:
                errors, status = str(exc).splitlines(), 400
            else:
                messages.success(request, f"Created {result.project.name}: {_made_of(result)}.")
                return redirect("project-detail", slug=result.project.slug)
        else:
            status = 400  # a missing file or lab: the form says which
    else:
        form = ProjectUploadForm(labs=labs)
    chosen = []
    if status == 400:
        chosen = [
            f.name for key in ("config_file", "data_files") for f in request.FILES.getlist(key)
        ]
    return render(
        request,
        "projects/project_create.html",
        {"form": form, "errors": errors, "chosen_files": chosen},
        status=status,
    )


def _made_of(result) -> str:
    """What an imported project holds, as the project page counts it: its items (and tuples)
    for best-worst, its instances for whole records, both where both are there."""
    counts = [(result.n_items, "item"), (result.n_instances, "instance")]
    counts.append((result.n_tuples, "tuple"))
    parts = [f"{n:,} {noun}{'s' if n != 1 else ''}" for n, noun in counts if n]
    return ", ".join(parts) or "no records"


EXAMPLE_CONFIG = Path(__file__).resolve().parent.parent / "examples" / "mt_bws" / "config.yaml"
EXAMPLE_CONFIG_NOTE = (
    "# An example Annolab project: upload this file as the configuration and, as its data\n"
    "# file, a JSON Lines file named mt_systems.jsonl with one item per line, e.g.\n"
    '# {"id": "s1", "text": "The cat sat on the mat."}\n\n'
)


@login_required
def example_config(request):
    """The example project configuration, as a download for the upload page."""
    body = EXAMPLE_CONFIG_NOTE + EXAMPLE_CONFIG.read_text(encoding="utf-8")
    return attachment(
        body.encode("utf-8"), filename="example-config.yaml", content_type="text/yaml"
    )


def _annotator_project_or_404(request, slug):
    """The project if the user may annotate in it: whoever may see it has a role in it
    (projects.access and project_role follow the same rule). A participant's project
    and membership came with the participant (crowds.participants.ParticipantScope)."""
    participant = getattr(request, "participant", None)
    if participant is not None and participant.project.slug == slug and participant.is_member:
        return participant.project
    return visible_project_or_404(request.user, slug)


def _scheme_views(project, payload, answers, posted=None):
    """Per scheme: its definition, the current value, its type's template and what that
    template needs to draw it (SchemeType.view). ``posted``: the refused form as sent, so
    that each scheme draws what was typed, exactly as typed."""
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
            "field": scheme["name"],
            "template": kind.template,
            "together": kind.together,
        }
        view.update(kind.view(scheme, options, value, payload, posted=posted))
        views.append(view)
    return views


def _scheme_blocks(views, payload):
    """One block per type drawn `together` (the best-worst table), in the order of their
    first scheme: its template, its schemes' views, and its type's block context."""
    blocks = []
    for type_name in dict.fromkeys(view["scheme"]["type"] for view in views if view["together"]):
        kind = scheme_type(type_name)
        members = [view for view in views if view["scheme"]["type"] == type_name]
        blocks.append({"template": kind.template, "views": members, **kind.block(members, payload)})
    return blocks


def _render_unit(
    request, project, unit, *, answers, errors=None, status=200, posted=None, held=None
):
    """The unit's page. ``held``: this user's assignment of the unit when the caller has
    it (None: asked here); completed, the page changes an earlier answer."""
    if unit.instance_id is not None and not Unit.instance.is_cached(unit):
        unit = Unit.objects.select_related("instance").get(pk=unit.pk)
    payload = selectors.unit_payload(project, unit, request.user)
    views = _scheme_views(project, payload, answers, posted)
    blocks = _scheme_blocks(views, payload)
    if held is None:
        held = Assignment.objects.filter(unit=unit, annotator=request.user).first()
    answered = held if held is not None and held.status == Assignment.Status.COMPLETED else None
    here = unit_page.standing(project, request.user)
    previous_unit_id = here.latest_unit_id  # for a unit not answered yet, the latest answer
    if answered is not None:
        previous = selectors.previous_answer(project, request.user, unit, current=answered)
        previous_unit_id = previous.unit_id if previous is not None else None
    # The training's gold units are not counted as answered; without gold there are none.
    done = here.completed if project.settings.gold is None else None
    progress = selectors.my_progress(project, request.user, units=here.units, done=done)
    return render(
        request,
        "projects/annotate.html",
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


def _refused_unit(request, project, unit, errors, held=None):
    """The unit's page again with the messages (400), every field as it was sent."""
    return _render_unit(
        request,
        project,
        unit,
        answers={},
        errors=errors,
        status=400,
        posted=request.POST,
        held=held,
    )


@login_required
@allow_waveform_style
def annotate(request, slug):
    project = _annotator_project_or_404(request, slug)
    if show_instructions_first(request.session, project, request.user):
        return redirect("project-instructions", slug=slug)
    if gold.training_blocks_work(project, request.user):
        return redirect("project-training", slug=slug)  # to pass first, or failed
    unit = next_unit(project=project, user=request.user)
    if unit is None:
        progress = selectors.my_progress(project, request.user)
        completed = selectors.my_completed_units(project, request.user)[:50]
        return render(
            request,
            "projects/annotate_done.html",
            {
                "project": project,
                "progress": progress,
                "completed": unit_page.numbered(completed, progress.done),
                "screened_out": gold.screening_failure(project, request.user),
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
        return _refused_unit(request, project, unit, exc.errors, held)
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
        messages.success(request, "Saved.")
    participant = getattr(request, "participant", None)
    if participant is not None:
        # A participant goes straight to their next step (the next unit, reserved for them
        # now, or the completion code), as their flow would send them.
        return HttpResponseRedirect(participant_next_step(request, participant))
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
