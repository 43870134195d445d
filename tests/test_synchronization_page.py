"""The facts the synchronization concept page states about its snippet's output: which SASS each
tool compiles to on sm_90a, that a named barrier's id reaches PTX unchanged, that id 0 warns, and
what disappears when the proxy fence is left out. The site build fails when the snippet raises;
these fail when its output stops saying what the page's prose says."""

from __future__ import annotations

from snippets.cpu import synchronization


def test_each_tool_compiles_to_the_sass_the_page_lists_in_that_order() -> None:
    lines = synchronization.sass_lines(True)
    expected = [
        "SYNCS.EXCH.64",  # mbarrier_init
        "BAR.SYNC.DEFER_BLOCKING 0x0 ;",  # sync_threads
        "MEMBAR.ALL.CTA ;",  # fence_proxy ...
        "FENCE.VIEW.ASYNC.S ;",
        "BAR.ARV 0x1, 0x100 ;",  # NamedBarrier(1, 256).arrive()
        "SYNCS.PHASECHK.TRANS64.TRYWAIT",  # mbarrier_wait
        "NANOSLEEP.SYNCS",
        "BAR.SYNC.DEFER_BLOCKING 0x1, 0x100 ;",  # NamedBarrier(1, 256).arrive_and_wait()
        "WARPGROUP.ARRIVE ;",  # warpgroup.fence()
        "HGMMA.64x64x16.F32",
        "WARPGROUP.DEPBAR.LE gsb0, 0x0 ;",  # wait_group(0)
        "SYNCS.ARRIVE.TRANS64.A1T0",  # mbarrier_arrive
    ]
    positions = [next(i for i, line in enumerate(lines) if piece in line) for piece in expected]
    assert positions == sorted(positions), lines
    assert sum("HGMMA" in line for line in lines) == 4 and "gsb0" in [ln for ln in lines if "HGMMA" in ln][-1]
    assert lines[0].startswith("@!UP0 SYNCS.EXCH.64")  # the init is predicated: thread 0 only


def test_leaving_out_the_proxy_fence_removes_exactly_its_two_instructions() -> None:
    fenced, bare = synchronization.sass(True), synchronization.sass(False)
    assert (fenced.get("MEMBAR.ALL.CTA"), fenced.get("FENCE.VIEW.ASYNC.S")) == (1, 1)
    assert "MEMBAR.ALL.CTA" not in bare and "FENCE.VIEW.ASYNC.S" not in bare
    others = {m for m in set(fenced) | set(bare) if m.startswith(synchronization.MARKERS)}
    others -= {"MEMBAR.ALL.CTA", "FENCE.VIEW.ASYNC.S"}
    assert others and all(fenced.get(m) == bare.get(m) for m in others)


def test_named_barrier_ids_reach_ptx_unchanged_and_id_zero_is_sync_threads() -> None:
    ptx = synchronization.ptx_barriers()
    assert "bar.sync 0;" in ptx and "fence.proxy.async.shared::cta;" in ptx
    tid, n = synchronization.TILE_READY, synchronization.THREADS
    assert f"bar.arrive {tid}, {n};" in ptx and f"bar.sync {tid}, {n};" in ptx
    assert "used by sync_threads" in synchronization.id_zero_warning()
