"""How evidence looks in a page: numbers, stale marks, provenance tooltips, embedded pictures -- one place each."""

from __future__ import annotations

import base64
import html

MISSING = "–"


def fmt(value: float | None, digits: int = 1) -> str:
    """``1,234.5``; ``–`` for a value a record does not have."""
    return MISSING if value is None else f"{value:,.{digits}f}"


def attribute(text: str) -> str:
    """``text`` as an HTML attribute value: quotes escaped, and backticks as ``&#96;``, because Markdown
    reads inline code spans before inline HTML and a backticked command in a tooltip (``run `python -m
    ...` ``) would otherwise cut the tag open and show its rest as text."""
    return html.escape(text).replace("`", "&#96;")


def span(text: str, title: str, stale: str | None = None) -> str:
    """An inline value with its provenance as a tooltip; a stale one is marked in colour and words."""
    css = "ev-value" + (" ev-stale" if stale else "")
    mark = f" ({html.escape(stale)})" if stale else ""
    return f'<span class="{css}" title="{attribute(title)}">{text}{mark}</span>'


def stale_cell(text: str, stale: str | None) -> str:
    """A table cell's text with the stale mark every table row of stale evidence carries."""
    return f"{text} ⚠ {stale}" if stale else text


def svg_image(svg: str, alt: str, css: str) -> str:
    """An SVG embedded as a data URI image (a page never links to a generated file)."""
    data = base64.b64encode(svg.encode()).decode()
    return f'<img class="{css}" alt="{attribute(alt)}" src="data:image/svg+xml;base64,{data}">'
