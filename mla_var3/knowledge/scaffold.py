"""Create a new page from its kind's template, in the folder its kind and scope select."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from importlib import resources
from pathlib import Path
from string import Template

from mla_var3.knowledge import layout
from mla_var3.knowledge.errors import KnowledgeError, Problem
from mla_var3.knowledge.pages import load_site, load_tags
from mla_var3.knowledge.schema import ARCHS, ID_RE, KINDS, PATTERN_KINDS, SCOPES

TEMPLATES = {"optimization": "pattern.md", "anti-pattern": "pattern.md", "devlog": "devlog.md",
             "study-note": "study-note.md", "path": "path.md", "concept": "concept.md"}  # fmt: skip


class ScaffoldError(ValueError):
    """A bad request (unknown kind, taken id, ...); the message says what to change."""


def template_text(kind: str) -> str:
    return resources.files("mla_var3.knowledge").joinpath("templates", TEMPLATES[kind]).read_text(encoding="utf-8")


@cache
def instruction_lines(kind: str) -> frozenset[str]:
    """The lines of the template's instruction paragraphs (italic paragraphs that tell the author what to
    write), stripped; ``lint`` fails a page that still contains one."""
    found: set[str] = set()
    paragraph: list[str] = []
    for line in [*template_text(kind).splitlines(), ""]:
        if line.strip():
            paragraph.append(line.strip())
            continue
        if paragraph and paragraph[0].startswith("*") and paragraph[-1].endswith("*"):
            found.update(paragraph)
        paragraph = []
    return frozenset(found)


def new_page(
    docs_dir: Path,
    repo_root: Path,
    page_id: str,
    kind: str,
    scope: str | None = None,
    title: str | None = None,
    arch: Sequence[str] = (),
    tags: Sequence[str] = (),
) -> Path:
    """Write ``docs/<folder>/<id>.md`` from the template and return its path; the page builds as written."""
    if kind not in KINDS:
        raise ScaffoldError(f"--kind {kind!r} is not one of: {', '.join(KINDS)}")
    if scope is None:
        if kind in PATTERN_KINDS:
            raise ScaffoldError(f"a {kind} page needs --scope ({' or '.join(SCOPES)}): shared for algorithm/hardware "
                                "patterns, cute-dsl for patterns in how the DSL expresses them")
        scope = "cute-dsl"
    if scope not in SCOPES:
        raise ScaffoldError(f"--scope {scope!r} is not one of: {', '.join(SCOPES)}")
    if not ID_RE.match(page_id):
        raise ScaffoldError(f"id {page_id!r} must be a lowercase slug such as 'multistage-tma-pipeline'")
    for a in arch:
        if a not in ARCHS:
            raise ScaffoldError(f"--arch {a!r} is not one of: {', '.join(ARCHS)}")
    problems: list[Problem] = []
    known_tags = load_tags(docs_dir, repo_root, problems)
    if problems:
        raise KnowledgeError(problems)
    unknown = [t for t in tags if t not in known_tags]
    if unknown:
        raise ScaffoldError(f"unknown tag(s) {', '.join(unknown)}; the closed list is in docs/{layout.TAGS_FILE}: "
                            f"{', '.join(known_tags)}")
    owners = {p.meta.id: p.display for p in load_site(docs_dir, repo_root).pages.values() if p.meta}
    if page_id in owners:
        raise ScaffoldError(f"id {page_id!r} is taken by {owners[page_id]}")
    target = docs_dir / layout.folder_for(kind, scope) / f"{page_id}.md"
    if target.exists():
        raise ScaffoldError(f"{target} exists already")
    text = Template(template_text(kind)).substitute(
        id=page_id,
        title=_yaml_string(title or page_id.replace("-", " ").capitalize()),
        kind=kind,
        scope=scope,
        arch=f"[{', '.join(arch)}]",
        tags=f"[{', '.join(tags)}]",
    )
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    return target


def _yaml_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
