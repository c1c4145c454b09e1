"""The API's JSON parser: bodies larger than REQUEST_MAX_JSON_BYTES (DRF reads JSON bodies past
Django's DATA_UPLOAD_MAX_MEMORY_SIZE) or nested deeper than REQUEST_MAX_JSON_DEPTH are refused
before json.loads sees them (its decoder recurses once per level), and parsed bodies holding
strings the database cannot store (NUL, lone surrogates) or non-finite numbers are refused."""

import re

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser, get_encoding
from rest_framework.utils import json

from projects.storable import json_problem

# Escapes go first, then strings are plain "..." runs: both patterns scan each character a
# fixed number of times (a single string pattern with escapes rescans from every quote of
# an unterminated string, quadratic in the body).
_ESCAPE = re.compile(r"\\.", re.DOTALL)
_STRING = re.compile(r'"[^"]*"')
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


def nesting_exceeds(text: str, limit: int) -> bool:
    """Whether JSON text opens more than `limit` lists or objects inside each other, found
    without parsing (so without recursion)."""
    outside_strings = _STRING.sub("", _ESCAPE.sub("", text)).encode("utf-8", "surrogatepass")
    brackets = outside_strings.translate(None, _NOT_BRACKETS)
    if len(brackets) <= limit:
        return False
    depth = 0
    for byte in brackets:
        if byte in b"[{":
            depth += 1
            if depth > limit:
                return True
        else:
            depth -= 1
    return False


class BoundedJSONParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        encoding = get_encoding(parser_context or {})
        most = settings.REQUEST_MAX_JSON_BYTES
        raw = stream.read(most + 1) if stream is not None else b""
        if len(raw) > most:
            raise ParseError(
                f"JSON parse error - the body is larger than {most} bytes "
                f"(REQUEST_MAX_JSON_BYTES = {most})"
            )
        try:
            text = raw.decode(encoding)
        except UnicodeError as exc:
            raise ParseError(f"JSON parse error - {exc}") from None
        limit = settings.REQUEST_MAX_JSON_DEPTH
        if nesting_exceeds(text, limit):
            raise ParseError(
                f"JSON parse error - nested deeper than {limit} levels "
                f"(REQUEST_MAX_JSON_DEPTH = {limit})"
            )
        try:
            strict = json.strict_constant if self.strict else None
            data = json.loads(text, parse_constant=strict)
        except (ValueError, RecursionError) as exc:
            raise ParseError(f"JSON parse error - {exc}") from None
        problem = json_problem(data, max_depth=limit, setting="REQUEST_MAX_JSON_DEPTH")
        if problem is not None:
            raise ParseError(f"JSON parse error - {problem}")
        return data
