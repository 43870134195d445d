"""The site navigation, computed from the pages so a new page appears without editing ``mkdocs.yml``."""

from __future__ import annotations

import posixpath
from typing import Any

from mla_var3.knowledge import layout
from mla_var3.knowledge.pages import Page, Site

NavItem = str | dict[str, Any]


def build_nav(site: Site) -> list[NavItem]:
    """Home, free-form top-level pages, learning paths, concepts (in their index's reading order), knowledge
    (catalogs, measured results, patterns, CuTe DSL), notes, devlogs, then the contributor guides."""
    placed: set[str] = set()

    def entry(page: Page) -> NavItem:
        placed.add(page.src)
        return page.src if page.src.endswith("index.md") else {page.title: page.src}

    def section(title: str, folder: str, kind: str | None = None, reading_order: bool = False) -> list[NavItem]:
        index = site.pages.get(f"{folder}/index.md")
        pages = [p for p in site.knowledge_pages() if posixpath.dirname(p.src) == folder and (kind is None or p.meta.kind == kind)]
        if reading_order and index:  # in the order the index links them; the rest after, by title
            linked = list(dict.fromkeys(link.target for link in index.links))
            pages.sort(key=lambda p: linked.index(p.src) if p.src in linked else len(linked))
        items = ([entry(index)] if index else []) + [entry(p) for p in pages]
        return [{title: items}] if items else []

    nav: list[NavItem] = []
    if "index.md" in site.pages:
        placed.add("index.md")
        nav.append({"Home": "index.md"})
    for page in sorted((p for p in site.pages.values() if "/" not in p.src and p.src != "index.md"), key=lambda p: p.title):
        nav.append(entry(page))
    nav += section("Learning paths", layout.KIND_FOLDERS["path"])
    nav += section("Concepts", layout.KIND_FOLDERS["concept"], reading_order=True)

    knowledge: list[NavItem] = []
    if "knowledge/index.md" in site.pages:
        knowledge.append(entry(site.pages["knowledge/index.md"]))
    knowledge += [
        {"Optimization catalog": layout.CATALOG_SHARED},
        {"CuTe DSL catalog": layout.CATALOG_CUTE_DSL},
        {"Tags": layout.TAG_INDEX},
        {"Pattern graph": layout.PATTERN_GRAPH},
        {"Measured results": layout.RESULTS},
    ]
    knowledge += section("Optimizations", layout.PATTERN_FOLDERS[("optimization", "shared")])
    knowledge += section("Anti-patterns", layout.PATTERN_FOLDERS[("anti-pattern", "shared")])
    cute: list[NavItem] = []
    if layout.CUTE_DSL_INDEX in site.pages:
        cute.append(entry(site.pages[layout.CUTE_DSL_INDEX]))
    cute += section("Optimizations", layout.PATTERN_FOLDERS[("optimization", "cute-dsl")])
    cute += section("Anti-patterns", layout.PATTERN_FOLDERS[("anti-pattern", "cute-dsl")])
    if cute:
        knowledge.append({"CuTe DSL": cute})
    nav.append({"Knowledge": knowledge})
    nav += section("Study notes", layout.KIND_FOLDERS["study-note"])
    nav += section("Devlogs", layout.KIND_FOLDERS["devlog"])
    guides = sorted((p for p in site.pages.values() if posixpath.dirname(p.src) == layout.CONTRIBUTING), key=lambda p: p.title)
    guides.sort(key=lambda p: p.src != f"{layout.CONTRIBUTING}/index.md")  # its index first
    if guides:
        nav.append({"Contributing": [entry(p) for p in guides]})

    rest = sorted((p for p in site.pages.values() if p.src not in placed), key=lambda p: p.src)
    if rest:
        nav.append({"Other pages": [{p.title: p.src} for p in rest]})
    return nav
