"""The page directives: code by symbol and evidence, written ``{{ name("arg", key="value") }}``.

* ``{{ code("package.module:Qualified.name") }}`` -- alone on a line: the symbol's source as a
  fenced block titled with its path and lines (options ``hl_lines="2 4-6"`` or ``hl_re="regex"``,
  which highlights the lines matching it and so follows edits of the code, and ``title="..."``).
* ``{{ evidence("kernel", "config") }}`` -- alone on a line: the evidence table of that record.
* ``{{ evidence("kernel", "config", "timing.median_us") }}`` -- inline: one number from it.
* ``{{ evidence("kernel", "config", "tflops", over="baseline") }}`` -- inline: the ratio of that
  field between two kernels' records at the same config (a speed-up).
* ``{{ compare("kernel_a,kernel_b", "config") }}`` -- alone on a line: the workflow's comparison
  table (time, TC %, DRAM %, occupancy, registers, SMEM) from the records, ``kernel_a`` the baseline.
* ``{{ roofline("kernel/config, kernel/config") }}`` -- alone on a line: a roofline plot (SVG made at
  build time) of those run records against the ceilings measured in their runs.

Arguments are Python string literals. Directives inside fenced blocks or inline code are left
as they are, so pages can show the syntax. The knowledge layer parses and lays out directives;
what fills an evidence directive is a callback the MkDocs hook takes from ``mla_var3.evidence``.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from mla_var3.knowledge.markdown_scan import prose_lines
from mla_var3.knowledge.symbols import CodeSymbol

DIRECTIVE_RE = re.compile(r"\{\{\s*(?P<name>[A-Za-z_]\w*)\s*\((?P<args>.*?)\)\s*\}\}")
ATTEMPT_RE = re.compile(r"\{\{\s*(?P<name>code|evidence|compare|roofline)\b")

# name -> (positional parameters, how many are required, keyword-only options)
SIGNATURES: dict[str, tuple[tuple[str, ...], int, tuple[str, ...]]] = {
    "code": (("symbol",), 1, ("hl_lines", "hl_re", "title")),
    "evidence": (("kernel", "config", "field"), 2, ("over",)),
    "compare": (("kernels", "config"), 2, ()),
    "roofline": (("points",), 1, ()),
}


@dataclass(frozen=True)
class Directive:
    name: str
    params: dict[str, str]
    index: int  # body line
    span: tuple[int, int]  # columns of the directive text in that line
    block: bool  # alone on its line
    indent: str

    @property
    def text(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"{{{{ {self.name}({args}) }}}}"


@dataclass(frozen=True)
class EvidenceHooks:
    """How evidence directives become Markdown (the hook passes ``mla_var3.evidence.render``)."""

    block: Callable[[str, str], str]
    value: Callable[[str, str, str], str]
    ratio: Callable[[tuple[str, str], tuple[str, str], str], str] | None = None
    compare: Callable[[list[str], str], str] | None = None
    roofline: Callable[[list[tuple[str, str]]], str] | None = None


def roofline_points(points: str) -> list[tuple[str, str]]:
    """``"k/c, k2/c2"`` -> ``[("k", "c"), ("k2", "c2")]``."""
    return [tuple(p.strip().split("/", 1)) for p in points.split(",") if p.strip()]  # type: ignore[misc]


def find_directives(lines: Sequence[str]) -> tuple[list[Directive], list[tuple[int, str]]]:
    """Directives in prose (outside code), and ``(line index, message)`` for malformed ones."""
    found: list[Directive] = []
    errors: list[tuple[int, str]] = []
    for index, line in prose_lines(lines):
        matched_spans = []
        for match in DIRECTIVE_RE.finditer(line):
            name = match.group("name")
            if name not in SIGNATURES:
                errors.append((index, f"unknown directive {{{{ {name}(...) }}}}; known: {', '.join(sorted(SIGNATURES))}"))
                continue
            matched_spans.append(match.span())
            try:
                params = _parse_params(name, match.group("args"))
            except ValueError as error:
                errors.append((index, f"{match.group(0)}: {error}"))
                continue
            block = not (line[: match.start()].strip() or line[match.end() :].strip())
            directive = Directive(name, params, index, match.span(), block, line[: len(line) - len(line.lstrip())])
            problem = _placement_problem(directive)
            if problem:
                errors.append((index, f"{match.group(0)}: {problem}"))
                continue
            found.append(directive)
        for attempt in ATTEMPT_RE.finditer(line):
            if not any(start <= attempt.start() < end for start, end in matched_spans):
                errors.append((index, f"malformed directive near {line[attempt.start():].strip()[:60]!r}; "
                               'write it as {{ name("arg", ...) }} on one line'))
    return found, errors


def _parse_params(name: str, args: str) -> dict[str, str]:
    try:
        call = ast.parse(f"_({args})", mode="eval").body
    except SyntaxError:
        raise ValueError("arguments must be Python string literals separated by commas") from None
    assert isinstance(call, ast.Call)
    positional, required, keywords = SIGNATURES[name]
    params: dict[str, str] = {}
    if len(call.args) > len(positional):
        raise ValueError(f"{name}() takes at most {len(positional)} positional arguments ({', '.join(positional)})")
    for param, node in zip(positional, call.args, strict=False):
        params[param] = _literal(node, param)
    for keyword in call.keywords:
        if keyword.arg is None or keyword.arg not in positional + keywords:
            allowed = ", ".join(positional + keywords)
            raise ValueError(f"{name}() has no argument {keyword.arg!r} (arguments: {allowed})")
        if keyword.arg in params:
            raise ValueError(f"{name}() got {keyword.arg!r} twice")
        params[keyword.arg] = _literal(keyword.value, keyword.arg)
    missing = [p for p in positional[:required] if p not in params]
    if missing:
        raise ValueError(f"{name}() needs {', '.join(missing)}")
    return params


def _literal(node: ast.expr, param: str) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.strip():
        return node.value.strip()
    raise ValueError(f"{param} must be a non-empty string literal")


def _placement_problem(directive: Directive) -> str | None:
    if directive.name == "code" and not directive.block:
        return "code() is a block: put it alone on its line"
    if directive.name == "evidence" and "over" in directive.params and "field" not in directive.params:
        return 'evidence(..., over="kernel") is a ratio of one field: give the field'
    if directive.name == "evidence" and "field" not in directive.params and not directive.block:
        return 'evidence("kernel", "config") is a table: put it alone on its line (give a field for a value)'
    if directive.name == "compare" and not directive.block:
        return 'compare("kernel_a,kernel_b", "config") is a table: put it alone on its line'
    if directive.name == "roofline" and not directive.block:
        return 'roofline("kernel/config, ...") is a figure: put it alone on its line'
    return None


def render_code(symbol: CodeSymbol, hl_lines: str | None = None, title: str | None = None) -> list[str]:
    """A fenced block of the symbol's source, titled with its path and line span, numbered like the file."""
    heading = title or f"{symbol.path}:{symbol.first_line}-{symbol.last_line} · {symbol.spec.partition(':')[2]}"
    options = [f'title="{_attr(heading)}"', f'linenums="{symbol.first_line}"']
    if hl_lines:
        options.append(f'hl_lines="{_attr(hl_lines)}"')
    return [f"```python {' '.join(options)}", *symbol.source.splitlines(), "```"]


def render_evidence_block(markdown: str, kernel: str, config: str) -> list[str]:
    """The evidence Markdown inside a marked container (the browser test and styles find it by class)."""
    return [
        f'<div class="evidence-block" data-kernel="{_attr(kernel)}" data-config="{_attr(config)}" markdown>',
        "",
        *markdown.rstrip("\n").splitlines(),
        "",
        "</div>",
    ]


def _attr(text: str) -> str:
    return text.replace("&", "&amp;").replace('"', "&quot;")
