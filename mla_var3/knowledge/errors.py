"""Problems found in knowledge pages, and the error that carries them out of a build or lint run."""

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
