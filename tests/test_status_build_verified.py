"""The ``build-verified`` status: a page whose claims rest on code the site build runs on the CPU (no GPU
record). The rule refuses it on a page that executes nothing, accepts an executed block or an
``estimate()``, and still requires every listed record to be fresh; the repository's own
build-verified pages pass."""

from __future__ import annotations

from pathlib import Path

import pytest

from mla_var3.knowledge import load_site, read_page, status_claim_problems

REPO = Path(__file__).resolve().parent.parent
EXECUTED = '\n```python exec="on"\nprint("ran at build time")\n```\n'


@pytest.fixture
def beta(fixture_root: Path) -> Path:
    page = fixture_root / "docs/knowledge/anti-patterns/beta.md"
    page.write_text(page.read_text().replace("status: draft", "status: build-verified"))
    return page


def test_a_page_that_executes_nothing_is_refused(beta: Path) -> None:
    messages = [p.message for p in status_claim_problems(read_page(beta))]
    assert messages == [
        "status 'build-verified' but nothing on the page runs at build time: add a ```python exec=\"on\"``` "
        "block or an estimate() directive"
    ]


def test_an_executed_block_or_an_estimate_backs_it(beta: Path) -> None:
    text = beta.read_text()
    beta.write_text(text.replace("Nothing.", "Nothing." + EXECUTED, 1))
    assert status_claim_problems(read_page(beta)) == []
    beta.write_text(
        text.replace("Nothing.", 'Nothing: {{ estimate("snippets.cpu.mla_estimates:flop_floor") }}.', 1)
    )
    assert status_claim_problems(read_page(beta)) == []


def test_a_listed_record_must_still_be_fresh(beta: Path) -> None:
    text = beta.read_text().replace("Nothing.", "Nothing." + EXECUTED, 1)
    beta.write_text(
        text.replace(
            "status: build-verified\n",
            "status: build-verified\nevidence:\n  - {kernel: k, config: n1-bfloat16}\n",
        )
    )
    page = read_page(beta)
    assert status_claim_problems(page, lambda ref: "compile-verified") == []
    assert [p.message for p in status_claim_problems(page, lambda ref: "stale")] == [
        "status 'build-verified' but the evidence of kernel k, config n1-bfloat16 is stale"
    ]


def test_the_repository_build_verified_pages_execute_something() -> None:
    site = load_site(REPO / "docs", REPO)
    pages = [p for p in site.pages.values() if p.meta is not None and p.meta.status == "build-verified"]
    assert pages, "no page uses build-verified"
    for page in pages:
        assert status_claim_problems(page) == [], page.display
