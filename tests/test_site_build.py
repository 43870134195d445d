"""Build a small copy of the site and break it one way at a time: every break must fail the strict
build with a message that names the file (and the line where there is one).

The fixture (``tests/fixtures/site``) is built with the repository's own ``mkdocs.yml`` and
``hooks/``, so these tests exercise the real configuration. Each build and CLI run is its own
``python -m`` process, forked from a warm interpreter (``tests/warm_python.py``) rather than started
cold: the imports cost more than the fixture's build.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from warm_python import WarmPython

REPO = Path(__file__).resolve().parent.parent
FIXTURE = REPO / "tests" / "fixtures" / "site"
ALPHA = "docs/knowledge/optimizations/alpha.md"


def make_site(tmp_path: Path) -> Path:
    site = tmp_path / "site-src"
    shutil.copytree(FIXTURE, site, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "mkdocs.yml", site / "mkdocs.yml")
    shutil.copytree(REPO / "hooks", site / "hooks", ignore=shutil.ignore_patterns("__pycache__"))
    (site / "third_party").mkdir()
    shutil.copy(REPO / "third_party" / "cutlass.lock", site / "third_party" / "cutlass.lock")
    (site / "evidence").mkdir()  # no record: the fixture's pages cite a kernel and a group no record exists for
    return site


def run_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "CUTLASS_DIR"}
    env.update(PYTHONPATH=str(REPO), NO_MKDOCS_2_WARNING="1", DISABLE_MKDOCS_2_WARNING="true")
    return env


PythonM = Callable[..., subprocess.CompletedProcess[str]]
Build = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture(scope="module")
def python_m(warm_python: WarmPython) -> PythonM:
    """``python -m ARGS`` in ``cwd`` (default: the repository) with :func:`run_env` plus ``env``."""

    def run(*args: str, cwd: Path = REPO, **env: str) -> subprocess.CompletedProcess[str]:
        return warm_python.run(list(args), cwd=cwd, env={**run_env(), **env}, timeout=300)

    return run


@pytest.fixture(scope="module")
def build(python_m: PythonM) -> Build:
    """``mkdocs build --strict`` of a site copy, with extra environment variables, on the copy's own
    (empty) evidence folder: the repository's records would only fill the generated results page, whose
    tests build the real site (test_results_page.py), and loading them costs a fixture build ~1 s."""
    return lambda site, **env: python_m(
        "mkdocs", "build", "--strict", cwd=site, **{"MLA_VAR3_EVIDENCE_DIR": str(site / "evidence"), **env}
    )


def edit(site: Path, rel: str, old: str, new: str) -> None:
    path = site / rel
    text = path.read_text()
    assert old in text, f"fixture changed: {old!r} not in {rel}"
    path.write_text(text.replace(old, new, 1))


def line_of(site: Path, rel: str, needle: str) -> int:
    return next(i for i, line in enumerate((site / rel).read_text().splitlines(), 1) if needle in line)


@pytest.fixture
def site(tmp_path: Path) -> Path:
    return make_site(tmp_path)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, build: Build) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """The fixture built once as it is (``nox -s docs``): the tests that only read the result share it."""
    site = make_site(tmp_path_factory.mktemp("built"))
    return site, build(site)


def html(site: Path, rel: str) -> str:
    """The page's content (the article), without the navigation that lists every page."""
    markup = (site / "site" / rel).read_text()
    return markup[markup.index("<article") : markup.index("</article>")]


def text_of(markup: str) -> str:
    """The visible text of HTML (code blocks are split into highlighted tokens)."""
    import html as html_lib

    return html_lib.unescape(re.sub(r"<[^>]+>", "", markup))


def test_fixture_builds_with_everything_generated(built: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    site, result = built
    assert result.returncode == 0, result.stderr
    alpha_html = html(site, "knowledge/optimizations/alpha.html")
    alpha = text_of(alpha_html)
    # Code by section, titled with its path, numbered like the file.
    assert "fixture_lab/kernel.py · loop" in alpha and "out.append(value" in alpha
    # Code by symbol, with its path and line span.
    assert "fixture_lab/kernel.py:16-17 · Tiler.tiles" in alpha and "return (n + tile - 1) // tile" in alpha
    # The executable snippet ran during the build.
    assert "n squared" in alpha and "<td>9</td>" in alpha_html
    # Evidence block (from mla_var3.evidence.render) inside its marked container, and a value in prose.
    assert '<div class="evidence-block" data-config="n1024-bfloat16" data-kernel="fixture_kernel">' in alpha_html
    # Every evidence block links the page that explains it; a group comparison is an evidence block too.
    assert alpha_html.count('href="../../evidence-guide.html"') == 2
    assert 'class="evidence-block evidence-compare" data-config="n1024-bfloat16" data-group="fixture_group"' in alpha_html
    # An estimate, computed by the CPU snippet at build time and marked as one.
    assert '<span class="ev-estimate" title="Estimate computed at build time by snippets.cpu.tiny:predicted_time">≈ 2.05 µs</span>' in alpha_html
    # CUTLASS links at the pinned commit: the sources list and the cutlass: links in prose, resolved by file name.
    blob = "https://github.com/NVIDIA/cutlass/blob/7107b05535f8977f5ecb9d01ee203205b1fd9bc4/"
    gemm = "examples/python/CuTeDSL/cute/hopper/kernel/dense_gemm/dense_gemm.py"
    assert f'href="{blob}{gemm}#L10-L20"' in alpha_html
    assert f'href="{blob}{gemm}#L10-L12"' in alpha_html and f'href="{blob}{gemm}#L14"' in alpha_html
    assert "cutlass:" not in alpha_html
    # Ledger from the study note, backlinks.
    assert "Study-note ledger" in alpha and "The example adds a detail (dense_gemm.py:12)." in alpha
    assert f'href="{blob}{gemm}#L12"' in alpha_html  # a cutlass: link in a verdict note, resolved against the note's sources
    referenced = alpha_html[alpha_html.index('id="referenced-by"') :]
    for title in ("Beta anti-pattern", "Gamma in CuTe DSL", "Study note: fixture example", "Fixture site"):
        assert title in referenced
    # Generated pages.
    catalog = html(site, "knowledge/optimization-catalog.html")
    assert "Alpha pattern" in catalog and "Beta anti-pattern" in catalog and "Gamma in CuTe DSL" not in catalog
    assert "Gamma in CuTe DSL" in html(site, "knowledge/optimization-catalog-cute-dsl.html")
    assert 'id="tag-tma"' in html(site, "knowledge/tags.html")
    graph = html(site, "knowledge/pattern-graph.html")
    assert "<svg" in graph and 'href="optimizations/alpha.html"' in graph
    progress = text_of(html(site, "paths/path-a.html"))
    assert "1 of 1 step(s) have a study note" in progress
    # Nothing generated is written into docs/.
    assert not (site / "docs" / "knowledge" / "optimization-catalog.md").exists()


def test_no_network_assets(built: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    site, result = built
    assert result.returncode == 0, result.stderr
    for page in sorted((site / "site").rglob("*.html")):
        text = page.read_text()
        assert not re.search(r'<(?:script|link)[^>]+(?:src|href)="(?:https?:)?//', text), page
        assert "fonts.googleapis" not in text and "fonts.gstatic" not in text, page


BROKEN = {
    "malformed YAML": (ALPHA, "tags: [tma, pipelining]", "tags: [tma, pipelining", "malformed YAML front matter"),
    "unclosed quote": (ALPHA, "title: Alpha pattern", 'title: "Alpha pattern', "while scanning a quoted scalar"),
    "unknown tag": (ALPHA, "tags: [tma, pipelining]", "tags: [tma, no-such-tag]", "unknown tag 'no-such-tag'"),
    "unknown related id": (ALPHA, "related: [beta]", "related: [beta, nobody]", "unknown related id 'nobody'"),
    "missing section": (ALPHA, "## Pitfalls\n", "## Traps\n", "missing template section(s) for an optimization page: '## Pitfalls'"),
    "unresolved cutlass link": (ALPHA, "cutlass:dense_gemm.py#L14", "cutlass:nowhere.py#L14",
                                "no path under 'sources:' has the file name 'nowhere.py'"),
    "undeclared group": (ALPHA, '{{ compare("fixture_group", "n1024-bfloat16") }}', '{{ compare("other_group", "n1024-bfloat16") }}',
                         "list {group: other_group, config: n1024-bfloat16} under 'evidence:'"),
    "missing snippet section": (ALPHA, "kernel.py:loop", "kernel.py:no_such_section", "snippet section 'no_such_section' not found"),
    "unknown symbol": (ALPHA, "Tiler.tiles", "Tiler.no_such_method", "has no symbol 'Tiler.no_such_method'"),
    "undeclared evidence": (ALPHA, '{{ evidence("fixture_kernel", "n1024-bfloat16") }}', '{{ evidence("other", "n1024-bfloat16") }}',
                            "list {kernel: other, config: n1024-bfloat16} under 'evidence:'"),
    "unknown key": (ALPHA, "status: draft", "status: draft\nstatuss: oops", "unknown front-matter key 'statuss'"),
    "wrong folder": (ALPHA, "scope: shared", "scope: cute-dsl", "belongs in docs/knowledge/languages/cute-dsl/optimizations/"),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_bad_input_fails_naming_file_and_line(site: Path, case: str, build: Build) -> None:
    rel, old, new, message = BROKEN[case]
    edit(site, rel, old, new)
    needle = new.splitlines()[-1] if case != "missing section" else None
    result = build(site)
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert message in output, output
    if needle:
        assert f"{rel}:{line_of(site, rel, needle)}:" in output, output
    else:
        assert f"{rel}:" in output, output


def test_hl_re_spans_every_include_of_a_fence(site: Path, build: Build) -> None:
    edit(site, ALPHA, '```python\n--8<-- "fixture_lab/kernel.py:loop"\n```',
         '```python hl_re="append"\n--8<-- "fixture_lab/kernel.py:loop"\n--8<-- "fixture_lab/kernel.py:loop"\n```')  # fmt: skip
    result = build(site)
    assert result.returncode == 0, result.stderr
    alpha = html(site, "knowledge/optimizations/alpha.html")
    block = alpha[alpha.index("fixture_lab/kernel.py · loop + loop") :]
    assert block[: block.index("</pre>")].count('class="hll"') == 2  # the matching line of each include


def test_missing_closing_dashes_say_so(site: Path, build: Build) -> None:
    edit(site, ALPHA, "  - {group: fixture_group, config: n1024-bfloat16}\n---\n", "  - {group: fixture_group, config: n1024-bfloat16}\n")
    result = build(site)
    assert result.returncode != 0
    assert f"{ALPHA}:1: the front matter opened here has no closing '---' line" in result.stderr, result.stderr


def test_broken_link_fails_through_mkdocs_validation(site: Path, build: Build) -> None:
    edit(site, ALPHA, "See [Beta]", "See [Nothing](../nothing.md) [Beta]")
    result = build(site)
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "'knowledge/optimizations/alpha.md' contains a link '../nothing.md'" in output, output


def test_claims_the_evidence_cannot_back_warn_in_docs_and_fail_in_publish(
    built: tuple[Path, subprocess.CompletedProcess[str]], site: Path, build: Build
) -> None:
    built_site, docs = built  # nox -s docs
    line = line_of(built_site, ALPHA, '{{ compare("fixture_group", "n1024-bfloat16") }}')
    where = f"{ALPHA}:{line}: " + '{{ compare("fixture_group", "n1024-bfloat16") }}'
    assert docs.returncode == 0, docs.stderr
    assert "claim(s) the evidence does not back" in docs.stderr and where in docs.stderr, docs.stderr
    alpha = html(built_site, "knowledge/optimizations/alpha.html")
    block = alpha[alpha.index('data-group="fixture_group"') :]
    assert "missing" in text_of(block[: block.index("</div>")]).lower()  # marked on the page, in its place
    publish = build(site, KNOWLEDGE_CLAIMS="error")
    assert publish.returncode != 0
    assert where in publish.stderr, publish.stderr


def test_broken_anchor_fails(site: Path, build: Build) -> None:
    edit(site, ALPHA, "beta.md#pitfalls", "beta.md#no-such-anchor")
    result = build(site)
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "knowledge/optimizations/alpha.md" in output and "#no-such-anchor" in output, output


def test_duplicate_id_names_both_files(site: Path, build: Build) -> None:
    twin = site / "docs/knowledge/optimizations/alpha-twin.md"
    twin.write_text((site / ALPHA).read_text())
    result = build(site)
    assert result.returncode != 0
    assert "docs/knowledge/optimizations/alpha-twin.md:2: duplicate id 'alpha' (also in docs/knowledge/optimizations/alpha.md)" in result.stderr
    assert "docs/knowledge/optimizations/alpha.md:2: duplicate id 'alpha'" in result.stderr


def test_failing_executable_snippet_names_page_and_block(site: Path, build: Build) -> None:
    edit(site, "snippets/cpu/tiny.py", '    rows = [f"| {n}', '    raise RuntimeError("snippet is broken")\n    rows = [f"| {n}')
    result = build(site)
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    block_line = line_of(site, ALPHA, 'exec="on"')
    assert f"code block 'docs/knowledge/optimizations/alpha.md:{block_line}' exited with errors" in output, output
    assert "snippet is broken" in output and "Aborted" in output


def test_generated_path_must_not_be_committed(site: Path, build: Build) -> None:
    (site / "docs/knowledge/tags.md").write_text("# Tags by hand\n")
    result = build(site)
    assert result.returncode != 0
    assert "docs/knowledge/tags.md: this path is generated by the build; delete the file" in result.stderr


def test_new_pattern_builds_at_once_with_links_and_backlinks(site: Path, build: Build, python_m: PythonM) -> None:
    scaffold = python_m("mla_var3.knowledge", "--root", str(site), "new", "delta-pattern", "--kind", "optimization",
                        "--scope", "cute-dsl", "--title", "Delta pattern", "--tag", "swizzle")  # fmt: skip
    assert scaffold.returncode == 0, scaffold.stderr
    page = site / "docs/knowledge/languages/cute-dsl/optimizations/delta-pattern.md"
    assert page.is_file()
    result = build(site)
    assert result.returncode == 0, result.stderr
    assert "Delta pattern" in html(site, "knowledge/optimization-catalog-cute-dsl.html")
    assert "Delta pattern" in (site / "site" / "index.html").read_text()  # in the navigation
    # The author links it from another page: the backlink appears on the new page.
    edit(site, ALPHA, "Alpha is a pattern.", "Alpha is a pattern; compare [Delta](../languages/cute-dsl/optimizations/delta-pattern.md).")
    assert build(site).returncode == 0
    delta = html(site, "knowledge/languages/cute-dsl/optimizations/delta-pattern.html")
    assert "Alpha pattern" in delta[delta.index('id="referenced-by"') :]


def test_new_pattern_refuses_a_taken_id(site: Path, python_m: PythonM) -> None:
    result = python_m("mla_var3.knowledge", "--root", str(site), "new", "alpha", "--kind", "anti-pattern", "--scope", "shared")
    assert result.returncode == 2
    assert "id 'alpha' is taken by docs/knowledge/optimizations/alpha.md" in result.stderr
    assert "Traceback" not in result.stderr


def test_lint_cli_reports_the_same_problems(site: Path, python_m: PythonM) -> None:
    ok = python_m("mla_var3.knowledge", "--root", str(site), "lint")
    assert ok.returncode == 0, ok.stderr
    assert "pages OK" in ok.stdout
    edit(site, ALPHA, "related: [beta]", "related: [nobody]")
    bad = python_m("mla_var3.knowledge", "--root", str(site), "lint")
    assert bad.returncode == 1
    assert f"{ALPHA}:{line_of(site, ALPHA, 'related:')}: unknown related id 'nobody'" in bad.stderr


def test_evidence_renderer_failure_names_page_and_line(site: Path, build: Build) -> None:
    # A wiring file whose evidence renderer fails, as a malformed record would.
    hook = site / "hooks" / "evidence.py"
    text = hook.read_text()
    old = "block=render.render_evidence_block,"
    assert old in text
    hook.write_text(text.replace(old, "block=_failing_block,")
                    + "\n\ndef _failing_block(kernel, config):\n    raise ValueError('record is malformed')\n")  # fmt: skip
    result = build(site)
    assert result.returncode != 0
    line = line_of(site, ALPHA, '{{ evidence("fixture_kernel", "n1024-bfloat16") }}')
    assert f"{ALPHA}:{line}: " in result.stderr and "ValueError: record is malformed" in result.stderr, result.stderr
