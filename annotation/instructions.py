"""A project's instructions for annotators: Markdown from its config, rendered safely, and
whether this annotator has been shown them before their first unit.

Safe by construction: markdown-it-py with raw HTML off escapes every tag written in the
text, and its link check refuses javascript:, vbscript:, file: and data: targets. Images
are off too, so the page loads nothing from another host.
"""

from __future__ import annotations

from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt

from annotation.models import Assignment
from projects.models import Project

_MARKDOWN = (
    MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    .enable(["table", "strikethrough"])
    .disable("image")
)
_SEEN = "instructions_seen"


def render_instructions(text: str) -> SafeString:
    """The Markdown text as HTML with no raw HTML, script or unsafe link in it; its headings
    one level down, under the page's own heading."""
    tokens = _MARKDOWN.parse(text or "")
    for token in tokens:
        if token.type in ("heading_open", "heading_close"):
            token.tag = f"h{min(int(token.tag[1]) + 1, 6)}"
    html = _MARKDOWN.renderer.render(tokens, _MARKDOWN.options, {})
    return mark_safe(html)  # noqa: S308 - raw HTML is off: every tag written is escaped


def mark_seen(session, project: Project) -> None:
    seen = set(session.get(_SEEN, []))
    if project.pk not in seen:
        session[_SEEN] = sorted(seen | {project.pk})


def show_first(session, project: Project, user) -> bool:
    """Whether annotate should show the instructions before a unit: the project has some,
    this session has not shown them, and the annotator has not been given a unit yet."""
    if not project.settings.instructions or project.pk in session.get(_SEEN, []):
        return False
    return not Assignment.objects.filter(project=project, annotator=user).exists()
