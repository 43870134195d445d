"""Problems found in knowledge pages, the error that carries them out of a build or lint run, and the
exception an evidence renderer raises when it cannot render a claim honestly."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class Problem:
    """One thing wrong with one file: shown as ``file:line: message`` (``file: message`` without a line)."""

    file: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}" if self.line else f"{self.file}: {self.message}"


class KnowledgeError(Exception):
    """Raised when pages break the schema or their links; the message lists every problem."""

    def __init__(self, problems: Iterable[Problem]) -> None:
        self.problems = sorted(set(problems))
        count = len(self.problems)
        lines = "\n".join(f"  {p}" for p in self.problems)
        super().__init__(f"{count} problem{'s' if count != 1 else ''} in knowledge pages:\n{lines}")


class ClaimProblem(Exception):
    """Raised by an evidence renderer that cannot back a claim: a missing, failed or stale record, a ratio
    across runs or GPUs. ``shown`` is the Markdown the page shows in its place (visibly marked).

    The build records the problem with the directive's page and line: a warning in ``nox -s docs``, an
    error in ``nox -s publish``. The evidence layer imports this class; the knowledge layer never
    imports the evidence layer.
    """

    def __init__(self, message: str, shown: str) -> None:
        super().__init__(message)
        self.message = message
        self.shown = shown
