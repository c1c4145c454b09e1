"""Configuration values as a manager reads them: yes and no for switches, a dash for unset,
lists joined by commas (never Python's True, None or ['a', 'b'])."""

from django import template

register = template.Library()

UNSET = "—"


@register.filter
def config_word(value) -> str:
    """True -> 'yes', False -> 'no', None or '' -> '—', [1, 'a'] -> '1, a', {'k': v} -> 'k v'."""
    if value is True:
        return "yes"
    if value is False:
        return "no"
    if value is None or value == "":
        return UNSET
    if isinstance(value, dict):
        return ", ".join(f"{key} {config_word(item)}" for key, item in value.items()) or UNSET
    if isinstance(value, list | tuple | set | frozenset):
        return ", ".join(config_word(item) for item in value) or UNSET
    return str(value)
