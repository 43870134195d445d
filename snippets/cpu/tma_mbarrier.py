"""A TMA load completing on an mbarrier, compiled for sm_90a on a CPU, for the concept page.

``tma_load_tiles`` is the smallest complete TMA program: the host builds one descriptor over a
global tensor, each CTA arms an mbarrier with the bytes it expects, one thread issues the copy, every
thread waits on the barrier's phase and then reads shared memory. With ``cluster > 1`` the CTAs of a
cluster load the same tile *together*: each issues a slice, multicast to all of them, and each arms
its own barrier for the whole tile. ``sass_table`` compiles both (fake tensors, ``--gpu-arch
sm_90a``) and lists the TMA and barrier instructions in their SASS; ``mask_table`` runs
``cute.make_layout_image_mask`` on the CPU to show which peers a multicast reaches.
"""

from __future__ import annotations

import re
from functools import cache

import cutlass
import cutlass.cute as cute
from cutlass.cute.nvgpu import cpasync
from cutlass.cute.runtime import make_fake_compact_tensor
from cutlass.memory import SmemAllocator

from mla_var3.analysis.sass import disassemble, histogram_of
from mla_var3.knowledge.expected import program_name_only
from snippets.cpu.dsl_tools import compile_for

TILE = (64, 64)  # rows x columns of fp16 per copy: 8 KiB
THREADS = 128


# --8<-- [start:host]
@cute.jit
def tma_load_tiles(src: cute.Tensor, dst: cute.Tensor, cluster: cutlass.Constexpr):
    """Host side: one descriptor over ``src``; CTA (r, j) of the grid writes src's tile j to dst's tile (r, j)."""
    smem_layout = cute.make_layout(TILE, stride=(TILE[1], 1))  # row-major, unswizzled
    op = cpasync.CopyBulkTensorTileG2SMulticastOp() if cluster > 1 else cpasync.CopyBulkTensorTileG2SOp()
    tma, tma_src = cpasync.make_tiled_tma_atom(op, src, smem_layout, TILE, num_multicast=cluster)
    grid = (cluster, cute.ceil_div(src.shape[1], TILE[1]), 1)
    load_kernel(tma, tma_src, dst, smem_layout, cluster).launch(
        grid=grid, block=(THREADS, 1, 1), cluster=(cluster, 1, 1)
    )
# --8<-- [end:host]


# --8<-- [start:device]
@cute.kernel
def load_kernel(
    tma: cute.CopyAtom, tma_src: cute.Tensor, dst: cute.Tensor, smem_layout: cute.Layout, cluster: cutlass.Constexpr
):
    tidx, _, _ = cute.arch.thread_idx()
    rank, tile, _ = cute.arch.block_idx()  # rank = this CTA's place in its cluster (cluster spans x)
    smem = SmemAllocator()
    bar = smem.allocate_array(cutlass.Int64, 1)
    s_tile = smem.allocate_tensor(cutlass.Float16, smem_layout, byte_alignment=128)

    if tidx == 0:
        cute.arch.mbarrier_init(bar, 1)  # one arrival per phase: the thread that arms it
    cute.arch.mbarrier_init_fence()
    if cutlass.const_expr(cluster > 1):
        cute.arch.cluster_arrive_relaxed()  # peers may multicast into our SMEM only after our init
        cute.arch.cluster_wait()
    else:
        cute.arch.sync_threads()

    # (TMA, tiles) views; with a cluster, tma_partition cuts each tile into `cluster` slices.
    g_tiles = cute.local_tile(tma_src, TILE, (0, None))  # (64, 64, tiles)
    t_s, t_g = cpasync.tma_partition(
        tma, rank, cute.make_layout(cluster), cute.group_modes(s_tile, 0, 2), cute.group_modes(g_tiles, 0, 2)
    )
    tile_bytes = cute.size_in_bytes(cutlass.Float16, smem_layout)  # the whole tile lands in every CTA
    # The copy is issued by a whole warp: the DSL wraps it in elect.sync, which needs every lane of the
    # warp (under `if tidx == 0` the warp-wide sync before the ELECT waits for 31 lanes that never come).
    warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    if warp == 0:
        with cute.arch.elect_one():
            cute.arch.mbarrier_arrive_and_expect_tx(bar, tile_bytes)  # one arrival: the count of 1
        if cutlass.const_expr(cluster > 1):
            every_peer = cute.make_layout_image_mask(cute.make_layout((cluster, 1)), (rank, 0), mode=0)
            cute.copy(tma, t_g[(None, tile)], t_s, tma_bar_ptr=bar, mcast_mask=every_peer)
        else:
            cute.copy(tma, t_g[(None, tile)], t_s, tma_bar_ptr=bar)
    cute.arch.mbarrier_wait(bar, 0)  # phase 0 completes: one arrival and tile_bytes have landed

    g_out = cute.local_tile(dst, TILE, (rank, tile))
    for i in cutlass.range(tidx, cute.size(s_tile), THREADS):
        g_out[i] = s_tile[i]
# --8<-- [end:device]


def _fakes(cluster: int, tiles: int = 4) -> tuple[cute.Tensor, cute.Tensor]:
    src = make_fake_compact_tensor(cutlass.Float16, (TILE[0], TILE[1] * tiles), stride_order=(1, 0), assumed_align=16)
    dst = make_fake_compact_tensor(
        cutlass.Float16, (TILE[0] * cluster, TILE[1] * tiles), stride_order=(1, 0), assumed_align=16
    )
    return src, dst


@cache
def _disassembly(cluster: int) -> str:
    """``nvdisasm`` of the kernel compiled for sm_90a with ``cluster`` CTAs per cluster."""
    return disassemble(compile_for(tma_load_tiles, *_fakes(cluster), cluster, arch="sm_90a").artifacts.CUBIN)


@cache
def _ptx(cluster: int) -> str:
    return compile_for(tma_load_tiles, *_fakes(cluster), cluster, arch="sm_90a", options="--keep-ptx").artifacts.PTX


_PARAM_RE = re.compile(r"\.param (?P<kind>[^\n]*?) \S*_(?P<name>param_\d+)(?P<size>\[\d+\])?")


def ptx_excerpt(cluster: int = 2) -> str:
    """The kernel's parameters (names shortened) and its mbarrier and bulk-copy PTX lines."""
    text = _ptx(cluster)
    params = [f".param {m.group('kind')} {m.group('name')}{m.group('size') or ''}" for m in _PARAM_RE.finditer(text)]
    ops = [" ".join(line.split()) for line in text.splitlines() if "mbarrier" in line or "cp.async.bulk" in line]
    return "```text\n" + "\n".join(params + [""] + ops) + "\n```"


def sass(cluster: int) -> dict[str, int]:
    """Mnemonic -> count of that compile."""
    return histogram_of(_disassembly(cluster))


MARKERS = ("UTMA", "UBLKCP", "SYNCS", "UCGABAR", "MEMBAR", "FENCE")
_LINE_RE = re.compile(r"/\*[0-9a-f]{4,}\*/\s+(?P<body>[^;]*;)")
_MULTICAST_RE = re.compile(r"UTMALDG\S*MULTICAST \[\w+\], \[\w+\], (?P<mask>\w+)")


def sass_excerpt(cluster: int = 2) -> str:
    """The compile's TMA, barrier and multicast-mask lines in program order (addresses dropped)."""
    bodies = [m.group("body").strip() for m in map(_LINE_RE.search, _disassembly(cluster).splitlines()) if m]
    lines, last_set = [], {}  # last_set: register -> the latest UMOV that wrote it
    for body in bodies:
        if body.startswith("UMOV"):
            last_set[body.split()[1].rstrip(",")] = body
        multicast = _MULTICAST_RE.search(body)
        if multicast and multicast.group("mask") in last_set:
            lines.append(last_set[multicast.group("mask")])  # where the CTA mask operand comes from
        if any(m in body for m in (*MARKERS, "NANOSLEEP", "ELECT")):
            lines.append(body)
    return "```text\n" + "\n".join(lines) + "\n```"


def sass_table() -> str:
    """The TMA, mbarrier and cluster-barrier instructions of both compiles, side by side."""
    one, two = sass(1), sass(2)
    names = sorted(m for m in set(one) | set(two) if m.startswith(MARKERS))
    rows = ["| SASS instruction | one CTA | cluster of 2, multicast |", "|---|---|---|"]
    rows += [f"| `{m}` | {one.get(m, 0)} | {two.get(m, 0)} |" for m in names]
    return "\n".join(rows)


# --8<-- [start:masks]
@cute.jit
def masks(out: cute.Tensor):
    """out[m, n, 0]: mask of the CTAs sharing CTA (m, n)'s row of a 2 x 4 cluster; out[m, n, 1]: its column."""
    cluster = cute.make_layout((2, 4))  # CTA (m, n) has rank m + 2 n in the cluster
    for m in cutlass.range_constexpr(2):
        for n in cutlass.range_constexpr(4):
            out[m, n, 0] = cutlass.Int32(cute.make_layout_image_mask(cluster, (m, n), mode=1))
            out[m, n, 1] = cutlass.Int32(cute.make_layout_image_mask(cluster, (m, n), mode=0))
# --8<-- [end:masks]


def mask_table() -> str:
    """The masks ``masks`` computes, run on the CPU (a host function with no kernel needs no GPU)."""
    import torch
    from cutlass.cute.runtime import from_dlpack

    out = torch.zeros(2, 4, 2, dtype=torch.int32)
    with program_name_only():
        cute.compile(masks, from_dlpack(out))(from_dlpack(out))
    rows = ["| CTA (m, n) | rank | same row (mode 1: varies n) | same column (mode 0: varies m) |", "|---|---|---|---|"]
    for m in range(2):
        for n in range(4):
            row, col = out[m, n].tolist()
            rows.append(f"| ({m}, {n}) | {m + 2 * n} | `{row:08b}` | `{col:08b}` |")
    return "\n".join(rows)
