"""The FP8 GEMM workload shared by our FP8 kernels and cuBLASLt: C = (s_a A) (s_b B)^T in bf16.

A[M,K] and B[N,K] are e4m3 (``torch.float8_e4m3fn``), K-major -- the only layout SM90's FP8
WGMMA reads from SMEM, and the one ``torch._scaled_mm`` wants (B passed as ``b.T``, column-major).
Each comes with a per-tensor fp32 scale: the value a real element stands for is ``s * q``. The
inputs are standard-normal fp32 data quantized the usual way, ``s = amax / 448`` (448 is e4m3's
largest finite value), so the whole e4m3 range is in use. The scales travel as one fp32 tensor
``scales = [s_a, s_b]``; C is bf16, accumulation fp32.

The reference is the fp32 product of the dequantized inputs, computed as ``(A @ B^T) * (s_a s_b)``:
e4m3 values (4 significant bits) multiply exactly in fp32 and even in TF32, so the reference does
not depend on torch's TF32 setting; only its fp32 sums round. The quantization error is not part of
the comparison: both sides start from the same e4m3 values.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from mla_var3.kernel.cute_python.gemm.common import GEMM_SHAPE_PARAMS
from mla_var3.kernel.errors import UnsupportedShapeError
from mla_var3.kernel.plan import KernelPlan, Shape, ShapeParam, Tensors
from mla_var3.kernel.tensors import element_size, randn

if TYPE_CHECKING:
    import torch

E4M3_MAX = 448.0  # torch.finfo(torch.float8_e4m3fn).max
OUT_DTYPE = "bfloat16"
# TMA needs 16-byte rows (16 e4m3 values of A and B); cuBLASLt's FP8 path needs K and N multiples of 16.
ROW_MULTIPLE = 16
FP8_CHECK_SHAPES: tuple[Shape, ...] = (
    {"m": 128, "n": 256, "k": 128},
    {"m": 1000, "n": 1040, "k": 528},  # no tile multiple in M, N or K
    {"m": 4096, "n": 4096, "k": 4096},
)
# rel-L2 of C against the fp32 reference when the accumulation is fp32: rounding C to bf16 alone
# gives ~1.7e-3 (gemm/common.py), so 5e-3 as for the bf16 GEMM. Without promotion the FP8 WGMMA's
# own accumulation adds error that grows with K: the project's fp8 tolerance, 5e-2, until measured.
PROMOTED_REL_L2 = 5e-3
FAST_ACCUM_REL_L2 = 5e-2
DATA_DISTRIBUTION = (
    "standard normal (torch.randn, fp32), quantized per tensor to e4m3 with scale = amax / 448"
)


def quantize_e4m3(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-tensor e4m3 quantization of an fp32 tensor: ``(q, s)`` with ``s = amax / 448`` and
    ``q = x / s`` rounded to e4m3 (clamped first, so no value rounds past the largest finite one)."""
    import torch

    scale = x.abs().amax() / E4M3_MAX
    return (x / scale).clamp(-E4M3_MAX, E4M3_MAX).to(torch.float8_e4m3fn), scale


class Fp8GemmPlanBase(KernelPlan):
    """Inputs, reference, tolerance and roofline of the FP8 GEMM; subclasses add the kernel."""

    layer: ClassVar[str] = "gemm"
    dtypes: ClassVar[tuple[str, ...]] = ("float8_e4m3fn",)
    shape_params: ClassVar[tuple[ShapeParam, ...]] = GEMM_SHAPE_PARAMS
    check_shapes: ClassVar[tuple[Shape, ...]] = FP8_CHECK_SHAPES
    data_distribution: ClassVar[str] = DATA_DISTRIBUTION
    rel_l2_tolerance: ClassVar[float] = PROMOTED_REL_L2

    def validate_shape(self, shape: Shape) -> None:
        for dim, role in (("k", "the row length of A and B"), ("n", "the rows of B")):
            value = shape[dim]
            if value % ROW_MULTIPLE:
                fixed = -(-value // ROW_MULTIPLE) * ROW_MULTIPLE
                raise UnsupportedShapeError(
                    f"{self.name} needs --{dim} (={value}, {role}) to be a multiple of {ROW_MULTIPLE} for e4m3 "
                    f"(16-byte rows for TMA; cuBLASLt's FP8 rule); pad {dim} to {fixed} with zeros"
                )

    def prepare_inputs(self, shape: Shape) -> Tensors:
        import torch

        a, scale_a = quantize_e4m3(randn((shape["m"], shape["k"]), "float32"))
        b, scale_b = quantize_e4m3(randn((shape["n"], shape["k"]), "float32"))
        return {"a": a, "b": b, "scales": torch.stack([scale_a, scale_b]).float()}

    def allocate_outputs(self, inputs: Tensors, shape: Shape) -> Tensors:
        import torch

        return {"c": torch.empty((shape["m"], shape["n"]), dtype=torch.bfloat16, device=inputs["a"].device)}

    def reference_fn(self, inputs: Tensors) -> Tensors:
        scales = inputs["scales"]
        return {"c": (inputs["a"].float() @ inputs["b"].float().T) * (scales[0] * scales[1])}

    def tolerance(self) -> float:
        return self.rel_l2_tolerance

    def _algorithmic_flops_bytes(self, shape: Shape) -> tuple[int, int]:
        m, n, k = shape["m"], shape["n"], shape["k"]
        return 2 * m * n * k, (m * k + n * k) * element_size(self.dtype) + m * n * element_size(OUT_DTYPE)


__all__ = [
    "DATA_DISTRIBUTION",
    "E4M3_MAX",
    "FAST_ACCUM_REL_L2",
    "FP8_CHECK_SHAPES",
    "PROMOTED_REL_L2",
    "Fp8GemmPlanBase",
    "quantize_e4m3",
]
