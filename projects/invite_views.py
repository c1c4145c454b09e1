"""Invites on the web: a manager makes an account from the members list and copies (or
e-mails) its link; the invited person sets a password on Django's own set-password page."""

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.contrib.auth.views import PasswordResetConfirmView
from django.shortcuts import redirect
from django.urls import reverse, reverse_lazy
from django.views.decorators.http import require_POST

from projects.access import managed_project_or_404
from projects.invites import (
    InviteForbidden,
    InviteRefused,
    invite_lifetime,
    invite_new_member,
    invite_token_generator,
    mail_invite,
    renew_invite,
    security_log,
)
from projects.models import Membership

INVITE_LINKS = "invite_links"


class InviteForm(forms.Form):
    prefix = "invite"  # the members form on the same page has a role field too

    username = forms.CharField(
        max_length=150,
        validators=[UnicodeUsernameValidator()],
        help_text="Letters, digits and @ . + - _ only.",
    )
    email = forms.EmailField(
        label="E-mail address (optional)",
        required=False,
        help_text="If given, the invite link is also sent there.",
    )
    role = forms.ChoiceField(
        choices=Membership.Role.choices, initial=Membership.Role.ANNOTATOR, required=False
    )

    def clean_username(self):
        return self.cleaned_data["username"].strip()

    def lifetime_days(self) -> int:
        return invite_lifetime().days

    def clean_role(self):
        return self.cleaned_data.get("role") or Membership.Role.ANNOTATOR


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
    from projects.views import _refused, project_detail

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
