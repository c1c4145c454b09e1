"""CSV and TSV cells that a spreadsheet shows as text, never runs as a formula.

Every CSV/TSV the platform or the command line writes (answer exports, score tables,
downloads) goes through ``writer``/``DictWriter`` here. A cell that starts with ``=``,
``+``, ``-``, ``@``, ``|`` or ``%`` and is not a plain number gets a leading ``'`` and its
``|`` become ``\\|`` (defusedcsv's rule). A cell that starts with a tab, a carriage return
or ``'`` gets the leading ``'`` too, so ``unguard`` takes the guard off exactly: importing
an exported table gives back the answers that were exported. Numbers such as ``-0.53``
stay numbers. Pure Python, no Django.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import IO, Any

from defusedcsv import csv as defused

GUARD = "'"
FORMULA_STARTS = ("=", "+", "-", "@", "|", "%")
PLAIN_GUARDED_STARTS = ("\t", "\r", GUARD)
_NUMBER = re.compile(r"-?[0-9,.]+")


def _formula_like(text: str) -> bool:
    # defusedcsv's test: a formula character first, and not a plain (negative) number.
    return text[:1] in FORMULA_STARTS and _NUMBER.fullmatch(text) is None


def _pre_guard(value: Any) -> Any:
    # What defusedcsv lets through: it leaves a cell that starts with the guard alone.
    if isinstance(value, str) and value[:1] in PLAIN_GUARDED_STARTS:
        return GUARD + value
    return value


def unguard(cell: str) -> str:
    """The text a cell was written from: the inverse of the guard ``writer`` adds.

    A hand-written cell that starts with ``'`` and no guarded character stays as it is.
    """
    if cell[:1] != GUARD:
        return cell
    rest = cell[1:]
    if rest[:1] in PLAIN_GUARDED_STARTS:
        return rest
    formula = rest.replace("\\|", "|")
    return formula if _formula_like(formula) else cell


class _Writer:
    def __init__(self, stream: IO[str], **fmtparams: Any) -> None:
        self._writer = defused.writer(stream, **fmtparams)

    def writerow(self, row: Iterable[Any]) -> Any:
        return self._writer.writerow([_pre_guard(cell) for cell in row])

    def writerows(self, rows: Iterable[Iterable[Any]]) -> None:
        for row in rows:
            self.writerow(row)


def writer(stream: IO[str], **fmtparams: Any) -> _Writer:
    """``csv.writer`` whose every cell (header included) is guarded."""
    return _Writer(stream, **fmtparams)


class DictWriter(defused.DictWriter):
    """``csv.DictWriter`` whose every cell (header included) is guarded."""

    def __init__(self, stream: IO[str], fieldnames, **kwargs: Any) -> None:
        super().__init__(stream, fieldnames, **kwargs)
        fmtparams = {k: v for k, v in kwargs.items() if k not in ("restval", "extrasaction")}
        self.writer = _Writer(stream, **fmtparams)
