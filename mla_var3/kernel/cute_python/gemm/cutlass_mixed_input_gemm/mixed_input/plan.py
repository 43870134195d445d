"""Plan for ``cutlass_sm100_mixed_input_gemm``: CUTLASS's Blackwell ``mixed_input_gemm.py``.

C (M, N) = widen(A) (M, K) @ B (N, K)^T with A int4 (scaled) or int8, B and C 16-bit, as batched
(rows, cols, L = 1) operands. Sixteen warps: four epilogue, one MMA, one TMA for A and B, one TMA
for the scales, one idle, four transform warps that widen A into TMEM stages the MMA reads;
``setmaxnreg`` gives the transform warps 208 registers and the idle warp 24. Its ``run()`` compiles
with ``--opt-level 2`` on CUDA 13.1+ (this DSL ships 13.4). TMA store is on for both configs:
without it the example refuses partial tiles. Compile-only (no SM100 GPU here); :mod:`..common`
holds the A side.
"""

from __future__ import annotations

from typing import Any

from mla_var3.kernel.cute_python.attention.example_kernel import ExampleKernel
from mla_var3.kernel.cute_python.gemm.common import GEMM_SHAPE_PARAMS
from mla_var3.kernel.cute_python.gemm.cutlass_mixed_input_gemm.common import MixedInputGemmPlan, shuffles
from mla_var3.kernel.errors import UnsupportedShapeError
from mla_var3.kernel.plan import Config, Shape, ShapeParam, Tensors
from mla_var3.kernel.tensors import cute_dtype, element_size, randn

# The docstring's convert-scale problem, 1024 x 8192 x 6144 (its L = 16 batches become one here).
DEFAULTS = {"m": 1024, "n": 8192, "k": 6144}


class CutlassSm100MixedInputGemmPlan(MixedInputGemmPlan):
    name = "cutlass_sm100_mixed_input_gemm"
    description = (
        "CUTLASS's Blackwell mixed_input_gemm.py: int4 (scaled) or int8 A widened to bf16 by transform warps "
        "into SMEM, then tcgen05 MMA with 16-bit B (compile-only here)"
    )
    example_file = "mixed_input_gemm.py"
    shape_params = tuple(
        ShapeParam(p.name, DEFAULTS[p.name], p.help, p.minimum, p.maximum) for p in GEMM_SHAPE_PARAMS
    )
    check_shapes = ({"m": 256, "n": 256, "k": 512}, {"m": 1024, "n": 1032, "k": 1536})

    def prepare_inputs(self, shape: Shape) -> Tensors:
        inputs = self.quantize_a(shape["m"], shape["k"], 1)
        inputs["b"] = randn((shape["n"], shape["k"]), self.dtype)
        return inputs

    def allocate_outputs(self, inputs: Tensors, shape: Shape) -> Tensors:
        import torch

        return {
            "c": torch.empty((shape["m"], shape["n"]), dtype=inputs["b"].dtype, device=inputs["b"].device)
        }

    def reference_fn(self, inputs: Tensors) -> Tensors:
        return {"c": self.dequantized_a(inputs, 0) @ inputs["b"].float().T}

    def _algorithmic_flops_bytes(self, shape: Shape) -> tuple[int, int]:
        m, n, k = shape["m"], shape["n"], shape["k"]
        return 2 * m * n * k, self.a_bytes(m, k, 1) + (n * k + m * n) * element_size(self.dtype)

    def plan(self, config: Config) -> ExampleKernel:
        import cutlass

        from mla_var3.kernel.upstream import load_example

        example = load_example(self.upstream_example(), extra_paths=())
        a = self.narrow(config)
        kernels: dict[int, Any] = {}

        def host_for(shape: Shape) -> Any:
            k = shape["k"]
            if k not in kernels:  # shuffling A is a constructor argument and depends on K
                kernels[k] = example.MixedInputGemmKernel(
                    a.scale_m, a.scale_k, cutlass.Float32, config["use_2cta_instrs"], tuple(config["mma_tiler_mnk"]),
                    tuple(config["cluster_shape_mn"]), True, shuffles(a, k, self.dtype),
                )  # fmt: skip
            return kernels[k]

        def compile_args(shape: Shape) -> tuple[Any, ...]:
            m, n, k = shape["m"], shape["n"], shape["k"]
            ab = cute_dtype(self.dtype)
            if not example.MixedInputGemmKernel.can_implement(
                (m, n, k, 1), a.cute_type(), ab, ab, "k", "k", "n", a.scale_m, a.scale_k,
                tuple(config["mma_tiler_mnk"]), tuple(config["cluster_shape_mn"]), config["use_2cta_instrs"], True,
            ):  # fmt: skip
                raise UnsupportedShapeError(
                    f"{self.upstream_example()} cannot implement {shape} with {config}"
                )
            a_tensor, a_scale = self.fake_a_operands(k)
            b, c = self.fake_b_c(n, k)
            return (a_tensor, a_scale, b, c, self.max_active_clusters(config))

        def launch_args(inputs: Tensors, outputs: Tensors) -> tuple[Any, ...]:
            n, k = inputs["b"].shape
            a_tensor, a_scale = self.a_operands(inputs, k)
            return (a_tensor, a_scale, self.b_operand(inputs["b"], k), self.c_operand(outputs["c"], n))

        return ExampleKernel(
            host_for=host_for, compile_args=compile_args, launch_args=launch_args, options="--opt-level 2"
        )


__all__ = ["CutlassSm100MixedInputGemmPlan"]
