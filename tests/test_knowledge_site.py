"""Site-level knowledge logic without MkDocs: the repository's own pages pass every check, the
scaffolder writes valid pages for each kind (which lint refuses until their instructions are
replaced), links become graph edges and backlinks, generated pages and the navigation list what
they should, CUTLASS citations are checked, and the page model other layers read is the same."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from mla_var3.knowledge import (
    KnowledgeError,
    ScaffoldError,
    check_site,
    lint_site,
    load_site,
    new_page,
    read_page,
    status_claim_problems,
)
from mla_var3.knowledge.catalog import generated_pages
from mla_var3.knowledge.citations import CutlassTree
from mla_var3.knowledge.graph import backlinks, edges
from mla_var3.knowledge.nav import build_nav
from mla_var3.knowledge.scaffold import instruction_lines
from mla_var3.knowledge.schema import KINDS
from mla_var3.knowledge.symbols import SymbolResolver
from mla_var3.project import read_pin

REPO = Path(__file__).resolve().parent.parent


def test_repository_pages_pass_every_check() -> None:
    site = load_site(REPO / "docs", REPO)
    problems = check_site(site, SymbolResolver(REPO), cutlass=None)
    assert problems == [], "\n".join(map(str, problems))
    patterns = site.knowledge_pages("optimization", "anti-pattern")
    assert len(patterns) >= 3
    for page in (p for p in patterns if p.meta.status != "draft"):  # a verified pattern embeds our code, not pasted
        assert any(ref.path.startswith(("mla_var3/", "snippets/")) for ref in page.snippets) or any(
            d.name == "code" for d in page.directives
        ), page.src


@pytest.mark.parametrize("kind", KINDS)
def test_scaffolded_page_builds_but_lint_wants_its_instructions_replaced(fixture_root: Path, kind: str) -> None:
    path = new_page(fixture_root / "docs", fixture_root, f"new-{kind}", kind, "shared", arch=["sm_90a"], tags=["tma"])
    site = load_site(fixture_root / "docs", fixture_root)
    problems = check_site(site, SymbolResolver(fixture_root))
    assert problems == [], "\n".join(map(str, problems))
    page = site.pages[path.relative_to(fixture_root / "docs").as_posix()]
    assert page.meta.kind == kind and page.meta.tags == ("tma",) and page.meta.status == "draft"
    assert page.title == f"New {kind}".replace("-", " ")
    left = [p for p in lint_site(site, SymbolResolver(fixture_root)) if p.file == page.display]
    assert left and all("the template's instruction is still here" in p.message for p in left), left
    # Replacing every instruction paragraph satisfies lint.
    own = ["Our own words." if line.strip() in instruction_lines(kind) else line for line in path.read_text().splitlines()]
    path.write_text("\n".join(own) + "\n")
    site = load_site(fixture_root / "docs", fixture_root)
    remaining = [str(p) for p in lint_site(site, SymbolResolver(fixture_root)) if p.file == page.display]
    assert not any("instruction" in p for p in remaining), remaining


def test_lint_refuses_typed_measurements_and_retired_directives(fixture_root: Path) -> None:
    alpha = fixture_root / "docs/knowledge/optimizations/alpha.md"
    text = alpha.read_text().replace("A loop, as in", 'A loop of 1234 µs, 1.05× faster: {{ evidence("fixture_kernel", '
                                     '"n1024-bfloat16", "tflops", over="other") }}, as in')  # fmt: skip
    alpha.write_text(text)
    site = load_site(fixture_root / "docs", fixture_root)
    assert [p for p in check_site(site) if p.file.endswith("alpha.md")] == []  # the build lets a draft through
    line = text.splitlines().index(next(x for x in text.splitlines() if "1234 µs" in x)) + 1
    found = {str(p) for p in lint_site(site) if p.file.endswith("alpha.md")}
    assert f"docs/knowledge/optimizations/alpha.md:{line}: hand-typed measurement '1234 µs': " in "".join(found)
    assert any("'1.05×'" in p for p in found)
    assert any("ratios come only from comparison groups: use speedup(" in p for p in found)


def test_verified_status_needs_evidence_in_front_matter_and_body(fixture_root: Path) -> None:
    beta = fixture_root / "docs/knowledge/anti-patterns/beta.md"
    beta.write_text(beta.read_text().replace("status: draft", "status: run-verified"))
    site = load_site(fixture_root / "docs", fixture_root)
    page = site.pages["knowledge/anti-patterns/beta.md"]
    messages = [p.message for p in status_claim_problems(page)]
    assert messages == ["status 'run-verified' needs at least one evidence entry ({kernel, config} or {group, config})",
                        "status 'run-verified' but the page shows no evidence: add {{ evidence(\"kernel\", \"config\") }} "
                        "(or compare/speedup/roofline) to its body"]  # fmt: skip
    assert {p.message for p in check_site(site) if p.file.endswith("beta.md")} == set(messages)


def test_status_rule_with_the_evidence_layers_statuses(fixture_root: Path) -> None:
    alpha = fixture_root / "docs/knowledge/optimizations/alpha.md"
    alpha.write_text(alpha.read_text().replace("status: draft", "status: run-verified"))
    page = read_page(alpha)
    assert status_claim_problems(page, lambda ref: "run-verified") == []
    problems = status_claim_problems(page, lambda ref: "stale" if ref.kernel else "run-verified")
    assert [(p.line, p.message) for p in problems] == [
        (14, "status 'run-verified' but the evidence of kernel fixture_kernel, config n1024-bfloat16 is stale")]


def test_read_page_is_the_validated_model_other_layers_use(fixture_root: Path) -> None:
    page = read_page(fixture_root / "docs/knowledge/optimizations/alpha.md")
    assert page.display == "docs/knowledge/optimizations/alpha.md" and page.src == "knowledge/optimizations/alpha.md"
    assert [(e.kernel, e.group, e.config) for e in page.meta.evidence][0] == ("fixture_kernel", None, "n1024-bfloat16")
    assert read_page(fixture_root / "docs/index.md").meta is None  # a free page has no schema front matter
    broken = fixture_root / "docs/knowledge/anti-patterns/beta.md"
    broken.write_text(broken.read_text().replace("kind: anti-pattern", "kind: recipe"))
    with pytest.raises(KnowledgeError, match="beta.md:4: kind 'recipe' is not one of"):
        read_page(broken)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("alpha", "optimization", "shared"), "id 'alpha' is taken by docs/knowledge/optimizations/alpha.md"),
        (("Bad_Id", "optimization", "shared"), "must be a lowercase slug"),
        (("x", "optimization", None), "needs --scope"),
        (("x", "recipe", "shared"), "--kind 'recipe' is not one of"),
    ],
)
def test_scaffolder_refuses_bad_requests(fixture_root: Path, args: tuple, message: str) -> None:
    with pytest.raises(ScaffoldError, match=message):
        new_page(fixture_root / "docs", fixture_root, *args)


def test_scaffolder_refuses_unknown_tags(fixture_root: Path) -> None:
    with pytest.raises(ScaffoldError, match="unknown tag"):
        new_page(fixture_root / "docs", fixture_root, "x", "optimization", "shared", tags=["not-a-tag"])


def test_edges_backlinks_and_generated_pages(fixture_root: Path) -> None:
    site = load_site(fixture_root / "docs", fixture_root)
    alpha, beta = "knowledge/optimizations/alpha.md", "knowledge/anti-patterns/beta.md"
    gamma, note = "knowledge/languages/cute-dsl/optimizations/gamma.md", "examples/note.md"
    found = {(e.source, e.target, e.via) for e in edges(site)}
    path = "paths/path-a.md"
    assert {(alpha, beta, "link"), (alpha, beta, "related"), (gamma, alpha, "related"), (note, alpha, "verdict"),
            (path, alpha, "progress"), (path, note, "progress")} <= found  # fmt: skip
    assert backlinks(site)[alpha] == [beta, "index.md", gamma, path, note]  # sorted by title
    pages = generated_pages(site, use_directory_urls=False)
    assert "[Alpha pattern](optimizations/alpha.md)" in pages["knowledge/optimization-catalog.md"]
    assert "Gamma" not in pages["knowledge/optimization-catalog.md"]
    assert "## tma {#tag-tma}" in pages["knowledge/tags.md"]
    assert 'href="optimizations/alpha.html"' in pages["knowledge/pattern-graph.md"]
    assert 'href="../optimizations/alpha/index.html"' in generated_pages(site, use_directory_urls=True)["knowledge/pattern-graph.md"]


def test_navigation_lists_every_page(fixture_root: Path) -> None:
    site = load_site(fixture_root / "docs", fixture_root)
    nav = build_nav(site)

    def leaves(items: list) -> list[str]:
        out = []
        for item in items:
            if isinstance(item, str):
                out.append(item)
            else:
                for value in item.values():
                    out += leaves(value) if isinstance(value, list) else [value]
        return out

    listed = leaves(nav)
    assert set(site.pages) <= set(listed)
    assert "knowledge/optimization-catalog.md" in listed and "knowledge/pattern-graph.md" in listed
    assert nav[0] == {"Home": "index.md"}


def test_citations_are_checked_against_a_plain_tree(fixture_root: Path, tmp_path: Path, monkeypatch) -> None:
    cutlass = tmp_path / "cutlass"
    target = cutlass / "examples/python/CuTeDSL/cute/hopper/kernel/dense_gemm/dense_gemm.py"
    target.parent.mkdir(parents=True)
    target.write_text("line\n" * 15)  # alpha cites lines 10-20 in sources, and links lines 10-12 and 14
    monkeypatch.setenv("CUTLASS_DIR", str(cutlass))
    tree = CutlassTree.locate(fixture_root, read_pin(fixture_root).commit)
    problems = check_site(load_site(fixture_root / "docs", fixture_root), cutlass=tree)
    assert [str(p) for p in problems] == [
        "docs/knowledge/optimizations/alpha.md:11: lines 10-20 run past the end of "
        "examples/python/CuTeDSL/cute/hopper/kernel/dense_gemm/dense_gemm.py (15 lines at 7107b05)"
    ]
    alpha = fixture_root / "docs/knowledge/optimizations/alpha.md"
    text = alpha.read_text()
    assert "(cutlass:dense_gemm.py#L14)" in text
    alpha.write_text(text.replace("(cutlass:dense_gemm.py#L14)", "(cutlass:dense_gemm.py#L14-L16)"))
    line = next(i for i, x in enumerate(alpha.read_text().splitlines(), 1) if "#L14-L16" in x)
    messages = {str(p) for p in check_site(load_site(fixture_root / "docs", fixture_root), cutlass=tree)}
    assert f"docs/knowledge/optimizations/alpha.md:{line}: lines 14-16 run past the end of " in "".join(messages)
    target.unlink()
    tree = CutlassTree.locate(fixture_root, read_pin(fixture_root).commit)
    messages = {p.message for p in check_site(load_site(fixture_root / "docs", fixture_root), cutlass=tree)}
    assert any("does not exist at 7107b05" in m for m in messages)


def test_citations_read_from_git_at_the_pinned_commit(tmp_path: Path) -> None:
    repo = tmp_path / "cutlass"
    repo.mkdir()

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()

    git("init", "-q")
    (repo / "a.py").write_text("one\ntwo\nthree")
    git("add", "a.py")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "a")
    commit = git("rev-parse", "HEAD")
    (repo / "a.py").write_text("changed after the pin\n")  # the work tree is not what is read
    tree = CutlassTree(repo, commit)
    assert not tree.missing_commit()
    assert tree.line_counts({"a.py", "missing.py"}) == {"a.py": 3, "missing.py": None}
    assert CutlassTree(repo, "0" * 40).missing_commit()


def test_cutlass_links_must_resolve(fixture_root: Path) -> None:
    alpha = fixture_root / "docs/knowledge/optimizations/alpha.md"
    alpha.write_text(alpha.read_text().replace("(cutlass:dense_gemm.py#L14)", "(cutlass:other_file.py#L14)"))
    line = next(i for i, x in enumerate(alpha.read_text().splitlines(), 1) if "other_file.py" in x)
    problems = [str(p) for p in check_site(load_site(fixture_root / "docs", fixture_root))]
    assert problems == [f"docs/knowledge/optimizations/alpha.md:{line}: CUTLASS link 'cutlass:other_file.py#L14': "
                        "no path under 'sources:' has the file name 'other_file.py'; list the file there or write its full path"]


def test_knowledge_layer_imports_no_evidence_or_kernel_code() -> None:
    probe = (
        "import sys, mla_var3.knowledge, mla_var3.knowledge.__main__, mla_var3.knowledge.plugin; "
        "bad = sorted(m for m in sys.modules if m.startswith(('mla_var3.evidence', 'mla_var3.kernel', 'cutlass'))); "
        "print(bad); raise SystemExit(1 if bad else 0)"
    )
    result = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def test_claim_problem_imports_light() -> None:
    """The evidence layer (which runs on the GPU machine, without pydantic) imports ClaimProblem alone."""
    probe = (
        "import sys; from mla_var3.knowledge.errors import ClaimProblem; "
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('pydantic', 'markdown_it', 'griffe', 'jinja2', 'mkdocs')); "
        "print(heavy); raise SystemExit(1 if heavy else 0)"
    )
    result = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
