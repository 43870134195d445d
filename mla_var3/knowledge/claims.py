"""The status rule: a page's ``status`` claims no more than its evidence shows.

``compile-verified`` and ``run-verified`` rest on records (``evidence:``). ``build-verified`` rests on the
build itself: the page runs code at every site build (an executed ``python exec="on"`` block or an
``estimate()``) and claims no GPU measurement -- any ``evidence:`` item it lists must still be fresh.

One function for the build, ``lint`` and the publish gate. Without evidence statuses (the knowledge
layer cannot compute them) it checks what the page itself says; the gate passes the evidence layer's
status of each ``evidence:`` item to check the claim against the records too.
"""

from __future__ import annotations

from collections.abc import Callable

from mla_var3.knowledge.directives import EVIDENCE_NAMES
from mla_var3.knowledge.errors import Problem
from mla_var3.knowledge.pages import Page
from mla_var3.knowledge.schema import BUILD_VERIFIED, EvidenceRef

# What each claimed status accepts as the status of every evidence item.
ACCEPTED = {
    "run-verified": ("run-verified",),
    "compile-verified": ("run-verified", "compile-verified"),
    BUILD_VERIFIED: ("run-verified", "compile-verified"),
}
EXECUTED_FENCE = 'exec="on"'  # markdown-exec runs the fenced block at build time


def status_claim_problems(page: Page, evidence_status: Callable[[EvidenceRef], str] | None = None) -> list[Problem]:
    """Problems with the page's ``status`` claim.

    A ``compile-verified`` or ``run-verified`` page lists at least one ``evidence:`` item and shows
    evidence in its body (an ``evidence``, ``speedup``, ``compare`` or ``roofline`` directive); a
    ``build-verified`` page executes something at build time. With ``evidence_status`` (item ->
    ``run-verified``, ``compile-verified``, ``stale``, ``failed``, ``missing``, ...), every listed item
    must have a status the claim accepts.
    """
    meta = page.meta
    if meta is None or meta.status not in ACCEPTED:
        return []
    line = page.meta_line("status")
    problems = []
    if meta.status == BUILD_VERIFIED:
        executed = any(EXECUTED_FENCE in row for row in page.lines) or any(d.name == "estimate" for d in page.directives)
        if not executed:
            problems.append(Problem(page.display, line, f"status {BUILD_VERIFIED!r} but nothing on the page runs "
                                    'at build time: add a ```python exec="on"``` block or an estimate() directive'))  # fmt: skip
    else:
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
