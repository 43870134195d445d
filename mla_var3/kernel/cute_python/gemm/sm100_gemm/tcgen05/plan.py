"""Plan for ``sm100_gemm_tcgen05``: a one-tile-per-CTA tcgen05 GEMM for sm_100a (B200).

Compile-verified only: our GPU is an H200 (sm_90), so the arch rule never launches it here;
``--compile-only --arch sm_100a`` (or any run on a non-SM100 machine) compiles it and reports
registers, SMEM and SASS. The kernel is compiled for dynamic M, N and K with the
divisibility it relies on: M a multiple of 128, N of the tile's N, K of 8 (16-byte rows).
"""

from __future__ import annotations

from typing import Any

from mla_var3.kernel.backends import CuteKernel
from mla_var3.kernel.cute_python.gemm.common import GemmPlanBase, check_rows_16b_aligned
from mla_var3.kernel.errors import UnsupportedShapeError
from mla_var3.kernel.plan import Config, Shape, Tensors
from mla_var3.kernel.tensors import cute_dtype, element_size, fake_dynamic_tensor, to_cute_dynamic

TILE_M = 128
K_DIVISIBILITY = 8  # 16-byte rows of 16-bit elements, as TMA requires


class Sm100GemmTcgen05Plan(GemmPlanBase):
    name = "sm100_gemm_tcgen05"
    description = (
        "Blackwell GEMM: TMA loads, tcgen05 MMA into TMEM, TMEM -> registers -> global (compile-only here)"
    )
    archs = ("sm_100a",)
    dtypes = ("float16", "bfloat16")
    backend = "cute"
    # Tile multiples in M and N (both configs); K = 520 exercises the zero-filled last K-block.
    check_shapes = (
        {"m": 128, "n": 256, "k": 64},
        {"m": 256, "n": 512, "k": 520},
        {"m": 4096, "n": 4096, "k": 4096},
    )

    def validate_shape(self, shape: Shape) -> None:
        super().validate_shape(shape)
        check_rows_16b_aligned(shape, self.dtype, self.name)
        if shape["m"] % TILE_M:
            raise UnsupportedShapeError(
                f"{self.name} needs --m (={shape['m']}) to be a multiple of {TILE_M}; pad M with zero rows"
            )

    def _autotune_configs(self) -> list[Config]:
        return [{"tile_mn": (TILE_M, 256), "stages": 4}, {"tile_mn": (TILE_M, 128), "stages": 6}]

    def _check_tile_n(self, shape: Shape, tile_n: int) -> None:
        if shape["n"] % tile_n:
            raise UnsupportedShapeError(
                f"{self.name} with tile_mn=({TILE_M}, {tile_n}) needs --n (={shape['n']}) to be a multiple "
                f"of {tile_n}; pad N or pick another --config"
            )

    def plan(self, config: Config) -> CuteKernel:
        from mla_var3.kernel.cute_python.gemm.sm100_gemm.tcgen05.kernel import Sm100GemmTcgen05, smem_bytes

        tile_mn = tuple(config["tile_mn"])
        gemm = Sm100GemmTcgen05(tile_mn=tile_mn, stages=config["stages"])
        dtype = cute_dtype(self.dtype)
        tile_n = tile_mn[1]

        def compile_args(shape: Shape) -> tuple[Any, ...]:
            self._check_tile_n(shape, tile_n)
            return (
                fake_dynamic_tensor(dtype, (TILE_M, K_DIVISIBILITY)),
                fake_dynamic_tensor(dtype, (tile_n, K_DIVISIBILITY)),
                fake_dynamic_tensor(dtype, (TILE_M, tile_n)),
            )

        def launch_args(inputs: Tensors, outputs: Tensors) -> tuple[Any, ...]:
            return (
                to_cute_dynamic(inputs["a"], (TILE_M, K_DIVISIBILITY)),
                to_cute_dynamic(inputs["b"], (tile_n, K_DIVISIBILITY)),
                to_cute_dynamic(outputs["c"], (TILE_M, tile_n)),
            )

        return CuteKernel(
            host_fn=gemm,
            compile_args=compile_args,
            launch_args=launch_args,
            dynamic_smem_bytes=lambda shape: smem_bytes(tile_mn, config["stages"], element_size(self.dtype)),
        )


__all__ = ["Sm100GemmTcgen05Plan"]
