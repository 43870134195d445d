"""The glossary (``docs/concepts/glossary.md``) and its check: every term points at the page that teaches it.

The glossary is a Markdown definition list. Each definition ends with where to learn more, in one of
two forms::

    TMA (Tensor Memory Accelerator) { #tma }
    :   The copy engine that moves tiles between global and shared memory. Taught in
        [Pipelines](pipelines.md#tma).

    CLC
    :   Cluster launch control: ... Nearest page, until one teaches it:
        [Tile scheduling](../knowledge/optimizations/tile-scheduling-static-vs-clc.md).

``lint`` fails a term (:func:`glossary_problems`) that has neither, whose link leaves the site or
names a page that does not exist, or -- for "Taught in" -- whose page never uses the term (any of
its spellings: the parts separated by " / " and the words in parentheses, matched as whole words or
their plurals, case-insensitively, across line breaks). "Nearest page" marks, visibly, a term no page teaches yet; it only has to exist.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mla_var3.knowledge import layout
from mla_var3.knowledge.errors import Problem
from mla_var3.knowledge.pages import Page, Site

TAUGHT, NEAREST = "Taught in", "Nearest page, until one teaches it:"
TEACHER_RE = re.compile(rf"(?P<marker>{re.escape(TAUGHT)}|{re.escape(NEAREST)})\s+\[[^\]]+\]\((?P<target>[^)\s]+)\)")
DEFINITION_RE = re.compile(r"^:[ \t]+(?P<text>.*)$")
PARENTHESES_RE = re.compile(r"\(([^)]*)\)")
ATTRIBUTES_RE = re.compile(r"\s*\{[^}]*\}\s*$")  # a trailing attr_list, such as { #tma }


@dataclass(frozen=True)
class Entry:
    """One term of the glossary: its spellings, its definition's text and the body line of the term."""

    term: str
    definition: str
    index: int

    @property
    def spellings(self) -> tuple[str, ...]:
        """``"UMMA / tcgen05 (Blackwell MMA)"`` -> ``("UMMA", "tcgen05", "Blackwell MMA")``."""
        plain = self.term.replace("`", "")
        inside = PARENTHESES_RE.findall(plain)
        outside = PARENTHESES_RE.sub(" ", plain)
        return tuple(s for s in (part.strip() for part in [*outside.split(" / "), *inside]) if s)


def glossary_entries(page: Page) -> list[Entry]:
    """The definition-list entries of ``page`` (a term line, then ``:   definition`` and its indented lines)."""
    entries: list[Entry] = []
    lines, mask = page.lines, page.code_mask
    for i, line in enumerate(lines):
        if mask[i] or i + 1 >= len(lines) or mask[i + 1] or not line.strip() or line[0] in " \t:#":
            continue
        first = DEFINITION_RE.match(lines[i + 1])
        if first is None:
            continue
        text = [first.group("text")]
        for more in lines[i + 2 :]:
            if not more.startswith(("    ", "\t")) or not more.strip():
                break
            text.append(more.strip())
        entries.append(Entry(ATTRIBUTES_RE.sub("", line).strip(), " ".join(text), i))
    return entries


def glossary_problems(site: Site) -> list[Problem]:
    """Terms that point at no page of the site, or at a page that does not use them (see the module doc)."""
    page = site.pages.get(layout.GLOSSARY)
    if page is None:
        return []
    problems: list[Problem] = []
    seen: dict[str, int] = {}
    for entry in glossary_entries(page):
        line = page.file_line(entry.index)
        if entry.term.casefold() in seen:
            problems.append(Problem(page.display, line, f"glossary term {entry.term!r} is defined twice (also at line {seen[entry.term.casefold()]})"))
        seen.setdefault(entry.term.casefold(), line)
        links = list(TEACHER_RE.finditer(entry.definition))
        if not links:
            problems.append(Problem(page.display, line, f"glossary term {entry.term!r} links no page that teaches it: end its definition "
                                    f"with '{TAUGHT} [page](link)' (or '{NEAREST} [page](link)' while none does)"))  # fmt: skip
        for link in links:
            problems += _teacher_problems(site, page, entry, line, link.group("marker"), link.group("target"))
    return problems


def _teacher_problems(site: Site, page: Page, entry: Entry, line: int, marker: str, target: str) -> list[Problem]:
    src, _ = layout.resolve_link(page.src, target)
    where = f"glossary term {entry.term!r}: {marker.rstrip(':')} {target!r}"
    if src is None:
        return [Problem(page.display, line, f"{where} is not a page of this site (link a page under docs/)")]
    teacher = site.pages.get(src)
    if teacher is None:
        return [Problem(page.display, line, f"{where} names a page that does not exist (docs/{src})")]
    if marker == TAUGHT and not _mentions(teacher, entry.spellings):
        spelled = " or ".join(repr(s) for s in entry.spellings)
        return [Problem(page.display, line, f"{where}: docs/{src} never says {spelled}; link the page that teaches the term, "
                        f"or write '{NEAREST}' before the link")]  # fmt: skip
    return []


def _mentions(page: Page, spellings: tuple[str, ...]) -> bool:
    body = "\n".join([page.title, *page.lines])
    patterns = (r"\s+".join(map(re.escape, s.split())) for s in spellings)  # a spelling may wrap across lines
    return any(re.search(rf"(?<![\w-]){p}(?:e?s)?(?![\w-])", body, re.IGNORECASE) for p in patterns)  # plurals count
