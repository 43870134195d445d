"""The page directives, written ``{{ name("arg", key="value") }}``, and the callbacks that fill evidence ones.

* ``{{ code("package.module:Qualified.name") }}`` -- alone on a line: the symbol's source as a fenced
  block titled with its path and lines (options ``hl_lines="2 4-6"``, ``hl_re="regex"`` -- highlights
  the lines matching it, so it follows edits of the code -- and ``title="..."``).
* ``{{ evidence("kernel", "config") }}`` -- alone on a line: the evidence block of that record.
* ``{{ evidence("kernel", "config", "timing.median_us") }}`` -- inline: one value from it.
* ``{{ speedup("group", "config", "member") }}`` -- inline: the member's speedup over the group's
  reference member (``t_reference / t_member``), with its interval and verdict, from the group's record.
* ``{{ compare("group", "config") }}`` -- alone on a line: the comparison table of a group's record
  (every member timed in one process on one GPU).
* ``{{ roofline("kernel/config, kernel/config") }}`` -- alone on a line: a roofline figure of run records,
  each point against the ceilings measured in its own run.
* ``{{ estimate("snippets.cpu.module:function", 8192, dtype="bf16") }}`` -- inline: a number a CPU
  snippet computes at build time (a prediction, a back-of-envelope roofline), shown marked as an
  estimate. Its arguments are Python literals passed to the function, which returns the text to show.

Arguments are Python literals (strings, except ``estimate``'s own). Directives inside fenced blocks
or inline code are left as they are, so pages can show the syntax. Ratios come only from comparison
groups: the retired forms ``evidence(..., over=...)`` and ``compare("k1,k2", ...)`` are found and
reported (``lint`` fails; the build shows a marked placeholder and records a claim problem).

The knowledge layer parses and lays out directives; what fills an evidence directive is an
:class:`EvidenceHooks` callback the site configuration takes from ``mla_var3.evidence``.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mla_var3.knowledge.markdown_scan import prose_lines

if TYPE_CHECKING:
    from mla_var3.knowledge.symbols import CodeSymbol

DIRECTIVE_RE = re.compile(r"\{\{\s*(?P<name>[A-Za-z_]\w*)\s*\((?P<args>.*?)\)\s*\}\}")
ESTIMATE_SPEC_RE = re.compile(r"^snippets\.cpu\.[A-Za-z_][\w.]*:[A-Za-z_]\w*$")


@dataclass(frozen=True)
class Signature:
    positional: tuple[str, ...]
    required: int
    options: tuple[str, ...] = ()
    placement: str = "any"  # "block": alone on its line; "inline": in prose; "any"
    shape: str = ""  # how to write it, for messages


SIGNATURES: dict[str, Signature] = {
    "code": Signature(("symbol",), 1, ("hl_lines", "hl_re", "title"), "block", 'code("package.module:Name")'),
    "evidence": Signature(("kernel", "config", "field"), 2, (), "any", 'evidence("kernel", "config"[, "field"])'),
    "speedup": Signature(("group", "config", "member"), 3, (), "inline", 'speedup("group", "config", "member")'),
    "compare": Signature(("group", "config"), 2, (), "block", 'compare("group", "config")'),
    "roofline": Signature(("points",), 1, (), "block", 'roofline("kernel/config, ...")'),
    "estimate": Signature(("function",), 1, (), "inline", 'estimate("snippets.cpu.module:function", ...)'),
}
ATTEMPT_RE = re.compile(r"\{\{\s*(?P<name>" + "|".join(SIGNATURES) + r")\b")
EVIDENCE_NAMES = ("evidence", "speedup", "compare", "roofline")

RETIRED_RATIO = "ratios come only from comparison groups: use speedup(\"group\", \"config\", \"member\")"
RETIRED_COMPARE = ('compare() takes a comparison group, not a list of kernels: compare("group", "config") '
                   "(members of a group are timed in one process on one GPU)")  # fmt: skip


@dataclass(frozen=True)
class Directive:
    name: str
    params: dict[str, str]
    index: int  # body line
    span: tuple[int, int]  # columns of the directive text in that line
    block: bool  # alone on its line
    indent: str
    source: str  # the directive as written
    retired: str | None = None  # why a retired form can no longer render (lint fails, the build marks it)
    call_args: tuple[Any, ...] = ()  # estimate(): the function's arguments
    call_kwargs: dict[str, Any] = field(default_factory=dict)

    @property
    def text(self) -> str:
        return self.source


@dataclass(frozen=True)
class EvidenceHooks:
    """How evidence directives become Markdown; the evidence layer supplies these (``hooks/evidence.py``).

    A callback that cannot render a claim honestly (a missing, failed or stale record, a ratio across
    runs) raises :class:`~mla_var3.knowledge.errors.ClaimProblem` with what to show instead; any other
    exception stops the build naming the page and line.
    """

    block: Callable[[str, str], str]  # (kernel, config) -> Markdown block
    value: Callable[[str, str, str], str]  # (kernel, config, field) -> inline HTML
    roofline: Callable[[list[tuple[str, str]]], str]  # [(kernel, config), ...] -> Markdown block
    speedup: Callable[[str, str, str], str] | None = None  # (group, config, member) -> inline HTML
    compare: Callable[[str, str], str] | None = None  # (group, config) -> Markdown block


def roofline_points(points: str) -> list[tuple[str, ...]]:
    """``"k/c, k2/c2"`` -> ``[("k", "c"), ("k2", "c2")]`` (a malformed point keeps its parts, for the message)."""
    return [tuple(p.strip().split("/")) for p in points.split(",") if p.strip()]


def find_directives(lines: Sequence[str], mask: Sequence[bool] | None = None) -> tuple[list[Directive], list[tuple[int, str]]]:
    """Directives in prose (outside code), and ``(line index, message)`` for malformed ones."""
    found: list[Directive] = []
    errors: list[tuple[int, str]] = []
    for index, line in prose_lines(lines, mask):
        matched_spans = []
        for match in DIRECTIVE_RE.finditer(line):
            name = match.group("name")
            if name not in SIGNATURES:
                errors.append((index, f"unknown directive {{{{ {name}(...) }}}}; known: {', '.join(sorted(SIGNATURES))}"))
                continue
            matched_spans.append(match.span())
            block = not (line[: match.start()].strip() or line[match.end() :].strip())
            try:
                directive = _directive(name, match, index, block, line)
            except ValueError as error:
                errors.append((index, f"{match.group(0)}: {error}"))
                continue
            found.append(directive)
        for attempt in ATTEMPT_RE.finditer(line):
            if not any(start <= attempt.start() < end for start, end in matched_spans):
                errors.append((index, f"malformed directive near {line[attempt.start():].strip()[:60]!r}; "
                               'write it as {{ name("arg", ...) }} on one line'))
    return found, errors


def _directive(name: str, match: re.Match[str], index: int, block: bool, line: str) -> Directive:
    signature = SIGNATURES[name]
    call = _call(match.group("args"))
    retired = None
    if name == "evidence" and any(k.arg == "over" for k in call.keywords):
        call.keywords = [k for k in call.keywords if k.arg != "over"]
        retired = RETIRED_RATIO
    if name == "estimate":
        params, args, kwargs = _estimate_params(call)
    else:
        params, args, kwargs = _string_params(name, signature, call), (), {}
    if name == "compare" and "," in params["group"]:
        retired = RETIRED_COMPARE
    if signature.placement == "block" and not block:
        raise ValueError(f"{name}() is a block: put {signature.shape} alone on its line")
    if name == "evidence" and "field" not in params and not block and not retired:
        raise ValueError('evidence("kernel", "config") is a block: put it alone on its line (give a field for a value)')
    indent = line[: len(line) - len(line.lstrip())]
    return Directive(name, params, index, match.span(), block, indent, match.group(0), retired, args, kwargs)


def _call(args: str) -> ast.Call:
    try:
        call = ast.parse(f"_({args})", mode="eval").body
    except SyntaxError:
        raise ValueError("arguments must be Python literals separated by commas") from None
    assert isinstance(call, ast.Call)
    return call


def _string_params(name: str, signature: Signature, call: ast.Call) -> dict[str, str]:
    positional, keywords = signature.positional, signature.options
    params: dict[str, str] = {}
    if len(call.args) > len(positional):
        raise ValueError(f"{name}() takes at most {len(positional)} positional arguments ({', '.join(positional)})")
    for param, node in zip(positional, call.args, strict=False):
        params[param] = _string(node, param)
    for keyword in call.keywords:
        if keyword.arg is None or keyword.arg not in positional + keywords:
            allowed = ", ".join(positional + keywords)
            raise ValueError(f"{name}() has no argument {keyword.arg!r} (arguments: {allowed})")
        if keyword.arg in params:
            raise ValueError(f"{name}() got {keyword.arg!r} twice")
        params[keyword.arg] = _string(keyword.value, keyword.arg)
    missing = [p for p in positional[: signature.required] if p not in params]
    if missing:
        raise ValueError(f"{name}() needs {', '.join(missing)}")
    return params


def _estimate_params(call: ast.Call) -> tuple[dict[str, str], tuple[Any, ...], dict[str, Any]]:
    if not call.args:
        raise ValueError('estimate() needs the function: estimate("snippets.cpu.module:function", ...)')
    spec = _string(call.args[0], "function")
    if not ESTIMATE_SPEC_RE.match(spec):
        raise ValueError(f"estimate() computes with a CPU snippet: {spec!r} must be 'snippets.cpu.<module>:<function>'")
    try:
        args = tuple(ast.literal_eval(node) for node in call.args[1:])
        kwargs = {str(k.arg): ast.literal_eval(k.value) for k in call.keywords}
    except ValueError:
        raise ValueError("estimate()'s arguments must be Python literals (numbers, strings)") from None
    if any(k.arg is None for k in call.keywords):
        raise ValueError("estimate() takes no **kwargs")
    return {"function": spec}, args, kwargs


def _string(node: ast.expr, param: str) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.strip():
        return node.value.strip()
    raise ValueError(f"{param} must be a non-empty string literal")


def render_code(symbol: CodeSymbol, hl_lines: str | None = None, title: str | None = None) -> list[str]:
    """A fenced block of the symbol's source, titled with its path and line span, numbered like the file."""
    heading = title or f"{symbol.path}:{symbol.first_line}-{symbol.last_line} · {symbol.spec.partition(':')[2]}"
    options = [f'title="{_attr(heading)}"', f'linenums="{symbol.first_line}"']
    if hl_lines:
        options.append(f'hl_lines="{_attr(hl_lines)}"')
    return [f"```python {' '.join(options)}", *symbol.source.splitlines(), "```"]


def render_evidence_block(markdown: str, css: str, data: dict[str, str], guide: str | None) -> list[str]:
    """Evidence Markdown inside a marked container (styles and the browser test find it by class), with a
    link to the page that explains how to read it."""
    attrs = " ".join(f'data-{k}="{_attr(v)}"' for k, v in data.items())
    footer = ["", f"[How to read an evidence block]({guide}){{ .evidence-guide-link }}"] if guide else []
    return [f'<div class="{css}" {attrs} markdown>', "", *markdown.rstrip("\n").splitlines(), *footer, "", "</div>"]


def _attr(text: str) -> str:
    return text.replace("&", "&amp;").replace('"', "&quot;")
