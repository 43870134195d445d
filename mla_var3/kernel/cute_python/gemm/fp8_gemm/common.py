"""What our two FP8 GEMM plans share: operands marked for the binary, and ``plan()`` for a config.

The plans differ only in :attr:`HopperFp8PlanBase.promote` (and so in their configs and
tolerance); both compile one binary per config for dynamic M, N and K.
"""

from __future__ import annotations

from typing import Any, ClassVar

from mla_var3.kernel.backends import CuteKernel
from mla_var3.kernel.cute_python.gemm.fp8_gemm.workload import OUT_DTYPE, ROW_MULTIPLE, Fp8GemmPlanBase
from mla_var3.kernel.cute_python.gemm.hopper_gemm.warp_specialized.plan import (
    COMPILE_SM_COUNT,
    gemm_kwargs,
    max_active_clusters,
)
from mla_var3.kernel.plan import Config, Shape, Tensors
from mla_var3.kernel.tensors import cute_dtype, fake_dynamic_tensor, fake_tensor, to_cute, to_cute_dynamic

# Divisibility of (rows, cols) the binary assumes: 16-byte rows of A and B (16 e4m3 values; N a
# multiple of 16 as well, the workload's rule) and of C (the same N).
DIVISIBILITY = {"a": (1, ROW_MULTIPLE), "b": (ROW_MULTIPLE, ROW_MULTIPLE), "c": (1, ROW_MULTIPLE)}
SCALES_SHAPE = (2,)  # [s_a, s_b]


def compile_operands(dtype: str) -> tuple[Any, ...]:
    """Fake A, B (``dtype``), C (bf16) and scales (fp32, two values), marked like the real ones."""
    import cutlass

    ab, out = cute_dtype(dtype), cute_dtype(OUT_DTYPE)
    return (
        fake_dynamic_tensor(ab, DIVISIBILITY["a"]),
        fake_dynamic_tensor(ab, DIVISIBILITY["b"]),
        fake_dynamic_tensor(out, DIVISIBILITY["c"]),
        fake_tensor(cutlass.Float32, SCALES_SHAPE),
    )


def launch_operands(inputs: Tensors, outputs: Tensors) -> tuple[Any, ...]:
    """Real A, B, C and scales marked like :func:`compile_operands`."""
    return (
        to_cute_dynamic(inputs["a"], DIVISIBILITY["a"]),
        to_cute_dynamic(inputs["b"], DIVISIBILITY["b"]),
        to_cute_dynamic(outputs["c"], DIVISIBILITY["c"]),
        to_cute(inputs["scales"]),
    )


class HopperFp8PlanBase(Fp8GemmPlanBase):
    """Our FP8 Hopper GEMM (``fp8_gemm/kernel.py``) on the FP8 workload; ``promote`` picks the mainloop."""

    archs: ClassVar[tuple[str, ...]] = ("sm_90a",)
    backend: ClassVar[str] = "cute"
    static_shape_params: ClassVar[tuple[str, ...]] = ()  # M, N and K are dynamic
    promote: ClassVar[bool]

    def plan(self, config: Config) -> CuteKernel:
        from mla_var3.kernel.cute_python.gemm.fp8_gemm.kernel import HopperFp8GemmWS

        gemm = HopperFp8GemmWS(promote=self.promote, **gemm_kwargs(config))
        cluster_size = gemm.cluster_mn[0] * gemm.cluster_mn[1]

        def compile_args(shape: Shape) -> tuple[Any, ...]:
            return (*compile_operands(self.dtype), COMPILE_SM_COUNT // cluster_size)

        def launch_args(inputs: Tensors, outputs: Tensors) -> tuple[Any, ...]:
            clusters = max_active_clusters(cluster_size, inputs["a"].device.index or 0)
            return (*launch_operands(inputs, outputs), clusters)

        return CuteKernel(
            host_fn=gemm,
            compile_args=compile_args,
            launch_args=launch_args,
            dynamic_smem_bytes=lambda shape: gemm.dynamic_smem_bytes(),
        )


__all__ = ["DIVISIBILITY", "HopperFp8PlanBase", "compile_operands", "launch_operands"]
