"""The GEMM workload shared by every GEMM plan: C[M,N] = A[M,K] @ B[N,K]^T.

A and B are K-major (row-major, as torch's ``a @ b.T``), C is row-major in the input dtype,
accumulation is fp32. :class:`GemmPlanBase` holds what our kernels and the cuBLAS baseline
must agree on -- shape flags, check shapes, inputs, reference, tolerance, roofline -- so a
comparison between them always runs the same problem.
"""

from __future__ import annotations

from typing import ClassVar

from mla_var3.kernel.errors import UnsupportedShapeError
from mla_var3.kernel.plan import KernelPlan, Shape, ShapeParam, Tensors
from mla_var3.kernel.tensors import element_size, randn

# int32 indexing of every extent (TMA descriptors and CuTe coordinates are 32-bit).
MAX_EXTENT = 2**31 - 1
GEMM_SHAPE_PARAMS = (
    ShapeParam("m", 8192, "rows of A and C", minimum=1, maximum=MAX_EXTENT),
    ShapeParam("n", 8192, "rows of B (K-major), columns of C", minimum=1, maximum=MAX_EXTENT),
    ShapeParam("k", 8192, "the reduction dimension: columns of A and B", minimum=1, maximum=MAX_EXTENT),
)

# Square shapes from one tile up, plus a ragged one whose M, N and K are no tile multiple.
GEMM_CHECK_SHAPES: tuple[Shape, ...] = (
    {"m": 128, "n": 256, "k": 64},
    {"m": 1000, "n": 1048, "k": 520},
    {"m": 4096, "n": 4096, "k": 4096},
)

# rel-L2 of C against the fp32 reference is dominated by rounding C to 16 bits: about
# 0.21 ulp(1.0) for normally distributed values (bf16 ulp 2^-7 -> 1.7e-3, fp16 ulp 2^-10
# -> 2.1e-4). The tolerances leave ~3x / ~5x headroom, tighter than plan.py's generic 1e-2.
GEMM_REL_L2_TOLERANCE = {"bfloat16": 5e-3, "float16": 1e-3}


def check_rows_16b_aligned(shape: Shape, dtype: str, kernel: str) -> None:
    """TMA needs every row of A, B (K elements) and C (N elements) to start 16-byte aligned."""
    per_16b = 16 // element_size(dtype)
    for dim, role in (("k", "the row length of A and B"), ("n", "the row length of C")):
        value = shape[dim]
        if value % per_16b:
            fixed = (value + per_16b - 1) // per_16b * per_16b
            raise UnsupportedShapeError(
                f"{kernel} needs --{dim} (={value}, {role}) to be a multiple of {per_16b} for {dtype} "
                f"(16-byte aligned rows for TMA); pad {dim} to {fixed} with zeros"
            )


class GemmPlanBase(KernelPlan):
    """Inputs, reference and roofline of C = A @ B^T; subclasses add the kernel and its configs."""

    layer: ClassVar[str] = "gemm"
    dtypes: ClassVar[tuple[str, ...]] = ("bfloat16", "float16")
    shape_params: ClassVar[tuple[ShapeParam, ...]] = GEMM_SHAPE_PARAMS
    check_shapes: ClassVar[tuple[Shape, ...]] = GEMM_CHECK_SHAPES

    def prepare_inputs(self, shape: Shape) -> Tensors:
        return {
            "a": randn((shape["m"], shape["k"]), self.dtype),
            "b": randn((shape["n"], shape["k"]), self.dtype),
        }

    def allocate_outputs(self, inputs: Tensors, shape: Shape) -> Tensors:
        import torch

        a = inputs["a"]
        return {"c": torch.empty((shape["m"], shape["n"]), dtype=a.dtype, device=a.device)}

    def reference_fn(self, inputs: Tensors) -> Tensors:
        # fp16/bf16 values are exact in fp32 (and in TF32), so this is exact products with
        # fp32 sums, whatever torch's TF32 setting.
        return {"c": inputs["a"].float() @ inputs["b"].float().T}

    def tolerance(self) -> float:
        return GEMM_REL_L2_TOLERANCE[self.dtype]

    def _algorithmic_flops_bytes(self, shape: Shape) -> tuple[int, int]:
        m, n, k = shape["m"], shape["n"], shape["k"]
        return 2 * m * n * k, (m * k + n * k + m * n) * element_size(self.dtype)


__all__ = [
    "MAX_EXTENT",
    "GEMM_CHECK_SHAPES",
    "GEMM_REL_L2_TOLERANCE",
    "GEMM_SHAPE_PARAMS",
    "GemmPlanBase",
    "check_rows_16b_aligned",
]
