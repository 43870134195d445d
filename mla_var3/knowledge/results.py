"""The generated **Measured results** page: every declared comparison group, each shape's same-run table.

A learner's one place to see every comparison: for each group its description, members and reference, the
pages that cite it, and per declared shape the table the ``compare()`` directive shows on a page (the same
evidence callback, inside the same marked container, so stale and failed marks, the GPU's UUID and the
intervals come with it), or one line saying the shape has not been run. Generated pages get no directive
expansion, so the callback is called here directly.

This layer never imports the evidence layer: the site's wiring (``hooks/gen_pages.py``) hands in the
declared groups as :class:`ResultsGroup`, which shapes have a record, and the ``compare`` callback.
A stale or failed table is shown marked but is not recorded as a claim: this page indexes the records,
the pages that cite a group make the claims (and the build checks them there).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from mla_var3.knowledge import layout
from mla_var3.knowledge.directives import render_evidence_block
from mla_var3.knowledge.errors import ClaimProblem, KnowledgeError, Problem
from mla_var3.knowledge.pages import Page, Site
from mla_var3.knowledge.tables import markdown_table

COMPARE_CSS = "evidence-block evidence-compare"  # the container a page's compare() directive gets
NOTE = ("*Generated at build time from the declared comparison groups and their records; "
        "declare a group in `mla_var3/evidence/groups.py`, never edit this file.*")  # fmt: skip


@dataclass(frozen=True)
class ResultsGroup:
    """What the page shows of a declared comparison group (the evidence layer's ``Group``, flattened)."""

    name: str
    description: str
    reference: str
    members: tuple[str, ...]
    shapes: tuple[str, ...]


Compare = Callable[
    [str, str], str
]  # (group, config) -> Markdown table; raises ClaimProblem with marked Markdown


def citing_pages(site: Site) -> dict[tuple[str, str], list[Page]]:
    """``(group, config) -> pages`` listing that group record under ``evidence:`` (sorted by title)."""
    cites: dict[tuple[str, str], list[Page]] = defaultdict(list)
    for page in site.knowledge_pages():
        for ref in page.meta.evidence if page.meta else ():
            if ref.group and page not in cites[(ref.group, ref.config)]:
                cites[(ref.group, ref.config)].append(page)
    return cites


def results_page(
    site: Site,
    groups: Sequence[ResultsGroup],
    recorded: Collection[tuple[str, str]],
    compare: Compare | None,
    here: str = layout.RESULTS,
) -> str:
    """The page's Markdown; ``recorded`` holds the ``(group, config)`` pairs that have a group record."""
    cites = citing_pages(site)
    guide = layout.relative_link(here, layout.EVIDENCE_GUIDE) if layout.EVIDENCE_GUIDE in site.pages else None
    shapes = sum(len(g.shapes) for g in groups)
    run = sum((g.name, c) in recorded for g in groups for c in g.shapes)
    how = f"[How to read these tables]({guide}): " if guide else ""
    out = [
        "# Measured results",
        "",
        f"Every comparison group declared in this repository ({len(groups)} groups, {shapes} shapes, {run} of them "
        "with a record), each shape's members timed in one process on one GPU, interleaved in rounds. "
        f"{how}the difference column is each member's speedup over the group's reference, with its interval "
        "and verdict. Pages cite these tables with `compare()` and `speedup()`; a table marked stale or failed "
        "here is marked the same way on every page that cites it.",
        "",
        NOTE,
        "",
        *markdown_table(
            ("Group", "Reference", "Shapes run", "Cited by"),
            [_summary_row(g, recorded, cites, here) for g in groups],
        ),
        "",
    ]
    for group in groups:
        out += _group_section(group, recorded, cites, compare, guide, here)
    return "\n".join(out) + "\n"


def _summary_row(group: ResultsGroup, recorded: Collection[tuple[str, str]], cites: dict[tuple[str, str], list[Page]],
                 here: str) -> tuple[str, ...]:  # fmt: skip
    run = sum((group.name, c) in recorded for c in group.shapes)
    return (f"[`{group.name}`](#{group_anchor(group.name)})", f"`{group.reference}`", f"{run} of {len(group.shapes)}",
            _links(_group_pages(group, cites), here) or "—")  # fmt: skip


def _group_section(
    group: ResultsGroup,
    recorded: Collection[tuple[str, str]],
    cites: dict[tuple[str, str], list[Page]],
    compare: Compare | None,
    guide: str | None,
    here: str,
) -> list[str]:
    members = ", ".join(f"`{m}`" + (" (reference)" if m == group.reference else "") for m in group.members)
    cited = _links(_group_pages(group, cites), here)
    out = [
        f"## `{group.name}` {{#{group_anchor(group.name)}}}",
        "",
        group.description.rstrip(".") + ".",
        "",
        f"Members: {members}.",
        "",
        f"Cited by: {cited}." if cited else "No page cites this group yet.",
        "",
    ]
    for config in group.shapes:
        out += [f"### `{config}` {{#{group_anchor(group.name)}-{config}}}", ""]
        pages = cites.get((group.name, config), [])
        if pages:
            out += [f"Cited by: {_links(pages, here)}.", ""]
        if (group.name, config) not in recorded:
            out += ["Not run yet: no record of this group at this shape.", ""]
            continue
        table = _table(group.name, config, compare, here)
        out += [
            *render_evidence_block(table, COMPARE_CSS, {"group": group.name, "config": config}, guide),
            "",
        ]
    return out


def _table(group: str, config: str, compare: Compare | None, here: str) -> str:
    """The group's table at ``config``, marked where the record cannot back a claim (stale, failed)."""
    if compare is None:
        return "*No evidence renderer for comparison tables in this build (see `hooks/evidence.py`).*"
    try:
        return compare(group, config)
    except ClaimProblem as problem:
        return problem.shown
    except Exception as error:  # a malformed record: stop the build naming the group and shape
        raise KnowledgeError(
            [Problem(here, 0, f"group {group} at {config}: {type(error).__name__}: {error}")]
        ) from error


def _group_pages(group: ResultsGroup, cites: dict[tuple[str, str], list[Page]]) -> list[Page]:
    pages = {p.src: p for (name, _), found in cites.items() if name == group.name for p in found}
    return sorted(pages.values(), key=lambda p: (p.title.casefold(), p.src))


def _links(pages: list[Page], here: str) -> str:
    return ", ".join(f"[{p.title}]({layout.relative_link(here, p.src)})" for p in pages)


def group_anchor(group: str) -> str:
    return f"group-{group}"
