"""Plan for ``cutlass_sm100_blockscaled_gemm_persistent_amax``: CUTLASS's ``dense_blockscaled_gemm_persistent_amax.py``.

The block-scaled persistent GEMM whose epilogue also reduces max |C| over the whole output (the
amax a following FP8/FP4 quantization needs): per thread over its subtiles, per warp with a
``redux.sync``, per CTA through SMEM, then one atomic max per tile into a 1-element fp32 tensor.
``atomic_fmax(..., sign_bit=False)`` compares the float's bits as signed 32-bit integers (SASS
``REDG.E.MAX.S32``), which orders non-negative floats correctly: the example's start value -inf
is a negative integer and loses to every |C|. A NaN bit pattern is a larger positive integer
than any finite float and would win, so this plan resets the output to -inf before every launch
(the runner poisons outputs with NaN before a checked one). Tensors are marked as in its ``run()``. Compile-only (no
SM100 GPU here); :mod:`..common` holds the workload.
"""

from __future__ import annotations

from typing import Any

from mla_var3.kernel.cute_python.gemm.cutlass_blockscaled_gemm.common import TensorApiBlockScaledGemmPlan
from mla_var3.kernel.cute_python.gemm.cutlass_blockscaled_gemm.quant import BlockScaledFormat
from mla_var3.kernel.plan import Shape, Tensors


class CutlassSm100BlockscaledGemmPersistentAmaxPlan(TensorApiBlockScaledGemmPlan):
    name = "cutlass_sm100_blockscaled_gemm_persistent_amax"
    description = (
        "CUTLASS's Blackwell dense_blockscaled_gemm_persistent_amax.py: the block-scaled persistent GEMM with "
        "a fused max |C| reduction (warp redux, SMEM, global atomic) in the epilogue (compile-only here)"
    )
    example_file = "dense_blockscaled_gemm_persistent_amax.py"

    def allocate_outputs(self, inputs: Tensors, shape: Shape) -> Tensors:
        import torch

        outputs = super().allocate_outputs(inputs, shape)
        outputs["amax"] = torch.full((1,), float("-inf"), dtype=torch.float32, device=inputs["a"].device)
        return outputs

    def reference_fn(self, inputs: Tensors) -> Tensors:
        reference = super().reference_fn(inputs)
        reference["amax"] = reference["c"].abs().amax().reshape(1)  # of the fp32 accumulators, as the example
        return reference

    def compile_operands(self, fmt: BlockScaledFormat) -> tuple[Any, ...]:
        import cutlass
        import cutlass.cute as cute
        from cutlass.cute.runtime import make_fake_tensor

        # run() marks a (1, 1, 1) tensor dynamic with leading dimension 0: (?,?,?):(1,?,?).
        amax = make_fake_tensor(
            cutlass.Float32, tuple(cute.sym_int() for _ in range(3)), (1, cute.sym_int64(), cute.sym_int64()),
            assumed_align=16,
        )  # fmt: skip
        return (*super().compile_operands(fmt), amax)

    def launch_operands(self, fmt: BlockScaledFormat, inputs: Tensors, outputs: Tensors) -> tuple[Any, ...]:
        from cutlass.cute.runtime import from_dlpack

        outputs["amax"].fill_(float("-inf"))  # see the module docstring: the poison must not survive the max
        amax = from_dlpack(outputs["amax"].view(1, 1, 1), assumed_align=16).mark_layout_dynamic(leading_dim=0)
        return (*super().launch_operands(fmt, inputs, outputs), amax)


__all__ = ["CutlassSm100BlockscaledGemmPersistentAmaxPlan"]
