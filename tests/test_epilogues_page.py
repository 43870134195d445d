"""The facts the epilogues concept page states about its snippet's output: which stores each path
compiles to on sm_90a, what fusion adds, the accumulator's layout, a direct store's sectors, and the
ring rule. The site build fails when the snippet raises; these fail when its output stops saying
what the page's prose says."""

from __future__ import annotations

import pytest

from snippets.cpu import epilogues
from snippets.cpu.dsl_tools import opcode_count


def test_each_path_compiles_to_the_stores_the_page_lists() -> None:
    direct, sts, stsm = (epilogues.sass(path) for path in epilogues.PATHS)
    assert direct.get("STG.E") == 8 and not any(opcode_count(direct, op) for op in ("STS", "STSM", "UTMASTG", "BAR"))
    for smem_path in (sts, stsm):
        assert smem_path.get("UTMASTG.2D") == 1 and opcode_count(smem_path, "STG") == 0
        assert {"FENCE.VIEW.ASYNC.S", "BAR.SYNC.DEFER_BLOCKING", "DEPBAR.LE"} <= smem_path.keys()
    assert sts.get("STS") == 8 and stsm.get("STSM.16.M88.4") == 2 and "STS" not in stsm


@pytest.mark.parametrize("path", epilogues.PATHS)
def test_fusion_adds_arithmetic_and_leaves_the_stores(path: str) -> None:
    plain, fused = epilogues.sass(path), epilogues.sass(path, True)
    assert (opcode_count(fused, "FFMA"), opcode_count(fused, "FMNMX")) == (16, 16)
    assert opcode_count(plain, "FMNMX") == 0
    for op in epilogues.STORE_OPCODES:
        assert opcode_count(plain, op) == opcode_count(fused, op), op


def test_a_thread_holds_pairs_eight_rows_and_eight_columns_apart() -> None:
    coords = epilogues.fragment_coords()
    assert coords[0][:4] == [(0, 0), (0, 1), (8, 0), (8, 1)] and coords[0][4] == (0, 8)
    assert {r for r, _ in coords[3]} == {0, 8} and coords[32][0] == (16, 0)  # a quad shares a row; a warp owns 16
    assert sorted(c for t in range(epilogues.THREADS) for c in coords[t]) == [(r, c) for r in range(64) for c in range(32)]


def test_a_direct_store_of_a_warp_touches_eight_rows_and_half_sectors() -> None:
    rows = epilogues.direct_store_table().splitlines()[2:]
    assert len(rows) == 8 and all(row == f"| {k} | 8 | 128 | 8 | 50 % |" for k, row in enumerate(rows))


@pytest.mark.parametrize("epi_stages", [2, 3, 4, 6])
def test_the_slot_the_next_subtile_writes_is_free_after_the_wait(epi_stages: int) -> None:
    rows = epilogues.ring_rows(epi_stages, 16)  # asserts the rule for every subtile
    assert [slot for _, slot, _, _ in rows] == [j % epi_stages for j in range(16)]


def test_the_ring_rule_fails_with_a_wait_that_leaves_one_store_too_many() -> None:
    """With epi_stages - 1 stores left in flight the next subtile's slot may still be read."""
    with pytest.raises(AssertionError, match="still read"):
        epilogues.ring_rows(4, 8, in_flight=3)
