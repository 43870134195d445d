"""Line-level scanning of page Markdown: fenced blocks, headings, links and snippet includes.

Everything works on the page body as a list of lines (no trailing newlines); indices are body
line indices, which :class:`~mla_var3.knowledge.pages.Page` maps back to file lines.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

FENCE_RE = re.compile(r"^(?P<indent>[ \t]*)(?P<marker>`{3,}|~{3,})(?P<info>.*)$")
HEADING_RE = re.compile(r"^(?P<hashes>#{1,6})[ \t]+(?P<text>.*?)[ \t]*#*[ \t]*$")
ATTR_LIST_RE = re.compile(r"[ \t]*\{[^}]*\}[ \t]*$")
CODE_SPAN_RE = re.compile(r"(`+)(?:.+?)\1")
INLINE_LINK_RE = re.compile(r"\[(?:[^\]\\]|\\.)*\]\(\s*<?(?P<target>[^)\s>]+)>?(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)")
REF_DEF_RE = re.compile(r"^[ \t]{0,3}\[[^\]]+\]:[ \t]*<?(?P<target>\S+?)>?(?:[ \t]+.*)?$")
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


def fences(lines: Sequence[str]) -> list[Fence]:
    found: list[Fence] = []
    i = 0
    while i < len(lines):
        match = FENCE_RE.match(lines[i])
        if not match or (match.group("marker")[0] == "`" and "`" in match.group("info")):
            i += 1
            continue
        marker = match.group("marker")
        end = len(lines)
        for j in range(i + 1, len(lines)):
            close = FENCE_RE.match(lines[j])
            if close and close.group("marker")[0] == marker[0] and len(close.group("marker")) >= len(marker):
                if not close.group("info").strip():
                    end = j
                    break
        found.append(Fence(i, end, match.group("indent"), marker, match.group("info").strip()))
        i = end + 1
    return found


def code_mask(lines: Sequence[str]) -> list[bool]:
    """``True`` for each line that belongs to a fenced block (fence lines included)."""
    mask = [False] * len(lines)
    for fence in fences(lines):
        for i in range(fence.start, min(fence.end, len(lines) - 1) + 1):
            mask[i] = True
    return mask


def prose_lines(lines: Sequence[str]) -> Iterator[tuple[int, str]]:
    """Lines outside fenced blocks, with inline code spans blanked (positions preserved)."""
    for i, (line, in_code) in enumerate(zip(lines, code_mask(lines), strict=True)):
        if not in_code:
            yield i, blank_code_spans(line)


def blank_code_spans(line: str) -> str:
    return CODE_SPAN_RE.sub(lambda m: " " * len(m.group(0)), line)


def headings(lines: Sequence[str]) -> list[Heading]:
    found = []
    for i, line in prose_lines(lines):
        match = HEADING_RE.match(line)
        if match:
            text = ATTR_LIST_RE.sub("", lines[i][match.start("text") : match.end("text")]).strip()
            found.append(Heading(len(match.group("hashes")), text, i))
    return found


def links(lines: Sequence[str]) -> list[LinkRef]:
    found = []
    for i, line in prose_lines(lines):
        found.extend(LinkRef(m.group("target"), i) for m in INLINE_LINK_RE.finditer(line))
        ref = REF_DEF_RE.match(line)
        if ref:
            found.append(LinkRef(ref.group("target"), i))
    return found


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


def section_heading(lines: Sequence[str], title: str) -> int | None:
    """Index of the ``## title`` heading (case-insensitive), or ``None``."""
    for heading in headings(lines):
        if heading.level == 2 and heading.text.casefold() == title.casefold():
            return heading.index
    return None
