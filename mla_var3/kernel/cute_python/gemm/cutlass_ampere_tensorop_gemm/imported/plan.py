"""Plan for ``cutlass_ampere_tensorop_gemm``: CUTLASS's Ampere ``tensorop_gemm.py`` imported from ``CUTLASS_DIR``.

The pre-Hopper GEMM, all in one warp role: 128 threads (a 2 x 2 x 1 layout of ``mma.sync``
m16n8k16 atoms), a 128 x 128 x 32 CTA tile, a 4-stage ``cp.async`` ring of 16-byte copies with
``cp_async_wait_group`` and ``__syncthreads`` instead of mbarriers, ``ldmatrix`` into a two-deep
register pipeline, accumulators in registers, and an epilogue through (the reused) SMEM. Threadblock
rasterization folds N into M by 8, 4 or 2. Our workload is its (K, K, N)-major case (A (M, K) and
B (N, K) K-major, C (M, N) row-major; the docstring's command uses M-major A and N-major B). Its
``run()`` marks each operand's contiguous mode compact with divisibility 8 (16 bytes of fp16/bf16)
and every extent dynamic, so one binary serves every shape. ``mma.sync`` runs on sm_80 and later:
the plan compiles for ``sm_80`` (its first arch, the compile record) and ``sm_90`` (what the H200
runs: ``sm_80`` SASS does not load on 9.0).
"""

from __future__ import annotations

from typing import Any

from mla_var3.kernel.cute_python.attention.example_kernel import ExampleKernel
from mla_var3.kernel.cute_python.gemm.common import GemmPlanBase, check_rows_16b_aligned
from mla_var3.kernel.plan import Config, Shape, Tensors
from mla_var3.kernel.tensors import cute_dtype

EXAMPLE = "examples/python/CuTeDSL/cute/ampere/kernel/dense_gemm/tensorop_gemm.py"
DIVISIBILITY = 8  # 128 bits of fp16/bf16 per copy along the contiguous mode (run() marks it)


def fake_operand(dtype: Any) -> Any:
    """``(rows, cols, L)`` with cols contiguous and a multiple of 8: ``(?,?{div=8},?):(?{div=8},1,?{div=8})``."""
    from mla_var3.kernel.cute_python.gemm.cutlass_blockscaled_gemm.operands import fake_batched

    return fake_batched(dtype, divisibility=DIVISIBILITY)


def operand(t: Any) -> Any:
    from mla_var3.kernel.cute_python.gemm.cutlass_blockscaled_gemm.operands import batched

    return batched(t, divisibility=DIVISIBILITY)


class CutlassAmpereTensoropGemmPlan(GemmPlanBase):
    name = "cutlass_ampere_tensorop_gemm"
    description = (
        "CUTLASS's Ampere tensorop_gemm.py: mma.sync m16n8k16, 4-stage cp.async ring, ldmatrix register "
        "pipeline, epilogue through SMEM (sm_80 code; runs on sm_90 too)"
    )
    archs = ("sm_80", "sm_90")
    dtypes = ("float16", "bfloat16")
    backend = "cute"
    static_shape_params = ()

    @classmethod
    def upstream_example(cls) -> str:
        return EXAMPLE

    def validate_shape(self, shape: Shape) -> None:
        super().validate_shape(shape)
        check_rows_16b_aligned(shape, self.dtype, self.name)

    def _autotune_configs(self) -> list[Config]:
        return [{"atom_layout_mnk": (2, 2, 1)}, {"atom_layout_mnk": (2, 4, 1)}]

    def plan(self, config: Config) -> ExampleKernel:
        import cutlass

        from mla_var3.kernel.upstream import load_example

        example = load_example(EXAMPLE)
        ab = cute_dtype(self.dtype)
        gemm = example.TensorOpGemm(ab, ab, cutlass.Float32, tuple(config["atom_layout_mnk"]))

        def compile_args(shape: Shape) -> tuple[Any, ...]:
            return (fake_operand(ab), fake_operand(ab), fake_operand(ab))

        def launch_args(inputs: Tensors, outputs: Tensors) -> tuple[Any, ...]:
            return (operand(inputs["a"]), operand(inputs["b"]), operand(outputs["c"]))

        # ExampleKernel reads the dynamic SMEM back from the launch: one buffer sized for the larger of
        # the A/B stages and the C tile (tensorop_gemm.py:450-457), never in the cubin.
        return ExampleKernel(host_for=lambda shape: gemm, compile_args=compile_args, launch_args=launch_args)


__all__ = ["EXAMPLE", "CutlassAmpereTensoropGemmPlan"]
