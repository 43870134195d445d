"""A TMA load issued under ``if tidx == 0``: the DSL's ``elect.sync`` then runs in a one-thread branch.

``cute.copy`` with a TMA atom picks the issuing lane itself: it wraps the copy in ``elect.sync``,
which the whole warp must execute. Issued from ``if tidx == 0``, only lane 0 reaches it; lanes 1-31
went on to the mbarrier wait. Both forms compile without a word (even with the DSL's
synchronization checker on, ``warnings{nvvm}``); the PTX shows ``elect.sync`` under a branch on
the thread index, and in the SASS ptxas puts a ``WARPSYNC.ALL`` (wait for all 32 lanes) in front of
the ``ELECT`` that lane 0 reaches alone. The fixed form issues from ``if warp == 0`` (a warp-uniform
condition) and lets the DSL elect. Compiled for sm_90a on the CPU.
"""

from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout

import cutlass
import cutlass.cute as cute
from cutlass.cute.nvgpu import cpasync
from cutlass.cute.runtime import make_fake_compact_tensor

from mla_var3.analysis.sass import disassemble
from mla_var3.knowledge.expected import expect
from snippets.cpu.dsl_tools import compile_for, opcode_count, sass_counts

TILE_M, TILE_N = 64, 128  # one fp32 tile, 32 KiB: one TMA box
TILE_BYTES = TILE_M * TILE_N * 4


@cute.kernel
def tile_load(load: cute.CopyAtom, src: cute.Tensor, out: cute.Tensor, smem_layout: cute.Layout,
              one_thread: cutlass.Constexpr):  # fmt: skip
    tidx, _, _ = cute.arch.thread_idx()
    smem = cutlass.memory.SmemAllocator()
    s_tile = smem.allocate_tensor(cutlass.Float32, smem_layout, byte_alignment=128)
    barrier = smem.allocate_array(cutlass.Int64, 1, byte_alignment=8)
    warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    if warp == 0:
        with cute.arch.elect_one():
            cute.arch.mbarrier_init(barrier, 1)
    cute.arch.mbarrier_init_fence()
    cute.arch.barrier()
    g_tile = cute.local_tile(src, (TILE_M, TILE_N), (0, 0))
    s_box, g_box = cpasync.tma_partition(
        load, 0, cute.make_layout(1), cute.group_modes(s_tile, 0, 2), cute.group_modes(g_tile, 0, 2)
    )
    # --8<-- [start:issue]
    if cutlass.const_expr(one_thread):
        if tidx == 0:  # BAD: one lane reaches the elect.sync inside cute.copy
            cute.arch.mbarrier_arrive_and_expect_tx(barrier, TILE_BYTES)
            cute.copy(load, g_box, s_box, tma_bar_ptr=barrier)
    else:
        if warp == 0:  # FIXED: the whole warp enters; the DSL elects the lane that issues
            with cute.arch.elect_one():
                cute.arch.mbarrier_arrive_and_expect_tx(barrier, TILE_BYTES)
            cute.copy(load, g_box, s_box, tma_bar_ptr=barrier)
    cute.arch.mbarrier_wait(barrier, 0)  # every thread waits for the tile
    # --8<-- [end:issue]
    out[tidx] = s_tile[0, tidx]


@cute.jit
def launch(src: cute.Tensor, out: cute.Tensor, one_thread: cutlass.Constexpr):
    smem_layout = cute.make_layout((TILE_M, TILE_N), stride=(TILE_N, 1))
    load, tma_src = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), src, smem_layout, (TILE_M, TILE_N))
    tile_load(load, tma_src, out, smem_layout, one_thread).launch(
        grid=[1, 1, 1], block=[128, 1, 1], smem=TILE_BYTES + 64
    )


def compiled(one_thread: bool) -> tuple[object, str]:
    """The kernel compiled for sm_90a with the DSL's synchronization warnings on, and what it printed."""
    src = make_fake_compact_tensor(cutlass.Float32, (TILE_M, TILE_N), stride_order=(1, 0), assumed_align=16)
    out = make_fake_compact_tensor(cutlass.Float32, (128,), assumed_align=16)
    printed = io.StringIO()
    with redirect_stdout(printed), redirect_stderr(printed):
        fn = compile_for(launch, src, out, one_thread, arch="sm_90a", options="--keep-ptx warnings{nvvm}")
    return fn, printed.getvalue()


def sass_excerpt(one_thread: bool) -> str:
    """The SASS from the thread-index read to the TMA load, only the instructions that tell the story
    (the branch conditions, the branches, the barrier arrive, the warp sync, the elect, the load)."""
    fn, _ = compiled(one_thread)
    keep = ("S2R", "SHF", "ISETP", "BRA", "SYNCS.ARRIVE", "WARPSYNC", "ELECT", "UTMALDG")
    shown = []
    for line in disassemble(fn.artifacts.CUBIN).splitlines():
        instruction = line.split("*/", 1)[-1].strip().rstrip(" ;")
        words = instruction.split()
        opcode = (words[1] if words[0].startswith("@") else words[0]) if words else ""
        if line.lstrip().startswith("/*") and opcode.startswith(keep):
            shown.append(instruction)
            if "UTMALDG" in instruction:
                break
    return "\n".join(shown)


def report(one_thread: bool) -> str:
    """One line: what the compile printed, the SASS around the elect, and the TMA load."""
    fn, printed = compiled(one_thread)
    sass = sass_counts(fn)
    said = "nothing" if not printed.strip() else "something"
    counts = ", ".join(f"{op} ×{opcode_count(sass, op)}" for op in ("UTMALDG", "ELECT", "WARPSYNC"))
    return f"compile printed {said}; SASS {counts}"


@expect(prints="if tidx == 0: compile printed nothing; SASS UTMALDG ×1, ELECT ×1, WARPSYNC ×1\n"
               "if warp == 0: compile printed nothing; SASS UTMALDG ×1, ELECT ×1, WARPSYNC ×0")  # fmt: skip
def symptom() -> None:
    for label, one_thread in (("if tidx == 0", True), ("if warp == 0", False)):
        print(f"{label}: {report(one_thread)}")
