"""Participant links: crowd participants (Prolific and the like) enter one project through a
public link that names them, with no password, and are scoped to that project only.

A participant is a Django user with an unusable password (named after the project and a
keyed hash of the panel's id, so the raw id shows nowhere but to the project's managers), an
annotator Membership of the project, and a Participant row holding the id, the link's other
query parameters and where the participant stands:

    consent (if the config has consent text) -> instructions (if any) -> training (if the
    gold units ask for it, crowds/flow.py) -> units (the queue, at most
    units_per_participant) -> an outcome, recorded once on Participant.outcome:

    completed     the quota of ordinary units answered (attention checks and the training
                  not counted): the completion code and URL
    partial       no unit left for them before the quota: the partial code and URL, never
                  the completion code
    screened_out  failed the training or too many attention checks
                  (crowds.gold.screening_failure): the screen-out code and URL

The session that entered by the link is marked as a participant session; ParticipantScope
refuses it every page but the project's unit pages, instructions, media and the flow.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from dataclasses import dataclass
from functools import cache

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, connection, transaction
from django.http import Http404, HttpResponseNotFound, HttpResponseRedirect
from django.urls import Resolver404, resolve, reverse
from django.utils import timezone
from django.utils.translation import gettext, gettext_lazy, ngettext

from annotation import unit_page
from annotation.instructions import show_first
from annotation.models import Assignment
from annotation.queue import next_unit, release_own_expired, units_coming
from crowds import entry_rate, gold
from crowds import flow as participant_flow
from crowds.models import Participant
from projects import hot_sql
from projects.configuration.normal import ParticipantSettings
from projects.configuration.vocabulary import DEFAULT_PARTICIPANT_ID_PARAM
from projects.models import Membership, Project

SESSION_KEY = "participant_id"
EXTERNAL_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
MAX_PARAMS = 20
MAX_PARAM_LENGTH = 200


class EntryRefused(Exception):
    """A participant link that cannot let this visitor in: what to tell them, the status,
    and for a 429 the seconds until they may try again."""

    def __init__(self, title: str, message: str, status: int, retry_after: int | None = None):
        super().__init__(message)
        self.title, self.message, self.status = title, message, status
        self.retry_after = retry_after


REMOVED = EntryRefused(
    gettext_lazy("You are no longer part of this study"),
    gettext_lazy(
        "The researchers have ended your part in this study. Thank you for your time; return "
        "to the panel you came from."
    ),
    403,
)


def link_settings(project: Project) -> ParticipantSettings | None:
    """The project's participant settings if its link is open, else None."""
    block = project.settings.participants
    return block if block is not None and block.open_link else None


def entry_link_example(request, project: Project, block: ParticipantSettings) -> str:
    """The entry link to give the panel: Prolific's placeholders where the id is Prolific's,
    else the id parameter left for the panel to fill in."""
    url = request.build_absolute_uri(reverse("participant-start", args=[project.slug]))
    if block.id_param == DEFAULT_PARTICIPANT_ID_PARAM:
        names = (block.id_param, "STUDY_ID", "SESSION_ID")
        return url + "?" + "&".join(f"{name}={{{{%{name}%}}}}" for name in names)
    return f"{url}?{block.id_param}="


def open_project(slug: str) -> tuple[Project, ParticipantSettings]:
    project = Project.objects.filter(slug=slug).first()
    block = link_settings(project) if project is not None else None
    if block is None:
        raise EntryRefused(
            gettext("This study link is closed"),
            gettext(
                "This link does not lead to an open study: the study may have ended, or the "
                "link may be mistyped. Return to the panel you came from."
            ),
            404,
        )
    return project, block


def read_entry(query, block: ParticipantSettings) -> tuple[str, dict[str, str]]:
    """The participant's id and the link's other parameters, or EntryRefused (400)."""
    external_id = query.get(block.id_param)
    if external_id is None or external_id == "":
        raise EntryRefused(
            gettext("Your participant id is missing"),
            gettext(
                "This link needs your participant id in its %(param)s parameter. Open the "
                "study from the panel again, so that the link carries your id."
            )
            % {"param": block.id_param},
            400,
        )
    if not EXTERNAL_ID.fullmatch(external_id):
        raise EntryRefused(
            gettext("Your participant id is not valid"),
            gettext(
                "The %(param)s in this link must be 1 to 64 letters, digits, - or _. Open the "
                "study from the panel again."
            )
            % {"param": block.id_param},
            400,
        )
    params = {key: value for key, value in query.items() if key != block.id_param}
    if len(params) > MAX_PARAMS:
        raise EntryRefused(
            gettext("This link has too many parameters"),
            gettext(
                "This link carries %(count)s parameters besides your id; a study link may "
                "carry at most %(most)s."
            )
            % {"count": len(params), "most": MAX_PARAMS},
            400,
        )
    if any(len(k) > MAX_PARAM_LENGTH or len(v) > MAX_PARAM_LENGTH for k, v in params.items()):
        raise EntryRefused(
            gettext("This link has a parameter that is too long"),
            gettext(
                "Each parameter of a study link and its value may be at most %(most)s characters."
            )
            % {"most": MAX_PARAM_LENGTH},
            400,
        )
    return external_id, params


def username_for(project: Project, external_id: str) -> str:
    """The account name of a participant: the project and a keyed hash of the panel's id."""
    digest = hmac.new(
        settings.SECRET_KEY.encode(), f"{project.pk}:{external_id}".encode(), hashlib.sha256
    ).hexdigest()
    return f"participant-{project.pk}-{digest[:20]}"


def enter(
    project: Project,
    block: ParticipantSettings,
    external_id: str,
    params: dict,
    address: str | None = None,
) -> Participant:
    """The participant with this id in this project: found (a second visit resumes) or
    created, while the project has room for one more and the client's address has not
    made too many new participants lately (crowds.entry_rate)."""
    participant = Participant.objects.filter(project=project, external_id=external_id).first()
    if participant is None:
        try:
            participant = _create(project, block, external_id, params, address)
        except IntegrityError:  # the same id entered twice at once: the other one made it
            participant = Participant.objects.get(project=project, external_id=external_id)
    else:
        participant.params = params or participant.params
    participant.last_seen_at = timezone.now()
    participant.save(update_fields=["params", "last_seen_at"])
    return participant


@transaction.atomic
def _create(project, block, external_id, params, address) -> Participant:
    # One creation at a time per project, so that the counts below hold under concurrent
    # first visits: the project row is locked on PostgreSQL (SQLite takes its write lock
    # at BEGIN already).
    Project.objects.select_for_update().filter(pk=project.pk).values_list("pk").first()
    if Participant.objects.filter(project=project).count() >= block.max_participants:
        raise EntryRefused(
            gettext("This study is full"),
            gettext(
                "This study has taken all the participants it needs (%(most)s). Thank you "
                "for your interest; return to the panel you came from."
            )
            % {"most": block.max_participants},
            403,
        )
    digest = entry_rate.address_digest(address)
    wait = entry_rate.wait_before_new_participant(digest)
    if wait:
        minutes = -(-wait // 60)
        raise EntryRefused(
            gettext("Too many new participants from your address"),
            ngettext(
                "This address has opened more new study places than the site allows "
                "(%(rate)s). Try again in %(minutes)s minute; if you already took part, open "
                "your own link from the panel again.",
                "This address has opened more new study places than the site allows "
                "(%(rate)s). Try again in %(minutes)s minutes; if you already took part, open "
                "your own link from the panel again.",
                minutes,
            )
            % {"rate": entry_rate.entry_rate().describe(), "minutes": minutes},
            429,
            retry_after=wait,
        )
    user = get_user_model()(username=username_for(project, external_id))
    user.set_unusable_password()
    user.save()
    Membership.objects.create(user=user, project=project, role=Membership.Role.ANNOTATOR)
    return Participant.objects.create(
        project=project, user=user, external_id=external_id, params=params, entry_digest=digest
    )


def current(request) -> Participant | None:
    """The participant of this request's session (set by ParticipantScope)."""
    return getattr(request, "participant", None)


def participant_or_404(request, slug: str) -> Participant:
    participant = current(request)
    if participant is None or participant.project.slug != slug:
        raise Http404("No such study.")
    return participant


# --------------------------------------------------------------------------- where they stand


def quota(participant: Participant) -> int | None:
    block = participant.project.settings.participants
    return block.units_per_participant if block is not None else None


def answered(participant: Participant) -> int:
    """Ordinary units this participant answered: the training's units and the attention
    checks (gold units both) not counted, as the quota counts them (a project with no gold
    block has none: then the plain count, asked on every answer)."""
    counted = getattr(participant, "answered_count", None)  # crowds.participant_list
    if counted is not None:
        return counted
    project = participant.project
    if project.settings.gold is None:
        return unit_page.completed_count(project, participant.user)
    return Assignment.objects.filter(
        project=project,
        annotator=participant.user,
        status=Assignment.Status.COMPLETED,
        unit__is_gold=False,
    ).count()


@dataclass(frozen=True)
class Stage:
    """Where a participant stands, as the members list shows it."""

    key: str  # consent, instructions, training, failed, annotating, completed
    label: str


def _units(n: int) -> str:
    return f"{n} unit{'' if n == 1 else 's'}"


def stage(participant: Participant) -> Stage:
    config = participant.project.settings
    block = config.participants
    ended = participant.outcome
    if ended == Participant.Outcome.COMPLETED:
        return Stage("completed", f"Completed ({_units(answered(participant))})")
    if ended == Participant.Outcome.PARTIAL:
        limit = quota(participant)
        done = answered(participant)
        return Stage("partial", f"No more work ({done} of {limit})" if limit else "No more work")
    if ended == Participant.Outcome.SCREENED_OUT:
        why = f": {participant.outcome_reason}" if participant.outcome_reason else ""
        return Stage("screened_out", f"Screened out{why}")
    if participant.training == Participant.Training.FAILED:
        return Stage("failed", "Failed training")
    if block is not None and block.consent and participant.consent_at is None:
        return Stage("consent", "Not yet consented")
    done = answered(participant)
    if config.instructions and participant.instructions_seen_at is None and not done:
        return Stage("instructions", "Reading the instructions")
    if participant.training == Participant.Training.PENDING or training_step(participant):
        return Stage("training", "In training")
    limit = quota(participant)
    return Stage("annotating", f"Annotating: {done} of {limit}" if limit else f"Annotating: {done}")


def quota_reached(participant: Participant) -> bool:
    limit = quota(participant)
    return limit is not None and answered(participant) >= limit


def training_step(participant: Participant) -> str | None:
    """The training page's address while this participant still has to pass it."""
    if participant.training == Participant.Training.PASSED:
        return None
    if not participant_flow.training_required(participant):
        return None
    return participant_flow.training_url(participant)


def mark(participant: Participant, field: str) -> None:
    if getattr(participant, field) is None:
        setattr(participant, field, timezone.now())
        participant.save(update_fields=[field])


def is_member(participant: Participant) -> bool:
    """Whether the participant still belongs to their project (the managers may remove
    them): as ParticipantScope read it with the participant, else asked."""
    known = getattr(participant, "is_member", None)
    if known is not None:
        return known
    return Membership.objects.filter(project=participant.project, user=participant.user).exists()


def end(participant: Participant, outcome: str, reason: str = "") -> None:
    """Record how the participant's part ended. The first outcome stays: a second request
    racing this one, or a later visit, reads it and never writes another."""
    now = timezone.now()
    fields = {"outcome": outcome, "outcome_at": now, "outcome_reason": reason[:200]}
    if outcome == Participant.Outcome.COMPLETED:
        fields["completed_at"] = now  # completed_at: the completion outcome, as before
    if Participant.objects.filter(pk=participant.pk, outcome="").update(**fields):
        for name, value in fields.items():
            setattr(participant, name, value)
    else:
        participant.refresh_from_db(
            fields=["outcome", "outcome_at", "outcome_reason", "completed_at"]
        )


def screening_reason(participant: Participant) -> str | None:
    """Why the participant is screened out (the training failed, or too many attention
    checks: crowds.gold.screening_failure), or None. Asked only of a project with gold."""
    if participant.training == Participant.Training.FAILED:
        return "failed the training"
    if participant.project.settings.gold is None:
        return None
    return gold.screening_failure(participant.project, participant.user)


def _out_of_work(participant: Participant) -> tuple[str, str]:
    """The outcome of a participant the queue has nothing more for: completed when their
    quota is answered; without a quota, completed once they answered a unit; else partial."""
    done = answered(participant)
    limit = quota(participant)
    if (limit is not None and done >= limit) or (limit is None and done > 0):
        return Participant.Outcome.COMPLETED, ""
    if limit is None:
        return Participant.Outcome.PARTIAL, "no unit was left for them"
    return Participant.Outcome.PARTIAL, f"no unit was left for them after {done} of {limit}"


def waiting_address(slug: str) -> str:
    """Where a participant waits for units on their way: the flow page, which then says
    "one moment" and comes back by itself (crowds.views.participant_flow)."""
    return reverse("participant-flow", args=[slug]) + "?waiting=1"


def next_step(request, participant: Participant) -> str:
    """The address of the step this participant is at: consent, instructions, training, the
    next unit (reserved for them here), or their outcome's page (completed, partial or
    screened out). The flow's own address when the flow page itself tells them why there is
    nothing more (removed). The flow page follows it, and so does an answer on a unit page,
    so that the answer goes straight to the next unit."""
    project = participant.project
    slug = project.slug
    config = project.settings
    done_page = reverse("participant-done", args=[slug])
    if participant.outcome:
        return done_page
    if not is_member(participant):
        return reverse("participant-flow", args=[slug])
    reason = screening_reason(participant)
    if reason is not None:
        end(participant, Participant.Outcome.SCREENED_OUT, reason)
        return done_page
    if config.participants and config.participants.consent and participant.consent_at is None:
        return reverse("participant-consent", args=[slug])
    if config.instructions and participant.instructions_seen_at is None:
        if show_first(request.session, project, request.user):
            return reverse("project-instructions", args=[slug])
        mark(participant, "instructions_seen_at")
    training = training_step(participant)
    if training is not None:
        return training
    if not quota_reached(participant):
        unit = next_unit(project=project, user=request.user)
        if unit is None and release_own_expired(project, request.user):
            unit = next_unit(project=project, user=request.user)  # their own, lapsed, back
        if unit is not None:
            return reverse("annotate-unit", args=[slug, unit.pk])
        if units_coming(project=project, user=request.user):
            return waiting_address(slug)  # an adaptive design's next batch is on its way
    # The quota is met, or the project has no unit left for this participant.
    end(participant, *_out_of_work(participant))
    return done_page


# --------------------------------------------------------------------------- the scope

# The pages a participant session may open, each of its own project only.
_OWN_PAGES = {
    "participant-flow",
    "participant-consent",
    "participant-done",
    "annotate-unit",
    "project-instructions",
    "project-media",
    "project-points",
    "project-training",  # the gold units' training (crowds/flow.py)
}
# Pages of no project: entering a (new) participant link, logging out, the pages' strings
# for their scripts.
_ANY_PAGES = {"participant-start", "logout", "javascript-catalog"}


class ParticipantScope:
    """A participant session opens its project's unit pages, instructions, media and flow;
    any other page of the site sends it back to its flow (a page) or is not found."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        key = request.session.get(SESSION_KEY)
        if key is None or not request.user.is_authenticated:
            return self.get_response(request)
        participant = _session_participant(key, request.user)
        if participant is None:  # a participant removed since: the session ends
            request.session.flush()
            return HttpResponseRedirect(reverse("login"))
        request.participant = participant
        # The quota's check (annotation.queue.person_cap) reads this instead of asking again.
        request.user.participant_project_id = participant.project_id
        if self._allowed(request, participant):
            return self.get_response(request)
        if request.method in ("GET", "HEAD") and not request.path.startswith("/api/"):
            return HttpResponseRedirect(
                reverse("participant-flow", args=[participant.project.slug])
            )
        return HttpResponseNotFound("Not found.", content_type="text/plain")

    @staticmethod
    def _allowed(request, participant) -> bool:
        try:
            match = resolve(request.path_info)
        except Resolver404:
            return True  # a 404 anyway
        if match.url_name in _ANY_PAGES:
            return True
        return match.url_name in _OWN_PAGES and match.kwargs.get("slug") == participant.project.slug


# Read on every request of a participant, so written out once (projects.hot_sql) rather
# than built by the ORM each time; annotation/tests/test_unit_page.py compares it with the ORM.
@cache
def _participant_sql(vendor: str) -> str:
    q = hot_sql.quote
    return (
        f"SELECT {hot_sql.columns(Participant, 'pa')}, {hot_sql.columns(Project, 'p')}, "
        f"EXISTS(SELECT 1 FROM {q(Membership._meta.db_table)} m "
        f"WHERE m.{q('project_id')} = p.{q('id')} AND m.{q('user_id')} = pa.{q('user_id')}) "
        f"FROM {q(Participant._meta.db_table)} pa "
        f"INNER JOIN {q(Project._meta.db_table)} p ON p.{q('id')} = pa.{q('project_id')} "
        f"WHERE pa.{q('id')} = %s AND pa.{q('user_id')} = %s"
    )


def _session_participant(key, user) -> Participant | None:
    """The session's participant if they are this user, with their project and, in the same
    statement, whether they still belong to it (``is_member``: the flow and the unit pages
    ask; projects.views reads it as the project's access)."""
    if not isinstance(key, int):
        return None
    with connection.cursor() as cursor:
        cursor.execute(_participant_sql(connection.vendor), [key, user.pk])
        row = cursor.fetchone()
    if row is None:
        return None
    n = hot_sql.width(Participant)
    participant = hot_sql.load(Participant, row[:n])
    participant.project = hot_sql.load(Project, row[n:-1])
    participant.user = user  # the user the request loaded, not loaded again
    participant.is_member = bool(row[-1])
    return participant


def page_after_answer(request) -> str | None:
    """A participant's next step after an answer (annotation.people.next_page); None for
    anyone else, who goes back to the annotate page."""
    participant = getattr(request, "participant", None)
    return None if participant is None else next_step(request, participant)
