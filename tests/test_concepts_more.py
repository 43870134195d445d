"""The facts the MLA-decode, TMA, MMA-atom and reduction concept pages state in prose about their snippets'
output. The site build already fails when a snippet raises; these fail when a snippet still runs but its
output no longer says what the page's text says (a DSL update changing the SASS, a plan changing its rule).
"""

from __future__ import annotations

import re

from snippets.cpu import mla_decode, mma_atoms, reductions, tma_mbarrier


def test_the_absorbed_form_equals_the_per_head_form() -> None:
    diff = float(re.search(r"max \|naive - absorbed\| = (\S+)", mla_decode.absorbed_vs_naive()).group(1))
    assert diff < 1e-12


def test_query_rows_per_cached_token_decide_the_bound_and_batch_does_not() -> None:
    table = mla_decode.intensity_table()
    assert "| 16 | 1 | 16 |" in table and table.count("HBM") == 3 and table.count("tensor cores") == 3
    per_byte = [mla_decode.step_cost(b=b).rsplit(": ", 1)[1] for b in (1, 128)]
    assert per_byte[0] == per_byte[1]


def test_the_split_rule_stops_splitting_once_query_tiles_fill_the_gpu() -> None:
    rows = {int(r.split("|")[1]): int(r.split("|")[3]) for r in mla_decode.split_table().splitlines()[2:]}
    assert rows[64] == rows[128] == 1 and rows[1] > rows[4] > rows[8] > 1


def test_tma_loads_compile_to_utmaldg_and_syncs_and_multicast_adds_the_cluster_barrier() -> None:
    one, two = tma_mbarrier.sass(1), tma_mbarrier.sass(2)
    assert one.get("UTMALDG.2D") == 1 and "UTMALDG.2D.MULTICAST" not in one
    assert two.get("UTMALDG.2D.MULTICAST") == 1 and two.get("UCGABAR_WAIT") == 1
    for counts in (one, two):
        assert {"SYNCS.EXCH.64", "SYNCS.ARRIVE.TRANS64", "SYNCS.PHASECHK.TRANS64.TRYWAIT"} <= counts.keys()
    assert ".param .align 64 .b8 param_0[128]" in tma_mbarrier.ptx_excerpt(1)
    # The copy is issued from a whole warp: no WARPSYNC.ALL before the ELECT (the page's snippet once
    # issued it under `if tidx == 0`, which hangs on a GPU).
    assert "WARPSYNC.ALL" not in one and "WARPSYNC.ALL" not in two


def test_masks_cover_a_row_or_a_column_of_the_cluster() -> None:
    table = tma_mbarrier.mask_table()
    assert "| (0, 0) | 0 | `01010101` | `00000011` |" in table and "| (1, 3) | 7 | `10101010` | `11000000` |" in table


def test_mma_tiles_issue_four_mmas_and_keep_the_accumulator_where_the_page_says() -> None:
    hopper, blackwell = mma_atoms.sass("sm_90a"), mma_atoms.sass("sm_100a")
    assert hopper.get("HGMMA.64x64x16.F32") == 4 and blackwell.get("UTCHMMA") == 4
    assert {"UTCBAR", "LDTM.x64"} <= blackwell.keys() and any(m.startswith("UTCATOMSWS") for m in blackwell)
    table = mma_atoms.fragment_table()
    assert "rmem" in table and "tmem" in table and table.count("smem_desc_view") == 2
    assert '"((2,2,8),1,1)' in table and "(65536,1)" in table


def test_each_reduction_level_adds_what_the_page_lists() -> None:
    warp, cta, cluster = (reductions.sass(level) for level in reductions.TILINGS)
    assert warp.get("SHFL.BFLY") == 5 and not any(m.startswith(("STS", "BAR")) for m in warp)
    assert cta.get("SHFL.BFLY") == 10 and {"STS", "LDS"} <= cta.keys()
    assert "STAS" in cluster and "SYNCS.ARRIVE.TRANS64" in cluster and "UCGABAR_WAIT" in cluster
    assert "| + lane i ^ 1 | 28 | 28 |" in reductions.butterfly_table()
