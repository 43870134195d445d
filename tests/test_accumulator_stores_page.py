"""The facts the vectorized-accumulator-stores page states about its snippet's output: a warp's 32-bit
store of a WGMMA fragment fills half of each of 8 sectors and a 64-bit pair store fills them whole;
``autovec_copy`` narrows to one store per element when C's pointer is only 4-byte aligned; v6's
attention kernel stores the b = 1 partial with half v5's instructions, the same bytes; and the
per-CTA traffic lines name the split counts the page reads (66 at b = 1, 16 at b = 4, none at b = 128).
The MLA kernels come through the compile cache (the snippet memoizes them per process)."""

from __future__ import annotations

from snippets.cpu import accumulator_stores as acs
from snippets.cpu.epilogues import fragment_coords


def test_one_warp_store_half_then_whole_sectors() -> None:
    assert acs.warp_store(1) == (8, 128, 8)  # 8 rows, 16 of each sector's 32 bytes
    assert acs.warp_store(2) == (8, 256, 8)  # the pair: whole sectors, same sectors
    assert "| 50 % |" in acs.sector_table() and "| 100 % |" in acs.sector_table()


def test_a_row_of_one_sector_is_written_at_the_bytes_the_page_lists() -> None:
    coords = fragment_coords()
    first_row = sorted(4 * coords[lane][0][1] for lane in range(4))  # lanes 0-3 share row 0
    assert {coords[lane][0][0] for lane in range(4)} == {0} and first_row == [0, 8, 16, 24]
    assert coords[0][1] == (0, 1) and coords[0][2] == (8, 0)  # the pair's neighbour; the row 8 below


def test_autovec_copy_narrows_without_alignment() -> None:
    assert acs.aligned_stores(16) == {"STG.E.64": 8}
    assert acs.aligned_stores(4) == {"STG.E": 16}


def test_v6_halves_v5s_partial_stores() -> None:
    v5, v6 = acs.attention_stores("mla_decode_v5"), acs.attention_stores("mla_decode_v6")
    assert v5 == {"STG.E": 130, "STG.E.64": 0}  # 128 partial values + 2 partial LSEs per thread
    assert v6 == {"STG.E": 2, "STG.E.64": 64}  # the LSEs stay 32-bit
    assert 4 * (v5["STG.E"] - v6["STG.E"]) == 8 * v6["STG.E.64"]  # the same bytes


def test_cta_traffic_names_the_split_counts() -> None:
    assert acs.cta_traffic(b=1).startswith("66 splits of 2 KV blocks: 144 KiB of KV")
    assert acs.cta_traffic(b=4).startswith("16 splits of 8 KV blocks")
    assert acs.cta_traffic(b=128).startswith("one split")
    assert acs.cta_traffic(b=1).endswith("128 KiB of fp32 partial written")
