"""Plan for ``sm100_gemm_tcgen05``: a one-tile-per-CTA tcgen05 GEMM for sm_100a (B200).

Compile-verified only (see :mod:`~mla_var3.kernel.cute_python.gemm.sm100_gemm.plan_base`). The
kernel is compiled for dynamic M, N and K with the divisibility it relies on: M a multiple of
128, N of the tile's N, K of 8 (16-byte rows).
"""

from __future__ import annotations

from mla_var3.kernel.cute_python.gemm.sm100_gemm.plan_base import Sm100GemmStepPlan


class Sm100GemmTcgen05Plan(Sm100GemmStepPlan):
    name = "sm100_gemm_tcgen05"
    description = (
        "Blackwell GEMM: TMA loads, tcgen05 MMA into TMEM, TMEM -> registers -> global (compile-only here)"
    )
    kernel_class = "mla_var3.kernel.cute_python.gemm.sm100_gemm.tcgen05.kernel:Sm100GemmTcgen05"
    configs = ({"mma_tiler_mn": (128, 256), "stages": 4}, {"mma_tiler_mn": (128, 128), "stages": 6})
    # Tile multiples in M and N (both configs); K = 520 exercises the zero-filled last K-block.
    check_shapes = (
        {"m": 128, "n": 256, "k": 64},
        {"m": 256, "n": 512, "k": 520},
        {"m": 4096, "n": 4096, "k": 4096},
    )
