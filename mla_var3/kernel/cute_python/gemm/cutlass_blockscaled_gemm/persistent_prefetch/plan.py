"""Plan for ``cutlass_sm100_blockscaled_gemm_persistent_prefetch``: CUTLASS's ``dense_blockscaled_gemm_persistent_prefetch.py``.

The block-scaled persistent GEMM with TMA prefetches into L2 ahead of the loads (``prefetch_dist``:
``None`` means the number of A/B stages, 0 turns them off). An older API than the persistent
example: ``__call__`` takes tensors, marked as its ``run()`` marks them (every extent dynamic, the
K extent of A and B and the N extent of C a multiple of 32 for fp4 or 16 for fp8, 16-byte
alignment); only the scale tensors' base pointers matter, the kernel rebuilds their layouts. A and
B must share one type. Compile-only (no SM100 GPU here); :mod:`..common` holds the workload.
"""

from __future__ import annotations

from typing import Any

from mla_var3.kernel.cute_python.gemm.cutlass_blockscaled_gemm.common import (
    BlockScaledGemmPlan,
    fake_tensor_operands,
    tensor_operands,
)
from mla_var3.kernel.cute_python.gemm.cutlass_blockscaled_gemm.quant import BlockScaledFormat
from mla_var3.kernel.plan import Config, Shape, Tensors


class CutlassSm100BlockscaledGemmPersistentPrefetchPlan(BlockScaledGemmPlan):
    name = "cutlass_sm100_blockscaled_gemm_persistent_prefetch"
    description = (
        "CUTLASS's Blackwell dense_blockscaled_gemm_persistent_prefetch.py: the block-scaled persistent GEMM "
        "with TMA prefetch into L2 (compile-only here)"
    )
    example_file = "dense_blockscaled_gemm_persistent_prefetch.py"

    def kernel_object(self, example: Any, config: Config) -> Any:
        fmt = self._format(config)
        return example.Sm100BlockScaledPersistentDenseGemmKernel(
            fmt.vec, tuple(config["mma_tiler_mn"]), tuple(config["cluster_shape_mn"]), None
        )

    def example_accepts(self, example: Any, shape: Shape, config: Config) -> bool:
        fmt = self._format(config)
        element, scale = fmt.cute_types()
        return bool(
            example.Sm100BlockScaledPersistentDenseGemmKernel.can_implement(
                element,
                scale,
                fmt.vec,
                self.c_type(),
                tuple(config["mma_tiler_mn"]),
                tuple(config["cluster_shape_mn"]),
                shape["m"],
                shape["n"],
                shape["k"],
                1,
                "k",
                "k",
                "n",
            )  # fmt: skip
        )

    def compile_operands(self, fmt: BlockScaledFormat) -> tuple[Any, ...]:
        return fake_tensor_operands(fmt, self.c_type())

    def launch_operands(self, fmt: BlockScaledFormat, inputs: Tensors, outputs: Tensors) -> tuple[Any, ...]:
        return tensor_operands(fmt, inputs, outputs)


__all__ = ["CutlassSm100BlockscaledGemmPersistentPrefetchPlan"]
