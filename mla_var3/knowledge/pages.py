"""Read pages: front matter (validated), headings, links, snippet includes, directives, CUTLASS citations.

Each page file is read once per build; :class:`Page` keeps its text, which the MkDocs plugin hands
back to MkDocs instead of letting it read the file again. :func:`read_page` is the entry point for
other layers (verification and the publish gate read a page's ``evidence:`` through it).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from mla_var3.knowledge import layout
from mla_var3.knowledge.citations import SCHEME
from mla_var3.knowledge.directives import Directive, find_directives
from mla_var3.knowledge.errors import KnowledgeError, Problem
from mla_var3.knowledge.frontmatter import KeyPath, line_of, parse_front_matter
from mla_var3.knowledge.markdown_scan import Fence, Heading, SnippetRef, scan, snippet_refs
from mla_var3.knowledge.schema import ID_RE, PageMeta, validate_meta


@dataclass(frozen=True)
class Link:
    """An inline link to another page of the site (``target`` is docs-relative)."""

    target: str
    anchor: str
    raw: str
    index: int


@dataclass(frozen=True)
class Citation:
    """A ``cutlass:`` link in the body (the target as written and its body line)."""

    target: str
    index: int


@dataclass(frozen=True)
class Page:
    src: str  # docs-relative, posix
    display: str  # as errors show it (repository-relative)
    meta: PageMeta | None
    text: str  # the whole file, as read
    lines: tuple[str, ...]  # the body, after the front matter
    body_line: int
    code_mask: tuple[bool, ...]  # per body line: inside a fenced block
    fences: tuple[Fence, ...]
    headings: tuple[Heading, ...]
    links: tuple[Link, ...]
    citations: tuple[Citation, ...]
    snippets: tuple[SnippetRef, ...]
    directives: tuple[Directive, ...]
    key_lines: dict[KeyPath, int] = field(default_factory=dict, compare=False)

    @property
    def title(self) -> str:
        if self.meta:
            return self.meta.title
        first_h1 = next((h.text for h in self.headings if h.level == 1), None)
        return first_h1 or Path(self.src).stem.replace("-", " ").capitalize()

    def file_line(self, index: int) -> int:
        return self.body_line + index

    def meta_line(self, *path: str | int) -> int:
        """The file line of a front-matter key or list item."""
        return line_of(self.key_lines, *path)


@dataclass
class Site:
    """Every page of one docs folder, the closed tag list, and the problems found while loading them."""

    docs_dir: Path
    repo_root: Path
    tags: dict[str, str]
    pages: dict[str, Page]
    problems: list[Problem] = field(default_factory=list)

    def knowledge_pages(self, *kinds: str) -> list[Page]:
        """Pages with schema front matter (of the given kinds), sorted by title."""
        chosen = [p for p in self.pages.values() if p.meta and (not kinds or p.meta.kind in kinds)]
        return sorted(chosen, key=lambda p: (p.title.casefold(), p.src))

    def by_id(self) -> dict[str, Page]:
        ids: dict[str, Page] = {}
        for page in sorted(self.pages.values(), key=lambda p: p.src):
            if page.meta and page.meta.id not in ids:
                ids[page.meta.id] = page
        return ids

    def display(self, src: str) -> str:
        return _display(self.docs_dir / src, self.repo_root)


def load_site(docs_dir: Path, repo_root: Path, srcs: Iterable[str] | None = None) -> Site:
    """Read the pages (all ``*.md`` under ``docs_dir`` unless ``srcs`` names them) and the tag list."""
    docs_dir, repo_root = docs_dir.resolve(), repo_root.resolve()
    problems: list[Problem] = []
    tags = load_tags(docs_dir, repo_root, problems)
    if srcs is None:
        srcs = sorted(
            Path(root, name).relative_to(docs_dir).as_posix()
            for root, _, names in os.walk(docs_dir)
            for name in names
            if name.endswith(".md")
        )
    pages = {}
    for src in srcs:
        page, page_problems = load_page(docs_dir, repo_root, src, tags)
        pages[src] = page
        problems.extend(page_problems)
    return Site(docs_dir, repo_root, tags, pages, problems)


def load_tags(docs_dir: Path, repo_root: Path, problems: list[Problem]) -> dict[str, str]:
    """The closed tag list: a YAML mapping ``tag: one-line meaning`` in ``docs/knowledge/tags.yml``."""
    path = docs_dir / layout.TAGS_FILE
    display = _display(path, repo_root)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError:
        problems.append(Problem(display, 0, "the tag list is missing (a YAML mapping 'tag: meaning')"))
        return {}
    except yaml.MarkedYAMLError as error:
        line = error.problem_mark.line + 1 if error.problem_mark else 0
        problems.append(Problem(display, line, f"malformed YAML: {error.problem}"))
        return {}
    if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in data.items()):
        problems.append(Problem(display, 1, "the tag list must map each tag (a string) to its meaning (a string)"))
        return {}
    for tag in data:
        if not ID_RE.match(tag):
            problems.append(Problem(display, 0, f"tag {tag!r} must be a lowercase slug (letters, digits, single hyphens)"))
    return dict(sorted(data.items()))


def read_page(path: Path, docs_dir: Path | None = None, repo_root: Path | None = None) -> Page:
    """One page, validated: a :class:`KnowledgeError` lists the page's own problems (front matter, directives).

    ``docs_dir`` (default: the nearest folder above ``path`` holding ``knowledge/tags.yml``) gives the
    page's site path and the closed tag list; ``repo_root`` (default: its parent) how errors name files.
    """
    path = path.resolve()
    if docs_dir is None:
        docs_dir = next((d for d in path.parents if (d / layout.TAGS_FILE).is_file()), None)
        if docs_dir is None:
            raise KnowledgeError([Problem(str(path), 0, f"no docs folder with {layout.TAGS_FILE} above this page")])
    docs_dir = docs_dir.resolve()
    repo_root = (repo_root or docs_dir.parent).resolve()
    problems: list[Problem] = []
    tags = load_tags(docs_dir, repo_root, problems)
    page, page_problems = load_page(docs_dir, repo_root, path.relative_to(docs_dir).as_posix(), tags)
    if problems or page_problems:
        raise KnowledgeError(problems + page_problems)
    return page


def load_page(docs_dir: Path, repo_root: Path, src: str, tags: dict[str, str]) -> tuple[Page, list[Problem]]:
    path = docs_dir / src
    display = _display(path, repo_root)
    text = path.read_text(encoding="utf-8")
    fm, problems = parse_front_matter(text, display)
    meta = None
    wants_schema = layout.is_managed(src) or (fm.data is not None and ("id" in fm.data or "kind" in fm.data))
    if wants_schema and fm.data is None and not problems:
        problems.append(Problem(display, 1, "this page needs front matter (id, title, kind, scope, arch, tags, status)"))
    elif wants_schema and fm.data is not None:
        meta, meta_problems = validate_meta(fm, display, tags)
        problems.extend(meta_problems)
    lines = tuple(fm.body.splitlines())
    found = scan(lines)
    mask = found.code_mask(len(lines))
    directives, directive_errors = find_directives(lines, mask)
    problems.extend(Problem(display, fm.body_line + i, message) for i, message in directive_errors)
    page_links, citations = [], []
    for ref in found.links:
        if ref.target.startswith(SCHEME):
            citations.append(Citation(ref.target, ref.index))
            continue
        target, anchor = layout.resolve_link(src, ref.target)
        if target is not None:
            page_links.append(Link(target, anchor, ref.target, ref.index))
    page = Page(
        src=src,
        display=display,
        meta=meta,
        text=text,
        lines=lines,
        body_line=fm.body_line,
        code_mask=tuple(mask),
        fences=tuple(found.fences),
        headings=tuple(found.headings),
        links=tuple(page_links),
        citations=tuple(citations),
        snippets=tuple(snippet_refs(lines)),
        directives=tuple(directives),
        key_lines=fm.key_lines,
    )
    return page, problems



def _display(path: Path, repo_root: Path) -> str:
    try:
        return path.resolve().relative_to(repo_root).as_posix()
    except ValueError:
        return str(path)
