"""The members list's participants (projects/participants.py), for the project page."""

from django import template

from projects.participants import entry_link_example, link_settings, participant_rows

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
    return entry_link_example(context["request"], project, block)
