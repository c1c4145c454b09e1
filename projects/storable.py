"""What a database column can store of a value read from outside: text without NUL or lone
surrogates, nesting within a bound, finite numbers. Pure Python; the config reader, the data
reader, the JSON parser and answer validation all ask here."""

from __future__ import annotations

import math
import re
from typing import Any

# PostgreSQL stores neither NUL nor lone surrogates (which have no UTF-8 form) in text or jsonb.
_UNSTORABLE = re.compile(r"[\x00\ud800-\udfff]")


def text_problem(text: str) -> str | None:
    """Why a string cannot be stored as text, or None."""
    bad = _UNSTORABLE.search(text)
    if bad is None:
        return None
    if bad.group() == "\x00":
        return "contains a NUL character (\\u0000), which text cannot hold"
    return "contains a lone surrogate (\\ud800-\\udfff), which is not valid Unicode text"


def json_problem(value: Any, *, max_depth: int, setting: str) -> str | None:
    """Why a parsed JSON value cannot be taken as it is (too deep, a string that cannot be
    stored, a number beyond a 64-bit float), or None. Walks without recursion."""
    stack = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict | list):
            if depth + 1 > max_depth:
                return f"nested deeper than {max_depth} levels ({setting} = {max_depth})"
            if isinstance(node, dict):
                for key in node:
                    if isinstance(key, str) and (problem := text_problem(key)):
                        return f"a key {problem}"
                children = node.values()
            else:
                children = node
            stack.extend((child, depth + 1) for child in children)
        elif isinstance(node, str):
            if problem := text_problem(node):
                return f"a string {problem}"
        elif isinstance(node, float) and not math.isfinite(node):
            return "a number is infinite or not a number (at most about 1.8e308 in size)"
    return None
