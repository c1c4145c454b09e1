"""The participant link's pages: entry, consent, the flow that sends a participant to the
step they are at, and the completion code (crowds/participants.py)."""

import logging

from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.http import HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import get_language, gettext
from django.views.decorators.http import require_http_methods

from annotation.instructions import render_instructions
from annotation.views import waiting_page
from crowds import outcomes, participant_list
from crowds import participants as flow
from labs.login_protection import client_address
from projects.access import managed_project_or_404
from projects.downloads import attachment
from projects.texts import pick

BACKEND = "django.contrib.auth.backends.ModelBackend"
security_log = logging.getLogger("annolab.security")
# The completion page sends the participant back to the panel after this many seconds.
REDIRECT_SECONDS = 10


def _refused(request, refusal: flow.EntryRefused):
    security_log.warning(
        "participant link %s refused %s (%s): %s",
        request.path,
        client_address(request),
        request.user.username if request.user.is_authenticated else "anonymous",
        refusal.title,
    )
    response = render(
        request,
        "crowds/participant_refused.html",
        {"title": refusal.title, "message": refusal.message},
        status=refusal.status,
    )
    if refusal.retry_after:
        response["Retry-After"] = str(refusal.retry_after)
    return response


@require_http_methods(["GET", "HEAD"])
def participant_start(request, slug):
    """The public entry link: creates or resumes the participant named by the link's id and
    logs this browser in as them, for this project only."""
    try:
        project, block = flow.open_project(slug)
        if request.user.is_authenticated and flow.current(request) is None:
            raise flow.EntryRefused(
                "You are logged in",
                f"You are logged in as {request.user.username}; this link is for the study's "
                "participants and would log you out. To try it, open it in a private window.",
                409,
            )
        external_id, params = flow.read_entry(request.GET, block)
        participant = flow.enter(
            project, block, external_id, params, address=client_address(request)
        )
    except flow.EntryRefused as refusal:
        return _refused(request, refusal)
    login(request, participant.user, backend=BACKEND)
    request.session[flow.SESSION_KEY] = participant.pk
    return redirect("participant-flow", slug=slug)


def participant_flow(request, slug):
    """Sends the participant to the step they are at: consent, instructions, training, the
    next unit, or their outcome's page (participants.next_step); says why when there is
    nothing more for them (removed from the study), and asks them to wait a moment while
    the next units are on their way (an adaptive design's next batch)."""
    participant = flow.participant_or_404(request, slug)
    if not participant.outcome and not flow.is_member(participant):
        return _refused(request, flow.REMOVED)
    step = flow.next_step(request, participant)
    if step == flow.waiting_address(slug):
        # no unit yet, more on their way: "one moment" here, not the end of their session
        again = reverse("participant-flow", args=[slug])
        return waiting_page(request, participant.project, again)
    return HttpResponseRedirect(step)


@require_http_methods(["GET", "HEAD", "POST"])
def participant_consent(request, slug):
    """The consent text, to be accepted (a ticked box) before anything else."""
    participant = flow.participant_or_404(request, slug)
    config = participant.project.settings
    text = pick(config.participants.consent, get_language(), config.language)
    if not text or participant.consent_at is not None:
        return redirect("participant-flow", slug=slug)
    error = None
    status = 200
    if request.method == "POST":
        if request.POST.get("agree") == "yes":
            flow.mark(participant, "consent_at")
            return redirect("participant-flow", slug=slug)
        error = gettext("Tick the box to say you agree, or close this page if you do not.")
        status = 400
    return render(
        request,
        "crowds/participant_consent.html",
        {"project": participant.project, "consent": render_instructions(text), "error": error},
        status=status,
    )


def participant_done(request, slug):
    """The participant's outcome: what the page says, the code for the panel and the way
    back to it (followed by itself after a few seconds, with the Refresh header: no
    script). Completed shows the completion code, partial (no more work before the quota)
    and screened out their own codes; never the completion code for another outcome."""
    participant = flow.participant_or_404(request, slug)
    if not participant.outcome:
        return redirect("participant-flow", slug=slug)
    shown = outcomes.shown(participant)
    response = render(
        request,
        "crowds/participant_done.html",
        {
            "project": participant.project,
            "outcome": participant.outcome,
            "shown": shown,
            "answered": flow.answered(participant),
            "quota": flow.quota(participant),
            "delay": REDIRECT_SECONDS,
        },
    )
    if shown.url:
        response["Refresh"] = f"{REDIRECT_SECONDS}; url={shown.url}"
    return response


@login_required
@require_http_methods(["GET", "HEAD"])
def participants_export(request, slug):
    """Every participant of the project with their outcome and the ordinary units they
    answered, as CSV (for the project's managers)."""
    project = managed_project_or_404(request.user, slug)
    body = participant_list.csv_text(project).encode()
    return attachment(body, filename=f"{slug}-participants.csv", content_type="text/csv")
