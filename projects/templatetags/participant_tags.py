"""The members list's participants (projects/participants.py), for the project page."""

from django import template
from django.urls import reverse

from projects.configuration.vocabulary import DEFAULT_PARTICIPANT_ID_PARAM
from projects.participants import link_settings, participant_rows

register = template.Library()


@register.simple_tag
def participants_of(project) -> list[dict]:
    return participant_rows(project)


@register.simple_tag
def participant_link(project):
    """The project's participant settings when its link is open, else None."""
    return link_settings(project)


@register.simple_tag(takes_context=True)
def participant_link_example(context, project, block) -> str:
    """The entry link to give the panel: Prolific's placeholders where the id is Prolific's,
    else the id parameter left for the panel to fill in."""
    request = context["request"]
    url = request.build_absolute_uri(reverse("participant-start", args=[project.slug]))
    if block.id_param == DEFAULT_PARTICIPANT_ID_PARAM:
        names = (block.id_param, "STUDY_ID", "SESSION_ID")
        return url + "?" + "&".join(f"{name}={{{{%{name}%}}}}" for name in names)
    return f"{url}?{block.id_param}="
