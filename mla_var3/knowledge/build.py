"""One site build: load and check the pages once, then serve the navigation, generated pages, page
rendering, and the claim problems rendering met.

The MkDocs plugin (:mod:`mla_var3.knowledge.plugin`) owns one :class:`KnowledgeBuild` per build; the
mkdocs-gen-files script reaches it through the plugin, so both see the same loaded pages.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from mla_var3.knowledge.catalog import generated_pages
from mla_var3.knowledge.checks import check_site
from mla_var3.knowledge.citations import CutlassTree
from mla_var3.knowledge.directives import EvidenceHooks
from mla_var3.knowledge.errors import KnowledgeError, Problem
from mla_var3.knowledge.graph import backlinks
from mla_var3.knowledge.nav import NavItem, build_nav
from mla_var3.knowledge.pages import Site, load_site
from mla_var3.knowledge.render import RenderContext, render_page
from mla_var3.knowledge.symbols import SymbolResolver
from mla_var3.project import LOCK_FILE, read_pin


class KnowledgeBuild:
    def __init__(
        self,
        docs_dir: Path,
        repo_root: Path,
        *,
        use_directory_urls: bool = False,
        evidence: EvidenceHooks | None = None,
    ) -> None:
        self.docs_dir = docs_dir
        self.repo_root = repo_root
        self.use_directory_urls = use_directory_urls
        self.evidence = evidence
        self.symbols = SymbolResolver(repo_root)
        try:
            self.pin = read_pin(repo_root)
        except ValueError as error:
            raise KnowledgeError([Problem(LOCK_FILE, 0, str(error))]) from None
        self.cutlass = CutlassTree.locate(repo_root, self.pin.commit)
        self._context: RenderContext | None = None

    def load(self, srcs: Iterable[str] | None = None) -> Site:
        """Read and check every page; raises :class:`KnowledgeError` listing all problems."""
        site = load_site(self.docs_dir, self.repo_root, srcs)
        problems = check_site(site, self.symbols, self.cutlass)
        if problems:
            raise KnowledgeError(problems)
        self._context = RenderContext(site, self.symbols, self.pin, self.evidence, backlinks(site))
        return site

    @property
    def context(self) -> RenderContext:
        if self._context is None:
            raise RuntimeError("KnowledgeBuild.load() has not run")
        return self._context

    @property
    def site(self) -> Site:
        return self.context.site

    @property
    def claims(self) -> list[Problem]:
        """Claims the pages make that the evidence could not back (page and line), met while rendering."""
        return sorted(set(self.context.claims))

    def nav(self) -> list[NavItem]:
        return build_nav(self.site)

    def generated_pages(self) -> dict[str, str]:
        return generated_pages(self.site, self.use_directory_urls)

    def render(self, src: str, markdown: str) -> str:
        """The page's Markdown with directives expanded and the generated parts added."""
        return render_page(self.context, src, markdown)
