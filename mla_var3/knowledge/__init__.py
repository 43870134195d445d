"""Knowledge pages: the page model (front matter validated against one schema), checks and lint, catalogs,
the link graph, directives, the scaffolder, the page templates and the MkDocs plugin that builds the site.

This layer knows pages only; it imports nothing from ``mla_var3.evidence`` or ``mla_var3.kernel``. The
site configuration hands evidence rendering in as :class:`EvidenceHooks` (``hooks/evidence.py``); the
evidence layer imports from here (:func:`read_page`, :func:`status_claim_problems`, :class:`ClaimProblem`).

The names below load on first use, so ``from mla_var3.knowledge.errors import ClaimProblem`` stays light
(no pydantic, markdown-it or griffe) where only that is needed.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "ClaimProblem": "errors",
    "KnowledgeError": "errors",
    "Problem": "errors",
    "EvidenceHooks": "directives",
    "EvidenceRef": "schema",
    "PageMeta": "schema",
    "Page": "pages",
    "Site": "pages",
    "load_site": "pages",
    "read_page": "pages",
    "status_claim_problems": "claims",
    "check_site": "checks",
    "lint_site": "checks",
    "ScaffoldError": "scaffold",
    "new_page": "scaffold",
    "KnowledgeBuild": "build",
}

if TYPE_CHECKING:
    from mla_var3.knowledge.build import KnowledgeBuild
    from mla_var3.knowledge.checks import check_site, lint_site
    from mla_var3.knowledge.claims import status_claim_problems
    from mla_var3.knowledge.directives import EvidenceHooks
    from mla_var3.knowledge.errors import ClaimProblem, KnowledgeError, Problem
    from mla_var3.knowledge.pages import Page, Site, load_site, read_page
    from mla_var3.knowledge.scaffold import ScaffoldError, new_page
    from mla_var3.knowledge.schema import EvidenceRef, PageMeta


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{_EXPORTS[name]}"), name)


__all__ = [
    "ClaimProblem",
    "EvidenceHooks",
    "EvidenceRef",
    "KnowledgeBuild",
    "KnowledgeError",
    "Page",
    "PageMeta",
    "Problem",
    "ScaffoldError",
    "Site",
    "check_site",
    "lint_site",
    "load_site",
    "new_page",
    "read_page",
    "status_claim_problems",
]
