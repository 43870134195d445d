"""What the build adds to a hand-written page before Markdown conversion.

Directives become code and evidence; fences that include a snippet get a title (path and section)
and the file's line numbers; executable blocks get an id naming page and line (so a failing block
is reported with both); pages get a metadata line, CUTLASS source links, the learning-path progress
table, the study-note verdict table, the pattern's ledger and "Referenced by" backlinks.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from mla_var3.knowledge import layout
from mla_var3.knowledge.catalog import tag_anchor
from mla_var3.knowledge.checks import SECTION_MARKER_RE
from mla_var3.knowledge.cutlass_pin import CutlassPin
from mla_var3.knowledge.directives import (
    Directive,
    EvidenceHooks,
    render_code,
    render_evidence_block,
    roofline_points,
)
from mla_var3.knowledge.errors import KnowledgeError, Problem
from mla_var3.knowledge.markdown_scan import SNIPPET_RE, Fence, fences, section_heading, snippet_refs
from mla_var3.knowledge.pages import Page, Site
from mla_var3.knowledge.schema import PATTERN_KINDS
from mla_var3.knowledge.symbols import SymbolResolver

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
    for fence in fences(lines):
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
        source_heading = section_heading(lines, "Source")
        if source_heading is not None:
            after[_section_end(page, source_heading)] += ["", *sources]
        else:
            (before_first if h1 is None else after[h1]).extend(sources)
    if page.meta and page.meta.kind == "path":
        after[_section_end(page, section_heading(lines, "Progress"))] += ["", *_progress_table(ctx, page)]
    if page.meta and page.meta.kind == "study-note":
        end = _section_end(page, section_heading(lines, "Cross-reference verdicts"))
        after[end] += ["", *_verdict_table(ctx, page)]

    out = list(before_first)
    for i, line in enumerate(lines):
        out.extend(replace.get(i, [line]))
        out.extend(after.get(i, []))
    if page.meta and page.meta.kind in PATTERN_KINDS:
        out += ["", *_ledger(ctx, page)]
    out += ["", *_referenced_by(ctx, page)]
    return "\n".join(out) + "\n"


def _section_end(page: Page, heading_index: int) -> int:
    """The last line of the section that starts at ``heading_index`` (before the next heading of its level or above)."""
    level = next(h.level for h in page.headings if h.index == heading_index)
    later = [h.index for h in page.headings if h.index > heading_index and h.level <= level]
    return (later[0] if later else len(page.lines)) - 1


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
        hl_lines = params.get("hl_lines")
        if "hl_re" in params:
            where = f"{page.display}:{page.file_line(directive.index)}"
            hl_lines = highlight_lines(symbol.source.splitlines(), params["hl_re"], where)
        return render_code(symbol, hl_lines, params.get("title"))
    if "field" in params:
        return [_value_directive(ctx, page, directive)]
    if directive.name == "roofline":
        points = roofline_points(params["points"])
        if ctx.evidence is None or ctx.evidence.roofline is None:
            return ["*No evidence renderer in this build for the roofline.*"]
        return [_call_evidence(page, directive, ctx.evidence.roofline, points)]
    if directive.name == "compare":
        kernels = [k.strip() for k in params["kernels"].split(",")]
        if ctx.evidence is None or ctx.evidence.compare is None:
            return [f"*No evidence renderer in this build for the comparison of {', '.join(kernels)}.*"]
        markdown = _call_evidence(page, directive, ctx.evidence.compare, kernels, params["config"])
        return ['<div class="evidence-compare" markdown>', "", *markdown.splitlines(), "", "</div>"]
    if ctx.evidence is None:
        markdown = _no_evidence(params)
    else:
        markdown = _call_evidence(page, directive, ctx.evidence.block, params["kernel"], params["config"])
    return render_evidence_block(markdown, params["kernel"], params["config"])


def _value_directive(ctx: RenderContext, page: Page, directive: Directive) -> str:
    params = directive.params
    if ctx.evidence is None:
        return f"*({params['kernel']}/{params['config']}/{params['field']}: no evidence renderer)*"
    if "over" in params:
        if ctx.evidence.ratio is None:
            return f"*({params['kernel']}/{params['over']}: no ratio renderer)*"
        a, b = (params["kernel"], params["config"]), (params["over"], params["config"])
        return _call_evidence(page, directive, ctx.evidence.ratio, a, b, params["field"]).strip()
    return _call_evidence(page, directive, ctx.evidence.value, params["kernel"], params["config"], params["field"]).strip()


def _call_evidence(page: Page, directive: Directive, render: Callable[..., str], *args: str) -> str:
    """Run an evidence callback; its failure (a field no record has, a malformed record) names page and line."""
    try:
        return render(*args)
    except Exception as error:  # the evidence layer's errors are its own types; report any with the page
        message = f"{directive.text}: {type(error).__name__}: {error}"
        raise KnowledgeError([Problem(page.display, page.file_line(directive.index), message)]) from error


def _no_evidence(params: dict[str, str]) -> str:
    return f"*No evidence renderer in this build for `{params['kernel']}` / `{params['config']}`.*"


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
    if len(body) == 1 and len(refs) == 1 and SNIPPET_RE.match(body[0]):
        ref = refs[0]
        first, included = _snippet_body(ctx.site.repo_root / ref.path, ref.section)
        if "title=" not in info:
            extra.append(f'title="{ref.path}' + (f' · {ref.section}"' if ref.section else '"'))
        if "linenums=" not in info and first is not None:
            extra.append(f'linenums="{first}"')
    hl_re = HL_RE_OPTION.search(info)
    if hl_re:
        if included is None:
            raise KnowledgeError([Problem(page.display, page.file_line(fence.start),
                                          "hl_re works on a fence whose only line includes a snippet")])
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
    out = ["| # | CUTLASS example | Goal | Study note | Patterns citing it | Devlogs |", "|---|---|---|---|---|---|"]
    noted = 0
    for number, step in enumerate(page.meta.steps, start=1):
        citing = cites.get(step.example, [])
        notes = [p for p in citing if p.meta.kind == "study-note"]
        patterns = [p for p in citing if p.meta.kind in PATTERN_KINDS]
        devlogs = [p for p in citing if p.meta.kind == "devlog"]
        noted += bool(notes)
        example = f"[`{step.example.rsplit('/', 1)[-1]}`]({ctx.pin.blob_url(step.example)})"
        note_cell = ", ".join(f"{_link(page, p)} ({p.meta.status})" for p in notes) or "not yet"
        out.append(
            f"| {number} | {example} | {step.goal} | {note_cell} | "
            f"{', '.join(_link(page, p) for p in patterns) or '—'} | {', '.join(_link(page, p) for p in devlogs) or '—'} |"
        )
    total = len(page.meta.steps)
    return [*out, "", f"**Progress: {noted} of {total} step(s) have a study note.** (Generated from the pages' `sources`.)", ""]


def _verdict_table(ctx: RenderContext, page: Page) -> list[str]:
    ids = ctx.site.by_id()
    if not page.meta.verdicts:
        return ["No verdicts recorded yet (add them under `verdicts:` in the front matter).", ""]
    out = ["| Pattern | Verdict | Note |", "|---|---|---|"]
    out += [f"| {_link(page, ids[v.pattern])} | {VERDICT_WORDS[v.verdict]} | {v.note} |" for v in page.meta.verdicts]
    return [*out, ""]


def _ledger(ctx: RenderContext, page: Page) -> list[str]:
    rows = [
        f"| {_link(page, note)} | {VERDICT_WORDS[v.verdict]} | {v.note} |"
        for note in ctx.site.knowledge_pages("study-note")
        for v in note.meta.verdicts
        if v.pattern == page.meta.id
    ]
    out = ["## Study-note ledger", ""]
    if not rows:
        return [*out, "No study note has judged this pattern yet.", ""]
    return [*out, "| Study note | Verdict | Note |", "|---|---|---|", *rows, ""]


def _referenced_by(ctx: RenderContext, page: Page) -> list[str]:
    out = ["## Referenced by", ""]
    sources = ctx.backlinks.get(page.src, [])
    if not sources:
        return [*out, "Nothing links here yet.", ""]
    return [*out, *(f"- {_link(page, ctx.site.pages[src])}" for src in sources), ""]


def _link(here: Page, target: Page) -> str:
    title = target.title.replace("|", r"\|")
    return f"[{title}]({layout.relative_link(here.src, target.src)})"
