"""Problems found while reading files: where (file and line) and why. Pure Python, shared by
the data reader and the interchange reader (bws.core.judgments has its own, so the cores
import no app code)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class FileProblem:
    file: str
    line: int | None
    reason: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        return f"{where}: {self.reason}"


class FileProblemsError(ValueError):
    """Input that cannot be used; ``problems`` lists each one as file:line: reason."""

    def __init__(self, problems: Iterable[FileProblem]):
        self.problems = list(problems)
        super().__init__("\n".join(str(problem) for problem in self.problems))
