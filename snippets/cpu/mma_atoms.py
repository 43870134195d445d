"""One MMA tile on Hopper (WGMMA) and on Blackwell (tcgen05), compiled on a CPU for the concept page.

Each kernel is the smallest program around one tiled MMA: threads copy a K-major A and B tile from
global into shared memory (plain loads, so the MMA is the only new thing), the MMA reads them
through shared-memory descriptors, and the accumulator is written to global memory. On SM90 the
accumulator is a register fragment of the warpgroup; on SM100 it is a tensor in tensor memory
(TMEM), which a warp allocates, a single thread's MMA fills, an mbarrier reports complete, and the
threads copy out with ``tcgen05`` loads. While each kernel is traced, ``_facts`` records what the DSL
says the fragments are; ``fragment_table`` prints them and ``sass_table`` the MMA-related SASS of
the two cubins.
"""

from __future__ import annotations

from functools import cache

import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline
import cutlass.utils.blackwell_helpers as sm100_utils
import cutlass.utils.hopper_helpers as sm90_utils
from cutlass.cute.nvgpu import OperandMajorMode, tcgen05, warpgroup
from cutlass.cute.runtime import make_fake_compact_tensor
from cutlass.memory import SmemAllocator, TmemAllocator, get_num_tmem_alloc_cols
from cutlass.tensor_utils import LayoutEnum

from snippets.cpu.dsl_tools import compile_for, sass_counts

THREADS = 128  # one warpgroup (SM90) / four epilogue warps (SM100)
_facts: dict[str, dict[str, str]] = {"sm_90a": {}, "sm_100a": {}}


@cute.jit
def _fill_smem(dst: cute.Tensor, src: cute.Tensor, tidx: cutlass.Int32) -> None:
    """Every thread copies a strided share of ``src`` into ``dst`` (same logical shape)."""
    for i in cutlass.range(tidx, cute.size(dst), THREADS):
        dst[i] = src[i]


# --8<-- [start:wgmma]
@cute.jit
def wgmma_tile(a: cute.Tensor, b: cute.Tensor, c: cute.Tensor):
    """C (64 x 64, fp32) = A (64 x 64) @ B (64 x 64)^T, one warpgroup, one CTA."""
    tiled_mma = sm90_utils.make_trivial_tiled_mma(
        cutlass.Float16, cutlass.Float16, OperandMajorMode.K, OperandMajorMode.K,
        cutlass.Float32, atom_layout_mnk=(1, 1, 1), tiler_mn=(64, 64),
    )
    tile_mnk = (64, 64, 64)
    a_layout = sm90_utils.make_smem_layout_a(LayoutEnum.ROW_MAJOR, tile_mnk, cutlass.Float16, 1)
    b_layout = sm90_utils.make_smem_layout_b(LayoutEnum.ROW_MAJOR, tile_mnk, cutlass.Float16, 1)
    _facts["sm_90a"]["MMA atom"] = str(tiled_mma.op)
    wgmma_kernel(tiled_mma, a, b, c, a_layout, b_layout).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))


@cute.kernel
def wgmma_kernel(tiled_mma: cute.TiledMma, a, b, c, a_layout: cute.ComposedLayout, b_layout: cute.ComposedLayout):
    tidx, _, _ = cute.arch.thread_idx()
    smem = SmemAllocator()
    sA = smem.allocate_tensor(cutlass.Float16, a_layout.outer, byte_alignment=1024, swizzle=a_layout.inner)
    sB = smem.allocate_tensor(cutlass.Float16, b_layout.outer, byte_alignment=1024, swizzle=b_layout.inner)
    _fill_smem(sA[None, None, 0], a, tidx)
    _fill_smem(sB[None, None, 0], b, tidx)
    cute.arch.fence_proxy("async.shared", space="cta")  # plain stores, then an async-proxy reader
    cute.arch.sync_threads()

    thr_mma = tiled_mma.get_slice(tidx)
    tCrA = tiled_mma.make_fragment_A(thr_mma.partition_A(sA))  # SMEM descriptors, one per K block
    tCrB = tiled_mma.make_fragment_B(thr_mma.partition_B(sB))
    acc = cute.make_rmem_tensor(thr_mma.partition_shape_C((64, 64)), cutlass.Float32)  # registers
    acc.fill(0.0)
    tiled_mma.set(warpgroup.Field.ACCUMULATE, True)
    warpgroup.fence()
    for kb in cutlass.range_constexpr(cute.size(tCrA, mode=[2])):  # 64 / 16 = 4 WGMMAs
        cute.gemm(tiled_mma, acc, tCrA[None, None, kb, 0], tCrB[None, None, kb, 0], acc)
    warpgroup.commit_group()
    warpgroup.wait_group(0)  # asynchronous: the registers are valid only after this

    tCgC = thr_mma.partition_C(c)  # the same partition of C: each thread stores its own values
    for i in cutlass.range_constexpr(cute.size(acc)):
        tCgC[i] = acc[i]
    _facts["sm_90a"]["A operand fragment"] = str(tCrA.type)
    _facts["sm_90a"]["accumulator"] = str(acc.type)
# --8<-- [end:wgmma]


# --8<-- [start:tcgen05]
@cute.jit
def tcgen05_tile(a: cute.Tensor, b: cute.Tensor, c: cute.Tensor):
    """C (128 x 64, fp32) = A (128 x 64) @ B (64 x 64)^T, one CTA; the MMA is issued by one thread."""
    tiled_mma = sm100_utils.make_trivial_tiled_mma(
        cutlass.Float16, cutlass.Float16, OperandMajorMode.K, OperandMajorMode.K,
        cutlass.Float32, tcgen05.CtaGroup.ONE, (128, 64),
    )
    tile_mnk = (128, 64, 64)
    a_layout = sm100_utils.make_smem_layout_a(tiled_mma, tile_mnk, cutlass.Float16, 1)
    b_layout = sm100_utils.make_smem_layout_b(tiled_mma, tile_mnk, cutlass.Float16, 1)
    _facts["sm_100a"]["MMA atom"] = str(tiled_mma.op)
    tcgen05_kernel(tiled_mma, a, b, c, a_layout, b_layout).launch(grid=(1, 1, 1), block=(THREADS, 1, 1))


@cute.kernel
def tcgen05_kernel(tiled_mma: cute.TiledMma, a, b, c, a_layout: cute.ComposedLayout, b_layout: cute.ComposedLayout):
    tidx, _, _ = cute.arch.thread_idx()
    warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    smem = SmemAllocator()
    mma_done = smem.allocate_array(cutlass.Int64, 1)
    tmem_address = smem.allocate_array(cutlass.Int32, 1)
    sA = smem.allocate_tensor(cutlass.Float16, a_layout.outer, byte_alignment=1024, swizzle=a_layout.inner)
    sB = smem.allocate_tensor(cutlass.Float16, b_layout.outer, byte_alignment=1024, swizzle=b_layout.inner)
    thr_mma = tiled_mma.get_slice(0)  # the one "thread" of the atom: this CTA
    # The SM100 SMEM layouts are already (MMA, MMA_M, MMA_K, stage): fill them from A and B
    # partitioned the same way, so the logical shapes match.
    _fill_smem(sA[None, None, None, 0], thr_mma.partition_A(a), tidx)
    _fill_smem(sB[None, None, None, 0], thr_mma.partition_B(b), tidx)
    if tidx == 0:
        cute.arch.mbarrier_init(mma_done, 1)
    cute.arch.mbarrier_init_fence()
    cute.arch.fence_proxy("async.shared", space="cta")
    cute.arch.sync_threads()

    acc_shape = tiled_mma.partition_shape_C((128, 64))
    tmem = TmemAllocator(tmem_address, barrier_for_retrieve=pipeline.NamedBarrier(barrier_id=1, num_threads=THREADS))
    tmem.allocate(get_num_tmem_alloc_cols(tiled_mma.make_fragment_C(acc_shape)))  # warp 0 allocates
    tmem.wait_for_alloc()
    acc = cute.make_tensor(tmem.retrieve_ptr(cutlass.Float32), tiled_mma.make_fragment_C(acc_shape).layout)

    tCrA = tiled_mma.make_fragment_A(sA)  # SMEM descriptors
    tCrB = tiled_mma.make_fragment_B(sB)
    if warp == 0:
        tiled_mma.set(tcgen05.Field.ACCUMULATE, False)  # the first MMA overwrites TMEM
        for kb in cutlass.range_constexpr(cute.size(tCrA, mode=[2])):  # 64 / 16 = 4 MMAs
            cute.gemm(tiled_mma, acc, tCrA[None, None, kb, 0], tCrB[None, None, kb, 0], acc)
            tiled_mma.set(tcgen05.Field.ACCUMULATE, True)
        with cute.arch.elect_one():
            tcgen05.commit(mma_done)  # arrive on the barrier when those MMAs have finished
    cute.arch.mbarrier_wait(mma_done, 0)

    # TMEM -> registers: warp w reads TMEM lanes 32w..32w+31 (rows of the tile), 64 columns each.
    load = tcgen05.make_tmem_copy(cute.make_copy_atom(tcgen05.Ld32x32bOp(tcgen05.Repetition.x64), cutlass.Float32), acc)
    thr_load = load.get_slice(tidx)
    tDtAcc = thr_load.partition_S(acc)
    tDgC = thr_load.partition_D(thr_mma.partition_C(c))
    regs = cute.make_rmem_tensor(tDgC.shape, cutlass.Float32)
    cute.copy(load, tDtAcc, regs)
    cute.autovec_copy(regs, tDgC)

    tmem.relinquish_alloc_permit()
    cute.arch.sync_threads()  # every warp has read its lanes before warp 0 frees them
    tmem.free(acc.iterator)
    _facts["sm_100a"]["A operand fragment"] = str(tCrA.type)
    _facts["sm_100a"]["accumulator"] = str(acc.type)
    _facts["sm_100a"]["one thread's registers after tcgen05.ld"] = str(regs.type)
# --8<-- [end:tcgen05]


def _fake(rows: int, cols: int, dtype: type[cutlass.Numeric] = cutlass.Float16) -> cute.Tensor:
    return make_fake_compact_tensor(dtype, (rows, cols), stride_order=(1, 0), assumed_align=16)


@cache
def sass(arch: str) -> dict[str, int]:
    """Mnemonic -> count of the arch's kernel (compiling it also fills ``_facts[arch]``)."""
    if arch == "sm_90a":
        args = (_fake(64, 64), _fake(64, 64), _fake(64, 64, cutlass.Float32))
        return sass_counts(compile_for(wgmma_tile, *args, arch=arch))
    args = (_fake(128, 64), _fake(64, 64), _fake(128, 64, cutlass.Float32))
    return sass_counts(compile_for(tcgen05_tile, *args, arch=arch))


def _traced() -> dict[str, dict[str, str]]:
    for arch in _facts:
        sass(arch)  # compiling traces the kernel, which records its facts
    return _facts


def atoms() -> str:
    """The two MMA atoms as the DSL prints them."""
    facts = _traced()
    return "\n\n".join(f"```text title=\"{arch}\"\n{facts[arch]['MMA atom']}\n```" for arch in facts)


def fragment_table() -> str:
    """What the DSL reported, while tracing each kernel, about its fragments (types with layouts)."""
    facts = _traced()
    rows = ["| | SM90 WGMMA (per thread) | SM100 tcgen05 |", "|---|---|---|"]
    keys = [k for k in dict.fromkeys(k for f in facts.values() for k in f) if k != "MMA atom"]
    for key in keys:
        cells = [f"`{facts[arch][key]}`" if key in facts[arch] else "--" for arch in facts]
        rows.append(f"| {key} | {cells[0]} | {cells[1]} |")
    return "\n".join(rows)


MARKERS = ("HGMMA", "WARPGROUP", "UTC", "LDTM", "STTM", "SYNCS", "ELECT", "LDS", "STS", "STG", "BAR")


def sass_table() -> str:
    """The MMA, TMEM, barrier and memory instructions of both kernels' SASS."""
    ninety, hundred = sass("sm_90a"), sass("sm_100a")
    names = sorted(m for m in set(ninety) | set(hundred) if m.startswith(MARKERS))
    rows = ["| SASS instruction | SM90 (`sm_90a`) | SM100 (`sm_100a`) |", "|---|---|---|"]
    rows += [f"| `{m}` | {ninety.get(m, 0)} | {hundred.get(m, 0)} |" for m in names]
    return "\n".join(rows)
