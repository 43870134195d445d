"""The generated Measured results page: every declared comparison group, each shape's same-run table (the
compare() renderer's, in the same marked container) or "not run yet", and the pages that cite the group.

The page is made the way the build makes it: ``hooks/gen_pages.py`` runs (as mkdocs-gen-files runs it) against
a loaded :class:`KnowledgeBuild` with the site's own evidence wiring (``hooks/evidence.py``); only
``mkdocs_gen_files`` is replaced by a stand-in that keeps what the script writes.
"""

from __future__ import annotations

import contextlib
import io
import runpy
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest
from test_evidence import fake_env  # noqa: F401 - the fixture is used by name
from test_evidence_render import CHECK, PAIR, _group_run

from mla_var3.evidence import groups as groups_mod
from mla_var3.evidence.groups import GROUPS, Group, Member
from mla_var3.evidence.store import save
from mla_var3.evidence.verify import group_record
from mla_var3.knowledge import KnowledgeBuild, layout
from mla_var3.knowledge.nav import build_nav

REPO = Path(__file__).resolve().parent.parent
NEVER_RUN = Group("never_run", "a group no GPU has timed", "fake_good", (Member("fake_good"), Member("fake_raises")), ("n16-float32",))


class _Written(dict[str, str]):
    """Stands in for ``mkdocs_gen_files``: what the script writes, by docs-relative path."""

    def __init__(self, build: KnowledgeBuild) -> None:
        super().__init__()
        self.config = SimpleNamespace(plugins={"knowledge": SimpleNamespace(build=build)})

    @contextlib.contextmanager
    def open(self, path: str, mode: str) -> Iterator[io.StringIO]:
        handle = io.StringIO()
        yield handle
        self[path] = handle.getvalue()


def generated(root: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[KnowledgeBuild, dict[str, str]]:
    """Load the site under ``root`` with the real evidence wiring and run the real gen-files script."""
    hooks = runpy.run_path(str(REPO / "hooks" / "evidence.py"))["evidence_hooks"]()
    build = KnowledgeBuild(root / "docs", root, evidence=hooks)
    build.load()
    written = _Written(build)
    monkeypatch.setitem(sys.modules, "mkdocs_gen_files", written)
    runpy.run_path(str(REPO / "hooks" / "gen_pages.py"))
    return build, dict(written)


@pytest.fixture
def fixture_root(fixture_root: Path) -> Path:
    """The fixture site (conftest's), its alpha page citing the fake group's record too."""
    root = fixture_root
    alpha = root / "docs/knowledge/optimizations/alpha.md"
    cited = "  - {group: fixture_group, config: n1024-bfloat16}\n"
    alpha.write_text(alpha.read_text().replace(cited, cited + "  - {group: fake_pair, config: n8-float32}\n"))
    return root


def section(page: str, group: str) -> str:
    """The page's section of one group (its heading up to the next group's)."""
    start = page.index(f"## `{group}` {{#group-{group}}}")
    end = page.find("\n## ", start + 1)
    return page[start : end if end != -1 else len(page)]


def test_a_group_record_shows_its_table_and_the_pages_citing_it(
    fixture_root: Path,
    fake_env: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(groups_mod, "GROUPS", (PAIR, NEVER_RUN))
    save(group_record(PAIR, "n8-float32", _group_run(1.05), {"fake_good": CHECK, "fake_raises": CHECK}), fake_env)
    build, pages = generated(fixture_root, monkeypatch)
    assert set(layout.GENERATED) == set(pages)  # the catalogs, tags and graph are still written
    page = pages[layout.RESULTS]
    assert "(2 groups, 2 shapes, 1 of them with a record)" in page
    pair = section(page, "fake_pair")
    assert "two fake kernels." in pair and "Members: `fake_good` (reference), `fake_raises`." in pair
    assert "Cited by: [Alpha pattern](optimizations/alpha.md)." in pair
    # The compare() table, in the container a page's compare() directive gets, linking the evidence guide.
    assert '<div class="evidence-block evidence-compare" data-group="fake_pair" data-config="n8-float32" markdown>' in pair
    assert "| member | runtime µs (p10–p90) |" in pair and "| `fake_good` |" in pair and "| reference |" in pair
    assert "faster)" in pair and "on NVIDIA H200 (GPU UUID 096f7439…), 20 rounds of 3 launches each" in pair
    assert "[How to read an evidence block](../evidence-guide.md)" in pair
    assert "Not run yet" not in pair
    assert build.claims == []  # the page indexes records; the citing pages make the claims


def test_a_group_without_records_says_not_run(
    fixture_root: Path,
    fake_env: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(groups_mod, "GROUPS", (PAIR, NEVER_RUN))
    _, pages = generated(fixture_root, monkeypatch)
    page = pages[layout.RESULTS]
    never = section(page, "never_run")
    assert "### `n16-float32`" in never and "Not run yet: no record of this group at this shape." in never
    assert "evidence-compare" not in never and "No page cites this group yet." in never
    assert "| [`never_run`](#group-never_run) | `fake_good` | 0 of 1 | — |" in page


def test_a_stale_record_is_shown_marked(fixture_root: Path, fake_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    import dataclasses

    monkeypatch.setattr(groups_mod, "GROUPS", (PAIR,))
    record = group_record(PAIR, "n8-float32", _group_run(1.05), {"fake_good": CHECK, "fake_raises": CHECK})
    from mla_var3.evidence.model import members_source_hash

    members = [dataclasses.replace(record.members[0], source_hash="old"), record.members[1]]
    save(dataclasses.replace(record, members=members, source_hash=members_source_hash(members)), fake_env)
    _, pages = generated(fixture_root, monkeypatch)
    pair = section(pages[layout.RESULTS], "fake_pair")
    assert '!!! warning "Stale evidence: group `fake_pair` · `n8-float32`"' in pair
    assert "`fake_good` ⚠ fake_good's source changed" in pair


def test_the_real_build_lists_every_declared_group(monkeypatch: pytest.MonkeyPatch) -> None:
    build, pages = generated(REPO, monkeypatch)
    page = pages[layout.RESULTS]
    assert f"({len(GROUPS)} groups, {sum(len(g.shapes) for g in GROUPS)} shapes," in page
    for group in GROUPS:
        part = section(page, group.name)
        for config in group.shapes:
            assert f"### `{config}` {{#group-{group.name}-{config}}}" in part
        tables = part.count('class="evidence-block evidence-compare"')
        assert tables + part.count("Not run yet") == len(group.shapes), group.name
    assert "knowledge/results.md" in str(build_nav(build.site))  # in the navigation, next to the catalogs
