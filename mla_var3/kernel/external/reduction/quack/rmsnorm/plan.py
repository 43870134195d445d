"""Plan for ``quack_rmsnorm``: quack 0.6.5's RMSNorm forward, the reference of ``rmsnorm_bf16``.

The workload is ours (bf16 x, fp32 w, bf16 y; :mod:`mla_var3.kernel.cute_python.reduction.rmsnorm.common`).
quack compiles one kernel per (dtypes, N) with its analytical heuristic for the launch (threads per
row, cluster size above N = 16K, reload from SMEM above N = 8K) through ``_compile_rmsnorm_fwd``,
tensor-free, and caches the object file on disk; that compiled function takes torch tensors through
TVM-FFI on the current stream. Timing calls it directly, as ``rmsnorm_fwd`` does after allocating
its output: no allocation and no ``torch.library`` dispatch inside the timed region. With an fp32
weight, quack's vector width follows the widest type: 4 elements, 64-bit copies of x.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from mla_var3.kernel.arch import Arch
from mla_var3.kernel.backends import Compiled
from mla_var3.kernel.cute_python.reduction.rmsnorm.common import EPS, RmsNormPlanBase
from mla_var3.kernel.external.reduction import quack as quack_peer
from mla_var3.kernel.plan import Config, Shape, Tensors


def compile_quack_rmsnorm(n: int) -> Any:
    """quack's compiled forward for (M, n) bf16 x, an fp32 weight, bf16 y, no residual/bias/rstd."""
    import cutlass
    from quack.rmsnorm import _compile_rmsnorm_fwd

    bf16, fp32 = cutlass.BFloat16, cutlass.Float32
    # (x, out, residual, weight, bias, residual_out) dtypes, N, has_rstd, has_mean, is_layernorm, per_head
    return _compile_rmsnorm_fwd(bf16, bf16, None, fp32, None, None, n, False, False, False, False)


@dataclass
class QuackKernel:
    """Compile through quack's cached compile; launch its TVM-FFI function with torch tensors."""

    backend: ClassVar[str] = "quack"

    def compile(self, shape: Shape, arch: Arch) -> Compiled:
        start = time.perf_counter()
        fn = compile_quack_rmsnorm(shape["n"])
        return Compiled(fn=fn, arch=arch.name, cubin=None, compile_s=time.perf_counter() - start)

    def launch(self, compiled: Compiled, inputs: Tensors, outputs: Tensors) -> None:
        self.bind(compiled, inputs, outputs)()

    def bind(self, compiled: Compiled, inputs: Tensors, outputs: Tensors) -> Callable[[], None]:
        fn, x, w, y = compiled.fn, inputs["x"], inputs["w"], outputs["y"]
        # (x, weight, bias, residual, out, residual_out, rstd, mean, eps), as _rmsnorm_fwd calls it.
        return lambda: fn(x, w, None, None, y, None, None, None, EPS)


class QuackRmsNormPlan(RmsNormPlanBase):
    name = "quack_rmsnorm"
    description = (
        "quack-kernels 0.6.5 RMSNorm forward (CuTe DSL, its analytical heuristic), called through TVM-FFI"
    )
    archs = ("sm_90a",)
    backend = "quack"
    max_n = 2**16

    @classmethod
    def unavailable_reason(cls) -> str | None:
        return quack_peer.unavailable_reason()

    def _autotune_configs(self) -> list[Config]:
        return [{}]

    def plan(self, config: Config) -> QuackKernel:
        return QuackKernel()


__all__ = ["QuackKernel", "QuackRmsNormPlan", "compile_quack_rmsnorm"]
