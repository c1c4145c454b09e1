"""What is wrong with a configuration, said the way a lab admin can act on: the file, the
key path (as written in the file, whichever dialect), the reason, and the nearest known
name when the key or value looks like a typo."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ConfigIssue:
    """One problem in a configuration file: where it is and what is wrong."""

    file: str
    key_path: str
    reason: str
    suggestion: str | None = None

    def __str__(self) -> str:
        where = f"{self.file}: {self.key_path}: " if self.key_path else f"{self.file}: "
        hint = f"; did you mean '{self.suggestion}'?" if self.suggestion else ""
        return f"{where}{self.reason}{hint}"


class ConfigError(ValueError):
    """A configuration that cannot be used; ``issues`` lists every problem found."""

    def __init__(self, issues: list[ConfigIssue]):
        self.issues = list(issues)
        super().__init__("\n".join(str(issue) for issue in self.issues))


class Issues:
    """Collects the issues of one file, in the order they are found, each once."""

    def __init__(self, source: str):
        self.source = source
        self.found: list[ConfigIssue] = []

    def add(self, key_path: str, reason: str, suggestion: str | None = None) -> None:
        issue = ConfigIssue(self.source, key_path, reason, suggestion)
        if issue not in self.found:
            self.found.append(issue)

    def unknown_keys(self, mapping: dict, path: str, allowed, hints: dict | None = None) -> None:
        """Report keys of ``mapping`` not in ``allowed``: a hint (reason, suggestion) where
        the key is a known mistake, else the nearest allowed name."""
        hints = hints or {}
        for key in mapping:
            if key in allowed:
                continue
            key_path = join(path, str(key))
            if key in hints:
                self.add(key_path, *hints[key])
            else:
                self.add(key_path, "unknown key", nearest(key, allowed))

    def raise_if_any(self) -> None:
        if self.found:
            raise ConfigError(self.found)


def join(path: str, key: Any) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else str(key)


def type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "mapping"
    return type(value).__name__


def nearest(word: Any, candidates) -> str | None:
    if not isinstance(word, str):
        return None
    candidates = [str(candidate) for candidate in candidates]
    matches = difflib.get_close_matches(word, candidates, n=1, cutoff=0.6)
    if matches:
        return matches[0]
    # Abbreviations and truncations ("key" for "key_value") score low on similarity.
    if len(word) >= 3:
        for candidate in candidates:
            if candidate.startswith(word) or word.startswith(candidate):
                return candidate
    return None
