"""The Concepts section's machinery: checked snippets (``mla_var3.knowledge.expected``), the glossary check
(``mla_var3.knowledge.glossary``), the concept page kind and its navigation, and the repository's own
concept pages and glossary.

The pages' snippets themselves run in every site build (``tests/test_browser.py`` builds the real site);
here a checked snippet whose error is gone must stop a strict MkDocs build, naming the page's block.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest
from warm_python import WarmPython

from mla_var3.knowledge.build import KnowledgeBuild
from mla_var3.knowledge.checks import lint_site
from mla_var3.knowledge.expected import ExpectationError, resolve, run, show
from mla_var3.knowledge.glossary import glossary_entries, glossary_problems
from mla_var3.knowledge.nav import build_nav
from mla_var3.knowledge.pages import load_site

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures" / "concepts"
SHOW_RE = re.compile(r'show\(f?"(?P<target>[^"]+)"\)')


@pytest.fixture
def checked(monkeypatch: pytest.MonkeyPatch) -> str:
    """The fixture snippets importable as ``checked``."""
    monkeypatch.syspath_prepend(str(FIXTURES))
    return "checked"


# --- checked snippets ------------------------------------------------------------------------------


def test_a_declared_error_is_shown_with_its_type_and_text(checked: str) -> None:
    shown = show(f"{checked}:still_raises")
    assert shown.startswith('```text title="raises ValueError (run when this page was built)"\n')
    assert "ValueError: boom: code 42 is not" in shown and shown.rstrip().endswith("```")


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("error_gone", "no longer raises ValueError containing 'code 42': it ran to the end"),
        ("other_message", "should raise ValueError containing 'code 42' but raised ValueError: code 7"),
        ("other_type", "should raise ValueError containing 'code 42' but raised KeyError"),
        ("prints_something_else", "should print 'never printed'; it printed 'hello'"),
        ("undeclared", "declare what it must do with @expect"),
        ("missing_function", "has no function 'missing_function'"),
    ],
)
def test_an_outcome_that_no_longer_holds_fails(checked: str, name: str, message: str) -> None:
    with pytest.raises(ExpectationError, match=re.escape(message)):
        run(f"{checked}:{name}")


def test_output_from_python_and_from_c_is_captured_in_order(checked: str) -> None:
    assert run(f"{checked}:prints_from_c").output == "hello from Python\nhello from C"


def test_a_dsl_error_that_disappears_fails(checked: str) -> None:
    outcome = run(f"{checked}:dsl_error_holds")
    assert "UNSUP_EARLY_EXIT" in outcome.error_text
    assert "tests/fixtures/concepts/checked.py:" in outcome.error_text and str(REPO) not in outcome.error_text
    assert "\x1b[" not in outcome.error_text  # colours stripped
    with pytest.raises(ExpectationError, match=r"dsl_error_gone no longer raises DSLUserCodeError"):
        run(f"{checked}:dsl_error_gone")


def test_expect_needs_a_complete_declaration() -> None:
    from mla_var3.knowledge.expected import expect

    for kwargs in ({}, {"message": "x"}, {"raises": ValueError}):
        with pytest.raises(TypeError):
            expect(**kwargs)


def _mini_site(tmp_path: Path, target: str) -> Path:
    site = tmp_path / "mini"
    (site / "docs").mkdir(parents=True)
    (site / "mkdocs.yml").write_text("site_name: mini\nstrict: true\nplugins:\n  - markdown-exec\n"
                                     "markdown_extensions:\n  - pymdownx.superfences\n")  # fmt: skip
    (site / "docs" / "index.md").write_text(textwrap.dedent(f"""\
        # Mini

        ```python exec="on"
        from mla_var3.knowledge.expected import show

        print(show("{target}"))
        ```
        """))
    return site


def _build(warm_python: WarmPython, site: Path) -> subprocess.CompletedProcess[str]:
    """``python -m mkdocs build --strict`` of the mini site (forked from the warm interpreter)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(FIXTURES), str(REPO)]),
           "NO_MKDOCS_2_WARNING": "1", "DISABLE_MKDOCS_2_WARNING": "true"}  # fmt: skip
    return warm_python.run(["mkdocs", "build", "--strict", "--site-dir", str(site / "out")], cwd=site, env=env, timeout=300)


def test_the_strict_build_shows_a_held_error_and_stops_when_it_is_gone(tmp_path: Path, warm_python: WarmPython) -> None:
    good = _build(warm_python, _mini_site(tmp_path / "good", "checked:still_raises"))
    assert good.returncode == 0, good.stderr
    assert "code 42 is not" in (tmp_path / "good" / "mini" / "out" / "index.html").read_text()
    gone = _build(warm_python, _mini_site(tmp_path / "gone", "checked:error_gone"))
    assert gone.returncode != 0
    assert "checked snippet checked:error_gone no longer raises ValueError" in gone.stderr + gone.stdout


# --- the glossary ---------------------------------------------------------------------------------


@pytest.fixture
def site_root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    shutil.copytree(FIXTURES / "site", root)
    return root


def _glossary_problems(root: Path) -> list[str]:
    return [str(p) for p in glossary_problems(load_site(root / "docs", root))]


def test_fixture_glossary_passes_and_parses_spellings(site_root: Path) -> None:
    assert _glossary_problems(site_root) == []
    site = load_site(site_root / "docs", site_root)
    entries = {e.term: e for e in glossary_entries(site.pages["concepts/glossary.md"])}
    assert list(entries) == ["layout", "TV layout / thread-value layout", "warp", "persistent kernel", "CLC (cluster launch control)"]
    assert entries["CLC (cluster launch control)"].spellings == ("CLC", "cluster launch control")


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("Taught in [Alpha](alpha.md).\n\nTV", "A definition without a link.\n\nTV",
         "glossary term 'layout' links no page that teaches it: end its definition with 'Taught in [page](link)'"),
        ("Taught in [Alpha](alpha.md).\n\nTV", "Taught in [Gone](gone.md).\n\nTV",
         "glossary term 'layout': Taught in 'gone.md' names a page that does not exist (docs/concepts/gone.md)"),
        ("Taught in [Alpha](alpha.md).\n\nTV", "Taught in [Zeta](zeta.md).\n\nTV",
         "docs/concepts/zeta.md never says 'layout'; link the page that teaches the term, or write 'Nearest page"),
        ("Taught in [Alpha](alpha.md).\n\nTV", "Taught in [Elsewhere](https://example.com/x.md).\n\nTV",
         "is not a page of this site"),
        ("\nwarp\n", "\nlayout\n", "glossary term 'layout' is defined twice (also at line 13)"),
    ],
)
def test_a_term_without_a_page_that_teaches_it_fails_lint(site_root: Path, old: str, new: str, message: str) -> None:
    glossary = site_root / "docs/concepts/glossary.md"
    text = glossary.read_text()
    assert old in text
    glossary.write_text(text.replace(old, new, 1))
    problems = _glossary_problems(site_root)
    assert any(message in p for p in problems), problems
    site = load_site(site_root / "docs", site_root)
    assert any(message in str(p) for p in lint_site(site)), "lint runs the glossary check"


def test_nearest_page_needs_no_mention_but_must_exist(site_root: Path) -> None:
    glossary = site_root / "docs/concepts/glossary.md"
    glossary.write_text(glossary.read_text().replace("[Zeta](zeta.md)", "[Gone](gone.md)"))
    assert any("CLC" in p and "does not exist" in p for p in _glossary_problems(site_root))


# --- the concept kind and its navigation ------------------------------------------------------------


def test_concepts_are_a_nav_section_in_the_index_reading_order(site_root: Path) -> None:
    site = load_site(site_root / "docs", site_root)
    assert site.pages["concepts/alpha.md"].meta.kind == "concept"
    section = next(item["Concepts"] for item in build_nav(site) if isinstance(item, dict) and "Concepts" in item)
    assert section == [
        "concepts/index.md",
        {"Aaa, the second concept": "concepts/zeta.md"},
        {"Zzz, the first concept": "concepts/alpha.md"},
        {"Code with markers": "concepts/code.md"},  # not linked from the index: after, by title
        {"Glossary": "concepts/glossary.md"},
        {"Mmm, not in the index": "concepts/beta.md"},
    ]


def test_code_directive_keeps_numbers_and_highlights_across_section_markers(site_root: Path) -> None:
    """pymdownx.snippets drops `--8<--` marker lines; shown blank, the lines keep their numbers."""
    (site_root / "third_party").mkdir()
    shutil.copy(REPO / "third_party" / "cutlass.lock", site_root / "third_party" / "cutlass.lock")
    build = KnowledgeBuild(site_root / "docs", site_root)
    site = build.load()
    page = site.pages["concepts/code.md"]
    block = build.render("concepts/code.md", "\n".join(page.lines))
    fence = block[block.index("```python") :]
    assert 'linenums="4"' in fence and 'hl_lines="6"' in fence  # `wanted =` is the 6th line of the block
    assert "--8<--" not in fence and fence.splitlines()[3] == ""


def test_a_concept_page_needs_front_matter(site_root: Path) -> None:
    (site_root / "docs/concepts/plain.md").write_text("# No front matter\n")
    problems = [str(p) for p in load_site(site_root / "docs", site_root).problems]
    assert any("plain.md:1: this page needs front matter" in p for p in problems), problems


# --- the repository's own pages ---------------------------------------------------------------------


def test_every_checked_snippet_the_concept_pages_show_is_declared() -> None:
    targets = {m.group("target") for page in (REPO / "docs/concepts").glob("*.md") for m in SHOW_RE.finditer(page.read_text())}
    loops = {t for t in targets if "{" in t}  # show(f"module:{name}") over a tuple of names in the block
    for template in loops:
        targets.discard(template)
    assert len(targets) >= 15
    for target in sorted(targets):
        resolve(target)


def test_the_repository_glossary_has_no_dead_entries() -> None:
    site = load_site(REPO / "docs", REPO)
    assert len(glossary_entries(site.pages["concepts/glossary.md"])) >= 40
    assert [str(p) for p in glossary_problems(site)] == []
