"""The publication gate: every page's evidence must exist, pass, be fresh, and be run where we can run it."""

from __future__ import annotations

from pathlib import Path

from mla_var3.evidence.status import status_of
from mla_var3.evidence.targets import collect, page_meta

OK = ("run-verified", "compile-verified")


def gate(docs_dir: Path) -> list[str]:
    """Problems that block publication, one line each naming the page; empty when publishable."""
    problems = []
    for target in collect(docs_dir):
        status = status_of(target.kernel, target.config)
        if status.status not in OK:
            for page in target.pages:
                problems.append(f"{page}: {target.kernel}/{target.config} is {status.status}: {status.detail}")
    return problems + status_claims(docs_dir)


def status_claims(docs_dir: Path) -> list[str]:
    """A page's ``status`` must not claim more than its evidence shows."""
    problems = []
    for path in sorted(docs_dir.rglob("*.md")):
        meta = page_meta(path)
        claim = meta.get("status")
        if claim not in OK:
            continue
        refs = [(r["kernel"], r["config"]) for r in meta.get("evidence") or [] if isinstance(r, dict)]
        page = path.relative_to(docs_dir)
        if not refs:
            problems.append(f"{page}: status {claim} but no evidence is listed")
        seen = {status_of(*ref).status for ref in refs}
        if claim == "run-verified" and seen - {"run-verified"}:
            problems.append(f"{page}: status run-verified but its evidence is {', '.join(sorted(seen))}")
    return problems
