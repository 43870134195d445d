"""Directive parsing and rendering, Markdown scanning, and hl_re highlights."""

from __future__ import annotations

import pytest

from mla_var3.knowledge.directives import find_directives, render_code, render_evidence_block
from mla_var3.knowledge.errors import KnowledgeError
from mla_var3.knowledge.markdown_scan import fences, headings, links, snippet_refs
from mla_var3.knowledge.render import highlight_lines
from mla_var3.knowledge.symbols import CodeSymbol


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


def test_compare_and_ratio_forms() -> None:
    lines = ['{{ compare("a,b,c", "m8-float16") }}', 'Speed-up {{ evidence("a", "m8-float16", "tflops", over="b") }}.']
    found, errors = find_directives(lines)
    assert not errors
    assert [(d.name, d.block) for d in found] == [("compare", True), ("evidence", False)]
    assert found[0].params == {"kernels": "a,b,c", "config": "m8-float16"}
    assert found[1].params == {"kernel": "a", "config": "m8-float16", "field": "tflops", "over": "b"}


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{{ snippet("x") }}', "unknown directive {{ snippet(...) }}; known: code, compare, evidence"),
        ('Inline {{ compare("a,b", "c") }} here', "compare(\"kernel_a,kernel_b\", \"config\") is a table"),
        ('It is {{ evidence("k", "c", over="b") }} faster', 'over="kernel") is a ratio of one field: give the field'),
        ('{{ code(name) }}', "symbol must be a non-empty string literal"),
        ('{{ code("a:b", color="red") }}', "code() has no argument 'color'"),
        ('{{ evidence("k") }}', "evidence() needs config"),
        ('Inline {{ code("a:b") }} here', "code() is a block: put it alone on its line"),
        ('Inline {{ evidence("k", "c") }} here', 'evidence("kernel", "config") is a table'),
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


def test_evidence_block_is_marked() -> None:
    out = render_evidence_block("| a |\n", "k", 'c"x')
    assert out[0] == '<div class="evidence-block" data-kernel="k" data-config="c&quot;x" markdown>'
    assert out[-1] == "</div>" and "| a |" in out


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
        "[ref]: c.md",
    ]
    assert [(h.level, h.text) for h in headings(lines)] == [(1, "Title"), (2, "Real")]
    assert [ln.target for ln in links(lines)] == ["a.md#x", "../b.md", "c.md"]
    assert [(f.start, f.end, f.marker) for f in fences(lines)] == [(2, 7, "````"), (9, 11, "```")]
    refs = snippet_refs(lines)
    assert [(r.path, r.section, r.index) for r in refs] == [("pkg/mod.py", "section", 10)]
