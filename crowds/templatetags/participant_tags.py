"""The members list's participants (crowds/participant_list.py), for the project page."""

from django import template

from crowds.participant_list import ParticipantQuery, page_of_rows, state_choices
from crowds.participants import entry_link_example, link_settings

register = template.Library()


@register.simple_tag(takes_context=True)
def participants_of(context, project) -> dict:
    """One page of the project's participants, filtered as the page's query asks, with the
    filter and the number of participants in all."""
    request = context["request"]
    page, rows = page_of_rows(project, request.GET, request.GET.get("participants"))
    chosen = ParticipantQuery.of(request.GET)
    return {
        "page": page,
        "rows": rows,
        "total": project.participants.count(),
        "filter": chosen,
        "filter_query": chosen.query_string(),
        "states": state_choices(),
    }


@register.simple_tag
def participant_link(project):
    """The project's participant settings when its link is open, else None."""
    return link_settings(project)


@register.simple_tag(takes_context=True)
def participant_link_example(context, project, block) -> str:
    return entry_link_example(context["request"], project, block)
