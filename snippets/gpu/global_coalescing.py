"""A copy of a row-major fp32 matrix whose warps walk rows (coalesced) or walk columns (uncoalesced).

Both kernels copy B = A tile by tile (32 x 32 fp32 per CTA of 32 x 8 threads, each thread moving 4
elements with 32-bit loads and stores); they differ only in which index the lane number picks:

- **row walk**: lane ``tx`` takes column ``tx`` of a row: a warp's 32 loads are 128 consecutive bytes,
  4 sectors of 32 bytes -- one request the memory system serves whole;
- **column walk**: lane ``tx`` takes row ``tx`` of a column: a warp's 32 loads are one matrix row
  (``n * 4`` bytes) apart, 32 sectors of which each brings 4 useful bytes of 32.

Same instructions, same number of them, same bytes requested by the program: the SASS differs only in
the address arithmetic, so the difference shows in time (group ``global_coalescing``) and in ncu's
sectors per request, not in the binary's instruction mix.
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

TILE = 32  # a 32 x 32 fp32 tile per CTA
ROWS_PER_PASS = 8  # 32 x 8 threads: each thread moves TILE // ROWS_PER_PASS = 4 elements


class TileWalkCopy:
    """B = A for fp32 matrices whose sides are multiples of 32; ``column_walk`` picks the lane order."""

    def __init__(self, column_walk: bool) -> None:
        self.column_walk = column_walk

    @cute.jit
    def __call__(self, a: cute.Tensor, b: cute.Tensor, stream: cuda.CUstream) -> None:
        m, n = a.shape
        self.kernel(a, b).launch(grid=[n // TILE, m // TILE, 1], block=[TILE, ROWS_PER_PASS, 1], stream=stream)

    @cute.kernel
    def kernel(self, a: cute.Tensor, b: cute.Tensor) -> None:
        tx, ty, _ = cute.arch.thread_idx()
        bx, by, _ = cute.arch.block_idx()
        tile_a = cute.local_tile(a, (TILE, TILE), (by, bx))
        tile_b = cute.local_tile(b, (TILE, TILE), (by, bx))
        # --8<-- [start:walk]
        for i in cutlass.range_constexpr(TILE // ROWS_PER_PASS):
            k = ty + i * ROWS_PER_PASS
            if cutlass.const_expr(self.column_walk):
                tile_b[tx, k] = tile_a[tx, k]  # BAD: lanes step down a column, n * 4 bytes apart
            else:
                tile_b[k, tx] = tile_a[k, tx]  # lanes step along a row: 128 contiguous bytes per warp
        # --8<-- [end:walk]


class TileWalkPlan(KernelPlan):
    """B = A on fp32 matrices through 32 x 32 tiles; ``column_walk`` picks which index the lane takes."""

    layer = "memory"
    archs = ("sm_90a",)
    dtypes = ("float32",)
    shape_params = (
        ShapeParam("m", 8192, f"rows, a multiple of {TILE}", minimum=TILE),
        ShapeParam("n", 8192, f"columns, a multiple of {TILE}", minimum=TILE),
    )
    check_shapes = ({"m": 96, "n": 160}, {"m": 1024, "n": 32})
    static_shape_params = ()  # m and n are dynamic
    column_walk = False

    def validate_shape(self, shape: Shape) -> None:
        for dim in ("m", "n"):
            if shape[dim] % TILE:
                raise UnsupportedShapeError(f"{self.name} needs --{dim} a multiple of {TILE}, got {shape[dim]}")

    def prepare_inputs(self, shape: Shape) -> Tensors:
        return {"a": randn((shape["m"], shape["n"]), self.dtype)}

    def allocate_outputs(self, inputs: Tensors, shape: Shape) -> Tensors:
        import torch

        return {"b": torch.empty_like(inputs["a"])}

    def reference_fn(self, inputs: Tensors) -> Tensors:
        return {"b": inputs["a"].double()}

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
            host_fn=TileWalkCopy(self.column_walk), compile_args=compile_args, launch_args=launch_args
        )


class CopyRowWalkPlan(TileWalkPlan):
    name = "copy_row_walk"
    description = "B = A (fp32) through 32 x 32 tiles, a warp's lanes along a row: coalesced 128-byte requests"


class CopyColumnWalkPlan(TileWalkPlan):
    name = "copy_column_walk"
    description = "B = A (fp32) through 32 x 32 tiles, a warp's lanes down a column: 32 sectors per request"
    column_walk = True


PLANS = (CopyRowWalkPlan, CopyColumnWalkPlan)
