"""The plan side every variant of our SM90 FMHA shares: the workload of the CUTLASS example's plan.

Our variants subclass :class:`~mla_var3.kernel.cute_python.attention.cutlass_hopper_fmha.imported.plan.CutlassHopperFmhaPlan`
for its workload only -- randn q/k/v, the fp32 reference with the natural-log LSE, FLOPs over the
visible query-key pairs (causal counts half) plus the LSE bytes, the shape flags and their
defaults (b 2, s = t = 8192, h = hk = 16, d 128) -- so a group of ours and CUTLASS's compares
like with like. The kernel is ours: the operands go in as the same 5-D head views
(``cutlass_hopper_fmha/common.py``), and the host object per (causal, tile_n) is compiled under
that module's argv shield (our ``--h`` flag would otherwise reach the DSL's argument parser).
"""

from __future__ import annotations

from typing import Any, ClassVar

from mla_var3.kernel.cute_python.attention.cutlass_hopper_fmha.common import (
    as_heads_5d,
    example_compile_context,
    fake_heads_5d,
)
from mla_var3.kernel.cute_python.attention.cutlass_hopper_fmha.imported.plan import CutlassHopperFmhaPlan
from mla_var3.kernel.cute_python.attention.example_kernel import ExampleKernel
from mla_var3.kernel.errors import UnsupportedShapeError
from mla_var3.kernel.plan import Config, Shape, Tensors

HEAD_DIM = 128  # the one head dimension the kernels are written for (common.HEAD_DIM; no DSL import here)
# --check: the shape scaled down, odd lengths (one row, one tile short, one tile and a row
# past), s != t both ways, and grouped-query heads.
CHECK_SHAPES = (
    {"b": 2, "s": 1024, "t": 1024, "h": 4, "hk": 4, "d": 128, "causal": 1},
    {"b": 1, "s": 1000, "t": 1000, "h": 16, "hk": 4, "d": 128, "causal": 0},
    *(
        {"b": 1, "s": n, "t": n, "h": 2, "hk": 2, "d": 128, "causal": c}
        for n in (1, 127, 129)
        for c in (0, 1)
    ),
    {"b": 2, "s": 200, "t": 333, "h": 2, "hk": 1, "d": 128, "causal": 1},
    {"b": 1, "s": 333, "t": 200, "h": 2, "hk": 2, "d": 128, "causal": 1},
)


class FmhaHopperPlanBase(CutlassHopperFmhaPlan):
    """Inputs, reference, roofline and shape flags of ``cutlass_hopper_fmha``; a variant names
    itself and its kernel class (:meth:`make_kernel`)."""

    check_shapes: ClassVar[tuple[Shape, ...]] = CHECK_SHAPES
    tile_ns: ClassVar[tuple[int, ...]] = (128, 176)  # KV block sizes, one config each (the kernel's tile_ns)
    # Causal shapes the walk; d is fixed; lengths, batch and heads are dynamic.
    static_shape_params: ClassVar[tuple[str, ...] | None] = ("d", "causal")

    @classmethod
    def upstream_example(cls) -> str | None:
        return None

    def validate_shape(self, shape: Shape) -> None:
        super().validate_shape(shape)
        if shape["d"] != HEAD_DIM:
            raise UnsupportedShapeError(
                f"{self.name} needs --d {HEAD_DIM} (its tiles are written for it), got {shape['d']}"
            )

    def _autotune_configs(self) -> list[Config]:
        return [{"tile_n": n} for n in self.tile_ns]

    def make_kernel(self, causal: bool, tile_n: int) -> Any:
        """The variant's kernel object."""
        raise NotImplementedError

    def plan(self, config: Config) -> ExampleKernel:
        import cutlass

        from mla_var3.kernel.tensors import cute_dtype

        dtype = cute_dtype(self.dtype)

        def host_for(shape: Shape) -> Any:
            return self.make_kernel(bool(shape["causal"]), config["tile_n"])

        def compile_args(shape: Shape) -> tuple[Any, ...]:
            return (*(fake_heads_5d(dtype) for _ in "qkvo"), fake_heads_5d(cutlass.Float32))

        def launch_args(inputs: Tensors, outputs: Tensors) -> tuple[Any, ...]:
            hk = inputs["k"].shape[2]
            return tuple(
                as_heads_5d(t, hk)
                for t in (inputs["q"], inputs["k"], inputs["v"], outputs["o"], outputs["lse"])
            )

        return ExampleKernel(
            host_for=host_for,
            compile_args=compile_args,
            launch_args=launch_args,
            compile_context=example_compile_context(),
        )


__all__ = ["CHECK_SHAPES", "HEAD_DIM", "FmhaHopperPlanBase"]
