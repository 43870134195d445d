"""A real browser on the built site: build it, serve it on 127.0.0.1, search, open a pattern page,
check that the embedded kernel code and the evidence block are there, and that evidence blocks fit
the page (no horizontal overflow) at 1400 px and 900 px.

Uses Debian's ``chromium`` (``apt-get install -y chromium``) driven by Python ``playwright``; no
browser is ever downloaded. Skips, saying why, when either is missing.
"""

from __future__ import annotations

import functools
import http.server
import importlib.util
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Browser

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--no-first-run"]  # fmt: skip

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian chromium is not installed (apt-get install -y chromium)"),
    pytest.mark.skipif(importlib.util.find_spec("playwright") is None, reason="Python playwright is not installed"),
]


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the stdlib's name
        pass


@pytest.fixture(scope="module")
def site_url(real_site: Path) -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(real_site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        thread.join()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """One chromium for the module's tests (each opens its own page, in a context of its own)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


def test_search_then_open_a_pattern_page(site_url: str, browser: Browser) -> None:
    from playwright.sync_api import expect

    page = browser.new_page()
    try:
        requests: list[str] = []
        page.on("request", lambda request: requests.append(request.url))
        page.goto(f"{site_url}/index.html")

        page.fill("input[name=query]", "multistage TMA mbarrier pipeline")
        result = page.locator(".md-search-result__item", has_text="Multistage TMA").first
        expect(result).to_be_visible(timeout=15_000)
        result.locator("a").first.click()
        page.wait_for_url("**/knowledge/optimizations/multistage-tma-pipeline.html*")

        # Kernel code embedded from mla_var3, titled with its source path.
        titles = page.locator(".highlight .filename")
        expect(titles.filter(has_text="warp_specialized/kernel.py · tma_pipeline_producer").first).to_be_visible()
        expect(page.locator(".highlight code", has_text="producer_acquire").first).to_be_visible()
        # The evidence block is there (its content is whatever the evidence layer reports: a
        # table, or a visible "missing"/"stale" status).
        evidence = page.locator(".evidence-block[data-kernel=hopper_gemm_ws]")
        expect(evidence).to_have_count(1)
        # The committed record fills it: a status, then the table with the device and a time.
        text = evidence.inner_text()
        assert any(s in text for s in ("Run-verified", "Stale evidence")), text
        assert "median µs" in text and "NVIDIA H200" in text
        assert re.search(r"\b\d[\d,]*\.\d\d \(", text), text  # a median with its spread
        expect(evidence.locator("a.evidence-guide-link")).to_have_attribute("href", "../../evidence-guide.html")
        # The generated parts: CUTLASS source links at the pinned commit, and backlinks.
        expect(page.locator("a[href*='github.com/NVIDIA/cutlass/blob/7107b055']").first).to_be_attached()
        expect(page.locator("#referenced-by")).to_be_visible()
    finally:
        page.context.close()
    offsite = [url for url in requests if not url.startswith(site_url)]
    assert not offsite, f"the site fetched from the network: {offsite}"


def test_devlog_shows_measured_values_with_provenance(site_url: str, browser: Browser) -> None:
    from playwright.sync_api import expect

    page = browser.new_page()
    try:
        page.goto(f"{site_url}/kernels/hopper-gemm-ws.html")
        values = page.locator(".ev-value")
        expect(values.first).to_be_visible()
        # Every number in the prose came from a record: its tooltip names device, config, date and commit;
        # one the records cannot back is marked, and its tooltip says why.
        for i in range(values.count()):
            value = values.nth(i)
            title = value.get_attribute("title") or ""
            assert title, value.inner_text()
            if "ev-stale" not in (value.get_attribute("class") or ""):
                assert "H200" in title, title
        # The group comparisons and the roofline figure are there, rendered from the records.
        expect(page.locator(".evidence-compare[data-group=gemm_bf16]").first).to_be_visible()
        expect(page.locator("figure.roofline").first).to_be_visible()
    finally:
        page.context.close()


EVIDENCE_PAGES = ("kernels/hopper-gemm-ws.html", "kernels/elementwise-add.html",
                  "knowledge/anti-patterns/small-integer-benchmark-data.html")  # fmt: skip
# For each evidence block: how far it, or anything in it (Material's table scroll wrapper included),
# runs past its own width, and any kernel name (inline code) that wrapped onto a second line.
OVERFLOW_JS = """() => [...document.querySelectorAll('.evidence-block')].map(block => ({
  name: block.dataset.kernel || block.dataset.group,
  over: Math.max(0, ...[block, ...block.querySelectorAll('*')]
    .filter(e => e.clientWidth > 0).map(e => e.scrollWidth - e.clientWidth)),
  broken: [...block.querySelectorAll('code')].filter(c => c.getClientRects().length > 1).map(c => c.innerText),
  guide: block.querySelectorAll('a.evidence-guide-link').length,
}))"""


@pytest.mark.parametrize("width", [1400, 900])
def test_evidence_blocks_fit_the_page(site_url: str, width: int, browser: Browser) -> None:
    page = browser.new_page(viewport={"width": width, "height": 900})
    try:
        for path in EVIDENCE_PAGES:
            page.goto(f"{site_url}/{path}")
            blocks = page.evaluate(OVERFLOW_JS)
            assert blocks, f"{path}: no evidence block"
            for block in blocks:
                assert block["over"] <= 1, f"{path} at {width} px: {block['name']} overflows by {block['over']} px"
                assert not block["broken"], f"{path} at {width} px: names broken across lines: {block['broken']}"
                assert block["guide"] == 1, f"{path}: {block['name']} does not link the evidence guide"
    finally:
        page.context.close()
