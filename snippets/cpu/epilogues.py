"""Three ways out of the accumulator, compiled for sm_90a on a CPU, for the epilogues concept page.

``store_subtile`` takes one epilogue subtile -- 64 rows x 32 columns of fp32 accumulator, held by
one warpgroup in the layout a 64 x 32 WGMMA leaves it -- converts it to bf16 and writes it to C,
by one of three paths:

- ``direct``: every thread stores its own fragment straight to global memory (``STG``);
- ``sts_tma``: every thread writes its fragment to a swizzled SMEM buffer with plain stores
  (``STS``), then one thread hands the buffer to the TMA unit (``UTMASTG``);
- ``stsm_tma``: the same, but the warps write SMEM with ``stmatrix`` (``STSM``), four 8 x 8
  matrices per instruction, through a tiled copy derived from the MMA's C layout.

With ``fuse`` the values go through ``relu(alpha * acc + beta)`` on the way out: an epilogue
fusion, arithmetic on registers before the conversion, with the same stores. The accumulator is a
stand-in for a mainloop's result, computed from the thread index so the compiler cannot fold it.
``sass_table`` compiles every variant (fake tensors, ``--gpu-arch sm_90a``) and counts the
instructions the page names; ``fusion_table`` compares a path with and without the fusion.
``fragment_table`` and ``direct_store_table`` read the accumulator's layout from the DSL (which
coordinates each thread holds, and so what one warp's direct store touches); ``ring_table`` models
the epilogue ring of ``hopper_gemm_ws`` in plain Python: which slot a subtile writes, and why the
slot is free by then.
"""

from __future__ import annotations

import warnings
from functools import cache

import cutlass
import cutlass.cute as cute
import cutlass.utils.hopper_helpers as sm90_utils
from cutlass.base_dsl.ast_helpers import DSLOptimizationWarning
from cutlass.cute.nvgpu import OperandMajorMode, cpasync, warp
from cutlass.cute.runtime import make_fake_compact_tensor
from cutlass.memory import SmemAllocator
from cutlass.tensor_utils import LayoutEnum

from snippets.cpu.dsl_tools import compile_for, opcode_count, sass_counts

SUBTILE = (64, 32)  # one warpgroup's WGMMA rows x the epilogue's columns, as in hopper_gemm_ws
THREADS = 128  # one warpgroup
PATHS = ("direct", "sts_tma", "stsm_tma")
C_SHAPE = (256, 256)  # the fake C the variants are compiled against: 4 x 8 subtiles


def _mma() -> cute.TiledMma:
    """A one-warpgroup WGMMA whose accumulator is one 64 x 32 subtile (its operands are never used)."""
    return sm90_utils.make_trivial_tiled_mma(
        cutlass.BFloat16,
        cutlass.BFloat16,
        OperandMajorMode.K,
        OperandMajorMode.K,
        cutlass.Float32,
        (1, 1, 1),
        tiler_mn=SUBTILE,
    )


# --8<-- [start:host]
@cute.jit
def store_subtile(c: cute.Tensor, alpha: cutlass.Float32, beta: cutlass.Float32,
                  path: cutlass.Constexpr, fuse: cutlass.Constexpr):  # fmt: skip
    """Host side: CTA (i, j) writes C's subtile (i, j); the TMA paths get a store descriptor."""
    # A swizzled (64, 32) bf16 buffer, the layout stmatrix and the TMA store agree on.
    s_layout = sm90_utils.make_smem_layout_epi(c.element_type, LayoutEnum.ROW_MAJOR, SUBTILE, 1)
    s_layout = cute.slice_(s_layout, (None, None, 0))
    tma, tma_c = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileS2GOp(), c, s_layout, SUBTILE)
    grid = (cute.ceil_div(c.shape[0], SUBTILE[0]), cute.ceil_div(c.shape[1], SUBTILE[1]), 1)
    epilogue_kernel(c, tma, tma_c, s_layout, alpha, beta, path, fuse).launch(grid=grid, block=(THREADS, 1, 1))
# --8<-- [end:host]


@cute.kernel
def epilogue_kernel(c: cute.Tensor, tma: cute.CopyAtom, tma_c: cute.Tensor, s_layout: cute.ComposedLayout,
                    alpha: cutlass.Float32, beta: cutlass.Float32,
                    path: cutlass.Constexpr, fuse: cutlass.Constexpr):  # fmt: skip
    tidx, _, _ = cute.arch.thread_idx()
    bm, bn, _ = cute.arch.block_idx()
    # --8<-- [start:accumulator]
    tiled_mma = _mma()
    thr_mma = tiled_mma.get_slice(tidx)
    acc = cute.make_rmem_tensor(tiled_mma.partition_shape_C(SUBTILE), cutlass.Float32)
    for i in cutlass.range_constexpr(cute.size(acc)):  # stand-in for the mainloop's result
        acc[i] = cutlass.Float32(tidx) + cutlass.Float32(i)
    if cutlass.const_expr(fuse):  # a fused epilogue: relu(alpha * acc + beta), still in registers
        for i in cutlass.range_constexpr(cute.size(acc)):
            acc[i] = cute.arch.fmax(alpha * acc[i] + beta, cutlass.Float32(0.0))
    out = cute.make_rmem_tensor(acc.shape, c.element_type)
    out.store(acc.load().to(c.element_type))  # fp32 -> bf16, packed two at a time
    # --8<-- [end:accumulator]

    if cutlass.const_expr(path == "direct"):
        # --8<-- [start:direct]
        g_sub = cute.local_tile(c, SUBTILE, (bm, bn))  # this CTA's (64, 32) piece of C
        cute.autovec_copy(out, thr_mma.partition_C(g_sub))  # each thread: its own pairs, to global
        # --8<-- [end:direct]
    else:
        # --8<-- [start:smem_tma]
        smem = SmemAllocator()
        s_sub = smem.allocate_tensor(c.element_type, s_layout.outer, byte_alignment=128, swizzle=s_layout.inner)
        if cutlass.const_expr(path == "sts_tma"):
            cute.autovec_copy(out, thr_mma.partition_C(s_sub))  # each thread: its own pairs, to SMEM
        else:
            # stmatrix: a tiled copy whose thread layout is the MMA's C layout (8x8 16-bit, x4).
            atom = cute.make_copy_atom(warp.StMatrix8x8x16bOp(False, 4), c.element_type)
            r2s = cute.make_tiled_copy_S(atom, cute.make_tiled_copy_C_atom(atom, tiled_mma))
            thr_r2s = r2s.get_slice(tidx)
            frag = cute.make_rmem_tensor(thr_r2s.partition_S(s_sub).shape, c.element_type)
            acc_view = r2s.retile(out)  # the same values, in the order the copy walks them
            for v in cutlass.range_constexpr(cute.size(frag)):
                frag[v] = acc_view[v]
            cute.copy(r2s, frag, thr_r2s.partition_D(s_sub))
        cute.arch.fence_proxy("async.shared", space="cta")  # generic-proxy writes, visible to TMA
        cute.arch.barrier()  # the whole subtile is in SMEM
        if cute.arch.make_warp_uniform(cute.arch.warp_idx()) == 0:
            s_tma, g_tma = cpasync.tma_partition(
                tma, 0, cute.make_layout(1), cute.group_modes(s_sub, 0, 2),
                cute.group_modes(cute.local_tile(tma_c, SUBTILE, (None, None)), 0, 2),
            )  # fmt: skip
            cute.copy(tma, s_tma, g_tma[(None, bm, bn)])  # one TMA store of the whole box
            cute.arch.cp_async_bulk_commit_group()
            cute.arch.cp_async_bulk_wait_group(0, read=True)  # SMEM must outlive the store
        # --8<-- [end:smem_tma]


@cache
def sass(path: str, fuse: bool = False) -> dict[str, int]:
    """Mnemonic -> count of one variant compiled for sm_90a."""
    c = make_fake_compact_tensor(cutlass.BFloat16, C_SHAPE, stride_order=(1, 0), assumed_align=16)
    compiled = compile_for(store_subtile, c, cutlass.Float32(2.0), cutlass.Float32(1.0), path, fuse, arch="sm_90a")
    return sass_counts(compiled)


STORE_OPCODES = ("STG", "STS", "STSM", "UTMASTG", "BAR", "FENCE", "DEPBAR")


def sass_table() -> str:
    """Per path, the store-side instructions of its SASS (with the exact mnemonics)."""
    rows = ["| path | " + " | ".join(f"`{op}`" for op in STORE_OPCODES) + " | mnemonics |",
            "|---|" + "---|" * (len(STORE_OPCODES) + 1)]  # fmt: skip
    for path in PATHS:
        hist = sass(path)
        names = sorted(m for m in hist if m.split(".", 1)[0] in STORE_OPCODES)
        cells = [str(opcode_count(hist, op)) for op in STORE_OPCODES]
        rows.append(f"| `{path}` | " + " | ".join(cells) + " | " + ", ".join(f"`{m}` x{hist[m]}" for m in names) + " |")
    return "\n".join(rows)


def fusion_table(path: str = "stsm_tma") -> str:
    """The arithmetic and the stores of ``path``, without and with ``relu(alpha * acc + beta)``."""
    opcodes = ("FFMA", "FMNMX", "F2FP", *STORE_OPCODES[:4])
    rows = ["| epilogue | " + " | ".join(f"`{op}`" for op in opcodes) + " |", "|---|" + "---|" * len(opcodes)]
    for fuse in (False, True):
        hist = sass(path, fuse)
        label = "relu(alpha * acc + beta), then store" if fuse else "convert and store"
        rows.append(f"| {label} | " + " | ".join(str(opcode_count(hist, op)) for op in opcodes) + " |")
    return "\n".join(rows)


@cache
def fragment_coords() -> dict[int, list[tuple[int, int]]]:
    """Thread -> the (row, column) of the subtile each of its accumulator values holds, in order:
    the MMA's ``partition_C`` of an identity tensor, evaluated at trace time on the CPU."""
    owned: dict[int, list[tuple[int, int]]] = {}

    @cute.jit  # unrolled over all 128 threads at trace time on purpose: it computes, it emits nothing
    def trace() -> None:
        coords = cute.make_identity_tensor(SUBTILE)
        for t in cutlass.range_constexpr(THREADS):
            part = _mma().get_slice(t).partition_C(coords)
            owned[t] = [tuple(part[i]) for i in range(cute.size(part))]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DSLOptimizationWarning)
        compile_for(trace, arch="sm_90a")
    return owned


def fragment_table(threads: tuple[int, ...] = (0, 1, 4, 32)) -> str:
    """The coordinates a few threads hold, two values (one 32-bit bf16 pair) per cell."""
    coords = fragment_coords()
    rows = ["| thread | its values' (row, column), in pairs |", "|---|---|"]
    for t in threads:
        pairs = [f"({r}, {c}) ({r2}, {c2})" for (r, c), (r2, c2) in zip(coords[t][::2], coords[t][1::2], strict=True)]
        rows.append(f"| {t} | " + " · ".join(pairs) + " |")
    return "\n".join(rows)


SECTOR_BYTES = 32


def direct_store_table(row_elems: int = C_SHAPE[1], elem_bytes: int = 2) -> str:
    """Per direct store instruction (value pair k) of warp 0: rows, bytes and 32-byte sectors touched
    in a row-major C ``row_elems`` wide (bf16)."""
    coords = fragment_coords()
    rows = ["| store (pair) | rows touched | bytes written | 32-byte sectors | bytes of those sectors used |",
            "|---|---|---|---|---|"]  # fmt: skip
    for k in range(len(coords[0]) // 2):
        cells = [coords[lane][2 * k + v] for lane in range(32) for v in (0, 1)]
        sectors = {(r * row_elems + c) * elem_bytes // SECTOR_BYTES for r, c in cells}
        written = len(cells) * elem_bytes
        used = f"{100 * written // (len(sectors) * SECTOR_BYTES)} %"
        rows.append(f"| {k} | {len({r for r, _ in cells})} | {written} | {len(sectors)} | {used} |")
    return "\n".join(rows)


def ring_rows(epi_stages: int, subtiles: int, in_flight: int | None = None) -> list[tuple[int, int, int, int | None]]:
    """``hopper_gemm_ws``'s ring, one row per subtile j: (j, slot, oldest store that may still read
    the ring after the wait, the subtile whose store last read the slot j + 1 writes).

    Before subtile j's barrier, stores 0..j-1 have been committed and the store warp waits until at
    most ``in_flight`` (the kernel: ``epi_stages - 2``) still read SMEM. Each row asserts that the
    slot the next subtile writes is no longer read; any ``in_flight`` above ``epi_stages - 2`` fails.
    """
    in_flight = epi_stages - 2 if in_flight is None else in_flight
    rows = []
    for j in range(subtiles):
        in_flight_from = max(0, j - in_flight)  # stores j - in_flight .. j-1 may still read
        previous_user = j + 1 - epi_stages  # the last subtile that used slot (j + 1) % E
        assert previous_user < in_flight_from or previous_user < 0, f"slot {(j + 1) % epi_stages} still read at {j}"
        rows.append((j, j % epi_stages, in_flight_from, previous_user if previous_user >= 0 else None))
    return rows


def ring_table(epi_stages: int = 4, subtiles: int = 8) -> str:
    rows = ["| subtile j | writes slot | after the wait, stores still reading SMEM | slot j + 1 was last read by |",
            "|---|---|---|---|"]  # fmt: skip
    for j, slot, oldest, previous in ring_rows(epi_stages, subtiles):
        reading = f"{oldest} .. {j - 1}" if oldest <= j - 1 else "none"
        last = f"store {previous} (done)" if previous is not None else "nobody yet"
        rows.append(f"| {j} | {slot} | {reading} | {last} |")
    return "\n".join(rows)
