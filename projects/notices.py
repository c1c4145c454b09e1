"""Notices about a project's build, repeated once per group or instance ("group fr_001: each
item meets ...") and read as one line per distinct message: "40 groups: each item meets ...",
with the groups it names on demand."""

import re
from dataclasses import dataclass, field

# "group fr_001: message", "instance 7: message": one notice about one part of the design
PART = re.compile(r"^(?P<noun>group|instance) (?P<name>\S+): (?P<message>.+)$", re.S)
# What shorten() writes in place of the lines it leaves out
MORE = re.compile(r"^\.\.\. and (?P<n>\d+) more (?P<noun>group|instance)s: (?P<message>.+)$", re.S)


@dataclass
class NoticeGroup:
    """One message and the parts of the design it is about (none for a notice of its own)."""

    message: str
    noun: str = ""
    names: list[str] = field(default_factory=list)
    count: int = 0  # the parts in all, named or left out when the notices were stored

    @property
    def summary(self) -> str:
        if not self.noun:
            return self.message
        if self.count == 1 and self.names:
            return f"{self.noun} {self.names[0]}: {self.message}"
        return f"{self.count} {self.noun}s: {self.message}"

    @property
    def hidden(self) -> int:
        """How many parts the stored notices only counted."""
        return self.count - len(self.names)


def group_notices(notices: list[str]) -> list[NoticeGroup]:
    """The notices with one entry per (noun, message), in the order each first appears."""
    groups: dict[tuple[str, str], NoticeGroup] = {}
    for notice in notices:
        if part := PART.match(notice):
            key = (part["noun"], part["message"])
            group = groups.setdefault(key, NoticeGroup(part["message"], part["noun"]))
            group.names.append(part["name"])
            group.count += 1
        elif more := MORE.match(notice):
            key = (more["noun"], more["message"])
            group = groups.setdefault(key, NoticeGroup(more["message"], more["noun"]))
            group.count += int(more["n"])
        else:
            groups.setdefault(("", notice), NoticeGroup(notice))
    return list(groups.values())


def shorten(notices: list[str], *, keep: int = 50, limit: int = 200) -> list[str]:
    """At most `keep` lines per distinct message, the rest counted in one line that
    group_notices() reads back, so a design of 10,000 instances stores a few lines; past
    `limit` lines in all (many distinct messages), the rest only counted."""
    kept: list[str] = []
    left_out: dict[tuple[str, str], int] = {}
    seen: dict[tuple[str, str], int] = {}
    for notice in notices:
        part = PART.match(notice)
        if part is None:
            kept.append(notice)
            continue
        key = (part["noun"], part["message"])
        seen[key] = seen.get(key, 0) + 1
        if seen[key] <= keep:
            kept.append(notice)
        else:
            left_out[key] = left_out.get(key, 0) + 1
    counted = [f"... and {n} more {noun}s: {message}" for (noun, message), n in left_out.items()]
    if len(kept) > limit:
        kept = kept[:limit] + [f"... and {len(kept) - limit} more design notes"]
    return kept + counted
