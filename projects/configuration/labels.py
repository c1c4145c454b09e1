"""The labels of a choice, likert, box, segment or trace scheme: plain names or mappings
with a name, a keyboard key and the text people read (one string or one per language; the
name is what an answer stores), each name and each key once."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator

from projects.configuration.fields import detail, problem, reraise
from projects.configuration.issues import nearest, type_name
from projects.configuration.texts import checked_text

LABEL_KEYS = ("name", "key_value", "text")


def _label(label: Any, index: int, keys: set[str], details: list):
    """(name, key_value or None) of one label, or None (with its problem in details)."""
    if isinstance(label, str | int) and not isinstance(label, bool):
        return str(label), None, None
    if isinstance(label, bool):
        details.append(
            detail(
                (index,),
                f"YAML read this label as the boolean {str(label).lower()}; quote it "
                "(yes/no/on/off/true/false unquoted are booleans)",
            )
        )
        return None
    if not isinstance(label, dict):
        reason = f"must be a string or a mapping with name, got {type_name(label)}"
        details.append(detail((index,), reason))
        return None
    for key in label:
        if key not in LABEL_KEYS:
            details.append(detail((index, str(key)), "unknown key", nearest(key, LABEL_KEYS)))
    name = label.get("name")
    if name is None:
        details.append(detail((index, "name"), "missing required key"))
        return None
    if isinstance(name, bool) or not isinstance(name, str | int):
        details.append(detail((index, "name"), f"must be a string, got {type_name(name)}"))
        return None
    text = label.get("text")
    if text is not None:
        reason = checked_text(text)
        if reason:
            details.append(detail((index, "text"), reason))
            text = None
    return str(name), _key(label.get("key_value"), index, keys, details), text


def _key(raw: Any, index: int, keys: set[str], details: list) -> str | None:
    """A label's keyboard key; each key bound to one label (a second use is named)."""
    if raw is None:
        return None
    where = (index, "key_value")
    if isinstance(raw, bool) or not isinstance(raw, str | int):
        details.append(detail(where, f"must be a key (a string), got {type_name(raw)}"))
        return None
    if not str(raw).strip():
        details.append(detail(where, "must not be empty"))
        return None
    if str(raw) in keys:
        details.append(detail(where, f"key {str(raw)!r} is bound to two labels"))
    keys.add(str(raw))
    return str(raw)


def label_list(value: Any) -> list[dict]:
    if not isinstance(value, list):
        raise problem(f"must be a list of labels, got {type_name(value)}")
    if not value:
        raise problem("must list at least one label")
    details: list = []
    labels: list[dict] = []
    names: set[str] = set()
    keys: set[str] = set()
    for index, label in enumerate(value):
        parsed = _label(label, index, keys, details)
        if parsed is None:
            continue
        name, key_value, text = parsed
        if not name.strip():
            details.append(detail((index,), "label name must not be empty"))
        elif name in names:
            details.append(detail((index,), f"duplicate label {name!r}"))
        else:
            names.add(name)
            entry = {"name": name, "key_value": key_value}
            if text is not None:
                entry["text"] = text
            labels.append(entry)
    reraise("labels", details)
    return labels


Labels = Annotated[list[dict], BeforeValidator(label_list)]
