"""A WGMMA left in flight across a loop back-edge: ptxas then waits after every WGMMA of the kernel.

One warpgroup computes a 64 x 64 score tile per iteration into a second accumulator while it
reduces the previous one (the shape of MLA decode v3's look-ahead). ``wait="next"`` waits for the
tile at the top of the *next* iteration, so the WGMMAs are still in flight when the loop jumps back
and ordinary instructions copy their accumulator; ``wait="same"`` waits at the end of the same
iteration. ``wait="accumulate"`` is a GEMM mainloop for comparison: one accumulator that only WGMMAs
touch, one commit group left in flight across the back-edge (``wait_group(1)``). All three are
compiled for sm_90a on the CPU with ptxas's remarks on (``remarks{ptx}``); the SASS counts ``HGMMA``
(WGMMA instructions) and ``WARPGROUP.DEPBAR`` (the waits ptxas placed).

:func:`branch_symptom` is the branch case: the look-ahead issued only ``if more``, followed by a
*partial* wait (``wait_group(1)``, meant to leave the look-ahead in flight while this block's own
group completes). When the branch is not taken there is one group fewer, so ``wait_group(1)``
waits for nothing; ptxas cannot prove the accumulator read after it safe and serializes. The fix
puts each path's waits inside its branch, so each path's count is known.
"""

from __future__ import annotations

import cutlass
import cutlass.cute as cute
import cutlass.utils.hopper_helpers as sm90_utils
from cutlass.cute.nvgpu import OperandMajorMode, warpgroup
from cutlass.cute.runtime import make_fake_compact_tensor
from cutlass.memory import SmemAllocator
from cutlass.tensor_utils import LayoutEnum

from mla_var3.analysis.resources import resource_usage
from mla_var3.knowledge.expected import expect
from snippets.cpu.antipatterns.remarks import compile_with_remarks, numbered_remarks
from snippets.cpu.dsl_tools import opcode_count, sass_counts

TILE = (64, 64, 64)  # M, N, K of one score tile: 4 WGMMAs of 64 x 64 x 16
WAITS = ("next", "same", "accumulate")
BRANCH_WAITS = ("after", "inside")


@cute.jit
def issue_scores(tiled_mma: cute.TiledMma, acc: cute.Tensor, tCrA: cute.Tensor, tCrB: cute.Tensor,
                 accumulate: cutlass.Constexpr) -> None:  # fmt: skip
    """Issue ``acc (+)= A B^T`` (one WGMMA per 16-wide k-step) as one commit group; does not wait."""
    warpgroup.fence()
    tiled_mma.set(warpgroup.Field.ACCUMULATE, accumulate)
    for kb in cutlass.range_constexpr(cute.size(tCrA, mode=[2])):
        cute.gemm(tiled_mma, acc, tCrA[(None, None, kb, 0)], tCrB[(None, None, kb, 0)], acc)
        tiled_mma.set(warpgroup.Field.ACCUMULATE, True)
    warpgroup.commit_group()


def score_operands(tidx: cutlass.Int32) -> tuple:
    """(tiled MMA, A and B fragments over one SMEM tile each, two score accumulators) of thread
    ``tidx`` -- called while a kernel below is traced."""
    tiled_mma = sm90_utils.make_trivial_tiled_mma(
        cutlass.BFloat16, cutlass.BFloat16, OperandMajorMode.K, OperandMajorMode.K,
        cutlass.Float32, (1, 1, 1), tiler_mn=TILE[:2],
    )  # fmt: skip
    a_layout = sm90_utils.make_smem_layout_a(LayoutEnum.ROW_MAJOR, TILE, cutlass.BFloat16, 1)
    b_layout = sm90_utils.make_smem_layout_b(LayoutEnum.ROW_MAJOR, TILE, cutlass.BFloat16, 1)
    smem = SmemAllocator()
    sA = smem.allocate_tensor(cutlass.BFloat16, a_layout.outer, 1024, a_layout.inner)
    sB = smem.allocate_tensor(cutlass.BFloat16, b_layout.outer, 1024, b_layout.inner)
    thr = tiled_mma.get_slice(tidx)
    tCrA = tiled_mma.make_fragment_A(thr.partition_A(sA))
    tCrB = tiled_mma.make_fragment_B(thr.partition_B(sB))
    acc_s = cute.make_rmem_tensor(thr.partition_shape_C(TILE[:2]), cutlass.Float32)
    acc_next = cute.make_rmem_tensor(thr.partition_shape_C(TILE[:2]), cutlass.Float32)
    return tiled_mma, tCrA, tCrB, acc_s, acc_next


@cute.kernel
def look_ahead(out: cute.Tensor, blocks: cutlass.Int32, wait: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    tiled_mma, tCrA, tCrB, acc_s, acc_next = score_operands(tidx)
    total = cutlass.Float32(0)
    issue_scores(tiled_mma, acc_next, tCrA, tCrB, False)
    warpgroup.wait_group(0)
    if cutlass.const_expr(wait == "accumulate"):
        # --8<-- [start:accumulate]
        for _block in cutlass.range(blocks, unroll=1):
            issue_scores(tiled_mma, acc_next, tCrA, tCrB, True)  # only WGMMAs touch acc_next
            warpgroup.wait_group(1)  # the group just issued stays in flight across the back-edge
        warpgroup.wait_group(0)
        # --8<-- [end:accumulate]
        total = acc_next.load().reduce(cute.ReductionOp.ADD, 0.0, 0)
    else:
        # --8<-- [start:loop]
        for _block in cutlass.range(blocks, unroll=1):
            if cutlass.const_expr(wait == "next"):
                warpgroup.wait_group(0)  # BAD: waits for the WGMMAs the previous iteration left in flight
            acc_s.store(acc_next.load())
            issue_scores(tiled_mma, acc_next, tCrA, tCrB, False)  # next block's scores, on the tensor cores...
            total += acc_s.load().reduce(cute.ReductionOp.ADD, 0.0, 0)  # ...while this block's are reduced
            if cutlass.const_expr(wait == "same"):
                warpgroup.wait_group(0)  # FIXED: nothing stays in flight across the back-edge
        # --8<-- [end:loop]
    out[tidx] = total


@cute.kernel
def conditional_look_ahead(out: cute.Tensor, blocks: cutlass.Int32, wait: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    tiled_mma, tCrA, tCrB, acc_s, acc_next = score_operands(tidx)
    total = cutlass.Float32(0)
    # --8<-- [start:branch]
    for block in cutlass.range(blocks, unroll=1):
        issue_scores(tiled_mma, acc_s, tCrA, tCrB, True)  # this block's group
        more = block + 1 < blocks
        if cutlass.const_expr(wait == "after"):
            if more:
                issue_scores(tiled_mma, acc_next, tCrA, tCrB, False)  # the look-ahead, not after the last block
            warpgroup.wait_group(1)  # BAD: waits for this block's group only if the look-ahead was issued
            total += acc_s.load().reduce(cute.ReductionOp.ADD, 0.0, 0)
            warpgroup.wait_group(0)
        else:
            if more:
                issue_scores(tiled_mma, acc_next, tCrA, tCrB, False)
                warpgroup.wait_group(1)  # FIXED: each path waits for exactly what it issued
                total += acc_s.load().reduce(cute.ReductionOp.ADD, 0.0, 0)
                warpgroup.wait_group(0)
            else:
                warpgroup.wait_group(0)
                total += acc_s.load().reduce(cute.ReductionOp.ADD, 0.0, 0)
    # --8<-- [end:branch]
    out[tidx] = total + acc_next.load().reduce(cute.ReductionOp.ADD, 0.0, 0)


@cute.jit
def launch(out: cute.Tensor, blocks: cutlass.Int32, wait: cutlass.Constexpr):
    kernel = conditional_look_ahead if cutlass.const_expr(wait in BRANCH_WAITS) else look_ahead
    kernel(out, blocks, wait).launch(grid=[1, 1, 1], block=[128, 1, 1])


def wgmma_waits(wait: str) -> tuple[int, int, str, list[str]]:
    """(``HGMMA``, ``WARPGROUP.DEPBAR``, registers and local memory per thread, ptxas's numbered remarks)
    of one form of the loop, for sm_90a."""
    out = make_fake_compact_tensor(cutlass.Float32, (128,), assumed_align=16)
    compiled, printed = compile_with_remarks(launch, out, cutlass.Int32(4), wait)
    sass = sass_counts(compiled)
    depbar = sum(n for mnemonic, n in sass.items() if mnemonic.startswith("WARPGROUP.DEPBAR"))
    (resources,) = resource_usage(compiled.artifacts.CUBIN)
    per_thread = f"{resources.registers} registers, {resources.local_bytes + resources.stack_bytes} B local"
    return opcode_count(sass, "HGMMA"), depbar, per_thread, numbered_remarks(printed)


def print_forms(waits: tuple[str, ...]) -> None:
    """One line per form of the loop (its WGMMAs, waits and registers), then ptxas's remarks on it."""
    for wait in waits:
        hgmma, depbar, per_thread, remarks = wgmma_waits(wait)
        print(f"{LABELS[wait]}: {hgmma} HGMMA, {depbar} WARPGROUP.DEPBAR; {per_thread}")
        for remark in remarks:
            print(f"  ptxas {remark}")


LABELS = {
    "next": "wait at the top of the next iteration",
    "same": "wait in the same iteration",
    "accumulate": "GEMM mainloop, wait_group(1)",
    "after": "look-ahead under a branch, wait_group(1) after it",
    "inside": "look-ahead under a branch, each path's waits inside it",
}


@expect(prints="wait at the top of the next iteration: 8 HGMMA, 8 WARPGROUP.DEPBAR; 58 registers, 0 B local\n"
               "  ptxas C7517 wgmma.wait_group is injected by compiler to allow use of registers defined by GMMA\n"
               "  ptxas C7514 Potential Performance Loss: wgmma.mma_async instructions are serialized due to non"
               " wgmma instructions reading accumulator registers of a wgmma between start and end of the"
               " pipeline stage\n"
               "wait in the same iteration: 8 HGMMA, 2 WARPGROUP.DEPBAR; 58 registers, 0 B local\n"
               "GEMM mainloop, wait_group(1): 8 HGMMA, 3 WARPGROUP.DEPBAR")  # fmt: skip
def symptom() -> None:
    print_forms(WAITS)


@expect(prints="look-ahead under a branch, wait_group(1) after it: 8 HGMMA, 8 WARPGROUP.DEPBAR; 90 registers, 0 B local\n"
               "  ptxas C7514 Potential Performance Loss: wgmma.mma_async instructions are serialized due to non"
               " wgmma instructions reading accumulator registers of a wgmma between start and end of the"
               " pipeline stage\n"
               "look-ahead under a branch, each path's waits inside it: 8 HGMMA, 3 WARPGROUP.DEPBAR; 90 registers,"
               " 0 B local")  # fmt: skip
def branch_symptom() -> None:
    print_forms(BRANCH_WAITS)
