"""The status rule: a page's ``status`` claims no more than its evidence shows.

One function for the build, ``lint`` and the publish gate. Without evidence statuses (the knowledge
layer cannot compute them) it checks what the page itself says; the gate passes the evidence layer's
status of each ``evidence:`` item to check the claim against the records too.
"""

from __future__ import annotations

from collections.abc import Callable

from mla_var3.knowledge.directives import EVIDENCE_NAMES
from mla_var3.knowledge.errors import Problem
from mla_var3.knowledge.pages import Page
from mla_var3.knowledge.schema import VERIFIED, EvidenceRef

# What each claimed status accepts as the status of every evidence item.
ACCEPTED = {"run-verified": ("run-verified",), "compile-verified": ("run-verified", "compile-verified")}


def status_claim_problems(page: Page, evidence_status: Callable[[EvidenceRef], str] | None = None) -> list[Problem]:
    """Problems with the page's ``status`` claim.

    A ``compile-verified`` or ``run-verified`` page lists at least one ``evidence:`` item and shows
    evidence in its body (an ``evidence``, ``speedup``, ``compare`` or ``roofline`` directive). With
    ``evidence_status`` (item -> ``run-verified``, ``compile-verified``, ``stale``, ``failed``,
    ``missing``, ...), every item must have a status the claim accepts.
    """
    meta = page.meta
    if meta is None or meta.status not in VERIFIED:
        return []
    line = page.meta_line("status")
    problems = []
    if not meta.evidence:
        problems.append(Problem(page.display, line, f"status {meta.status!r} needs at least one evidence entry "
                                "({kernel, config} or {group, config})"))  # fmt: skip
    if not any(d.name in EVIDENCE_NAMES for d in page.directives):
        problems.append(Problem(page.display, line, f"status {meta.status!r} but the page shows no evidence: "
                                'add {{ evidence("kernel", "config") }} (or compare/speedup/roofline) to its body'))  # fmt: skip
    if evidence_status is not None:
        for i, ref in enumerate(meta.evidence):
            seen = evidence_status(ref)
            if seen not in ACCEPTED[meta.status]:
                problems.append(Problem(page.display, page.meta_line("evidence", i),
                                        f"status {meta.status!r} but the evidence of {ref.label()} is {seen}"))  # fmt: skip
    return problems
