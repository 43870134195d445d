"""What the build adds to a hand-written page before Markdown conversion.

Directives become code, evidence and estimates; ``cutlass:`` links become links to the file at the
pinned commit; fences that include a snippet get a title (path and section) and the file's line
numbers; executable blocks get an id naming page and line (so a failing block is reported with both);
pages get a metadata line, CUTLASS source links, the learning-path progress table, the study-note
verdict table, the pattern's ledger and "Referenced by" backlinks.

An evidence callback that raises :class:`ClaimProblem` has its problem recorded with the page and line
(:attr:`RenderContext.claims`) and its ``shown`` Markdown put in place; the build decides whether
those problems warn or fail.
"""

from __future__ import annotations

import html
import importlib
import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from mla_var3.knowledge import layout
from mla_var3.knowledge.catalog import tag_anchor
from mla_var3.knowledge.checks import SECTION_MARKER_RE
from mla_var3.knowledge.citations import TARGET_RE, parse_link, resolve_path
from mla_var3.knowledge.directives import (
    Directive,
    EvidenceHooks,
    render_code,
    render_evidence_block,
    roofline_points,
)
from mla_var3.knowledge.errors import ClaimProblem, KnowledgeError, Problem
from mla_var3.knowledge.markdown_scan import SNIPPET_RE, Fence, section_heading, snippet_refs
from mla_var3.knowledge.pages import Page, Site
from mla_var3.knowledge.schema import PATTERN_KINDS
from mla_var3.knowledge.symbols import SymbolResolver
from mla_var3.knowledge.tables import markdown_table
from mla_var3.project import CutlassPin

EXEC_RE = re.compile(r'\bexec="(?:on|1|true|yes)"')
ID_OPTION_RE = re.compile(r'\bid="([^"]*)"')
HL_RE_OPTION = re.compile(r'\s*\bhl_re="([^"]*)"')
VERDICT_WORDS = {"confirms": "confirms", "refines": "refines", "contradicts": "**contradicts**"}


@dataclass
class RenderContext:
    site: Site
    symbols: SymbolResolver
    pin: CutlassPin
    evidence: EvidenceHooks | None
    backlinks: dict[str, list[str]]
    claims: list[Problem] = field(default_factory=list)  # claim problems met while rendering, page and line


def render_page(ctx: RenderContext, src: str, markdown: str) -> str:
    page = ctx.site.pages.get(src)
    if page is None:  # a generated page
        return markdown
    lines = markdown.splitlines()
    if tuple(lines) != page.lines:
        raise KnowledgeError([Problem(page.display, 0, "the page changed during the build; build again")])
    replace: dict[int, list[str]] = {}
    after: dict[int, list[str]] = defaultdict(list)
    before_first: list[str] = []

    _expand_directives(ctx, page, lines, replace)
    _rewrite_cutlass_links(ctx, page, lines, replace)
    for fence in page.fences:
        header = _fence_header(ctx, page, lines, fence)
        if header != lines[fence.start]:
            replace[fence.start] = [header]

    strip = _meta_strip(ctx, page)
    h1 = next((h.index for h in page.headings if h.level == 1), None)
    if h1 is None:
        before_first += strip
    else:
        after[h1] += ["", *strip]
    sources = _sources_block(ctx, page)
    if sources:
        source_heading = section_heading(page.headings, "Source")
        if source_heading is not None:
            after[_section_end(page, source_heading)] += ["", *sources]
        else:
            (before_first if h1 is None else after[h1]).extend(sources)
    if page.meta and page.meta.kind == "path":
        after[_section_end(page, section_heading(page.headings, "Progress"))] += ["", *_progress_table(ctx, page)]
    if page.meta and page.meta.kind == "study-note":
        end = _section_end(page, section_heading(page.headings, "Cross-reference verdicts"))
        after[end] += ["", *_verdict_table(ctx, page)]

    out = list(before_first)
    for i, line in enumerate(lines):
        out.extend(replace.get(i, [line]))
        out.extend(after.get(i, []))
    if page.meta and page.meta.kind in PATTERN_KINDS:
        out += ["", *_ledger(ctx, page)]
    out += ["", *_referenced_by(ctx, page)]
    return "\n".join(out) + "\n"


def _section_end(page: Page, heading_index: int | None) -> int:
    """The last line of the section that starts at ``heading_index`` (before the next heading of its level or above)."""
    assert heading_index is not None  # required sections are checked before rendering
    level = next(h.level for h in page.headings if h.index == heading_index)
    later = [h.index for h in page.headings if h.index > heading_index and h.level <= level]
    return (later[0] if later else len(page.lines)) - 1


def _rewrite_cutlass_links(ctx: RenderContext, page: Page, lines: list[str], replace: dict[int, list[str]]) -> None:
    """``cutlass:`` link targets become URLs of the file at the pinned commit (the checks resolved them already)."""
    for index in sorted({c.index for c in page.citations}):
        replace[index] = [_cutlass_urls(ctx, page, line) for line in replace.get(index, [lines[index]])]


def _cutlass_urls(ctx: RenderContext, page: Page, text: str) -> str:
    """``text`` with its ``cutlass:`` targets resolved against ``page``'s sources and made URLs."""
    sources = [s.path for s in page.meta.sources] if page.meta else []

    def url(match: re.Match[str]) -> str:
        link = parse_link(match.group("target"))
        return ctx.pin.blob_url(resolve_path(link, sources), link.lines)

    return TARGET_RE.sub(url, text)


def _expand_directives(ctx: RenderContext, page: Page, lines: list[str], replace: dict[int, list[str]]) -> None:
    inline: dict[int, list[Directive]] = defaultdict(list)
    for directive in page.directives:
        if not directive.block:
            inline[directive.index].append(directive)
            continue
        block = _block_directive(ctx, page, directive)
        replace[directive.index] = [directive.indent + line if line else "" for line in block]
    for index, found in inline.items():
        line = lines[index]
        for directive in sorted(found, key=lambda d: d.span[0], reverse=True):
            start, end = directive.span
            line = line[:start] + _value_directive(ctx, page, directive) + line[end:]
        replace[index] = [line]


def _block_directive(ctx: RenderContext, page: Page, directive: Directive) -> list[str]:
    params = directive.params
    if directive.name == "code":
        try:
            symbol = ctx.symbols.resolve(params["symbol"])
        except LookupError as error:
            raise KnowledgeError([Problem(page.display, page.file_line(directive.index), f"{directive.text}: {error}")]) from None
        # Section markers (`# --8<-- [start:name]`) would be dropped by pymdownx.snippets, shifting every
        # later line against its number and its highlight: show them as blank lines instead.
        lines = ["" if SECTION_MARKER_RE.search(line) else line for line in symbol.source.splitlines()]
        symbol = replace(symbol, source="\n".join(lines))
        hl_lines = params.get("hl_lines")
        if "hl_re" in params:
            where = f"{page.display}:{page.file_line(directive.index)}"
            hl_lines = highlight_lines(symbol.source.splitlines(), params["hl_re"], where)
        return render_code(symbol, hl_lines, params.get("title"))
    if directive.name in ("speedup", "estimate") or (directive.name == "evidence" and "field" in params):
        return [_value_directive(ctx, page, directive)]
    guide = _guide_link(ctx, page)
    if directive.retired:
        return [_claim(ctx, page, directive, directive.retired)]
    if directive.name == "roofline":
        points = [(p[0], p[1]) for p in roofline_points(params["points"])]
        hook = ctx.evidence.roofline if ctx.evidence else None
        return [_call_evidence(ctx, page, directive, hook, points)]
    if directive.name == "compare":
        hook = ctx.evidence.compare if ctx.evidence else None
        markdown = _call_evidence(ctx, page, directive, hook, params["group"], params["config"])
        data = {"group": params["group"], "config": params["config"]}
        return render_evidence_block(markdown, "evidence-block evidence-compare", data, guide)
    hook = ctx.evidence.block if ctx.evidence else None
    markdown = _call_evidence(ctx, page, directive, hook, params["kernel"], params["config"])
    return render_evidence_block(markdown, "evidence-block", {"kernel": params["kernel"], "config": params["config"]}, guide)


def _value_directive(ctx: RenderContext, page: Page, directive: Directive) -> str:
    params = directive.params
    if directive.name == "estimate":
        return _estimate(page, directive)
    if directive.retired:
        return _claim(ctx, page, directive, directive.retired)
    if directive.name == "speedup":
        hook = ctx.evidence.speedup if ctx.evidence else None
        return _call_evidence(ctx, page, directive, hook, params["group"], params["config"], params["member"]).strip()
    hook = ctx.evidence.value if ctx.evidence else None
    return _call_evidence(ctx, page, directive, hook, params["kernel"], params["config"], params["field"]).strip()


def _call_evidence(ctx: RenderContext, page: Page, directive: Directive, render: Callable[..., str] | None, *args: object) -> str:
    """Run an evidence callback. A :class:`ClaimProblem` is recorded and its ``shown`` text used; any other
    failure (a field no record has, a malformed record) stops the build naming page and line."""
    if render is None:
        return _claim(ctx, page, directive, f"no evidence renderer for {directive.name}() in this build (see hooks/evidence.py)")
    try:
        return render(*args)
    except ClaimProblem as problem:
        ctx.claims.append(Problem(page.display, page.file_line(directive.index), f"{directive.text}: {problem.message}"))
        return problem.shown
    except Exception as error:  # the evidence layer's errors are its own types; report any with the page
        message = f"{directive.text}: {type(error).__name__}: {error}"
        raise KnowledgeError([Problem(page.display, page.file_line(directive.index), message)]) from error


def _claim(ctx: RenderContext, page: Page, directive: Directive, message: str) -> str:
    """Record a claim the page cannot make, and show it marked in its place."""
    ctx.claims.append(Problem(page.display, page.file_line(directive.index), f"{directive.text}: {message}"))
    return f'<span class="ev-value ev-stale" title="{html.escape(message)}">unavailable: {html.escape(message)}</span>'


def _estimate(page: Page, directive: Directive) -> str:
    """Call the CPU snippet's function; it returns the text to show, marked as an estimate."""
    module_name, _, function = directive.params["function"].partition(":")
    line = page.file_line(directive.index)
    try:
        value = getattr(importlib.import_module(module_name), function)(*directive.call_args, **directive.call_kwargs)
    except Exception as error:  # the snippet's own failure, reported with the page
        raise KnowledgeError([Problem(page.display, line, f"{directive.text}: {type(error).__name__}: {error}")]) from error
    if not isinstance(value, str) or not value.strip():
        message = f"{directive.text}: the function must return the text to show (a non-empty str), got {value!r}"
        raise KnowledgeError([Problem(page.display, line, message)])
    title = f"Estimate computed at build time by {directive.params['function']}"
    return f'<span class="ev-estimate" title="{html.escape(title)}">≈ {html.escape(value.strip())}</span>'


def _guide_link(ctx: RenderContext, page: Page) -> str | None:
    """The relative link from ``page`` to the page that explains evidence blocks (if the site has one)."""
    if layout.EVIDENCE_GUIDE not in ctx.site.pages:
        return None
    return layout.relative_link(page.src, layout.EVIDENCE_GUIDE)


def _fence_header(ctx: RenderContext, page: Page, lines: list[str], fence: Fence) -> str:
    header = lines[fence.start]
    info = fence.info
    language = info.split(" ", 1)[0] if info else ""
    if not language or language.startswith(("{", ".")):
        return header
    where = f"{page.display}:{page.file_line(fence.start)}"
    extra: list[str] = []
    if EXEC_RE.search(info):
        found = ID_OPTION_RE.search(info)
        if found:
            info = ID_OPTION_RE.sub(f'id="{where} {found.group(1)}"', info, count=1)
        else:
            extra.append(f'id="{where}"')
    body = lines[fence.start + 1 : fence.end]
    refs = snippet_refs(body)
    included: list[str] | None = None
    if body and len(refs) == len(body) and all(SNIPPET_RE.match(line) for line in body):  # only include lines
        parts = [_snippet_body(ctx.site.repo_root / ref.path, ref.section) for ref in refs]
        included = [line for _, part in parts for line in part]
        if "title=" not in info and len({ref.path for ref in refs}) == 1:
            sections = " + ".join(ref.section for ref in refs if ref.section)
            extra.append(f'title="{refs[0].path}' + (f' · {sections}"' if sections else '"'))
        if "linenums=" not in info and len(parts) == 1 and parts[0][0] is not None:
            extra.append(f'linenums="{parts[0][0]}"')
    hl_re = HL_RE_OPTION.search(info)
    if hl_re:
        if included is None:
            raise KnowledgeError([Problem(page.display, page.file_line(fence.start),
                                          "hl_re works on a fence whose lines all include snippets")])
        info = HL_RE_OPTION.sub("", info).strip()
        extra.append(f'hl_lines="{highlight_lines(included, hl_re.group(1), where)}"')
    if not extra and info == fence.info:
        return header
    return f"{fence.indent}{fence.marker}{' '.join([info, *extra])}"


def highlight_lines(lines: list[str], pattern: str, where: str) -> str:
    """``hl_lines`` for the lines (1-based) that match ``pattern``, so highlights follow code edits."""
    try:
        regex = re.compile(pattern)
    except re.error as error:
        raise KnowledgeError([Problem(where, 0, f"hl_re {pattern!r} is not a regular expression ({error})")]) from None
    found = [str(i) for i, line in enumerate(lines, start=1) if regex.search(line)]
    if not found:
        raise KnowledgeError([Problem(where, 0, f"hl_re {pattern!r} matches no line of the embedded code")])
    return " ".join(found)


def _snippet_body(path: Path, section: str | None) -> tuple[int | None, list[str]]:
    """The lines pymdownx.snippets includes, and the file line of the first (``None`` if nested
    section markers, which snippets drops, would make file numbering wrong)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    if section is None:
        return 1, lines
    start = end = None
    for i, line in enumerate(lines):
        match = SECTION_MARKER_RE.search(line)
        if match and match.group("name") == section:
            if match.group("edge").lower() == "start" and start is None:
                start = i
            elif match.group("edge").lower() == "end" and start is not None:
                end = i
                break
    if start is None or end is None:
        return None, []
    inner = lines[start + 1 : end]
    kept = [line for line in inner if not SECTION_MARKER_RE.search(line)]
    return (start + 2 if len(kept) == len(inner) else None), kept


def _meta_strip(ctx: RenderContext, page: Page) -> list[str]:
    meta = page.meta
    if meta is None:
        return []
    ids = ctx.site.by_id()
    parts = [f"**{meta.kind}**", "CuTe DSL" if meta.scope == "cute-dsl" else "shared"]
    if meta.arch:
        parts.append(" ".join(f"`{a}`" for a in meta.arch))
    parts.append(f"status: **{meta.status}**")
    if meta.tags:
        tags = ", ".join(f"[{t}]({layout.relative_link(page.src, layout.TAG_INDEX, tag_anchor(t))})" for t in meta.tags)
        parts.append(f"tags: {tags}")
    if meta.related:
        related = ", ".join(f"[{ids[r].title}]({layout.relative_link(page.src, ids[r].src)})" for r in meta.related if r in ids)
        parts.append(f"related: {related}")
    return [" · ".join(parts), ""]


def _sources_block(ctx: RenderContext, page: Page) -> list[str]:
    if page.meta is None or not page.meta.sources:
        return []
    pin = ctx.pin
    out = [f"CUTLASS at the pinned commit [`{pin.short}`]({pin.repository}/tree/{pin.commit}) (`third_party/cutlass.lock`):", ""]
    out += [f"- [`{s.label()}`]({pin.blob_url(s.path, s.lines)})" for s in page.meta.sources]
    return [*out, ""]


def _progress_table(ctx: RenderContext, page: Page) -> list[str]:
    cites: dict[str, list[Page]] = defaultdict(list)
    for other in ctx.site.knowledge_pages():
        for source in other.meta.sources:
            if other not in cites[source.path]:
                cites[source.path].append(other)
    rows = []
    noted = 0
    for number, step in enumerate(page.meta.steps, start=1):
        citing = cites.get(step.example, [])
        notes = [p for p in citing if p.meta.kind == "study-note"]
        patterns = [p for p in citing if p.meta.kind in PATTERN_KINDS]
        devlogs = [p for p in citing if p.meta.kind == "devlog"]
        noted += bool(notes)
        example = f"[`{step.example.rsplit('/', 1)[-1]}`]({ctx.pin.blob_url(step.example)})"
        note_cell = ", ".join(f"{_link(page, p)} ({p.meta.status})" for p in notes) or "not yet"
        rows.append((number, example, step.goal, note_cell, ", ".join(_link(page, p) for p in patterns) or "—",
                     ", ".join(_link(page, p) for p in devlogs) or "—"))  # fmt: skip
    total = len(page.meta.steps)
    header = ("#", "CUTLASS example", "Goal", "Study note", "Patterns citing it", "Devlogs")
    return [*markdown_table(header, rows), "", f"**Progress: {noted} of {total} step(s) have a study note.** (Generated from the pages' `sources`.)", ""]


def _verdict_table(ctx: RenderContext, page: Page) -> list[str]:
    ids = ctx.site.by_id()
    if not page.meta.verdicts:
        return ["No verdicts recorded yet (add them under `verdicts:` in the front matter).", ""]
    rows = [(_link(page, ids[v.pattern]), VERDICT_WORDS[v.verdict], _cutlass_urls(ctx, page, v.note)) for v in page.meta.verdicts]
    return [*markdown_table(("Pattern", "Verdict", "Note"), rows), ""]


def _ledger(ctx: RenderContext, page: Page) -> list[str]:
    rows = [
        (_link(page, note), VERDICT_WORDS[v.verdict], _cutlass_urls(ctx, note, v.note))
        for note in ctx.site.knowledge_pages("study-note")
        for v in note.meta.verdicts
        if v.pattern == page.meta.id
    ]
    out = ["## Study-note ledger", ""]
    if not rows:
        return [*out, "No study note has judged this pattern yet.", ""]
    return [*out, *markdown_table(("Study note", "Verdict", "Note"), rows), ""]


def _referenced_by(ctx: RenderContext, page: Page) -> list[str]:
    out = ["## Referenced by", ""]
    sources = ctx.backlinks.get(page.src, [])
    if not sources:
        return [*out, "Nothing links here yet.", ""]
    return [*out, *(f"- {_link(page, ctx.site.pages[src])}" for src in sources), ""]


def _link(here: Page, target: Page) -> str:
    return f"[{target.title}]({layout.relative_link(here.src, target.src)})"
