"""Server-rendered pages: home, the project page, project upload, and the project's people:
its members, and invites (a manager makes an account from the members list and copies, or
e-mails, its link; the invited person sets a password on Django's own set-password page)."""

from pathlib import Path

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import PasswordResetConfirmView
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse, reverse_lazy
from django.views.decorators.http import require_POST

from projects import selectors, services
from projects.access import managed_project_or_404, visible_project_or_404
from projects.downloads import attachment
from projects.forms import AddMembersForm, InviteForm, ProjectUploadForm
from projects.invites import (
    InviteForbidden,
    InviteRefused,
    create_missing_accounts,
    invitable_member_ids,
    invite_new_member,
    invite_token_generator,
    mail_invite,
    renew_invite,
    security_log,
)
from projects.models import Instance, Item, Membership, Unit
from projects.notices import group_notices


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
        services.remove_project_member(project=project, user=user, removed_by=request.user)
        messages.success(request, f"{user.username} no longer belongs to this project.")
        return redirect("project-detail", slug=slug)
    form = AddMembersForm(request.POST)
    if form.is_valid():
        entries, role = form.cleaned_data["usernames"], form.cleaned_data["role"]
        if form.cleaned_data["create_missing"]:
            invites = create_missing_accounts(entries, project=project, role=role)
            remember_invites(request, project, invites)
        known = [e.user.username for e in entries if e.user is not None]
        changes = services.add_project_members(project=project, usernames=known, role=role)
        request.session[_MEMBER_RESULTS] = {
            "project": project.pk,
            "rows": services.member_results(entries, {c.username: c for c in changes}),
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


@login_required
def home(request):
    projects = list(selectors.visible_projects(request.user).order_by("lab__name", "name"))
    progress = selectors.project_progress(projects)
    rows = []
    for p in projects:
        role = selectors.project_role(request.user, p)
        # Everyone reads the project's figure; an annotator their own beside it.
        mine = role == Membership.Role.ANNOTATOR
        rows.append(
            {
                "project": p,
                "progress": progress[p.pk],
                "mine": selectors.person_progress(p, request.user) if mine else None,
                "role": role,
            }
        )
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
    progress = selectors.project_progress([project])[project.pk]
    if role != Membership.Role.MANAGER:
        return render(
            request,
            "projects/project_annotator.html",
            {
                "project": project,
                "progress": progress,
                "mine": selectors.person_progress(project, request.user),
                "role": role,
            },
        )
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
            "notices": group_notices(project.notices),
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


INVITE_LINKS = "invite_links"


def remember_invites(request, project, invites) -> list[str]:
    """Keep the new links for the project page to show once; e-mail them where an address is
    known. Returns the usernames whose e-mail could not be sent."""
    rows, unsent = [], []
    for invite in invites:
        link = request.build_absolute_uri(invite.path)
        try:
            emailed = mail_invite(invite=invite, link=link, project=project, sender=request.user)
        except OSError:  # smtplib's errors too: a mail server that is down loses no link
            emailed = False
            unsent.append(invite.user.username)
        rows.append(
            {
                "username": invite.user.username,
                "email": invite.user.email,
                "link": link,
                "emailed": emailed,
            }
        )
    stored = request.session.get(INVITE_LINKS)
    if stored and stored.get("project") == project.pk:
        rows = stored["rows"] + rows
    request.session[INVITE_LINKS] = {"project": project.pk, "rows": rows}
    return unsent


def pop_invite_links(request, project) -> list[dict]:
    """The invite links made on the last request for this project, shown once."""
    stored = request.session.get(INVITE_LINKS)
    if not stored or stored.get("project") != project.pk:
        return []
    del request.session[INVITE_LINKS]
    return stored["rows"]


def _member_to_reinvite(request, project):
    text = request.POST.get("reinvite", "").strip()
    if not (text.isascii() and text.isdigit() and len(text) <= 18):
        return None
    found = Membership.objects.filter(project=project, user__pk=int(text)).select_related("user")
    membership = found.first()
    return membership.user if membership else None


@login_required
@require_POST
def project_invite(request, slug):
    """Make an account and invite it (username, optional e-mail, role), or send a member
    who never logged in a new link ('reinvite')."""
    project = managed_project_or_404(request.user, slug)
    members_url = f"{reverse('project-detail', args=[slug])}#members"
    if "reinvite" in request.POST:
        user = _member_to_reinvite(request, project)
        if user is None:
            security_log.warning(
                "invite refused: %s asked for a new invite link in project %s for %r, "
                "no member of it",
                request.user.get_username(),
                project.slug,
                request.POST.get("reinvite", "")[:40],
            )
            messages.error(request, "Nobody to invite: the form named no member of this project.")
            return _refused(project_detail(request, slug))
        try:
            invite = renew_invite(project=project, user=user, inviter=request.user)
        except InviteRefused as exc:
            messages.error(request, str(exc))
            response = _refused(project_detail(request, slug))
            if isinstance(exc, InviteForbidden):
                response.status_code = 403
            return response
        _report(request, remember_invites(request, project, [invite]), invite, renewed=True)
        return redirect(members_url)
    form = InviteForm(request.POST)
    if form.is_valid():
        try:
            invite = invite_new_member(project=project, **form.cleaned_data)
        except InviteRefused as exc:
            form.add_error(None, str(exc))
        else:
            _report(request, remember_invites(request, project, [invite]), invite)
            return redirect(members_url)
    for field, errors in form.errors.items():
        label = "" if field == "__all__" else f"{form.fields[field].label or field.title()}: "
        for error in errors:
            messages.error(request, label + error)
    request.invite_form = form  # shown again with what was typed (project_detail)
    return _refused(project_detail(request, slug))


def _report(request, unsent, invite, renewed=False):
    name = invite.user.username
    what = f"A new invite link for {name}" if renewed else f"Created {name} as {invite.role}"
    if unsent:
        messages.warning(request, f"{what}; the e-mail could not be sent: copy the link below.")
    elif invite.user.email:
        messages.success(request, f"{what}; the link was e-mailed and is shown below.")
    else:
        messages.success(request, f"{what}: copy the link below and send it to them.")


class InviteAcceptView(PasswordResetConfirmView):
    """Django's set-password page for an invite link: its token generator, its password
    validators; a link that is used, expired or made up is a 400 saying so."""

    token_generator = invite_token_generator
    template_name = "registration/invite_confirm.html"
    success_url = reverse_lazy("login")
    post_reset_login = False

    def get_user(self, uidb64):
        user = super().get_user(uidb64)
        # never a staff account's password, whatever link is shown (invite_refusals)
        if user is None or not user.is_active or user.is_staff or user.is_superuser:
            return None
        return user

    def render_to_response(self, context, **kwargs):
        if not context.get("validlink"):
            kwargs["status"] = 400
            security_log.warning(
                "invite link refused (used, expired, void or made up) for account %s",
                self.user.pk if getattr(self, "user", None) is not None else "unknown",
            )
        return super().render_to_response(context, **kwargs)

    def form_valid(self, form):
        response = super().form_valid(form)
        messages.success(
            self.request,
            f"Your password is set. Log in as {form.user.get_username()}.",
        )
        return response
