"""Front matter parsing and the page schema: every problem names its line."""

from __future__ import annotations

from mla_var3.knowledge.frontmatter import parse_front_matter
from mla_var3.knowledge.schema import SourceRef, validate_meta

TAGS = {"tma", "gemm"}
GOOD = """---
id: my-page
title: My page
kind: optimization
scope: shared
arch: [sm_90a]
tags: [tma]
status: draft
related: [other]
sources:
  - path: examples/x.py
    lines: 10-20
  - path: examples/y.py
evidence:
  - {kernel: k, config: c}
---

Body starts here.
"""


def parse(text: str):
    fm, problems = parse_front_matter(text, "page.md")
    assert not problems
    return validate_meta(fm, "page.md", TAGS)


def test_good_page_parses_into_typed_metadata() -> None:
    fm, problems = parse_front_matter(GOOD, "page.md")
    assert not problems and fm.body.startswith("Body starts here.")
    assert fm.body_line == 18  # blank lines after the front matter are stripped, as MkDocs does
    meta, problems = validate_meta(fm, "page.md", TAGS)
    assert not problems
    assert meta.id == "my-page" and meta.arch == ("sm_90a",) and meta.is_pattern
    assert meta.sources == (SourceRef(path="examples/x.py", lines=(10, 20)), SourceRef(path="examples/y.py"))
    assert meta.sources[0].label() == "examples/x.py:10-20"
    assert meta.evidence[0].kernel == "k"


def test_malformed_yaml_names_the_line_where_the_construct_starts() -> None:
    _, problems = parse_front_matter(GOOD.replace("tags: [tma]", "tags: [tma"), "page.md")
    assert len(problems) == 1 and "malformed YAML" in problems[0].message
    assert problems[0].line == 7  # the unclosed list, not where YAML noticed it
    _, problems = parse_front_matter(GOOD.replace("title: My page", 'title: "My page'), "page.md")
    assert [p.line for p in problems] == [3]  # an unclosed quote on line 3, though YAML reads on to the end
    assert "while scanning a quoted scalar" in problems[0].message and "noticed at line" in problems[0].message


def test_missing_closing_dashes_says_so() -> None:
    text = GOOD.replace("---\n\nBody", "\nBody")
    fm, problems = parse_front_matter(text, "page.md")
    assert fm.data is None
    assert [str(p) for p in problems] == ["page.md:1: the front matter opened here has no closing '---' line; add one after the last key"]


def test_duplicate_key_is_reported() -> None:
    _, problems = parse_front_matter(GOOD.replace("status: draft", "status: draft\ntags: [gemm]"), "page.md")
    assert [str(p) for p in problems] == ["page.md:9: duplicate front-matter key 'tags'"]


def test_each_wrong_field_names_its_line() -> None:
    text = (
        GOOD.replace("arch: [sm_90a]", "arch: [sm_90]")
        .replace("tags: [tma]", "tags: [tma, nope]")
        .replace("lines: 10-20", "lines: 20-10")
        .replace("{kernel: k, config: c}", "{kernel: k}")
    )
    _, problems = parse(text)
    found = {(p.line, p.message.split(" (")[0]) for p in problems}
    assert (6, "arch[0] 'sm_90' is not one of: sm_80, sm_86, sm_89, sm_90a, sm_100a, sm_100f, sm_103a, sm_120a") in found
    assert (7, "unknown tag 'nope'; the closed list is in docs/knowledge/tags.yml") in found
    assert any(line == 12 and "'FIRST-LAST'" in msg for line, msg in found)
    assert (15, "evidence[0] lacks 'config'") in found


def test_evidence_items_name_a_kernel_or_a_group() -> None:
    meta, problems = parse(GOOD.replace("{kernel: k, config: c}", "{kernel: k, config: c}\n  - {group: gemm_bf16, config: c}"))
    assert not problems
    assert [(e.kernel, e.group, e.subject) for e in meta.evidence] == [("k", None, "k"), (None, "gemm_bf16", "gemm_bf16")]
    _, problems = parse(GOOD.replace("{kernel: k, config: c}", "{kernel: k, group: g, config: c}"))
    assert [(p.line, p.message) for p in problems] == [
        (15, "an evidence item names either a 'kernel' or a 'group' (with its 'config'), not both")]
    _, problems = parse(GOOD.replace("{kernel: k, config: c}", "{kernel: k, config: c, over: b}"))
    assert [(p.line, p.message) for p in problems] == [(15, "evidence[0] has unknown key 'over' (allowed: kernel, group, config)")]


def test_wrong_types_are_named() -> None:
    _, problems = parse(GOOD.replace("title: My page", "title: 42").replace("tags: [tma]", "tags: tma"))
    assert {(p.line, p.message) for p in problems} == {(3, "title must be a non-empty string, got 42"),
                                                       (7, "tags must be a YAML list, got 'tma'")}  # fmt: skip


def test_unknown_and_missing_keys() -> None:
    _, problems = parse(GOOD.replace("status: draft\n", "").replace("related:", "verdicts: []\nrelated:"))
    messages = [p.message for p in problems]
    assert "front matter lacks required key 'status'" in messages
    assert any(m.startswith("unknown front-matter key 'verdicts' (only study-note pages have it)") for m in messages)




def test_study_note_verdicts_are_checked() -> None:
    text = GOOD.replace("kind: optimization", "kind: study-note").replace(
        "related: [other]", "verdicts:\n  - {pattern: a, verdict: agrees, note: x}"
    )
    _, problems = parse(text)
    assert any("verdicts[0].verdict 'agrees' is not one of: confirms, refines, contradicts" in p.message for p in problems)


def test_page_without_front_matter() -> None:
    fm, problems = parse_front_matter("# Just a page\n", "page.md")
    assert fm.data is None and fm.body_line == 1 and not problems
