"""The device side the RMSNorm kernels share: the weight as a tile of rows, and the scale step."""

from __future__ import annotations

import operator

import cutlass
import cutlass.cute as cute

from mla_var3.kernel.cute_python.reduction.row_reduce.reduce import row_reduce


def broadcast_rows(mW: cute.Tensor, rows_per_cta: int) -> cute.Tensor:
    """The weight (N,) as (rows_per_cta, N) with row stride 0, to partition like a tile of x."""
    return cute.make_tensor(mW.iterator, cute.make_layout((rows_per_cta, cute.size(mW)), stride=(0, 1)))


# --8<-- [start:rms_scale]
@cute.jit
def rms_scale(
    tXrX: cute.Tensor,
    tWrW: cute.Tensor,
    tXrY: cute.Tensor,
    tiling: cutlass.Constexpr,
    buf: cute.Tensor | None,
    mbar: cute.Pointer | None,
    first: cutlass.Int32,
    eps: cutlass.Float32,
) -> None:
    """y = x * rsqrt(mean(x^2) + eps) * w for this thread's fragments (fp32 math, y in y's type).

    The weight fragment comes from the fp32 copy, partitioned ((4, 2), 1, k) where x is
    ((8, 1), 1, k): the same columns in the same order, viewed with x's layout to multiply."""
    x = tXrX.load().to(cutlass.Float32)
    sum_sq = (x * x).reduce(cute.ReductionOp.ADD, init_val=0.0, reduction_profile=0)
    (sum_sq,) = row_reduce((sum_sq,), (operator.add,), (0.0,), tiling, buf, mbar, first)
    rstd = cute.math.rsqrt(sum_sq / tiling.n + eps, fastmath=True)
    w = cute.make_tensor(tWrW.iterator, tXrX.layout).load()
    tXrY.store((x * rstd * w).to(tXrY.element_type))


# --8<-- [end:rms_scale]


__all__ = ["broadcast_rows", "rms_scale"]
