"""Where pages live in ``docs/``: the folder of each kind and scope, the generated pages, and links between pages."""

from __future__ import annotations

import posixpath

PATTERN_FOLDERS = {
    ("optimization", "shared"): "knowledge/optimizations",
    ("anti-pattern", "shared"): "knowledge/anti-patterns",
    ("optimization", "cute-dsl"): "knowledge/languages/cute-dsl/optimizations",
    ("anti-pattern", "cute-dsl"): "knowledge/languages/cute-dsl/anti-patterns",
}
KIND_FOLDERS = {"devlog": "kernels", "study-note": "examples", "path": "paths", "concept": "concepts"}
MANAGED_FOLDERS = frozenset(PATTERN_FOLDERS.values()) | frozenset(KIND_FOLDERS.values())

TAGS_FILE = "knowledge/tags.yml"
EVIDENCE_GUIDE = "evidence-guide.md"
CONTRIBUTING = "contributing"  # the project's own design, workflow and how-tos (free pages)  # how to read an evidence block; every block links it
CUTE_DSL_INDEX = "knowledge/languages/cute-dsl/index.md"
GLOSSARY = "concepts/glossary.md"  # a definition list; lint checks each term links the page that teaches it

# Written by the build (mkdocs-gen-files), never committed.
CATALOG_SHARED = "knowledge/optimization-catalog.md"
CATALOG_CUTE_DSL = "knowledge/optimization-catalog-cute-dsl.md"
TAG_INDEX = "knowledge/tags.md"
PATTERN_GRAPH = "knowledge/pattern-graph.md"
RESULTS = "knowledge/results.md"  # every comparison group's tables (mla_var3.knowledge.results)
GENERATED = (CATALOG_SHARED, CATALOG_CUTE_DSL, TAG_INDEX, PATTERN_GRAPH, RESULTS)


def folder_for(kind: str, scope: str) -> str:
    """The docs folder a page of this kind and scope belongs in."""
    return KIND_FOLDERS.get(kind) or PATTERN_FOLDERS[(kind, scope)]


def is_managed(src: str) -> bool:
    """Pages in a kind's folder (other than its ``index.md``) must carry schema front matter."""
    folder, name = posixpath.split(src)
    return folder in MANAGED_FOLDERS and name != "index.md"


def resolve_link(from_src: str, target: str) -> tuple[str | None, str]:
    """A Markdown link target as ``(docs-relative .md path or None, anchor)``; ``None`` for external links."""
    path, _, anchor = target.partition("#")
    if not path:
        return from_src, anchor
    if "://" in path or path.startswith(("mailto:", "/", "data:")):
        return None, anchor
    if not path.endswith(".md"):
        return None, anchor
    return posixpath.normpath(posixpath.join(posixpath.dirname(from_src), path)), anchor


def relative_link(from_src: str, to_src: str, anchor: str = "") -> str:
    """A Markdown link from one page to another (MkDocs turns ``.md`` links into URLs and checks them)."""
    link = posixpath.relpath(to_src, posixpath.dirname(from_src) or ".")
    return f"{link}#{anchor}" if anchor else link


def relative_url(from_src: str, to_src: str, use_directory_urls: bool) -> str:
    """A built-site URL from one page to another, for raw HTML (such as SVG links) MkDocs does not rewrite."""
    return posixpath.relpath(_page_url(to_src, use_directory_urls), posixpath.dirname(_page_url(from_src, use_directory_urls)) or ".")


def _page_url(src: str, use_directory_urls: bool) -> str:
    stem = src[: -len(".md")]
    if not use_directory_urls:
        return stem + ".html"
    if stem == "index" or stem.endswith("/index"):
        return stem[: -len("index")] + "index.html"
    return stem + "/index.html"
