"""``cp.async`` (SM80 style, LDGSTS) against TMA (UTMALDG): the same tiles loaded into SMEM, then stored.

Each CTA copies one 64 x 128 fp32 tile (32 KiB) of A to C through SMEM. The two variants differ
only in the load:

- **cp.async**: every thread issues 16-byte global -> SMEM copies for its part of the tile (16
  ``LDGSTS`` each, addresses computed per thread), commits them as a group, waits for the group,
  then the CTA synchronizes;
- **TMA**: one elected thread arms an mbarrier with the tile's byte count and issues one
  ``UTMALDG``; the TMA unit walks the tile from a descriptor the host built, and every thread
  waits on the mbarrier's phase.

The store is the same code in both: SMEM -> registers -> C with 128-bit accesses. Group
``async_copy_vs_tma`` times the two in one process.
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

TILE_M, TILE_N = 64, 128  # fp32: a 32 KiB tile whose rows are 512 bytes
TILE_BYTES = TILE_M * TILE_N * 4
THREADS = 128
VECTOR_BITS = 128  # 4 fp32 per access


class TileLoad:
    """C = A (fp32, sides multiples of the tile), each tile loaded into SMEM by cp.async or TMA."""

    def __init__(self, tma: bool) -> None:
        self.tma = tma

    @cute.jit
    def __call__(self, a: cute.Tensor, c: cute.Tensor, stream: cuda.CUstream) -> None:
        smem_layout = cute.make_layout((TILE_M, TILE_N), stride=(TILE_N, 1))
        # 4 x 32 threads, 4 fp32 each: a warp covers one 512-byte row per access.
        threads = cute.make_layout((THREADS // 32, 32), stride=(32, 1))
        values = cute.make_layout((1, VECTOR_BITS // 32))
        vector = cute.make_copy_atom(
            cute.nvgpu.CopyUniversalOp(), cutlass.Float32, num_bits_per_copy=VECTOR_BITS
        )
        store = cute.make_tiled_copy_tv(vector, threads, values)
        # --8<-- [start:load_setup]
        if cutlass.const_expr(self.tma):
            # The host encodes a TMA descriptor for A: its shape and strides, the box = one tile.
            load, src = cpasync.make_tiled_tma_atom(
                cpasync.CopyBulkTensorTileG2SOp(), a, smem_layout, (TILE_M, TILE_N)
            )
        else:
            # A tiled copy like the store's, with the cp.async atom: 16 bytes per thread and copy.
            async_atom = cute.make_copy_atom(
                cpasync.CopyG2SOp(), cutlass.Float32, num_bits_per_copy=VECTOR_BITS
            )
            load, src = cute.make_tiled_copy_tv(async_atom, threads, values), a
        # --8<-- [end:load_setup]
        m, n = a.shape
        self.kernel(load, src, c, smem_layout, store).launch(
            grid=[n // TILE_N, m // TILE_M, 1], block=[THREADS, 1, 1], stream=stream
        )

    @cute.kernel
    def kernel(
        self,
        load: cute.CopyAtom,
        src: cute.Tensor,
        c: cute.Tensor,
        smem_layout: cute.Layout,
        store: cute.TiledCopy,
    ) -> None:
        tidx, _, _ = cute.arch.thread_idx()
        bx, by, _ = cute.arch.block_idx()
        smem = cutlass.memory.SmemAllocator()
        s_tile = smem.allocate_tensor(cutlass.Float32, smem_layout, byte_alignment=128)
        g_src = cute.local_tile(src, (TILE_M, TILE_N), (by, bx))
        if cutlass.const_expr(self.tma):
            self._load_tma(load, g_src, s_tile, smem.allocate_array(cutlass.Int64, 1, byte_alignment=8))
        else:
            self._load_cp_async(load, g_src, s_tile, tidx)
        # The same store for both: SMEM -> registers -> C.
        thr_store = store.get_slice(tidx)
        from_smem = thr_store.partition_S(s_tile)
        fragment = cute.make_fragment_like(from_smem)
        cute.copy(store, from_smem, fragment)
        cute.copy(store, fragment, thr_store.partition_D(cute.local_tile(c, (TILE_M, TILE_N), (by, bx))))

    # --8<-- [start:cp_async]
    @cute.jit
    def _load_cp_async(
        self, load: cute.TiledCopy, g_tile: cute.Tensor, s_tile: cute.Tensor, tidx: cutlass.Int32
    ) -> None:
        """Every thread copies its 16-byte pieces of the tile (LDGSTS), then waits for them; the barrier
        makes the whole tile visible to the CTA."""
        thr_load = load.get_slice(tidx)
        cute.copy(load, thr_load.partition_S(g_tile), thr_load.partition_D(s_tile))
        cute.arch.cp_async_commit_group()
        cute.arch.cp_async_wait_group(0)
        cute.arch.barrier()

    # --8<-- [end:cp_async]

    # --8<-- [start:tma]
    @cute.jit
    def _load_tma(
        self, load: cute.CopyAtom, g_tile: cute.Tensor, s_tile: cute.Tensor, barrier: cute.Pointer
    ) -> None:
        """Warp 0 arms the mbarrier with the tile's bytes and issues one TMA load; every thread waits
        for the barrier's first phase to complete (the transaction count reaching zero)."""
        warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
        if warp == 0:
            with cute.arch.elect_one():
                cute.arch.mbarrier_init(barrier, 1)
        cute.arch.mbarrier_init_fence()
        cute.arch.barrier()
        # The whole tile is one TMA box: mode 0 of both views is the atom.
        s_box, g_box = cpasync.tma_partition(
            load, 0, cute.make_layout(1), cute.group_modes(s_tile, 0, 2), cute.group_modes(g_tile, 0, 2)
        )
        if warp == 0:
            with cute.arch.elect_one():
                cute.arch.mbarrier_arrive_and_expect_tx(barrier, TILE_BYTES)
            cute.copy(load, g_box, s_box, tma_bar_ptr=barrier)
        cute.arch.mbarrier_wait(barrier, 0)

    # --8<-- [end:tma]


class TileLoadPlan(KernelPlan):
    """C = A through SMEM tiles on fp32 matrices; ``tma`` picks the load."""

    layer = "memory"
    archs = ("sm_90a",)
    dtypes = ("float32",)
    shape_params = (
        ShapeParam("m", 8192, f"rows, a multiple of {TILE_M}", minimum=TILE_M),
        ShapeParam("n", 8192, f"columns, a multiple of {TILE_N}", minimum=TILE_N),
    )
    check_shapes = ({"m": 192, "n": 384}, {"m": 64, "n": 1024})
    static_shape_params = ()  # m and n are dynamic
    tma = False

    def validate_shape(self, shape: Shape) -> None:
        for dim, tile in (("m", TILE_M), ("n", TILE_N)):
            if shape[dim] % tile:
                raise UnsupportedShapeError(
                    f"{self.name} needs --{dim} a multiple of {tile}, got {shape[dim]}"
                )

    def prepare_inputs(self, shape: Shape) -> Tensors:
        return {"a": randn((shape["m"], shape["n"]), self.dtype)}

    def allocate_outputs(self, inputs: Tensors, shape: Shape) -> Tensors:
        import torch

        return {"c": torch.empty_like(inputs["a"])}

    def reference_fn(self, inputs: Tensors) -> Tensors:
        return {"c": inputs["a"].double()}

    def _autotune_configs(self) -> list[Config]:
        return [{}]

    def _algorithmic_flops_bytes(self, shape: Shape) -> tuple[int, int]:
        return 0, 2 * shape["m"] * shape["n"] * element_size(self.dtype)

    def plan(self, config: Config) -> CuteKernel:
        divisibility = (TILE_M, TILE_N)

        def compile_args(shape: Shape) -> tuple[Any, ...]:
            return fake_dynamic_tensor(cutlass.Float32, divisibility), fake_dynamic_tensor(
                cutlass.Float32, divisibility
            )

        def launch_args(inputs: Tensors, outputs: Tensors) -> tuple[Any, ...]:
            return to_cute_dynamic(inputs["a"], divisibility), to_cute_dynamic(outputs["c"], divisibility)

        return CuteKernel(
            host_fn=TileLoad(self.tma),
            compile_args=compile_args,
            launch_args=launch_args,
            dynamic_smem_bytes=lambda shape: (
                TILE_BYTES + (8 if self.tma else 0)
            ),  # the tile, then the mbarrier
        )


class TileLoadCpAsyncPlan(TileLoadPlan):
    name = "tile_load_cp_async"
    description = (
        "C = A through 64x128 fp32 SMEM tiles loaded with cp.async (LDGSTS, 16 B per thread and copy)"
    )


class TileLoadTmaPlan(TileLoadPlan):
    name = "tile_load_tma"
    description = "C = A through 64x128 fp32 SMEM tiles loaded with one TMA copy each (UTMALDG + mbarrier)"
    tma = True


PLANS = (TileLoadCpAsyncPlan, TileLoadTmaPlan)
