"""Threads write a tile into SMEM with plain stores, then a TMA store reads it: with and without the
proxy fence between them.

Plain ``st.shared`` stores go through the **generic proxy**; the TMA store (``cp.async.bulk.tensor``,
SMEM -> global) reads SMEM through the **async proxy**. The PTX memory model orders the two only
through a proxy fence: each writing thread executes ``fence.proxy.async.shared::cta``
(``cute.arch.fence_proxy("async.shared", space="cta")``, SASS ``MEMBAR.ALL.CTA`` +
``FENCE.VIEW.ASYNC.S``) before the barrier that hands the tile to the issuing warp. A barrier alone
orders threads, not proxies.

Each CTA streams ``TILES_PER_CTA`` tiles of 32 x 128 fp32 (16 KiB) through **one** SMEM buffer:
every thread writes its column of ``2 x`` into the buffer, (the fenced form fences), the CTA meets
at a barrier, warp 0 issues the TMA store and waits until it has *read* the buffer, and the CTA
meets again before the next tile overwrites it. So a TMA store that reads the buffer before the
plain stores reached it writes the previous tile's values: every such element of ``y`` differs
from ``2 x``, and the check sees it. One launch of the default shape is 16 384 such hand-offs.

The fenced plan demands an exact result (tolerance 0: a copy of ``2 x`` in fp32 is exact). The
unfenced plan's check demands only that every element was written (no NaN poison left) and
*records* the error, ``rel_l2``: 0 means no element differed in that launch, which is what a race
may well do on any one run -- the fence is needed because the memory model does not order the two
proxies, not because a given run showed a wrong value. ``tests/test_gpu_snippets.py`` counts the
mismatched elements of both forms over many launches on a GPU.
"""

from __future__ import annotations

from typing import Any

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute
from cutlass.cute.nvgpu import cpasync

from mla_var3.kernel.backends import CuteKernel
from mla_var3.kernel.errors import UnsupportedShapeError
from mla_var3.kernel.plan import Config, KernelPlan, Shape, ShapeParam, Tensors
from mla_var3.kernel.tensors import element_size, fake_dynamic_tensor, randn, to_cute_dynamic

TILE_M, TILE_N = 32, 128  # fp32: 16 KiB, one TMA box; a thread owns one column (TILE_N threads)
THREADS = TILE_N
TILES_PER_CTA = 16  # tiles one CTA streams through its single SMEM buffer
ROWS_PER_CTA = TILE_M * TILES_PER_CTA
# The unfenced plan records its error instead of judging it: rel_l2 between 2x and other randn values
# stays far below this, so only an element never written (NaN) fails its check.
RECORD_ONLY_TOLERANCE = 16.0


class TmaStoreHandoff:
    """y = 2 x (fp32, m a multiple of 512, n of 128): plain SMEM writes, then a TMA store per tile."""

    def __init__(self, proxy_fence: bool) -> None:
        self.proxy_fence = proxy_fence

    @cute.jit
    def __call__(self, x: cute.Tensor, y: cute.Tensor, stream: cuda.CUstream) -> None:
        smem_layout = cute.make_layout((TILE_M, TILE_N), stride=(TILE_N, 1))
        store, y_tma = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileS2GOp(), y, smem_layout, (TILE_M, TILE_N))
        m, n = x.shape
        self.kernel(x, store, y_tma, smem_layout).launch(
            grid=[n // TILE_N, m // ROWS_PER_CTA, 1], block=[THREADS, 1, 1], stream=stream
        )

    @cute.kernel
    def kernel(self, x: cute.Tensor, store: cute.CopyAtom, y_tma: cute.Tensor, smem_layout: cute.Layout) -> None:
        tidx, _, _ = cute.arch.thread_idx()
        bx, by, _ = cute.arch.block_idx()
        s_tile = cutlass.memory.SmemAllocator().allocate_tensor(cutlass.Float32, smem_layout, byte_alignment=128)
        warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
        # --8<-- [start:handoff]
        for t in cutlass.range(TILES_PER_CTA, unroll=1):
            m_tile = by * TILES_PER_CTA + t
            g_x = cute.local_tile(x, (TILE_M, TILE_N), (m_tile, bx))
            for r in cutlass.range_constexpr(TILE_M):
                s_tile[r, tidx] = 2.0 * g_x[r, tidx]  # plain stores: the generic proxy
            if cutlass.const_expr(self.proxy_fence):
                cute.arch.fence_proxy("async.shared", space="cta")  # FIXED: make them visible to TMA
            cute.arch.barrier()  # every column is written -- as far as the *threads* can tell
            if warp == 0:
                g_y = cute.local_tile(y_tma, (TILE_M, TILE_N), (m_tile, bx))
                s_box, g_box = cpasync.tma_partition(
                    store, 0, cute.make_layout(1), cute.group_modes(s_tile, 0, 2), cute.group_modes(g_y, 0, 2)
                )
                cute.copy(store, s_box, g_box)  # the TMA store reads SMEM: the async proxy
                cute.arch.cp_async_bulk_commit_group()
                cute.arch.cp_async_bulk_wait_group(0, read=True)  # the buffer has been read
            cute.arch.barrier()  # ... before any thread overwrites it with the next tile
        # --8<-- [end:handoff]


class ProxyFencePlan(KernelPlan):
    """y = 2 x through one SMEM buffer per CTA, drained by TMA stores; ``proxy_fence`` picks the form."""

    layer = "memory"
    archs = ("sm_90a",)
    dtypes = ("float32",)
    shape_params = (
        ShapeParam("m", 8192, f"rows, a multiple of {ROWS_PER_CTA}", minimum=ROWS_PER_CTA),
        ShapeParam("n", 8192, f"columns, a multiple of {TILE_N}", minimum=TILE_N),
    )
    check_shapes = ({"m": 1024, "n": 384}, {"m": 4096, "n": 4096})
    static_shape_params = ()  # m and n are dynamic
    proxy_fence = True

    def validate_shape(self, shape: Shape) -> None:
        for dim, multiple in (("m", ROWS_PER_CTA), ("n", TILE_N)):
            if shape[dim] % multiple:
                raise UnsupportedShapeError(f"{self.name} needs --{dim} a multiple of {multiple}, got {shape[dim]}")

    def prepare_inputs(self, shape: Shape) -> Tensors:
        return {"x": randn((shape["m"], shape["n"]), self.dtype)}

    def allocate_outputs(self, inputs: Tensors, shape: Shape) -> Tensors:
        import torch

        return {"y": torch.empty_like(inputs["x"])}

    def reference_fn(self, inputs: Tensors) -> Tensors:
        return {"y": 2.0 * inputs["x"].double()}

    def tolerance(self) -> float:
        return 0.0 if self.proxy_fence else RECORD_ONLY_TOLERANCE

    def _autotune_configs(self) -> list[Config]:
        return [{}]

    def _algorithmic_flops_bytes(self, shape: Shape) -> tuple[int, int]:
        return shape["m"] * shape["n"], 2 * shape["m"] * shape["n"] * element_size(self.dtype)

    def plan(self, config: Config) -> CuteKernel:
        divisibility = (ROWS_PER_CTA, TILE_N)

        def compile_args(shape: Shape) -> tuple[Any, ...]:
            return fake_dynamic_tensor(cutlass.Float32, divisibility), fake_dynamic_tensor(
                cutlass.Float32, divisibility
            )

        def launch_args(inputs: Tensors, outputs: Tensors) -> tuple[Any, ...]:
            return to_cute_dynamic(inputs["x"], divisibility), to_cute_dynamic(outputs["y"], divisibility)

        return CuteKernel(
            host_fn=TmaStoreHandoff(self.proxy_fence),
            compile_args=compile_args,
            launch_args=launch_args,
            dynamic_smem_bytes=lambda shape: TILE_M * TILE_N * element_size(self.dtype),
        )


class TmaStoreFencedPlan(ProxyFencePlan):
    name = "tma_store_fenced"
    description = "y = 2 x: plain SMEM writes, fence.proxy.async, barrier, TMA store (exact result required)"


class TmaStoreUnfencedPlan(ProxyFencePlan):
    name = "tma_store_unfenced"
    description = "y = 2 x: plain SMEM writes, barrier, TMA store, no proxy fence (the error is recorded, not judged)"
    proxy_fence = False


PLANS = (TmaStoreFencedPlan, TmaStoreUnfencedPlan)
