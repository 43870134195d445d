"""The link graph between pages: edges (inline links, ``related`` ids, study-note verdicts), backlinks, and
the pattern graph drawn as an SVG at build time (no network, no graph library)."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from html import escape

from mla_var3.knowledge.pages import Site

KIND_COLORS = {"optimization": "#2e7d32", "anti-pattern": "#c62828"}


@dataclass(frozen=True, order=True)
class Edge:
    source: str  # docs-relative page paths
    target: str
    via: str  # "link", "related", "verdict" or "progress" (a learning path's table links the page)


def edges(site: Site) -> list[Edge]:
    """Every reference from one hand-written page to another (self-references dropped)."""
    ids = site.by_id()
    found: set[Edge] = set()
    citing: dict[str, set[str]] = defaultdict(set)  # CUTLASS path -> pages whose sources cite it
    for page in site.knowledge_pages():
        for source in page.meta.sources:
            citing[source.path].add(page.src)
    for page in site.pages.values():
        for link in page.links:
            if link.target != page.src and link.target in site.pages:
                found.add(Edge(page.src, link.target, "link"))
        if page.meta is None:
            continue
        for related in page.meta.related:
            if related in ids and ids[related].src != page.src:
                found.add(Edge(page.src, ids[related].src, "related"))
        for verdict in page.meta.verdicts:
            if verdict.pattern in ids:
                found.add(Edge(page.src, ids[verdict.pattern].src, "verdict"))
        for step in page.meta.steps:
            found.update(Edge(page.src, src, "progress") for src in citing[step.example] if src != page.src)
    return sorted(found)


def backlinks(site: Site) -> dict[str, list[str]]:
    """For each page, the pages that reference it, sorted by title."""
    sources: dict[str, set[str]] = defaultdict(set)
    for edge in edges(site):
        sources[edge.target].add(edge.source)
    return {
        target: sorted(found, key=lambda src: (site.pages[src].title.casefold(), src)) for target, found in sources.items()
    }


def pattern_graph_svg(site: Site, href: Callable[[str], str]) -> str:
    """Pattern pages on a circle, coloured by kind (circles: shared, squares: CuTe DSL), joined by their references.

    ``href(src)`` gives the URL of a page as seen from the page that embeds the SVG.
    """
    nodes = sorted(
        site.knowledge_pages("optimization", "anti-pattern"),
        key=lambda p: (p.meta.scope, p.meta.kind, p.title.casefold()),
    )
    if not nodes:
        return ""
    count = len(nodes)
    radius = max(90.0, count * 26 / (2 * math.pi))
    position = {}
    for i, page in enumerate(nodes):
        angle = 2 * math.pi * i / count - math.pi / 2
        position[page.src] = (radius * math.cos(angle), radius * math.sin(angle), angle)
    labels = {p.src: p.title if len(p.title) <= 40 else p.title[:39] + "…" for p in nodes}
    # Bounding box of nodes and their labels (about 7 px per character at 13 px).
    xs, ys = [], []
    for src, (x, y, angle) in position.items():
        reach = 22 + 7 * len(labels[src])
        xs += [x - 12, x + 12, x + reach if math.cos(angle) >= -1e-9 else x - reach]
        ys += [y - 24, y + 24]
    left, top = min(xs) - 10, min(ys) - 10
    width, height = max(xs) + 10 - left, max(ys) + 10 - top
    center = (0.0, 0.0)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="pattern-graph" viewBox="{left:.0f} {top:.0f} {width:.0f} {height:.0f}" '
        f'width="100%" style="max-width:{width:.0f}px" role="img" aria-label="Pattern graph">'
    ]
    drawn: set[tuple[str, str]] = set()
    for edge in edges(site):
        if edge.source not in position or edge.target not in position:
            continue
        pair = tuple(sorted((edge.source, edge.target)))
        if pair in drawn:
            continue
        drawn.add(pair)
        (x1, y1, _), (x2, y2, _) = position[edge.source], position[edge.target]
        dash = ' stroke-dasharray="6 4"' if edge.via == "related" else ""
        parts.append(
            f'<path d="M{x1:.1f},{y1:.1f} Q{center[0]:.1f},{center[1]:.1f} {x2:.1f},{y2:.1f}" fill="none" '
            f'stroke="#888" stroke-opacity="0.7" stroke-width="1.5"{dash}/>'
        )
    for page in nodes:
        x, y, angle = position[page.src]
        color = KIND_COLORS[page.meta.kind]
        if page.meta.scope == "shared":
            shape = f'<circle cx="{x:.1f}" cy="{y:.1f}" r="8" fill="{color}"/>'
        else:
            shape = f'<rect x="{x - 8:.1f}" y="{y - 8:.1f}" width="16" height="16" rx="3" fill="{color}"/>'
        outward = math.cos(angle) >= -1e-9
        lx = x + (14 if outward else -14) * abs(math.cos(angle)) + (4 if outward else -4)
        ly = y + 14 * math.sin(angle) + 4
        anchor = "start" if outward else "end"
        label = labels[page.src]
        tooltip = f"{page.title} ({page.meta.kind}, {page.meta.scope}, {page.meta.status})"
        parts.append(
            f'<a href="{escape(href(page.src))}"><title>{escape(tooltip)}</title>{shape}'
            f'<text x="{lx:.1f}" y="{ly:.1f}" text-anchor="{anchor}" font-size="13" fill="currentColor">'
            f"{escape(label)}</text></a>"
        )
    parts.append("</svg>")
    return "".join(parts)
