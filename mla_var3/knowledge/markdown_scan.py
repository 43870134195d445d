"""Scanning page Markdown: fenced blocks, headings and links from markdown-it-py tokens (which carry line
ranges), plus the line-level forms CommonMark does not know (snippet includes, code-span columns).

Everything works on the page body as a list of lines (no trailing newlines); indices are body line
indices, which :class:`~mla_var3.knowledge.pages.Page` maps back to file lines.

The site renders with Python-Markdown and pymdownx, whose block containers (admonitions ``!!!``,
details ``???``, tabs ``===``) nest their content by indentation: CommonMark would read that content
as paragraph text or an indented code block. So a container's body, and any indented block, is
scanned again as Markdown of its own (pages write code in fences, never as indented blocks).
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from markdown_it import MarkdownIt
from markdown_it.token import Token

MD = MarkdownIt("commonmark", {"html": True}).enable("table")

CONTAINER_RE = re.compile(r"^(?P<indent>[ \t]*)(?:!!!|\?\?\?\+?|===)[ \t]")
ATTR_LIST_RE = re.compile(r"[ \t]*\{[^}]*\}[ \t]*$")
# Columns of inline code spans (markdown-it's tokens carry lines, not columns; a directive's replacement needs columns).
CODE_SPAN_RE = re.compile(r"(`+)(?:.+?)\1")
SNIPPET_RE = re.compile(r"^[ \t]*(?P<escape>;*)--8<--[ \t]+(?P<quote>[\"'])(?P<spec>.+?)(?P=quote)[ \t]*$")
SNIPPET_LINES_RE = re.compile(r"^(?P<path>.+?)(?::(?P<first>-?\d+)?(?::(?P<last>-?\d+))?)$")
SNIPPET_SECTION_RE = re.compile(r"^(?P<path>.+?):(?P<section>[A-Za-z_][\w-]*)$")


@dataclass(frozen=True)
class Fence:
    """A fenced code block: opening line ``start``, closing line ``end`` (``len(lines)`` if unclosed)."""

    start: int
    end: int
    indent: str
    marker: str
    info: str


@dataclass(frozen=True)
class Heading:
    level: int
    text: str
    index: int


@dataclass(frozen=True)
class LinkRef:
    target: str
    index: int


@dataclass(frozen=True)
class SnippetRef:
    """A ``--8<-- "path[:section]"`` include line (line-range forms keep ``section`` empty)."""

    path: str
    section: str | None
    index: int


@dataclass
class Scan:
    """What one parse of a page body found, in body line indices."""

    fences: list[Fence] = field(default_factory=list)
    headings: list[Heading] = field(default_factory=list)
    links: list[LinkRef] = field(default_factory=list)

    def code_mask(self, count: int) -> list[bool]:
        """``True`` for each line that belongs to a fenced block (fence lines included)."""
        mask = [False] * count
        for fence in self.fences:
            for i in range(fence.start, min(fence.end, count - 1) + 1):
                mask[i] = True
        return mask


def scan(lines: Sequence[str]) -> Scan:
    """Parse the body once; fences, headings and links sorted by line."""
    found = Scan()
    _scan(list(lines), 0, found, list(lines))
    found.fences.sort(key=lambda f: f.start)
    found.headings.sort(key=lambda h: h.index)
    found.links.sort(key=lambda link: link.index)
    return found


def _scan(lines: list[str], offset: int, out: Scan, original: list[str]) -> None:
    tokens = MD.parse("\n".join(lines))
    bodies = _containers(lines, _fenced_lines(tokens))
    if bodies:
        outer = list(lines)
        for start, end in bodies:
            _scan(textwrap.dedent("\n".join(lines[start:end])).split("\n"), offset + start, out, original)
            outer[start:end] = [""] * (end - start)
        tokens = MD.parse("\n".join(outer))
    for i, token in enumerate(tokens):
        if token.map is None:
            continue
        start, end = token.map
        if token.type == "fence":
            out.fences.append(_fence(token, offset, original))
        elif token.type == "code_block":
            _scan(textwrap.dedent("\n".join(lines[start:end])).split("\n"), offset + start, out, original)
        elif token.type == "heading_open":
            text = ATTR_LIST_RE.sub("", tokens[i + 1].content).strip()
            out.headings.append(Heading(int(token.tag[1]), text, offset + start))
        elif token.type == "inline":
            out.links.extend(_links(token, offset + start))


def _fenced_lines(tokens: list[Token]) -> set[int]:
    return {line for t in tokens if t.type == "fence" and t.map for line in range(*t.map)}


def _containers(lines: list[str], fenced: set[int]) -> list[tuple[int, int]]:
    """Body line ranges ``[start, end)`` of pymdownx block containers (outside fences)."""
    bodies = []
    i = 0
    while i < len(lines):
        match = CONTAINER_RE.match(lines[i])
        if not match or i in fenced:
            i += 1
            continue
        depth = len(match.group("indent").expandtabs(4))
        end = i + 1
        for j in range(i + 1, len(lines)):
            if lines[j].strip() and len(lines[j]) - len(lines[j].lstrip()) <= depth:
                break
            if lines[j].strip():
                end = j + 1
        if end > i + 1:
            bodies.append((i + 1, end))
        i = end
    return bodies


def _fence(token: Token, offset: int, original: list[str]) -> Fence:
    start, end = token.map  # type: ignore[misc]
    first = original[offset + start]
    close = original[offset + end - 1].strip() if end - start > 1 else ""
    closed = end - start > 1 and close and set(close) == {token.markup[0]} and len(close) >= len(token.markup)
    return Fence(
        start=offset + start,
        end=offset + end - 1 if closed else len(original),
        indent=first[: len(first) - len(first.lstrip())],
        marker=token.markup,
        info=token.info.strip(),
    )


def _links(inline: Token, first_line: int) -> Iterator[LinkRef]:
    line = first_line
    for child in inline.children or []:
        if child.type in ("softbreak", "hardbreak"):
            line += 1
        elif child.type == "link_open":
            yield LinkRef(str(child.attrs.get("href", "")), line)


def fences(lines: Sequence[str]) -> list[Fence]:
    return scan(lines).fences


def headings(lines: Sequence[str]) -> list[Heading]:
    return scan(lines).headings


def links(lines: Sequence[str]) -> list[LinkRef]:
    return scan(lines).links


def prose_lines(lines: Sequence[str], mask: Sequence[bool] | None = None) -> Iterator[tuple[int, str]]:
    """Lines outside fenced blocks, with inline code spans blanked (positions preserved)."""
    mask = scan(lines).code_mask(len(lines)) if mask is None else mask
    for i, (line, in_code) in enumerate(zip(lines, mask, strict=True)):
        if not in_code:
            yield i, blank_code_spans(line)


def blank_code_spans(line: str, fill: str = " ") -> str:
    return CODE_SPAN_RE.sub(lambda m: fill * len(m.group(0)), line)


def snippet_refs(lines: Sequence[str]) -> list[SnippetRef]:
    """Include lines as pymdownx.snippets reads them (also inside fences; ``;--8<--`` is escaped)."""
    found = []
    for i, line in enumerate(lines):
        match = SNIPPET_RE.match(line)
        if not match or match.group("escape"):
            continue
        spec = match.group("spec").strip()
        section = SNIPPET_SECTION_RE.match(spec)
        if section:
            found.append(SnippetRef(section.group("path"), section.group("section"), i))
        else:
            ranged = SNIPPET_LINES_RE.match(spec)
            found.append(SnippetRef(ranged.group("path") if ranged else spec, None, i))
    return found


def section_heading(found: Sequence[Heading], title: str) -> int | None:
    """Index of the ``## title`` heading (case-insensitive), or ``None``."""
    for heading in found:
        if heading.level == 2 and heading.text.casefold() == title.casefold():
            return heading.index
    return None
