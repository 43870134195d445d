"""Plan for ``cutlass_sm100_blockwise_gemm``: CUTLASS's Blackwell ``blockwise_gemm.py``.

C (M, N, bf16) = (SFA x A) @ (SFB x B)^T with e4m3 A and B and fp32 block scales (see
:mod:`..common`). Twelve warps: four acc-update warps (256 registers by ``setmaxnreg``), four
epilogue warps (168), then MMA, TMA, scale (SFA and SFB by ``cp.async``, as they are too small and
oddly shaped for TMA boxes) and scheduler warps (64 each). Its ``run()`` passes ``--opt-level=2``
only under DSL 4.6 and nothing under 4.8.1, so neither does this plan. Compile-only (no SM100 GPU
here).
"""

from __future__ import annotations

from typing import Any

from mla_var3.kernel.cute_python.attention.example_kernel import B200_SM_COUNT, ExampleKernel
from mla_var3.kernel.cute_python.gemm.common import GEMM_SHAPE_PARAMS, GemmPlanBase
from mla_var3.kernel.cute_python.gemm.cutlass_blockwise_gemm.common import (
    CONFIGS,
    DATA_DISTRIBUTION,
    EXAMPLES_DIR,
    SCALE_BLOCK,
    check_blockwise_shape,
    dequantize_blocks,
    fake_operands,
    operands,
    quantize_blocks,
)
from mla_var3.kernel.errors import UnsupportedShapeError
from mla_var3.kernel.plan import Config, Shape, ShapeParam, Tensors
from mla_var3.kernel.tensors import randn

EXAMPLE = f"{EXAMPLES_DIR}/blockwise_gemm.py"
DEFAULTS = {"m": 4096, "n": 4096, "k": 4096}  # the docstring's problem (its L = 4 becomes 1 here)


class CutlassSm100BlockwiseGemmPlan(GemmPlanBase):
    name = "cutlass_sm100_blockwise_gemm"
    description = (
        "CUTLASS's Blackwell blockwise_gemm.py: FP8 e4m3 GEMM with fp32 1x128 (A) and 128x128 (B) block scales "
        "applied by acc-update warps between two TMEM accumulators (compile-only here)"
    )
    archs = ("sm_100a",)
    dtypes = ("float8_e4m3fn",)
    backend = "cute"
    shape_params = tuple(
        ShapeParam(p.name, DEFAULTS[p.name], p.help, p.minimum, p.maximum) for p in GEMM_SHAPE_PARAMS
    )
    check_shapes = ({"m": 256, "n": 256, "k": 512}, {"m": 1000, "n": 1048, "k": 640})
    static_shape_params = ()  # every extent and stride is dynamic in the example's run()
    data_distribution = DATA_DISTRIBUTION

    @classmethod
    def upstream_example(cls) -> str:
        return EXAMPLE

    def validate_shape(self, shape: Shape) -> None:
        check_blockwise_shape(shape, self.name)

    def _autotune_configs(self) -> list[Config]:
        return [dict(config) for config in CONFIGS]

    def tolerance(self) -> float:
        return 5e-3  # dequantized values are exact in fp32; C's bf16 rounding dominates

    def prepare_inputs(self, shape: Shape) -> Tensors:
        a, sfa = quantize_blocks(randn((shape["m"], shape["k"]), "float32"), 1)
        b, sfb = quantize_blocks(randn((shape["n"], shape["k"]), "float32"), SCALE_BLOCK)
        return {"a": a, "b": b, "sfa": sfa, "sfb": sfb}

    def allocate_outputs(self, inputs: Tensors, shape: Shape) -> Tensors:
        import torch

        return {"c": torch.empty((shape["m"], shape["n"]), dtype=torch.bfloat16, device=inputs["a"].device)}

    def reference_fn(self, inputs: Tensors) -> Tensors:
        a = dequantize_blocks(inputs["a"], inputs["sfa"], 1)
        b = dequantize_blocks(inputs["b"], inputs["sfb"], SCALE_BLOCK)
        return {"c": a @ b.T}

    def _algorithmic_flops_bytes(self, shape: Shape) -> tuple[int, int]:
        m, n, k = shape["m"], shape["n"], shape["k"]
        scales = 4 * (m + -(-n // SCALE_BLOCK)) * (k // SCALE_BLOCK)
        return 2 * m * n * k, (m + n) * k + scales + 2 * m * n

    def plan(self, config: Config) -> ExampleKernel:
        import cutlass

        from mla_var3.kernel.upstream import load_example

        example = load_example(EXAMPLE)
        tiler, cluster = tuple(config["mma_tiler_mn"]), tuple(config["cluster_shape_mn"])
        gemm = example.BlockwiseGemmKernel(cutlass.Float32, config["use_2cta_instrs"], tiler, cluster)

        def compile_args(shape: Shape) -> tuple[Any, ...]:
            if not example.BlockwiseGemmKernel.can_implement(
                cutlass.Float8E4M3FN, cutlass.Float32, cutlass.BFloat16, config["use_2cta_instrs"], tiler, cluster,
                shape["m"], shape["n"], shape["k"], 1, "k", "k", "n",
            ):  # fmt: skip
                raise UnsupportedShapeError(f"{EXAMPLE} cannot implement {shape} with {config}")
            return (*fake_operands(), B200_SM_COUNT // (cluster[0] * cluster[1]))

        def launch_args(inputs: Tensors, outputs: Tensors) -> tuple[Any, ...]:
            return operands(inputs, outputs)

        return ExampleKernel(host_for=lambda shape: gemm, compile_args=compile_args, launch_args=launch_args)


__all__ = ["CutlassSm100BlockwiseGemmPlan"]
