"""What the RMSNorm plans share: the workload and the row tensors (no DSL import at module level).

y = x / sqrt(mean(x^2) + eps) * w over the rows of a row-major (M, N) x in bf16, with an fp32
weight (as a model keeps it), fp32 accumulation and a bf16 y. N is compiled in (it fixes the
tiling, the vector width and the predicates); M is dynamic: one binary per N serves every M. The
roofline counts x read and y written once and w once (an L2-resident w is re-read per row block).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mla_var3.kernel.cute_python.reduction.row_reduce.common import fake_rows, fake_vector, rows, vector
from mla_var3.kernel.errors import UnsupportedShapeError
from mla_var3.kernel.plan import Config, KernelPlan, Shape, ShapeParam, Tensors
from mla_var3.kernel.tensors import randn

EPS = 1e-6
MAX_M = 2**31 - 1


class RmsNormPlanBase(KernelPlan):
    """The RMSNorm workload; a variant adds its name, its ``max_n``, configs and ``plan()``."""

    layer = "reduction"
    dtypes = ("bfloat16",)
    shape_params = (
        ShapeParam("m", 32768, "rows (tokens)", 1, MAX_M),
        ShapeParam("n", 4096, "row length (hidden size), compiled into the kernel", 1, 2**16),
    )
    # Odd rows and columns: a row tail (199, 1), a vector that does not fill the last slice (1000),
    # a length no vector divides (4097: one element per copy), and a full-width row.
    check_shapes = ({"m": 199, "n": 1000}, {"m": 1, "n": 4097}, {"m": 199, "n": 4096})
    static_shape_params = ("n",)
    data_distribution = "x standard normal in bf16, w standard normal in fp32 (torch.randn)"
    max_n: int = 16384

    def validate_shape(self, shape: Shape) -> None:
        if shape["n"] > self.max_n:
            raise UnsupportedShapeError(
                f"{self.name} keeps a row's share per thread in registers up to --n {self.max_n}, got "
                f"{shape['n']}; use rmsnorm_v2 (rows split over a cluster) for longer rows"
            )

    def prepare_inputs(self, shape: Shape) -> Tensors:
        return {"x": randn((shape["m"], shape["n"]), "bfloat16"), "w": randn((shape["n"],), "float32")}

    def allocate_outputs(self, inputs: Tensors, shape: Shape) -> Tensors:
        import torch

        return {"y": torch.empty_like(inputs["x"])}

    def reference_fn(self, inputs: Tensors) -> Tensors:
        x = inputs["x"].double()
        return {"y": x * (x.square().mean(dim=-1, keepdim=True) + EPS).rsqrt() * inputs["w"].double()}

    def _algorithmic_flops_bytes(self, shape: Shape) -> tuple[int, int]:
        m, n = shape["m"], shape["n"]
        # x^2 and its sum (2 per element), the scale and the weight (2 per element);
        # x read and y written in bf16, w read once in fp32.
        return 4 * m * n, 2 * m * n * 2 + 4 * n

    def _autotune_configs(self) -> list[Config]:
        return [{}]


def row_kernel(host_for: Callable[[Shape], Any], ctas: Callable[[Any], int] | None = None) -> Any:
    """The backend kernel of a variant: ``host_for(shape)`` builds the host object for N; the
    arguments are (x, w, y, eps) plus, with ``ctas(x)``, the persistent grid size."""
    import cutlass

    from mla_var3.kernel.cute_python.attention.example_kernel import ExampleKernel

    def compile_args(shape: Shape) -> tuple[Any, ...]:
        n = shape["n"]
        args = (
            fake_rows(cutlass.BFloat16, n),
            fake_vector(cutlass.Float32, n),
            fake_rows(cutlass.BFloat16, n),
        )
        return (*args, cutlass.Float32(EPS), *((cutlass.Int32(1),) if ctas else ()))

    def launch_args(inputs: Tensors, outputs: Tensors) -> tuple[Any, ...]:
        x = inputs["x"]
        args = (rows(x), vector(inputs["w"], dynamic=False), rows(outputs["y"]), cutlass.Float32(EPS))
        return (*args, *((cutlass.Int32(ctas(x)),) if ctas else ()))

    return ExampleKernel(host_for=host_for, compile_args=compile_args, launch_args=launch_args)


__all__ = ["EPS", "RmsNormPlanBase", "row_kernel"]
