"""SMEM bank conflicts with and without a swizzle: a transpose writing a tile by rows, reading it by columns.

Each CTA stages one 32 x 32 fp32 tile of A in SMEM: a warp writes one row of the tile (row-major,
conflict-free), then reads one column of it to write a row of B = A^T. In a plain row-major tile
a row is exactly the 32 banks (32 x 4 bytes), so the 32 elements of a column sit in one bank and
every column read is a 32-way bank conflict: the hardware replays it 32 times. Composing the
layout with the swizzle ``S<5,0,5>`` stores element (r, c) at column ``c XOR r``: a row is still
one permutation of the banks, and a column now touches every bank once.

Both variants compile to the same shared loads and stores (``LDS``/``STS``, 32-bit); only the
address arithmetic differs (the XOR). The replays show in time (group ``smem_swizzle``) and in
ncu's ``l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum``.
"""

from __future__ import annotations

from typing import Any

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute

from mla_var3.kernel.backends import CuteKernel
from mla_var3.kernel.errors import UnsupportedShapeError
from mla_var3.kernel.plan import Config, KernelPlan, Shape, ShapeParam, Tensors
from mla_var3.kernel.tensors import element_size, fake_dynamic_tensor, randn, to_cute_dynamic

TILE = 32  # a 32 x 32 fp32 tile: one row is one 128-byte line across the 32 banks
ROWS_PER_PASS = 8  # 32 x 8 threads: a warp per tile row, each thread moves 4 elements


# --8<-- [start:smem_layout]
def smem_tile_layout(swizzle: bool) -> cute.Layout | cute.ComposedLayout:
    """The 32 x 32 fp32 SMEM tile (called while tracing): row-major, or swizzled so (r, c) sits at
    r * 32 + (c XOR r) -- the row's 5 bits (offset bits 5-9) XORed into the column's (bits 0-4)."""
    row_major = cute.make_layout((TILE, TILE), stride=(TILE, 1))
    if swizzle:
        return cute.make_composed_layout(cute.make_swizzle(5, 0, 5), 0, row_major)
    return row_major


# --8<-- [end:smem_layout]


class SmemTranspose:
    """B = A^T for fp32 matrices whose sides are multiples of 32, staged through a (swizzled) SMEM tile."""

    def __init__(self, swizzle: bool) -> None:
        self.swizzle = swizzle

    @cute.jit
    def __call__(self, a: cute.Tensor, b: cute.Tensor, stream: cuda.CUstream) -> None:
        m, n = a.shape
        self.kernel(a, b, smem_tile_layout(self.swizzle)).launch(
            grid=[n // TILE, m // TILE, 1], block=[TILE, ROWS_PER_PASS, 1], stream=stream
        )

    @cute.kernel
    def kernel(self, a: cute.Tensor, b: cute.Tensor, smem_layout: cute.Layout | cute.ComposedLayout) -> None:
        tx, ty, _ = cute.arch.thread_idx()
        bx, by, _ = cute.arch.block_idx()
        tile_a = cute.local_tile(a, (TILE, TILE), (by, bx))  # rows by*32.., columns bx*32.. of A
        tile_b = cute.local_tile(b, (TILE, TILE), (bx, by))  # the mirrored tile of B
        smem = cutlass.memory.SmemAllocator()
        s_tile = smem.allocate_tensor(cutlass.Float32, smem_layout, byte_alignment=128)
        # --8<-- [start:transpose]
        for i in cutlass.range_constexpr(TILE // ROWS_PER_PASS):
            row = ty + i * ROWS_PER_PASS
            s_tile[row, tx] = tile_a[row, tx]  # a warp writes one row: 32 banks, no conflict
        cute.arch.barrier()
        for i in cutlass.range_constexpr(TILE // ROWS_PER_PASS):
            row = ty + i * ROWS_PER_PASS
            tile_b[row, tx] = s_tile[tx, row]  # a warp reads one column: one bank unless swizzled
        # --8<-- [end:transpose]


class TransposePlan(KernelPlan):
    """B = A^T on fp32 matrices; ``swizzle`` picks the SMEM layout."""

    layer = "memory"
    archs = ("sm_90a",)
    dtypes = ("float32",)
    shape_params = (
        ShapeParam("m", 8192, "rows of A, a multiple of 32", minimum=TILE),
        ShapeParam("n", 8192, "columns of A, a multiple of 32", minimum=TILE),
    )
    check_shapes = ({"m": 96, "n": 160}, {"m": 1024, "n": 32})
    static_shape_params = ()  # m and n are dynamic
    swizzle = False

    def validate_shape(self, shape: Shape) -> None:
        for dim in ("m", "n"):
            if shape[dim] % TILE:
                raise UnsupportedShapeError(
                    f"{self.name} needs --{dim} a multiple of {TILE}, got {shape[dim]}"
                )

    def prepare_inputs(self, shape: Shape) -> Tensors:
        return {"a": randn((shape["m"], shape["n"]), self.dtype)}

    def allocate_outputs(self, inputs: Tensors, shape: Shape) -> Tensors:
        import torch

        return {"b": torch.empty(shape["n"], shape["m"], dtype=inputs["a"].dtype, device=inputs["a"].device)}

    def reference_fn(self, inputs: Tensors) -> Tensors:
        return {"b": inputs["a"].double().t()}

    def _autotune_configs(self) -> list[Config]:
        return [{}]

    def _algorithmic_flops_bytes(self, shape: Shape) -> tuple[int, int]:
        return 0, 2 * shape["m"] * shape["n"] * element_size(self.dtype)

    def plan(self, config: Config) -> CuteKernel:
        def compile_args(shape: Shape) -> tuple[Any, ...]:
            return fake_dynamic_tensor(cutlass.Float32, (TILE, TILE)), fake_dynamic_tensor(
                cutlass.Float32, (TILE, TILE)
            )

        def launch_args(inputs: Tensors, outputs: Tensors) -> tuple[Any, ...]:
            return to_cute_dynamic(inputs["a"], (TILE, TILE)), to_cute_dynamic(outputs["b"], (TILE, TILE))

        return CuteKernel(
            host_fn=SmemTranspose(self.swizzle),
            compile_args=compile_args,
            launch_args=launch_args,
            dynamic_smem_bytes=lambda shape: TILE * TILE * element_size(self.dtype),
        )


class TransposeSmemPlan(TransposePlan):
    name = "transpose_smem"
    description = "B = A^T through a row-major SMEM tile: every column read is a 32-way bank conflict"


class TransposeSmemSwizzledPlan(TransposePlan):
    name = "transpose_smem_swizzled"
    description = "B = A^T through an SMEM tile swizzled with S<5,0,5>: conflict-free column reads"
    swizzle = True


PLANS = (TransposeSmemPlan, TransposeSmemSwizzledPlan)
