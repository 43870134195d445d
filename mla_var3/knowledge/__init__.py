"""Knowledge pages: the front-matter schema, page loading and checks, catalogs, the link graph,
backlinks, directives, the scaffolder and the page templates.

This layer knows pages only; it imports nothing from ``mla_var3.evidence`` or ``mla_var3.kernel``.
The MkDocs hook passes evidence rendering in as :class:`EvidenceHooks`.
"""

from mla_var3.knowledge.build import KnowledgeBuild, current_build
from mla_var3.knowledge.checks import check_site
from mla_var3.knowledge.directives import EvidenceHooks
from mla_var3.knowledge.errors import KnowledgeError, Problem
from mla_var3.knowledge.pages import Page, Site, load_site
from mla_var3.knowledge.scaffold import ScaffoldError, new_page
from mla_var3.knowledge.schema import PageMeta

__all__ = [
    "EvidenceHooks",
    "KnowledgeBuild",
    "KnowledgeError",
    "Page",
    "PageMeta",
    "Problem",
    "ScaffoldError",
    "Site",
    "check_site",
    "current_build",
    "load_site",
    "new_page",
]
