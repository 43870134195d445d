"""One site build: load and check the pages, then serve the navigation, generated pages and page rendering.

The MkDocs hook (``hooks/knowledge.py``) creates a :class:`KnowledgeBuild` per build and registers it;
the mkdocs-gen-files script (``hooks/gen_pages.py``) reads the registered one through
:func:`current_build`, so both see the same loaded pages.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from mla_var3.knowledge.catalog import generated_pages
from mla_var3.knowledge.checks import check_site
from mla_var3.knowledge.cutlass_pin import CutlassTree, read_pin
from mla_var3.knowledge.directives import EvidenceHooks
from mla_var3.knowledge.errors import KnowledgeError, Problem
from mla_var3.knowledge.graph import backlinks
from mla_var3.knowledge.nav import NavItem, build_nav
from mla_var3.knowledge.pages import Site, load_site
from mla_var3.knowledge.render import RenderContext, render_page
from mla_var3.knowledge.symbols import SymbolResolver

_current: KnowledgeBuild | None = None


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
            raise KnowledgeError([Problem("third_party/cutlass.lock", 0, str(error))]) from None
        self.cutlass = CutlassTree.locate(repo_root, self.pin.commit)
        self._site: Site | None = None
        self._context: RenderContext | None = None

    def register(self) -> KnowledgeBuild:
        """Make this the build :func:`current_build` returns."""
        global _current
        _current = self
        return self

    def load(self, srcs: Iterable[str] | None = None) -> Site:
        """Load and check every page; raises :class:`KnowledgeError` listing all problems."""
        site = load_site(self.docs_dir, self.repo_root, srcs)
        problems = check_site(site, self.symbols, self.cutlass)
        if problems:
            raise KnowledgeError(problems)
        self._site = site
        self._context = RenderContext(site, self.symbols, self.pin, self.evidence, backlinks(site))
        return site

    @property
    def site(self) -> Site:
        if self._site is None:
            raise RuntimeError("KnowledgeBuild.load() has not run")
        return self._site

    def nav(self) -> list[NavItem]:
        return build_nav(self.site)

    def generated_pages(self) -> dict[str, str]:
        return generated_pages(self.site, self.use_directory_urls)

    def render(self, src: str, markdown: str) -> str:
        """The page's Markdown with directives expanded and the generated parts added."""
        if self._context is None:
            raise RuntimeError("KnowledgeBuild.load() has not run")
        return render_page(self._context, src, markdown)


def current_build() -> KnowledgeBuild:
    if _current is None:
        raise RuntimeError("no knowledge build is registered: run MkDocs with hooks/knowledge.py in mkdocs.yml")
    return _current
