"""Names people read for the scoring methods' internal keys."""

from django import template

from bws.core.scoring import METHOD_NAMES

register = template.Library()


@register.filter
def method_name(method: str) -> str:
    """'plackett_luce' -> 'Plackett-Luce'; an unknown key as it is."""
    return METHOD_NAMES.get(method, method)
