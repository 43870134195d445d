"""The workload of the PDL pair and the plan all three variants share; they differ only in the launch.

Inputs per the project's rule (standard normal, never zeros): x and z bf16 (M x N), s fp32 (M).
Outputs: y bf16 (the producer's, kept), r fp32. One ``launch()`` of a variant runs both kernels,
so the harness times the pair as one unit (events outside the pair).
"""

from __future__ import annotations

from typing import Any, ClassVar

from mla_var3.kernel.backends import CuteKernel
from mla_var3.kernel.cute_python.gemm.common import MAX_EXTENT
from mla_var3.kernel.errors import UnsupportedShapeError
from mla_var3.kernel.plan import Config, KernelPlan, Shape, ShapeParam, Tensors
from mla_var3.kernel.tensors import element_size, fake_dynamic_tensor, randn, to_cute_dynamic

COLUMNS_PER_WARP_PASS = 256  # 32 lanes x 8 bf16
# One row lives in a warp's registers: N / 256 vectors of 4 registers per tensor and thread. At
# N = 8192 the consumer that holds its z row across the wait spills (tests/test_pdl_pair.py).
MAX_N = 4096
ANY_ROWS = (1,)  # marks mode 0 (M) dynamic, any value; N stays static
# y matches the reference exactly (the same fp32 product rounded to bf16); r sums N exact fp32
# products in another order than the float64 reference.
REL_L2_TOLERANCE = 1e-5


def _fake_rows(dtype: Any, n: int) -> Any:
    """A row-major (M, n) tensor-free stand-in, M dynamic, n static: what ``to_cute_dynamic(t, (1,))`` gives."""
    import cutlass.cute as cute
    from cutlass.cute.runtime import make_fake_compact_tensor

    return make_fake_compact_tensor(dtype, (cute.sym_int(), n), stride_order=(1, 0), assumed_align=16)


class PdlPairPlanBase(KernelPlan):
    """Row scale then row dot (``launch/pdl/kernel.py``); subclasses set how the pair is launched."""

    layer: ClassVar[str] = "launch"
    archs: ClassVar[tuple[str, ...]] = ("sm_90a",)
    dtypes: ClassVar[tuple[str, ...]] = ("bfloat16",)
    backend: ClassVar[str] = "cute"
    shape_params: ClassVar[tuple[ShapeParam, ...]] = (
        ShapeParam("m", 4096, "rows of x, z and y; entries of s and r", minimum=1, maximum=MAX_EXTENT),
        ShapeParam("n", 4096, "row length: a multiple of 256, at most 4096 (a row in a warp's registers)",
                   minimum=COLUMNS_PER_WARP_PASS, maximum=MAX_N),
    )  # fmt: skip
    check_shapes: ClassVar[tuple[Shape, ...]] = (
        {"m": 1001, "n": 4096},
        {"m": 3, "n": 256},
        {"m": 16384, "n": 1024},
    )
    static_shape_params: ClassVar[tuple[str, ...]] = ("n",)  # the row is unrolled into registers
    use_pdl: ClassVar[bool]
    overlap_prologue: ClassVar[bool] = True

    def validate_shape(self, shape: Shape) -> None:
        n = shape["n"]
        if n % COLUMNS_PER_WARP_PASS:
            fixed = -(-n // COLUMNS_PER_WARP_PASS) * COLUMNS_PER_WARP_PASS
            raise UnsupportedShapeError(
                f"{self.name} needs --n (={n}) to be a multiple of {COLUMNS_PER_WARP_PASS} (a warp reads 32 x 8 "
                f"bf16 per pass); pad n to {fixed} with zeros"
            )

    def prepare_inputs(self, shape: Shape) -> Tensors:
        m, n = shape["m"], shape["n"]
        return {"x": randn((m, n), self.dtype), "s": randn((m,), "float32"), "z": randn((m, n), self.dtype)}

    def allocate_outputs(self, inputs: Tensors, shape: Shape) -> Tensors:
        import torch

        return {"y": torch.empty_like(inputs["x"]), "r": torch.empty_like(inputs["s"])}

    def reference_fn(self, inputs: Tensors) -> Tensors:
        y = (inputs["x"].float() * inputs["s"][:, None]).to(inputs["x"].dtype)
        return {"y": y, "r": (y.double() * inputs["z"].double()).sum(1)}

    def tolerance(self) -> float:
        return REL_L2_TOLERANCE

    def _autotune_configs(self) -> list[Config]:
        return [{}]

    def _algorithmic_flops_bytes(self, shape: Shape) -> tuple[int, int]:
        m, n = shape["m"], shape["n"]
        # x and z read, y written (s, r: 4 B a row). The consumer's re-read of y is the price of
        # two kernels (a fused kernel would not pay it) and may come from L2: not counted.
        return 3 * m * n, 3 * m * n * element_size(self.dtype) + 2 * m * element_size("float32")

    def plan(self, config: Config) -> CuteKernel:
        import cutlass

        from mla_var3.kernel.cute_python.launch.pdl.kernel import RowScaleThenDot

        def compile_args(shape: Shape) -> tuple[Any, ...]:
            mat, vec = (
                (lambda: _fake_rows(cutlass.BFloat16, shape["n"])),
                (lambda: fake_dynamic_tensor(cutlass.Float32, ANY_ROWS)),
            )
            return mat(), vec(), mat(), mat(), vec()

        def launch_args(inputs: Tensors, outputs: Tensors) -> tuple[Any, ...]:
            tensors = (inputs["x"], inputs["s"], inputs["z"], outputs["y"], outputs["r"])
            return tuple(to_cute_dynamic(t, ANY_ROWS) for t in tensors)

        return CuteKernel(
            host_fn=RowScaleThenDot(self.use_pdl, self.overlap_prologue),
            compile_args=compile_args,
            launch_args=launch_args,
        )


__all__ = ["MAX_N", "REL_L2_TOLERANCE", "PdlPairPlanBase"]
