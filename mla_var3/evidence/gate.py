"""The publication gate: every page's evidence must exist, pass, be fresh, and be run where we can run it."""

from __future__ import annotations

from pathlib import Path

from mla_var3.evidence.status import status_of
from mla_var3.evidence.targets import collect

OK = ("run-verified", "compile-verified")


def gate(docs_dir: Path) -> list[str]:
    """Problems that block publication, one line each naming the page; empty when publishable."""
    problems = []
    for target in collect(docs_dir):
        status = status_of(target.kernel, target.config)
        if status.status not in OK:
            for page in target.pages:
                problems.append(f"{page}: {target.kernel}/{target.config} is {status.status}: {status.detail}")
    return problems
