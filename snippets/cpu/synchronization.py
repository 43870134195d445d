"""Every synchronization tool of an sm_90a CuTe DSL kernel in one small kernel, compiled on a CPU.

``handoff`` runs two warpgroups. Warpgroup 0 (the writer) copies A and B from global memory into
shared memory with plain stores, fences them into the async proxy and signals a **named barrier**
with ``arrive`` (it does not wait); warpgroup 1 (the MMA warpgroup) ``arrive_and_wait``\\ s on that
barrier, multiplies the tiles with WGMMA (``warpgroup.fence`` / ``commit_group`` / ``wait_group``),
stores C and arrives on an **mbarrier** whose arrive count is its 128 threads; the writer waits on
the mbarrier's phase 0 before it leaves. A ``sync_threads`` after the mbarrier's initialisation
orders it before any use. ``sass_excerpt`` lists the synchronization instructions of the compiled
cubin in program order, ``sass_table`` compares the kernel with and without the proxy fence, and
``ptx_barriers`` shows that a named barrier's id reaches PTX unchanged.
"""

from __future__ import annotations

import re
import warnings
from functools import cache

import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline
import cutlass.utils.hopper_helpers as sm90_utils
from cutlass.cute.nvgpu import OperandMajorMode, warpgroup
from cutlass.cute.runtime import make_fake_compact_tensor
from cutlass.memory import SmemAllocator
from cutlass.tensor_utils import LayoutEnum

from mla_var3.analysis.sass import disassemble, histogram_of
from snippets.cpu.dsl_tools import compile_for

WG = 128  # threads of one warpgroup
THREADS = 2 * WG
TILE = 64  # C (64 x 64) = A (64 x 64) @ B (64 x 64)^T, fp16 in, fp32 out
TILE_READY = 1  # the named barrier's id, as the hardware sees it: the DSL does not offset it


# --8<-- [start:host]
@cute.jit
def handoff(a: cute.Tensor, b: cute.Tensor, c: cute.Tensor, proxy_fence: cutlass.Constexpr):
    """One CTA of two warpgroups: warpgroup 0 fills SMEM, warpgroup 1 runs the WGMMA on it."""
    tiled_mma = sm90_utils.make_trivial_tiled_mma(
        cutlass.Float16, cutlass.Float16, OperandMajorMode.K, OperandMajorMode.K,
        cutlass.Float32, atom_layout_mnk=(1, 1, 1), tiler_mn=(TILE, TILE),
    )
    tile_mnk = (TILE, TILE, TILE)
    a_layout = sm90_utils.make_smem_layout_a(LayoutEnum.ROW_MAJOR, tile_mnk, cutlass.Float16, 1)
    b_layout = sm90_utils.make_smem_layout_b(LayoutEnum.ROW_MAJOR, tile_mnk, cutlass.Float16, 1)
    handoff_kernel(tiled_mma, a, b, c, a_layout, b_layout, proxy_fence).launch(
        grid=(1, 1, 1), block=(THREADS, 1, 1)
    )
# --8<-- [end:host]


# --8<-- [start:kernel]
@cute.kernel
def handoff_kernel(
    tiled_mma: cute.TiledMma, a, b, c, a_layout: cute.ComposedLayout, b_layout: cute.ComposedLayout,
    proxy_fence: cutlass.Constexpr,
):
    tidx, _, _ = cute.arch.thread_idx()
    wg = cute.arch.make_warp_uniform(cute.arch.warp_idx()) // 4
    smem = SmemAllocator()
    c_stored = smem.allocate_array(cutlass.Int64, 1)
    sA = smem.allocate_tensor(cutlass.Float16, a_layout.outer, byte_alignment=1024, swizzle=a_layout.inner)
    sB = smem.allocate_tensor(cutlass.Float16, b_layout.outer, byte_alignment=1024, swizzle=b_layout.inner)
    tile_ready = pipeline.NamedBarrier(barrier_id=TILE_READY, num_threads=THREADS)  # both warpgroups

    if tidx == 0:
        cute.arch.mbarrier_init(c_stored, WG)  # phase 0 completes after 128 arrivals
    cute.arch.mbarrier_init_fence()
    cute.arch.sync_threads()  # barrier 0, all 256 threads: the init is visible to everyone

    if wg == 0:  # the writer
        for i in cutlass.range(tidx, cute.size(sA[None, None, 0]), WG):
            sA[None, None, 0][i] = a[i]  # generic-proxy stores
            sB[None, None, 0][i] = b[i]
        if cutlass.const_expr(proxy_fence):
            cute.arch.fence_proxy("async.shared", space="cta")  # ... made visible to the async proxy
        tile_ready.arrive()  # signal and go on: no wait
        cute.arch.mbarrier_wait(c_stored, 0)  # e.g. before reusing sA/sB
    else:  # the MMA warpgroup
        tile_ready.arrive_and_wait()  # blocks until all 256 threads have arrived
        thr_mma = tiled_mma.get_slice(tidx - WG)
        tCrA = tiled_mma.make_fragment_A(thr_mma.partition_A(sA))
        tCrB = tiled_mma.make_fragment_B(thr_mma.partition_B(sB))
        acc = cute.make_rmem_tensor(thr_mma.partition_shape_C((TILE, TILE)), cutlass.Float32)
        acc.fill(0.0)
        tiled_mma.set(warpgroup.Field.ACCUMULATE, True)
        warpgroup.fence()  # the accumulator registers written above are ready for the WGMMA
        for kb in cutlass.range_constexpr(cute.size(tCrA, mode=[2])):
            cute.gemm(tiled_mma, acc, tCrA[None, None, kb, 0], tCrB[None, None, kb, 0], acc)
        warpgroup.commit_group()  # the WGMMAs issued so far form one group
        warpgroup.wait_group(0)  # wait until no group is in flight: acc is valid
        tCgC = thr_mma.partition_C(c)
        for i in cutlass.range_constexpr(cute.size(acc)):
            tCgC[i] = acc[i]
        cute.arch.mbarrier_arrive(c_stored)  # one of the 128 arrivals
# --8<-- [end:kernel]


def _fake(dtype: type[cutlass.Numeric] = cutlass.Float16) -> cute.Tensor:
    return make_fake_compact_tensor(dtype, (TILE, TILE), stride_order=(1, 0), assumed_align=16)


def _args(proxy_fence: bool) -> tuple:
    return (_fake(), _fake(), _fake(cutlass.Float32), proxy_fence)


@cache
def _disassembly(proxy_fence: bool = True) -> str:
    """``nvdisasm`` of ``handoff`` compiled for sm_90a, with or without the proxy fence."""
    return disassemble(compile_for(handoff, *_args(proxy_fence), arch="sm_90a").artifacts.CUBIN)


def sass(proxy_fence: bool = True) -> dict[str, int]:
    """Mnemonic -> count of that compile."""
    return histogram_of(_disassembly(proxy_fence))


MARKERS = ("BAR", "SYNCS", "WARPGROUP", "FENCE", "MEMBAR", "HGMMA", "NANOSLEEP")
_LINE_RE = re.compile(r"/\*[0-9a-f]{4,}\*/\s+(?P<body>[^;]*;)")


def sass_lines(proxy_fence: bool = True) -> list[str]:
    """The synchronization (and WGMMA) instructions of the compile, in program order."""
    bodies = [m.group("body").strip() for m in map(_LINE_RE.search, _disassembly(proxy_fence).splitlines()) if m]
    return [body for body in bodies if any(marker in body.split()[0] for marker in MARKERS) or
            (body.startswith("@") and any(marker in body.split()[1] for marker in MARKERS))]


def sass_excerpt(proxy_fence: bool = True) -> str:
    """``sass_lines`` as a text block."""
    return "```text\n" + "\n".join(sass_lines(proxy_fence)) + "\n```"


def sass_table() -> str:
    """The synchronization instructions with and without the proxy fence, side by side."""
    fenced, bare = sass(True), sass(False)
    names = sorted(m for m in set(fenced) | set(bare) if m.startswith(MARKERS))
    rows = ["| SASS instruction | with `fence_proxy` | without |", "|---|---|---|"]
    rows += [f"| `{m}` | {fenced.get(m, 0)} | {bare.get(m, 0)} |" for m in names]
    return "\n".join(rows)


@cache
def _ptx() -> str:
    return compile_for(handoff, *_args(True), arch="sm_90a", options="--keep-ptx").artifacts.PTX


def ptx_barriers() -> str:
    """The kernel's CTA-barrier and fence lines of PTX (``bar``/``barrier``, ``fence``)."""
    keep = re.compile(r"^\s*(@%p\d+\s+)?(bar|barrier|fence)\.")
    lines = [" ".join(line.split()) for line in _ptx().splitlines() if keep.match(line)]
    return "```text\n" + "\n".join(lines) + "\n```"


def id_zero_warning() -> str:
    """What the DSL says when a named barrier is given id 0 (``sync_threads``' barrier)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pipeline.NamedBarrier(barrier_id=0, num_threads=WG)
    return "\n".join(str(w.message) for w in caught)
