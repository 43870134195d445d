"""The one front-matter schema of knowledge pages (DESIGN.md, "Knowledge pages") and its validator."""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from mla_var3.knowledge.errors import Problem
from mla_var3.knowledge.frontmatter import FrontMatter

KINDS = ("optimization", "anti-pattern", "devlog", "study-note", "path")
PATTERN_KINDS = ("optimization", "anti-pattern")
SCOPES = ("shared", "cute-dsl")
STATUSES = ("draft", "compile-verified", "run-verified")
ARCHS = ("sm_80", "sm_86", "sm_89", "sm_90a", "sm_100a", "sm_100f", "sm_103a", "sm_120a")
VERDICTS = ("confirms", "refines", "contradicts")

# `## ` sections each kind's template defines; a page must keep all of them (any order).
PATTERN_SECTIONS = (
    "When to Apply",
    "Mechanism",
    "Affected Metrics",
    "Implementation",
    "Source",
    "Performance Evidence",
    "Generalization",
    "Pitfalls",
    "Interactions",
)
REQUIRED_SECTIONS: dict[str, tuple[str, ...]] = {
    "optimization": PATTERN_SECTIONS,
    "anti-pattern": PATTERN_SECTIONS,
    "devlog": ("Overview", "Source", "Performance", "Patterns extracted", "Insights"),
    "study-note": ("Questions", "Host side", "Device side", "Pattern checklist", "Cross-reference verdicts"),
    "path": ("Progress",),
}

ID_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
LINES_RE = re.compile(r"^(\d+)(?:-(\d+))?$")

REQUIRED_KEYS = ("id", "title", "kind", "scope", "arch", "tags", "status")
OPTIONAL_KEYS = ("related", "sources", "evidence")
KIND_KEYS = {"study-note": ("verdicts",), "path": ("steps",)}


@dataclass(frozen=True)
class SourceRef:
    """A CUTLASS file (repository-relative) and optional line span, at the pinned commit."""

    path: str
    lines: tuple[int, int] | None = None

    def label(self) -> str:
        if self.lines is None:
            return self.path
        first, last = self.lines
        return f"{self.path}:{first}" if first == last else f"{self.path}:{first}-{last}"


@dataclass(frozen=True)
class EvidenceRef:
    """An evidence record key: the kernel's declared name and a config slug."""

    kernel: str
    config: str


@dataclass(frozen=True)
class Verdict:
    """A study note's judgement of an existing pattern."""

    pattern: str
    verdict: str
    note: str


@dataclass(frozen=True)
class Step:
    """One step of a learning path: a CUTLASS example and what it teaches."""

    example: str
    goal: str


@dataclass(frozen=True)
class PageMeta:
    id: str
    title: str
    kind: str
    scope: str
    arch: tuple[str, ...]
    tags: tuple[str, ...]
    status: str
    related: tuple[str, ...] = ()
    sources: tuple[SourceRef, ...] = ()
    evidence: tuple[EvidenceRef, ...] = ()
    verdicts: tuple[Verdict, ...] = ()
    steps: tuple[Step, ...] = ()

    @property
    def is_pattern(self) -> bool:
        return self.kind in PATTERN_KINDS


class _Checker:
    """Collects problems while reading one page's front matter."""

    def __init__(self, fm: FrontMatter, display: str) -> None:
        self.fm = fm
        self.display = display
        self.problems: list[Problem] = []

    def fail(self, message: str, *path: str | int) -> None:
        self.problems.append(Problem(self.display, self.fm.line_of(*path), message))

    def string(self, value: Any, *path: str | int) -> str | None:
        if isinstance(value, str) and value.strip():
            return value.strip()
        self.fail(f"{_name(path)} must be a non-empty string, got {value!r}", *path)
        return None

    def choice(self, value: Any, choices: Collection[str], *path: str | int) -> str | None:
        if value in choices:
            return value
        self.fail(f"{_name(path)} {value!r} is not one of: {', '.join(choices)}", *path)
        return None

    def items(self, data: dict[str, Any], key: str) -> list[Any]:
        value = data.get(key, [])
        if value is None:
            return []
        if not isinstance(value, list):
            self.fail(f"{key} must be a YAML list, got {value!r}", key)
            return []
        return value

    def mapping(self, item: Any, keys: tuple[str, ...], optional: tuple[str, ...], *path: str | int) -> bool:
        if not isinstance(item, dict):
            self.fail(f"{_name(path)} must be a mapping with keys {', '.join(keys)}, got {item!r}", *path)
            return False
        ok = True
        for key in keys:
            if key not in item:
                self.fail(f"{_name(path)} lacks {key!r}", *path)
                ok = False
        for key in item:
            if key not in keys + optional:
                self.fail(f"{_name(path)} has unknown key {key!r} (allowed: {', '.join(keys + optional)})", *path, key)
                ok = False
        return ok


def _name(path: tuple[str | int, ...]) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else (f".{p}" if i else p) for i, p in enumerate(path))


def validate_meta(fm: FrontMatter, display: str, tags: Collection[str]) -> tuple[PageMeta | None, list[Problem]]:
    """Check ``fm.data`` against the schema; returns the typed metadata (``None`` if unusable) and problems."""
    assert fm.data is not None
    data = fm.data
    c = _Checker(fm, display)
    kind = data.get("kind")
    allowed = REQUIRED_KEYS + OPTIONAL_KEYS + KIND_KEYS.get(kind, ())
    for key in data:
        if key not in allowed:
            owners = [k for k, keys in KIND_KEYS.items() if key in keys]
            hint = f" (only {', '.join(owners)} pages have it)" if owners else ""
            c.fail(f"unknown front-matter key {key!r}{hint}; allowed: {', '.join(allowed)}", key)
    for key in REQUIRED_KEYS:
        if key not in data:
            c.fail(f"front matter lacks required key {key!r}")
    if c.problems:
        return None, c.problems

    page_id = c.string(data["id"], "id")
    if page_id and not ID_RE.match(page_id):
        c.fail(f"id {page_id!r} must be a lowercase slug (letters, digits, single hyphens)", "id")
    title = c.string(data["title"], "title")
    kind = c.choice(data["kind"], KINDS, "kind")
    scope = c.choice(data["scope"], SCOPES, "scope")
    status = c.choice(data["status"], STATUSES, "status")
    arch = tuple(a for i, a in enumerate(c.items(data, "arch")) if c.choice(a, ARCHS, "arch", i))
    page_tags = []
    for i, tag in enumerate(c.items(data, "tags")):
        if tag not in tags:
            c.fail(f"unknown tag {tag!r}; the closed list is in docs/knowledge/tags.yml", "tags", i)
        else:
            page_tags.append(tag)
    related = tuple(r for i, r in enumerate(c.items(data, "related")) if c.string(r, "related", i))
    sources = tuple(_source(c, item, i) for i, item in enumerate(c.items(data, "sources")))
    evidence = tuple(_evidence(c, item, i) for i, item in enumerate(c.items(data, "evidence")))
    verdicts = tuple(_verdict(c, item, i) for i, item in enumerate(c.items(data, "verdicts")))
    steps = tuple(_step(c, item, i) for i, item in enumerate(c.items(data, "steps")))
    if status in ("compile-verified", "run-verified") and not data.get("evidence"):
        c.fail(f"status {status!r} needs at least one evidence entry ({{kernel, config}})", "status")
    if c.problems or None in (page_id, title, kind, scope, status):
        return None, c.problems
    meta = PageMeta(
        id=page_id,
        title=title,
        kind=kind,
        scope=scope,
        arch=arch,
        tags=tuple(page_tags),
        status=status,
        related=related,
        sources=tuple(s for s in sources if s),
        evidence=tuple(e for e in evidence if e),
        verdicts=tuple(v for v in verdicts if v),
        steps=tuple(s for s in steps if s),
    )
    return meta, c.problems


def _source(c: _Checker, item: Any, i: int) -> SourceRef | None:
    if not c.mapping(item, ("path",), ("lines",), "sources", i):
        return None
    path = c.string(item["path"], "sources", i, "path")
    if path is None:
        return None
    if path.startswith("/") or ".." in path.split("/"):
        c.fail(f"sources[{i}].path {path!r} must be relative to the CUTLASS repository root", "sources", i, "path")
        return None
    lines = None
    if "lines" in item:
        match = LINES_RE.match(str(item["lines"]).strip())
        first, last = (int(match.group(1)), int(match.group(2) or match.group(1))) if match else (0, -1)
        if not match or first < 1 or last < first:
            c.fail(f"sources[{i}].lines {item['lines']!r} must be 'FIRST-LAST' or 'LINE' (1-based)", "sources", i, "lines")
            return None
        lines = (first, last)
    return SourceRef(path, lines)


def _evidence(c: _Checker, item: Any, i: int) -> EvidenceRef | None:
    if not c.mapping(item, ("kernel", "config"), (), "evidence", i):
        return None
    kernel = c.string(item["kernel"], "evidence", i, "kernel")
    config = c.string(item["config"], "evidence", i, "config")
    return EvidenceRef(kernel, config) if kernel and config else None


def _verdict(c: _Checker, item: Any, i: int) -> Verdict | None:
    if not c.mapping(item, ("pattern", "verdict", "note"), (), "verdicts", i):
        return None
    pattern = c.string(item["pattern"], "verdicts", i, "pattern")
    verdict = c.choice(item["verdict"], VERDICTS, "verdicts", i, "verdict")
    note = c.string(item["note"], "verdicts", i, "note")
    return Verdict(pattern, verdict, note) if pattern and verdict and note else None


def _step(c: _Checker, item: Any, i: int) -> Step | None:
    if not c.mapping(item, ("example", "goal"), (), "steps", i):
        return None
    example = c.string(item["example"], "steps", i, "example")
    goal = c.string(item["goal"], "steps", i, "goal")
    return Step(example, goal) if example and goal else None
