"""Plan for ``cutlass_fp16_gemm_6``: CUTLASS's Blackwell tutorial ``fp16_gemm_6.py`` (programmatic dependent
launch), compile-verified for sm_100a.

The tutorial launches two kernels on one stream, both with the PDL attribute: ``dequantize``
turns an int8 B into fp16 (times a scale) and calls ``griddepcontrol.launch_dependents``; the
GEMM (``fp16_gemm_3_1.py``'s CLC-scheduled kernel) waits with ``griddepcontrol.wait`` in its TMA
warp before it loads B. So its workload is C = A @ dequant(Bq)^T with Bq int8 (N, K) and the
dequantized B an output of the launch too; both are checked. Its host function takes the
stream itself, so no adapter is needed.

Inputs are normally distributed: Bq = round(32 * randn) clamped to int8, scale 1/32, so the
dequantized B is close to N(0, 1) (the tutorial uses integers in [-2, 2) and scale 2.33).
``dequantize`` has no bounds check: each of its threads converts 128 consecutive elements of a
row (``dequant_elements_per_thread``), so K must be a multiple of 128; N, a multiple of 256,
then makes the thread count a multiple of its 64-thread blocks.
"""

from __future__ import annotations

from typing import Any

from mla_var3.kernel.backends import CuteKernel
from mla_var3.kernel.cute_python.gemm.common import MAX_EXTENT
from mla_var3.kernel.cute_python.gemm.cutlass_tutorial_gemm.common import (
    B200_SM_COUNT,
    Tutorial,
    TutorialGemmPlan,
    fake_operand,
    real_operand,
    smem_bytes,
)
from mla_var3.kernel.errors import UnsupportedShapeError
from mla_var3.kernel.plan import Config, Shape, ShapeParam, Tensors
from mla_var3.kernel.tensors import element_size, randn

DEQUANT_ELEMENTS_PER_THREAD = 128  # fp16_gemm_6.py:92
QUANT_SCALE = 1.0 / 32.0


class CutlassFp16Gemm6Plan(TutorialGemmPlan):
    name = "cutlass_fp16_gemm_6"
    description = (
        "CUTLASS tutorial fp16_gemm_6.py: an int8 dequantize kernel, then fp16_gemm_3_1's GEMM on its output, "
        "overlapped with programmatic dependent launch (compile-only here)"
    )
    tutorial = Tutorial(
        "fp16_gemm_6.py", tile_mn=(256, 256), cta_group=2, compact_marks=False, cluster_sizes=(2,)
    )
    # The docstring's command: one wave of a small GEMM, where PDL's overlap shows.
    shape_params = (
        ShapeParam("m", 256, "rows of A and C", minimum=1, maximum=MAX_EXTENT),
        ShapeParam("n", 8192, "rows of the int8 B (K-major), columns of C", minimum=1, maximum=MAX_EXTENT),
        ShapeParam("k", 128, "the reduction dimension: columns of A and B", minimum=1, maximum=MAX_EXTENT),
    )
    check_shapes = ({"m": 256, "n": 256, "k": 128}, {"m": 512, "n": 1024, "k": 384})
    static_shape_params = ("k",)  # both B operands are marked with divisibility = K
    data_distribution = (
        f"A standard normal (fp16); B int8 = round(randn / {QUANT_SCALE}) clamped to [-127, 127], "
        f"dequantized with scale {QUANT_SCALE}"
    )

    def validate_shape(self, shape: Shape) -> None:
        super().validate_shape(shape)
        if shape["k"] % DEQUANT_ELEMENTS_PER_THREAD:
            raise UnsupportedShapeError(
                f"{self.name} needs --k (={shape['k']}) to be a multiple of {DEQUANT_ELEMENTS_PER_THREAD} "
                "(its dequantize kernel converts whole 128-element row pieces, unchecked); pad K with zeros"
            )

    def prepare_inputs(self, shape: Shape) -> Tensors:
        import torch

        normal = torch.randn((shape["n"], shape["k"]), device="cuda")
        return {
            "a": randn((shape["m"], shape["k"]), self.dtype),
            "b_quantized": (normal / QUANT_SCALE).round().clamp(-127, 127).to(torch.int8),
        }

    def allocate_outputs(self, inputs: Tensors, shape: Shape) -> Tensors:
        import torch

        a = inputs["a"]
        return {
            "c": torch.empty((shape["m"], shape["n"]), dtype=a.dtype, device=a.device),
            "b_dequantized": torch.empty((shape["n"], shape["k"]), dtype=a.dtype, device=a.device),
        }

    def reference_fn(self, inputs: Tensors) -> Tensors:
        # As the tutorial's check: dequantize in fp32, round to fp16, then an exact fp32 GEMM.
        b = (inputs["b_quantized"].float() * QUANT_SCALE).to(inputs["a"].dtype)
        return {"c": inputs["a"].float() @ b.float().T, "b_dequantized": b.float()}

    def _algorithmic_flops_bytes(self, shape: Shape) -> tuple[int, int]:
        m, n, k = shape["m"], shape["n"], shape["k"]
        half = element_size(self.dtype)
        # int8 B read, fp16 B written and read back, A read, C written.
        return 2 * m * n * k, n * k * (1 + 2 * half) + (m * k + m * n) * half

    def plan(self, config: Config) -> CuteKernel:
        import cutlass

        from mla_var3.kernel.upstream import load_example

        example = load_example(self.tutorial.example)
        (max_active_clusters,) = self.tutorial.max_active_clusters(config.get("sm_count", B200_SM_COUNT))
        io, quant = example.io_dtype, example.quant_dtype

        def compile_args(shape: Shape) -> tuple[Any, ...]:
            k = shape["k"]
            return (
                fake_operand(io, None),
                fake_operand(quant, k),
                fake_operand(io, k),
                fake_operand(io, None),
                cutlass.Float32(QUANT_SCALE),
                max_active_clusters,
            )

        def launch_args(inputs: Tensors, outputs: Tensors) -> tuple[Any, ...]:
            k = inputs["a"].shape[1]
            return (
                real_operand(inputs["a"], None),
                real_operand(inputs["b_quantized"], k),
                real_operand(outputs["b_dequantized"], k),
                real_operand(outputs["c"], None),
                cutlass.Float32(QUANT_SCALE),
            )

        return CuteKernel(
            host_fn=example.host_function,
            compile_args=compile_args,
            launch_args=launch_args,
            dynamic_smem_bytes=lambda shape: smem_bytes(example, self.tutorial.cta_group),
        )


__all__ = ["CutlassFp16Gemm6Plan"]
