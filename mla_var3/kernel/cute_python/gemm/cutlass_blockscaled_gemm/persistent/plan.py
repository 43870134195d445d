"""Plan for ``cutlass_sm100_blockscaled_gemm_persistent``: CUTLASS's ``dense_blockscaled_gemm_persistent.py``.

The newest of the three block-scaled examples: besides the kernel it ships its own compile helper
``scaled_mm`` that compiles against pointers and a dynamic ``(m, n, k, l)`` tuple, so one binary serves
every problem shape; ``__call__`` rebuilds A, B, C and the scale-factor layouts from them. This plan
compiles the same way (pointers of the alignments ``scaled_mm`` assumes: 16 bytes for A, B and C,
32 for the scale factors). A and B may differ in type (mixed f8f6f4); here both carry the config's
format. Compile-only (no SM100 GPU here); :mod:`..common` holds the workload.
"""

from __future__ import annotations

from typing import Any

from mla_var3.kernel.cute_python.gemm.cutlass_blockscaled_gemm.common import BlockScaledGemmPlan
from mla_var3.kernel.cute_python.gemm.cutlass_blockscaled_gemm.quant import BlockScaledFormat
from mla_var3.kernel.plan import Config, Shape, Tensors

OPERAND_ALIGN, SCALE_ALIGN = 16, 32  # bytes, as scaled_mm's make_ptr calls assume


class CutlassSm100BlockscaledGemmPersistentPlan(BlockScaledGemmPlan):
    name = "cutlass_sm100_blockscaled_gemm_persistent"
    description = (
        "CUTLASS's Blackwell dense_blockscaled_gemm_persistent.py: block-scaled tcgen05 MMA (NVFP4/MXFP8) with "
        "scale factors in TMEM, persistent and warp-specialized (compile-only here)"
    )
    example_file = "dense_blockscaled_gemm_persistent.py"

    def example_accepts(self, example: Any, shape: Shape, config: Config) -> bool:
        fmt = self._format(config)
        element, scale = fmt.cute_types()
        return bool(
            example.Sm100BlockScaledPersistentDenseGemmKernel.can_implement(
                (shape["m"], shape["n"], shape["k"], 1),
                element,
                element,
                scale,
                self.c_type(),
                "k",
                "k",
                "n",
                fmt.vec,
                tuple(config["mma_tiler_mn"]),
                tuple(config["cluster_shape_mn"]),
            )  # fmt: skip
        )

    def compile_operands(self, fmt: BlockScaledFormat) -> tuple[Any, ...]:
        import cutlass
        import cutlass.utils as utils
        from cutlass.cute.nvgpu import OperandMajorMode

        pointers = self._pointers(fmt, (0, 0, 0, 0, 0))
        layouts = (OperandMajorMode.K, OperandMajorMode.K, utils.LayoutEnum.ROW_MAJOR)
        return (*pointers, layouts, tuple(cutlass.Int32(0) for _ in range(4)))

    def launch_operands(self, fmt: BlockScaledFormat, inputs: Tensors, outputs: Tensors) -> tuple[Any, ...]:
        m, n = outputs["c"].shape
        k = inputs["a"].shape[1] * (2 if fmt.bits == 4 else 1)  # fp4 travels packed, two per byte
        addresses = tuple(
            t.data_ptr() for t in (inputs["a"], inputs["b"], inputs["sfa"], inputs["sfb"], outputs["c"])
        )
        return (*self._pointers(fmt, addresses), (m, n, k, 1))

    def _pointers(self, fmt: BlockScaledFormat, addresses: tuple[int, ...]) -> tuple[Any, ...]:
        import cutlass.cute as cute
        from cutlass.cute.runtime import make_ptr

        element, scale = fmt.cute_types()
        types = (element, element, scale, scale, self.c_type())
        aligns = (OPERAND_ALIGN, OPERAND_ALIGN, SCALE_ALIGN, SCALE_ALIGN, OPERAND_ALIGN)
        return tuple(
            make_ptr(t, address, cute.AddressSpace.gmem, assumed_align=align)
            for t, address, align in zip(types, addresses, aligns, strict=True)
        )


__all__ = ["CutlassSm100BlockscaledGemmPersistentPlan"]
