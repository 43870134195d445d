"""Directive parsing and rendering, Markdown scanning, hl_re highlights, tables, ``cutlass:`` links and the
hand-typed measurement lint."""

from __future__ import annotations

import pytest

from mla_var3.knowledge.citations import parse_link, resolve_path
from mla_var3.knowledge.directives import (
    RETIRED_COMPARE,
    RETIRED_RATIO,
    find_directives,
    render_code,
    render_evidence_block,
)
from mla_var3.knowledge.errors import KnowledgeError
from mla_var3.knowledge.markdown_scan import fences, headings, links, scan, snippet_refs
from mla_var3.knowledge.measurements import typed_measurements
from mla_var3.knowledge.render import highlight_lines
from mla_var3.knowledge.symbols import CodeSymbol
from mla_var3.knowledge.tables import markdown_table


def test_block_and_inline_forms() -> None:
    lines = [
        '{{ code("pkg.mod:Name", hl_re="x") }}',
        '    {{ evidence("k", "c") }}',
        'It takes {{ evidence("k", "c", "timing.median_us") }} and {{ evidence("k", "c", field="x") }}.',
    ]
    found, errors = find_directives(lines)
    assert not errors
    assert [(d.name, d.block, d.index) for d in found] == [("code", True, 0), ("evidence", True, 1), ("evidence", False, 2),
                                                           ("evidence", False, 2)]  # fmt: skip
    assert found[0].params == {"symbol": "pkg.mod:Name", "hl_re": "x"}
    assert found[1].indent == "    "
    assert found[3].params["field"] == "x"


def test_group_forms_and_estimate() -> None:
    lines = [
        '{{ compare("gemm_bf16", "m8-bfloat16") }}',
        'Ours is {{ speedup("gemm_bf16", "m8-bfloat16", "hopper_gemm_ws") }} against cuBLAS, '
        'predicted {{ estimate("snippets.cpu.budget:time_us", 8192, dtype="bf16") }}.',
    ]
    found, errors = find_directives(lines)
    assert not errors
    assert [(d.name, d.block) for d in found] == [("compare", True), ("speedup", False), ("estimate", False)]
    assert found[0].params == {"group": "gemm_bf16", "config": "m8-bfloat16"}
    assert found[1].params == {"group": "gemm_bf16", "config": "m8-bfloat16", "member": "hopper_gemm_ws"}
    assert found[2].params == {"function": "snippets.cpu.budget:time_us"}
    assert found[2].call_args == (8192,) and found[2].call_kwargs == {"dtype": "bf16"}


def test_retired_forms_are_found_and_say_what_replaces_them() -> None:
    lines = ['Speed-up {{ evidence("a", "m8-float16", "tflops", over="b") }}.', '{{ compare("a,b", "m8-float16") }}']
    found, errors = find_directives(lines)
    assert not errors
    assert [d.retired for d in found] == [RETIRED_RATIO, RETIRED_COMPARE]
    assert RETIRED_RATIO.startswith("ratios come only from comparison groups: use speedup(")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{{ snippet("x") }}', "unknown directive {{ snippet(...) }}; known: code, compare, estimate, evidence, roofline, speedup"),
        ('Inline {{ compare("g", "c") }} here', 'compare() is a block: put compare("group", "config") alone on its line'),
        ('{{ code(name) }}', "symbol must be a non-empty string literal"),
        ('{{ code("a:b", color="red") }}', "code() has no argument 'color'"),
        ('{{ evidence("k") }}', "evidence() needs config"),
        ('{{ speedup("g", "c") }}', "speedup() needs member"),
        ('Inline {{ code("a:b") }} here', "code() is a block"),
        ('Inline {{ evidence("k", "c") }} here', 'evidence("kernel", "config") is a block'),
        ('{{ estimate("mla_var3.kernel.x:f") }}', "must be 'snippets.cpu.<module>:<function>'"),
        ('{{ estimate("snippets.cpu.m:f", size=n) }}', "arguments must be Python literals"),
        ("{{ evidence k c }}", "malformed directive"),
        ('{{ code("a:b" }}', "malformed directive"),
    ],
)
def test_malformed_directives(line: str, message: str) -> None:
    _, errors = find_directives([line])
    assert len(errors) == 1 and message in errors[0][1], errors


def test_directives_in_code_are_left_alone() -> None:
    lines = ['Write `{{ code("a:b") }}` like this:', "```text", '{{ evidence("k", "c") }}', "```"]
    found, errors = find_directives(lines)
    assert found == [] and errors == []


def test_render_code_titles_and_numbers_like_the_file() -> None:
    symbol = CodeSymbol("pkg.mod:Cls.fn", "pkg/mod.py", 10, 12, "def fn():\n    return 1")
    block = render_code(symbol, hl_lines="2")
    assert block[0] == '```python title="pkg/mod.py:10-12 · Cls.fn" linenums="10" hl_lines="2"'
    assert block[1:] == ["def fn():", "    return 1", "```"]


def test_evidence_block_is_marked_and_links_the_guide() -> None:
    out = render_evidence_block("| a |\n", "evidence-block", {"kernel": "k", "config": 'c"x'}, "../evidence-guide.md")
    assert out[0] == '<div class="evidence-block" data-kernel="k" data-config="c&quot;x" markdown>'
    assert out[-1] == "</div>" and "| a |" in out
    assert "[How to read an evidence block](../evidence-guide.md){ .evidence-guide-link }" in out


def test_highlight_lines_follow_the_code() -> None:
    code = ["a = 1", "b = producer_acquire()", "c = 3", "producer_tail()"]
    assert highlight_lines(code, "producer_", "p.md:3") == "2 4"
    with pytest.raises(KnowledgeError, match="p.md:3: hl_re 'nothing' matches no line"):
        highlight_lines(code, "nothing", "p.md:3")
    with pytest.raises(KnowledgeError, match="is not a regular expression"):
        highlight_lines(code, "(", "p.md:3")


def test_scanning_skips_fenced_code() -> None:
    lines = [
        "# Title",
        "See [a](a.md#x) and [b](../b.md).",
        "````markdown",
        "```python",
        "## Not a heading",
        "[not](a link.md)",
        "```",
        "````",
        "## Real {#real}",
        "```python",
        '--8<-- "pkg/mod.py:section"',
        "```",
        ';--8<-- "escaped.py"',
        "",
        "[ref]: c.md",
        "Uses [it][ref].",
    ]
    assert [(h.level, h.text) for h in headings(lines)] == [(1, "Title"), (2, "Real")]
    assert [(ln.target, ln.index) for ln in links(lines)] == [("a.md#x", 1), ("../b.md", 1), ("c.md", 15)]
    assert [(f.start, f.end, f.marker) for f in fences(lines)] == [(2, 7, "````"), (9, 11, "```")]
    refs = snippet_refs(lines)
    assert [(r.path, r.section, r.index) for r in refs] == [("pkg/mod.py", "section", 10)]


def test_scanning_reads_pymdownx_containers_as_markdown() -> None:
    """Admonition and tab bodies nest by indentation; their links and fences are found at their own lines."""
    lines = [
        '!!! note "Title"',
        "    See [x](x.md), then",
        "    ```python",
        "    code = 1",
        "    ```",
        "",
        '=== "Tab"',
        "",
        "    ## Not a page section? It is one, inside the tab",
        "    and [y](y.md)",
        "",
        "Outside, a line",
        "that wraps to [z](z.md).",
    ]
    found = scan(lines)
    assert [(f.start, f.end, f.indent) for f in found.fences] == [(2, 4, "    ")]
    assert [(ln.target, ln.index) for ln in found.links] == [("x.md", 1), ("y.md", 9), ("z.md", 12)]
    assert found.code_mask(len(lines))[2:5] == [True, True, True]


def test_markdown_table_escapes_cells() -> None:
    assert markdown_table(("a", "b"), [("x|y", "[t\\|u](v.md)"), (1, "two\nlines")]) == [
        "| a | b |", "|---|---|", "| x\\|y | [t\\|u](v.md) |", "| 1 | two lines |",
    ]  # fmt: skip
    with pytest.raises(ValueError, match="2 cells for 3 columns"):
        markdown_table(("a", "b", "c"), [(1, 2)])


def test_cutlass_links_parse_and_resolve_against_sources() -> None:
    sources = ["examples/a/dense_gemm.py", "examples/b/dense_gemm_persistent.py", "examples/c/dense_gemm.py"]
    link = parse_link("cutlass:dense_gemm_persistent.py#L602-L606")
    assert (link.path, link.lines) == ("dense_gemm_persistent.py", (602, 606))
    assert resolve_path(link, sources) == "examples/b/dense_gemm_persistent.py"
    assert parse_link("cutlass:examples/x.py#L57").lines == (57, 57)
    assert parse_link("cutlass:examples/x.py").lines is None
    with pytest.raises(ValueError, match="matches 2 sources"):
        resolve_path(parse_link("cutlass:dense_gemm.py#L1"), sources)
    with pytest.raises(ValueError, match="no path under 'sources:' has the file name 'other.py'"):
        resolve_path(parse_link("cutlass:other.py#L1"), sources)
    with pytest.raises(ValueError, match="must be 'cutlass:<path>#L<first>-L<last>'"):
        parse_link("cutlass:x.py#243")
    with pytest.raises(ValueError, match="first <= last"):
        parse_link("cutlass:x.py#L9-L3")


@pytest.mark.parametrize(
    ("line", "typed"),
    [
        ("It takes 1234 µs per launch.", ["1234 µs"]),
        ("Ours runs at 1.03× the rate of cuBLAS", ["1.03×"]),
        ("clocks between about 1.4 and 1.7 GHz under a 700 W cap", ["1.7 GHz", "700 W"]),
        ("small integers ran 8–25 % faster, at 4.1 TB/s and 760 TFLOP/s", ["25 %", "4.1 TB/s", "760 TFLOP/s"]),
        ("a 128×256 tile, 8192³ shapes, a 2 × 1 cluster, 64 × N fragments, 8000×8008×8200", []),
        ("the target is met when the half-width is ≤ 3 % and the speedup ≥ 0.9×", []),
        ("> CUTLASS says it needs 228 KB and 90 % ([dense_gemm.py:57](cutlass:dense_gemm.py#L57))", []),
        ("HBM3e delivers 4.8 TB/s on the H200.[^h200]", []),
        ("[^h200]: NVIDIA H200 datasheet, 4.8 TB/s: <https://www.nvidia.com/en-us/data-center/h200/>", []),
        ("An uncited 4.8 TB/s.[^note]", ["4.8 TB/s"]),
        ("[^note]: our own note, 4.8 TB/s, no source", ["4.8 TB/s"]),
        ('<img width="100%" src="x.svg"> and [a link](page.md#42-ms)', []),
    ],
)
def test_hand_typed_measurements(line: str, typed: list[str]) -> None:
    lines = [line, "[^h200]: NVIDIA H200 datasheet: <https://www.nvidia.com/en-us/data-center/h200/>", "[^note]: no source"]
    assert [t for i, t in typed_measurements(lines, [(0, line)])] == typed
