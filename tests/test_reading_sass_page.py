"""The facts the reading-SASS concept page states about its snippet's output: how ``scale``'s lines
read, what each DSL construct compiled to in our real kernels (sm_90a and sm_100a), the wait depths
and remarks of the WGMMA diagnosis and the ``WARPSYNC`` of the TMA one. The real kernels come through
the compile cache, once per process (the snippet memoizes them); the site build fails when the
snippet raises, these fail when its output stops saying what the prose says."""

from __future__ import annotations

import pytest

from snippets.cpu import reading_sass as rs


@pytest.fixture(scope="module")
def scale_lines() -> list[str]:
    return rs.instructions(rs._scale_text())


def test_scale_reads_as_the_page_walks_it(scale_lines: list[str]) -> None:
    bodies = [line.split("*/", 1)[1].strip() for line in scale_lines]
    order = ["S2R R5, SR_TID.X", "ISETP.GE.AND P0, PT, R5, UR4, PT", "@P0 EXIT", "LDG.E", "FADD R5, R0, R0",
             "STG.E", "EXIT ;"]  # fmt: skip
    positions = [next(i for i, body in enumerate(bodies) if body.startswith(piece)) for piece in order]
    assert positions == sorted(positions), bodies
    assert "c[0x0][0x218]" in next(b for b in bodies if b.startswith("ULDC UR4"))
    assert bodies[-1].startswith("BRA") and not any(b.startswith("NOP") for b in bodies)
    assert all(int(line[2:6], 16) == 16 * i for i, line in enumerate(scale_lines))  # 16 bytes an instruction


def test_keep_sass_leaves_only_the_cubin() -> None:
    assert rs.kept_files() == [".sm_90a.cubin"]


def test_anatomy_rows_are_cut_as_the_page_explains() -> None:
    assert rs.parts(rs.first_line("hopper_gemm_ws", r"@!P0 NANOSLEEP"))[1:] == (
        "@!P0", "NANOSLEEP", "SYNCS", "0x989680")  # fmt: skip
    _, pred, op, mods, operands = rs.parts(rs.first_line("hopper_gemm_ws", r"HGMMA.*gsb0"))
    assert (pred, op, mods) == ("", "HGMMA", "64x256x16.F32.BF16") and operands.endswith("gsb0")
    assert rs.parts(rs.first_line("hopper_gemm_ws", r"USETMAXREG\.TRY_ALLOC"))[4] == "UP0, 0xe8"
    assert 0xE8 == 232 and rs.first_line("hopper_gemm_ws", r"USETMAXREG\.DEALLOC").endswith("0x28 ;")
    assert rs.parts(rs.first_line("hopper_gemm_ws", r"BAR\.SYNC\.DEFER_BLOCKING R\d+, 0x80"))[4].endswith("0x80")


def test_uniform_opcodes_lead_hopper_gemm_ws() -> None:
    ops = rs.opcode_histogram(rs.histogram_of(rs.real_sass("hopper_gemm_ws")))
    assert next(iter(ops)).startswith("U")  # the most frequent opcode is a uniform one
    assert "HGMMA" in ops and ops["HGMMA"] < 10


SM90_EXPECTED = {  # construct's SASS -> (hopper_gemm_ws, mla_decode_v4): zero or not, as the page reads them
    "HGMMA.64xNx16": (True, True), "BAR.ARV": (False, True), "UTMASTG": (True, False), "STSM": (True, False),
    "USETMAXREG": (True, False), "UCGABAR_ARV / UCGABAR_WAIT": (True, False), "ACQBULK": (False, True),
    "PREEXIT": (False, True), "LDL / STL": (False, False), "ELECT": (True, True), "UTMALDG": (True, True),
    "MEMBAR.ALL.CTA + FENCE.VIEW.ASYNC.S": (True, True),
}  # fmt: skip


def test_each_sm90_construct_is_where_the_page_says() -> None:
    by_sass = {sass: pattern for _, sass, pattern in rs.SM90_CONSTRUCTS}
    for sass, expected in SM90_EXPECTED.items():
        got = tuple(rs.construct_count(name, by_sass[sass]) > 0 for name in ("hopper_gemm_ws", "mla_decode_v4"))
        assert got == expected, sass
    # the wait loop: a TRYWAIT, then a predicated sleep and retry, then the branch back
    loop = rs.excerpt("hopper_gemm_ws", r"SYNCS\.PHASECHK\.TRANS64\.TRYWAIT", r"BRA")
    assert [rs.parts(line)[1:3] for line in loop] == [
        ("", "SYNCS"), ("@!P0", "NANOSLEEP"), ("@!P0", "SYNCS"), ("@!P0", "BRA")]  # fmt: skip


def test_the_producer_elects_one_lane_to_arm_the_stage() -> None:
    lines = rs.excerpt("hopper_gemm_ws", r"ELECT", r"UTMALDG")
    assert rs.parts(lines[0])[2] == "ELECT" and rs.parts(lines[-1])[1:3] == ("", "UTMALDG")
    arrive = next(line for line in lines if "SYNCS.ARRIVE.TRANS64" in line)
    assert rs.parts(arrive)[1] == "@P0"
    assert any("RZ, RZ, 0xc000" in line for line in lines) and 0xC000 == (128 + 256) * 64 * 2


def test_the_consumer_mainloop_reads_as_the_page_says() -> None:
    lines = [line.split("*/", 1)[1].strip() for line in rs.excerpt(
        "hopper_gemm_ws", r"USETMAXREG\.TRY_ALLOC", r"WARPGROUP\.DEPBAR\.LE gsb0, 0x0")]  # fmt: skip
    hgmma = [line for line in lines if line.startswith("HGMMA")]
    assert len(hgmma) == 8 and "RZ, !UPT" in hgmma[0] and sum("gsb0" in h for h in hgmma) == 2
    release = next(i for i, line in enumerate(lines) if line.startswith("@!P0 SYNCS.ARRIVE.TRANS64.RED.A1T0"))
    assert lines[release - 1] == "WARPGROUP.DEPBAR.LE gsb0, 0x1 ;"


def test_sm100_has_tcgen05_and_no_wgmma() -> None:
    counts = {sass: rs.construct_count("sm100_gemm_tcgen05", pattern) for _, sass, pattern in rs.SM100_CONSTRUCTS}
    assert counts["WARPGROUP.*"] == counts["HGMMA"] == 0
    for sass in ("UTCHMMA", "UTCBAR", "UTCATOMSWS.FIND_AND_SET.ALIGN", "UTCATOMSWS.AND", "LDTM.x<n>", "UTMALDG"):
        assert counts[sass] > 0, sass
    lines = rs.excerpt("sm100_gemm_tcgen05", r"UTCATOMSWS", r"UTCBAR")
    mma = [rs.parts(line)[4] for line in lines if rs.parts(line)[2] == "UTCHMMA"]
    assert mma and mma[0].split(", ")[-1] != "UPT" and all(m.endswith("UPT") for m in mma[1:])
    assert all("gdesc[" in m and "tmem[" in m and "idesc[" in m for m in mma)


def test_wgmma_waits_tell_the_serialized_loop_apart() -> None:
    waits = rs.wgmma_waits()
    assert waits["hopper_gemm_ws"] == (8, [1, 0])
    hgmma, depths = waits["mla_decode_v4"]
    assert hgmma == 160 and sorted(depths) == [0, 0, 0, 0, 0, 0, 1, 4]
    assert waits["look-ahead, wait in the next iteration"] == (8, [0] * 8)
    assert waits["look-ahead, wait in the same iteration"] == (8, [0, 0])
    serialized = [line for line in rs.serialized_excerpt().splitlines() if "HGMMA" in line]
    assert len(serialized) == 8 and all(line.endswith("gsb0 ;") for line in serialized)
    codes = [remark.split()[0] for remark in rs.back_edge_remarks()]
    assert codes == ["C7517", "C7514"]


def test_only_the_one_thread_tma_has_a_warpsync_before_its_elect() -> None:
    assert rs.elect_guards(rs._tma_one_thread(True)) == (1, 1)
    assert rs.elect_guards(rs._tma_one_thread(False)) == (1, 0)
    for name in rs.REAL_KERNELS:
        elects, after_warpsync = rs.elect_guards(rs.real_sass(name))
        assert elects > 0 and after_warpsync == 0, name
    excerpt = rs.one_thread_excerpt().splitlines()[1:-1]
    assert "ISETP.NE.U32.AND P0, PT, R7, RZ, PT" in excerpt[0]
    warpsync = next(i for i, line in enumerate(excerpt) if "WARPSYNC.ALL" in line)
    assert "ELECT" in excerpt[warpsync + 1] and "UTMALDG" in excerpt[-1]
