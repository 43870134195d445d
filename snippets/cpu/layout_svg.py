"""Draw small integer grids (layouts, thread ownership, swizzles) as SVG, at docs-build time, without network."""

from __future__ import annotations

from html import escape

PALETTE = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac")


def grid_svg(
    values: list[list[int]],
    *,
    title: str,
    row_label: str,
    col_label: str,
    cell_text: str = "{v}",
    cell: tuple[int, int] = (34, 26),
    labels: list[list[object]] | None = None,
) -> str:
    """An SVG table of ``values`` coloured by value; ``cell_text`` formats each cell (``{v}`` is the value, or
    the cell's entry in ``labels`` when given: colour by one number, show another)."""
    width, height = cell
    left, top = 60, 46
    cols = max(len(r) for r in values)
    total_w = max(left + cols * width + 10, left + 8 * len(title))  # about 8 px per title character
    total_h = top + len(values) * height + 10
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {total_w} {total_h}" width="100%" '
        f'style="max-width:{total_w}px" role="img" aria-label="{escape(title)}" font-family="monospace" font-size="11">',
        f'<text x="{left}" y="16" font-size="13" fill="currentColor">{escape(title)}</text>',
        f'<text x="{left}" y="36" fill="currentColor">{escape(col_label)} →</text>',
        f'<text x="{left - 6}" y="{top - 4}" text-anchor="end" fill="currentColor">{escape(row_label)}</text>',
    ]
    for r, row in enumerate(values):
        y = top + r * height
        out.append(f'<text x="{left - 6}" y="{y + height / 2 + 4}" text-anchor="end" fill="currentColor">{r}</text>')
        for c, value in enumerate(row):
            x = left + c * width
            out.append(
                f'<rect x="{x}" y="{y}" width="{width}" height="{height}" fill="{PALETTE[value % len(PALETTE)]}" '
                f'stroke="#fff" stroke-width="1"/>'
                f'<text x="{x + width / 2}" y="{y + height / 2 + 4}" text-anchor="middle" fill="#fff">'
                f"{escape(cell_text.format(v=value if labels is None else labels[r][c]))}</text>"
            )
    out.append("</svg>")
    return "".join(out)
