"""Plan for ``cublas_gemm_small_int``: the cuBLAS baseline on CUTLASS's default example data.

An anti-pattern made measurable: the same GEMM as ``cublas_gemm``, but A and B filled with
integers in {-2, -1, 0, 1} the way CUTLASS's example harnesses fill them
(``cutlass.torch`` ``RandomInitConfig(min_val=-2, max_val=2)``). Its record's
``pct_of_matmul_ceiling`` compares it with cuBLAS on randn data in the same process,
so the two distributions meet at the same clocks.
"""

from __future__ import annotations

from mla_var3.kernel.plan import Shape, Tensors
from mla_var3.kernel.torch_ref.gemm.cublas.matmul.plan import CublasGemmPlan


class CublasGemmSmallIntPlan(CublasGemmPlan):
    name = "cublas_gemm_small_int"
    description = "anti-pattern demo: cuBLAS on small-integer inputs {-2..1}, as CUTLASS's examples fill them"
    data_distribution = "integers uniform in {-2, -1, 0, 1} (CUTLASS's example default), cast to the dtype"

    def prepare_inputs(self, shape: Shape) -> Tensors:
        import torch

        from mla_var3.kernel.tensors import torch_dtype

        def ints(rows: int, cols: int) -> torch.Tensor:
            return torch.randint(-2, 2, (rows, cols), device="cuda").to(torch_dtype(self.dtype))

        return {"a": ints(shape["m"], shape["k"]), "b": ints(shape["n"], shape["k"])}


__all__ = ["CublasGemmSmallIntPlan"]
