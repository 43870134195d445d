"""The ``knowledge`` MkDocs plugin: builds the site from the knowledge layer, its state on the plugin object.

Registered in ``pyproject.toml`` (entry point ``mkdocs.plugins: knowledge``) and configured in ``mkdocs.yml``::

    plugins:
      - knowledge:
          evidence: hooks/evidence.py        # defines evidence_hooks() -> EvidenceHooks
          claims: !ENV [KNOWLEDGE_CLAIMS, warn]
      - gen-files: {scripts: [hooks/gen_pages.py]}

List it before ``gen-files``: its ``on_files`` reads and checks the pages, and the gen-files script
asks it (``mkdocs_gen_files.config.plugins["knowledge"].build``) for the generated pages.

Each page file is read once: the plugin hands MkDocs the text it read (``on_page_read_source``).
Claims the evidence cannot back (missing, stale, cross-run) are warnings with page and line when
``claims: warn`` (``nox -s docs``) and fail the build when ``claims: error`` (``nox -s publish``).
"""

from __future__ import annotations

import importlib.util
import logging
import sys
from pathlib import Path

from mkdocs.config import base
from mkdocs.config import config_options as c
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.livereload import LiveReloadServer
from mkdocs.plugins import BasePlugin
from mkdocs.structure.files import Files
from mkdocs.structure.pages import Page as MkDocsPage

from mla_var3.knowledge.build import KnowledgeBuild
from mla_var3.knowledge.directives import EvidenceHooks
from mla_var3.knowledge.errors import KnowledgeError

SNIPPET_PACKAGE = "snippets"
WATCHED = ("mla_var3", "snippets", "third_party/cutlass.lock")  # embedded code, snippets, the CUTLASS pin

# Not under the "mkdocs" logger: strict mode would turn every claim warning into a failed `nox -s docs`.
claims_log = logging.getLogger("mla_var3.knowledge.claims")


class KnowledgePluginConfig(base.Config):
    evidence = c.Optional(c.File(exists=True))  # a Python file defining evidence_hooks() -> EvidenceHooks
    claims = c.Choice(("warn", "error"), default="warn")


class KnowledgePlugin(BasePlugin[KnowledgePluginConfig]):
    def __init__(self) -> None:
        self._build: KnowledgeBuild | None = None

    @property
    def build(self) -> KnowledgeBuild:
        if self._build is None:
            raise PluginError("the knowledge plugin has not been configured yet (MkDocs calls on_config first)")
        return self._build

    def on_config(self, config: MkDocsConfig) -> MkDocsConfig:
        repo_root = Path(config.config_file_path).resolve().parent
        if str(repo_root) not in sys.path:  # executable snippets and estimates import snippets/ from the root
            sys.path.insert(0, str(repo_root))
        for name in [m for m in sys.modules if m == SNIPPET_PACKAGE or m.startswith(SNIPPET_PACKAGE + ".")]:
            del sys.modules[name]  # `mkdocs serve` rebuilds: run the snippet files as they are now
        try:
            self._build = KnowledgeBuild(
                Path(config.docs_dir),
                repo_root,
                use_directory_urls=config.use_directory_urls,
                evidence=_load_evidence_hooks(self.config.evidence) if self.config.evidence else None,
            )
        except KnowledgeError as error:
            raise PluginError(str(error)) from None
        return config

    def on_files(self, files: Files, config: MkDocsConfig) -> Files:
        try:
            self.build.load(f.src_uri for f in files.documentation_pages())
        except KnowledgeError as error:
            raise PluginError(str(error)) from None
        config.nav = self.build.nav()
        return files

    def on_page_read_source(self, page: MkDocsPage, config: MkDocsConfig) -> str | None:
        loaded = self.build.site.pages.get(page.file.src_uri)
        return loaded.text if loaded else None

    def on_page_markdown(self, markdown: str, page: MkDocsPage, config: MkDocsConfig, files: Files) -> str:
        try:
            return self.build.render(page.file.src_uri, markdown)
        except KnowledgeError as error:
            raise PluginError(str(error)) from None

    def on_post_build(self, config: MkDocsConfig) -> None:
        claims = self.build.claims
        if not claims:
            return
        listing = "\n".join(f"  {p}" for p in claims)
        if self.config.claims == "error":
            raise PluginError(f"{len(claims)} claim(s) the evidence does not back:\n{listing}")
        if not claims_log.handlers:
            handler = logging.StreamHandler(sys.stderr)
            handler.setFormatter(logging.Formatter("WARNING -  %(message)s"))
            claims_log.addHandler(handler)
            claims_log.propagate = False
        claims_log.warning("%d claim(s) the evidence does not back (marked on the pages; `nox -s publish` fails on them):\n%s",
                           len(claims), listing)  # fmt: skip

    def on_serve(self, server: LiveReloadServer, config: MkDocsConfig, builder: object) -> LiveReloadServer:
        """`mkdocs serve` also rebuilds when embedded kernel code, snippets or the CUTLASS pin change."""
        repo_root = Path(config.config_file_path).resolve().parent
        for rel in WATCHED:
            if (repo_root / rel).exists():
                server.watch(str(repo_root / rel))
        return server


def _load_evidence_hooks(path: str) -> EvidenceHooks:
    """Run the site's wiring file (as MkDocs loads hook files) and take its ``evidence_hooks()``."""
    spec = importlib.util.spec_from_file_location(Path(path).stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    factory = getattr(module, "evidence_hooks", None)
    if factory is None:
        raise PluginError(f"{path} must define evidence_hooks() -> mla_var3.knowledge.EvidenceHooks")
    hooks = factory()
    if not isinstance(hooks, EvidenceHooks):
        raise PluginError(f"{path}: evidence_hooks() returned {type(hooks).__name__}, not EvidenceHooks")
    return hooks
