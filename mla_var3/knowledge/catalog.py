"""The pages the build generates (mkdocs-gen-files; never committed): the two optimization catalogs,
the tag index and the pattern graph."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from mla_var3.knowledge import layout
from mla_var3.knowledge.graph import edges, pattern_graph_svg
from mla_var3.knowledge.pages import Page, Site
from mla_var3.knowledge.schema import ARCHS, STATUSES
from mla_var3.knowledge.tables import markdown_table

KIND_HEADINGS = {"optimization": "Optimizations", "anti-pattern": "Anti-patterns"}
GENERATED_NOTE = "*Generated at build time from the pages' front matter; edit the pages, not this file.*"


def generated_pages(site: Site, use_directory_urls: bool) -> dict[str, str]:
    """Every generated page, docs-relative path -> Markdown."""
    return {
        layout.CATALOG_SHARED: catalog_page(site, "shared", layout.CATALOG_SHARED),
        layout.CATALOG_CUTE_DSL: catalog_page(site, "cute-dsl", layout.CATALOG_CUTE_DSL),
        layout.TAG_INDEX: tag_index_page(site),
        layout.PATTERN_GRAPH: graph_page(site, use_directory_urls),
    }


def tag_anchor(tag: str) -> str:
    return f"tag-{tag}"


def catalog_page(site: Site, scope: str, here: str) -> str:
    patterns = [p for p in site.knowledge_pages("optimization", "anti-pattern") if p.meta.scope == scope]
    title = "Optimization catalog" if scope == "shared" else "Optimization catalog: CuTe DSL"
    other = layout.CATALOG_CUTE_DSL if scope == "shared" else layout.CATALOG_SHARED
    what = (
        "algorithm and hardware patterns that hold in any language"
        if scope == "shared"
        else "patterns in how the CuTe Python DSL expresses a kernel"
    )
    link = _linker(here)
    out = [
        f"# {title}",
        "",
        f"{len(patterns)} pattern page(s): {what}. See also the [other catalog]({layout.relative_link(here, other)}), "
        f"the [tag index]({layout.relative_link(here, layout.TAG_INDEX)}) and the "
        f"[pattern graph]({layout.relative_link(here, layout.PATTERN_GRAPH)}).",
        "",
        GENERATED_NOTE,
        "",
        "## By kind",
        "",
    ]
    for kind, heading in KIND_HEADINGS.items():
        chosen = [p for p in patterns if p.meta.kind == kind]
        out += [f"### {heading}", ""]
        if not chosen:
            out += ["None yet.", ""]
            continue
        rows = [
            (link(page), _tags(here, page.meta.tags) or "—", ", ".join(page.meta.arch) or "—", page.meta.status)
            for page in chosen
        ]
        out += [*markdown_table(("Pattern", "Tags", "Arch", "Status"), rows), ""]
    out += _grouped("By tag", "Tag", site.tags, patterns, lambda p: p.meta.tags, link, here)
    out += _grouped("By arch", "Arch", ARCHS, patterns, lambda p: p.meta.arch, link, here)
    out += _grouped("By status", "Status", STATUSES, patterns, lambda p: (p.meta.status,), link, here)
    return "\n".join(out) + "\n"


def _grouped(
    heading: str,
    column: str,
    keys: Iterable[str],
    pages: list[Page],
    keys_of: Callable[[Page], Iterable[str]],
    link: Callable[[Page], str],
    here: str,
) -> list[str]:
    rows = []
    for key in keys:
        chosen = [p for p in pages if key in keys_of(p)]
        if chosen:
            rows.append((_tags(here, [key]) if column == "Tag" else key, ", ".join(link(p) for p in chosen)))
    return [f"## {heading}", "", *(markdown_table((column, "Patterns"), rows) if rows else ["None yet."]), ""]


def _tags(here: str, tags: Iterable[str]) -> str:
    return ", ".join(f"[{t}]({layout.relative_link(here, layout.TAG_INDEX, tag_anchor(t))})" for t in tags)


def tag_index_page(site: Site) -> str:
    here = layout.TAG_INDEX
    link = _linker(here)
    out = [
        "# Tags",
        "",
        f"The closed tag list ({len(site.tags)} tags) lives in `docs/knowledge/{layout.TAGS_FILE.split('/')[-1]}`; "
        "a page with any other tag fails the build.",
        "",
        GENERATED_NOTE,
        "",
    ]
    tagged = site.knowledge_pages()
    for tag, meaning in site.tags.items():
        chosen = [p for p in tagged if tag in p.meta.tags]
        out += [f"## {tag} {{#{tag_anchor(tag)}}}", "", meaning, ""]
        out += [f"- {link(p)} — {p.meta.kind}, {p.meta.scope}, {p.meta.status}" for p in chosen] or ["No pages yet."]
        out.append("")
    return "\n".join(out) + "\n"


def graph_page(site: Site, use_directory_urls: bool) -> str:
    here = layout.PATTERN_GRAPH
    link = _linker(here)
    svg = pattern_graph_svg(site, lambda src: layout.relative_url(here, src, use_directory_urls))
    out = [
        "# Pattern graph",
        "",
        "Every pattern page and the references between them (inline links solid, `related` ids dashed). "
        "Green: optimizations; red: anti-patterns; circles: shared patterns; squares: CuTe DSL patterns. "
        "Click a node to open its page.",
        "",
        GENERATED_NOTE,
        "",
        svg or "No pattern pages yet.",
        "",
        "## Connections",
        "",
    ]
    patterns = {p.src: p for p in site.knowledge_pages("optimization", "anti-pattern")}
    neighbours: dict[str, set[str]] = {src: set() for src in patterns}
    for edge in edges(site):
        if edge.source in patterns and edge.target in patterns:
            neighbours[edge.source].add(edge.target)
            neighbours[edge.target].add(edge.source)
    rows = [
        (link(patterns[src]), ", ".join(link(patterns[n]) for n in sorted(found, key=lambda s: patterns[s].title)) or "—")
        for src, found in sorted(neighbours.items(), key=lambda item: patterns[item[0]].title.casefold())
    ]
    out += markdown_table(("Pattern", "Connected to"), rows) if rows else ["None yet."]
    return "\n".join(out) + "\n"


def _linker(here: str) -> Callable[[Page], str]:
    return lambda page: f"[{page.title}]({layout.relative_link(here, page.src)})"
