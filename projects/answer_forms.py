"""Reading the annotation page's form fields into answers (scheme name -> value), the same
values the REST API takes. Field names: `S` for single values, `S__best`/`S__worst` for BWS,
`S__step__N` for trace steps, parallel lists such as `S__start`/`S__end` for segment and box
rows."""

import re

from django.http import QueryDict

from .validation import MAX_MILLISECONDS, TRACE_TYPES, AnswerError

BOX_FIELDS = ("cx", "cy", "cz", "l", "w", "h", "yaw")
# What a browser's number field sends: ASCII digits only (float() would also take other
# scripts' digits, "inf", "nan" and underscores).
DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
WHOLE = re.compile(r"[0-9]+")


def _quoted(text: str) -> str:
    return repr(text) if len(text) <= 40 else repr(text[:37]) + "..."


def _float(text: str, what: str) -> float:
    if len(text) <= 400 and DECIMAL.fullmatch(text):
        return float(text)  # may be inf: the scheme's check refuses non-finite numbers
    raise ValueError(f"{what}: {_quoted(text)} is not a number (write it with the digits 0-9)")


def time_taken_from_post(post: QueryDict) -> int | None:
    """The page's time_taken_ms field: empty, or a whole number of milliseconds."""
    text = post.get("time_taken_ms", "").strip()
    if not text:
        return None
    if WHOLE.fullmatch(text) and len(text) <= 10 and int(text) <= MAX_MILLISECONDS:
        return int(text)
    raise AnswerError(
        {"time_taken_ms": f"give a whole number of milliseconds from 0 to {MAX_MILLISECONDS}"}
    )


def _rows(post: QueryDict, name: str, fields: tuple[str, ...]) -> list[dict]:
    columns = {f: post.getlist(f"{name}__{f}") for f in fields}
    n = max((len(c) for c in columns.values()), default=0)
    rows = []
    for i in range(n):
        row = {f: (columns[f][i].strip() if i < len(columns[f]) else "") for f in fields}
        # A select such as the tier always holds a value: a row counts when anything else does.
        if any(v for f, v in row.items() if f != "tier"):
            rows.append(row)
    return rows


def answers_from_post(schemes: list[dict], post: QueryDict) -> dict:
    """Answers from the submitted form; AnswerError for values that are not even numbers."""
    answers: dict = {}
    errors: dict[str, str] = {}
    for scheme in schemes:
        name, kind = scheme["name"], scheme["type"]
        try:
            if kind == "bws":
                answers[name] = {
                    "best": post.get(f"{name}__best") or None,
                    "worst": post.get(f"{name}__worst") or None,
                }
            elif kind == "multiselect":
                answers[name] = post.getlist(name)
            elif kind == "likert":
                value = post.get(name, "").strip()
                whole = WHOLE.fullmatch(value) and len(value) < 20
                answers[name] = int(value) if whole else (value or None)
            elif kind in ("radio", "text"):
                answers[name] = post.get(name) or None
            elif kind in TRACE_TYPES:
                prefix = f"{name}__step__"
                answers[name] = {
                    key[len(prefix) :]: value
                    for key, value in post.items()
                    if key.startswith(prefix) and value
                }
            elif kind in ("temporal_grounding", "tiered_annotation"):
                fields = ("start", "end", "label", "tier")
                answers[name] = [
                    {
                        "start": _float(row["start"], f"segment {n + 1} start"),
                        "end": _float(row["end"], f"segment {n + 1} end"),
                        "label": row["label"] or None,
                        **({"tier": row["tier"]} if kind == "tiered_annotation" else {}),
                    }
                    for n, row in enumerate(_rows(post, name, fields))
                ]
            elif kind == "spatial_annotation":
                answers[name] = [
                    {
                        "label": row["label"] or None,
                        "center": [_float(row[k], f"box {n + 1} {k}") for k in ("cx", "cy", "cz")],
                        "size": [_float(row[k], f"box {n + 1} {k}") for k in ("l", "w", "h")],
                        "yaw": _float(row["yaw"] or "0", f"box {n + 1} yaw"),
                    }
                    for n, row in enumerate(_rows(post, name, (*BOX_FIELDS, "label")))
                ]
        except ValueError as exc:
            errors[name] = str(exc)
    if errors:
        raise AnswerError(errors)
    return answers
