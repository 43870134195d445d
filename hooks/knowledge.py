"""MkDocs hook: wires the knowledge layer (pages) and the evidence layer (numbers) into the build.

Logic lives in ``mla_var3.knowledge``; this file only connects MkDocs events to it.
"""

from __future__ import annotations

import sys
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.livereload import LiveReloadServer
from mkdocs.plugins import event_priority
from mkdocs.structure.files import Files
from mkdocs.structure.pages import Page

# The repository root holds `mla_var3` when it is not installed.
REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from mla_var3.evidence import render as evidence_render  # noqa: E402
from mla_var3.knowledge import EvidenceHooks, KnowledgeBuild, KnowledgeError, current_build  # noqa: E402

SNIPPET_PACKAGE = "snippets"
WATCHED = ("mla_var3", "snippets", "third_party/cutlass.lock")  # embedded code, snippets, the CUTLASS pin


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    repo_root = Path(config.config_file_path).resolve().parent
    if str(repo_root) not in sys.path:  # MkDocs restored sys.path after loading this file
        sys.path.insert(0, str(repo_root))
    for name in [m for m in sys.modules if m == SNIPPET_PACKAGE or m.startswith(SNIPPET_PACKAGE + ".")]:
        del sys.modules[name]  # `mkdocs serve` rebuilds: run the snippet files as they are now
    try:
        KnowledgeBuild(
            Path(config.docs_dir),
            repo_root,
            use_directory_urls=config.use_directory_urls,
            evidence=EvidenceHooks(
                evidence_render.render_evidence_block,
                evidence_render.render_evidence_value,
                ratio=evidence_render.render_evidence_ratio,
                compare=evidence_render.render_comparison,
                roofline=evidence_render.render_roofline,
            ),
        ).register()
    except KnowledgeError as error:
        raise PluginError(str(error)) from None
    return config


@event_priority(100)  # before mkdocs-gen-files, whose script reads the loaded pages
def on_files(files: Files, config: MkDocsConfig) -> Files:
    build = current_build()
    try:
        build.load(f.src_uri for f in files.documentation_pages())
    except KnowledgeError as error:
        raise PluginError(str(error)) from None
    config.nav = build.nav()
    return files


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    try:
        return current_build().render(page.file.src_uri, markdown)
    except KnowledgeError as error:
        raise PluginError(str(error)) from None


def on_serve(server: LiveReloadServer, config: MkDocsConfig, builder: object) -> LiveReloadServer:
    """`mkdocs serve` also rebuilds when embedded kernel code, snippets or the CUTLASS pin change."""
    repo_root = Path(config.config_file_path).resolve().parent
    for rel in WATCHED:
        if (repo_root / rel).exists():
            server.watch(str(repo_root / rel))
    return server
