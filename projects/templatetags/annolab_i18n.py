"""``{{ text|localized }}``: a config text (one string or one per language) in the page's
language, the way ``projects.configuration.texts.pick`` chooses it. A plain string also
goes through the catalogue, so the built-in defaults ("Best", "Worst") are translated."""

from django import template
from django.utils.translation import get_language, gettext

from projects.texts import pick

register = template.Library()


@register.filter
def localized(text):
    if isinstance(text, str):
        return gettext(text) if text else text
    return pick(text, get_language())


@register.filter
def label_text(name, texts):
    """``{{ label|label_text:view.label_texts }}``: the text a label shows (its name when
    the config gives none)."""
    return (texts or {}).get(name, name)
