"""The row-reduce workload (per row of an (M, N) x, its sum and its max in fp32), shared by the torch
baseline and our kernel, and the row tensors every kernel of this layer takes: (M, N) row-major
with M dynamic and N compiled in. No DSL import at module level."""

from __future__ import annotations

from typing import Any

from mla_var3.kernel.errors import UnsupportedShapeError
from mla_var3.kernel.plan import Config, KernelPlan, Shape, ShapeParam, Tensors
from mla_var3.kernel.tensors import element_size, randn

ROW_ALIGN = 16  # bytes: torch allocations are at least this aligned, and the kernels assume it
MAX_N = 2**17  # eight CTAs of 16384 columns: 64 values per thread, in registers


class RowReducePlanBase(KernelPlan):
    """sum(x, -1) and amax(x, -1), both fp32, for a row-major (M, N) x."""

    layer = "reduction"
    dtypes = ("bfloat16", "float32")
    shape_params = (
        ShapeParam("m", 32768, "rows", 1, 2**31 - 1),
        ShapeParam("n", 4096, "row length, compiled into the kernel", 1, MAX_N),
    )
    check_shapes = ({"m": 199, "n": 1000}, {"m": 1, "n": 4097}, {"m": 199, "n": 65536}, {"m": 3, "n": 131072})
    static_shape_params = ("n",)

    def validate_shape(self, shape: Shape) -> None:
        if shape["n"] > MAX_N:
            raise UnsupportedShapeError(f"{self.name} takes rows up to --n {MAX_N}, got {shape['n']}")

    def prepare_inputs(self, shape: Shape) -> Tensors:
        return {"x": randn((shape["m"], shape["n"]), self.dtype)}

    def allocate_outputs(self, inputs: Tensors, shape: Shape) -> Tensors:
        import torch

        m = inputs["x"].shape[0]
        device = inputs["x"].device
        return {
            "sum": torch.empty(m, dtype=torch.float32, device=device),
            "max": torch.empty(m, dtype=torch.float32, device=device),
        }

    def reference_fn(self, inputs: Tensors) -> Tensors:
        x = inputs["x"].double()
        return {"sum": x.sum(dim=-1), "max": x.amax(dim=-1)}

    def tolerance(self) -> float:
        # fp32 sums of up to 131072 standard-normal terms in another order than the float64
        # reference: the error scales with sum |x| (~0.8 N) while a row sum is only ~sqrt(N).
        return 1e-4

    def _autotune_configs(self) -> list[Config]:
        return [{}]

    def _algorithmic_flops_bytes(self, shape: Shape) -> tuple[int, int]:
        m, n = shape["m"], shape["n"]
        return 2 * m * n, m * n * element_size(self.dtype) + 2 * 4 * m


def fake_rows(dtype: Any, n: int) -> Any:
    """A tensor-free (M, n) row-major tensor: M dynamic, n static (one binary per n)."""
    import cutlass.cute as cute
    from cutlass.cute.runtime import make_fake_compact_tensor

    return make_fake_compact_tensor(dtype, (cute.sym_int(), n), stride_order=(1, 0), assumed_align=ROW_ALIGN)


def fake_vector(dtype: Any, n: int | None = None) -> Any:
    """A tensor-free 1-D tensor of ``n`` elements (``None``: dynamic)."""
    import cutlass.cute as cute
    from cutlass.cute.runtime import make_fake_compact_tensor

    return make_fake_compact_tensor(dtype, (n if n is not None else cute.sym_int(),), assumed_align=ROW_ALIGN)


def rows(t: Any) -> Any:
    """A real row-major (M, n) torch tensor typed like :func:`fake_rows` (M dynamic)."""
    from cutlass.cute.runtime import from_dlpack

    return from_dlpack(t, assumed_align=ROW_ALIGN).mark_compact_shape_dynamic(mode=0, stride_order=(0, 1))


def vector(t: Any, dynamic: bool) -> Any:
    """A real 1-D torch tensor typed like :func:`fake_vector`."""
    from cutlass.cute.runtime import from_dlpack

    tensor = from_dlpack(t, assumed_align=ROW_ALIGN)
    return tensor.mark_compact_shape_dynamic(mode=0, stride_order=(0,)) if dynamic else tensor


__all__ = ["MAX_N", "ROW_ALIGN", "RowReducePlanBase", "fake_rows", "fake_vector", "rows", "vector"]
