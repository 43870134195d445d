"""The publication gate: every cited record and group must exist, pass, be fresh, and be run where we can run
it; and no page's ``status`` may claim more than its evidence shows.

Pages are read through the knowledge layer's validated page model; the status rule is its
:func:`~mla_var3.knowledge.status_claim_problems`, given each evidence item's status from here.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from mla_var3.evidence.status import OK, group_status, status_of


@cache
def item_status(kernel: str | None, group: str | None, config: str) -> tuple[str, str]:
    """(status, detail) of a cited kernel or group at its config."""
    if group is not None:
        g = group_status(group, config)
        return g.status, g.detail
    s = status_of(kernel or "", config)
    return s.status, s.detail


def gate(docs_dir: Path) -> list[str]:
    """Problems that block publication, one line each naming the page and line; empty when publishable."""
    from mla_var3.knowledge import load_site, status_claim_problems

    item_status.cache_clear()
    site = load_site(docs_dir, docs_dir.parent)
    problems = []
    for page in site.pages.values():
        if page.meta is None:
            continue
        for i, ref in enumerate(page.meta.evidence):
            status, detail = item_status(ref.kernel, ref.group, ref.config)
            if status not in OK:
                problems.append(f"{page.display}:{page.meta_line('evidence', i)}: {ref.label()} is {status}: {detail}")
        claims = status_claim_problems(page, lambda ref: item_status(ref.kernel, ref.group, ref.config)[0])
        problems += [str(p) for p in claims]
    return problems
