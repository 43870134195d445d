"""The profiling concept page's build-time table: ncu shares multiplied back into work and bytes from the
committed MLA run records, and the page's claim about them (the same MMA work and DRAM bytes as
FlashMLA to within a few percent at the compute-bound shape) -- a refreshed record that breaks the
claim fails here, so the page's prose is revisited."""

from __future__ import annotations

import re

from snippets.cpu.profile_reading import MLA_B128, MLA_KERNELS, work_and_traffic


def test_the_mla_kernels_do_the_same_work_and_traffic_as_flashmla() -> None:
    table = work_and_traffic(MLA_B128, MLA_KERNELS, "FlashMLA")
    rows = [line for line in table.splitlines()[2:]]
    assert [r.split("|")[1].strip() for r in rows] == list(MLA_KERNELS)
    for row in rows:
        work, traffic = (float(x) for x in re.findall(r"(\d+\.\d+)x FlashMLA's", row))
        assert 0.9 <= work <= 1.1 and 0.9 <= traffic <= 1.1, row


def test_a_kernel_without_an_ncu_section_is_marked_not_hidden() -> None:
    table = work_and_traffic("b1-s1-t8192-h128-page64-varlen0-bfloat16", {"FlashMLA": "flashmla_decode", "v6": "mla_decode_v6"}, "FlashMLA")
    assert "| v6 | nan |" in table and "no ncu section (missing)" in table
