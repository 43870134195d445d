"""Plan for ``cutlass_sm100_grouped_mixed_input_gemm``: CUTLASS's Blackwell ``grouped_mixed_input_gemm.py``.

A grouped GEMM with contiguous offsets, as in a mixture-of-experts layer: G weight matrices A_g
(M x K, int4 scaled or int8, stacked as (M, K, G)), one 16-bit B whose N rows are cut into G
contiguous groups (the tokens of each expert), and ``cumsum`` (G + 1 int32 offsets) saying where
each group starts; C (M, N) = for each g, widen(A_g) @ B[rows of g]^T. The number of tiles lives on
the device (in ``cumsum``), so a schedule warp walks the persistent CTA's tiles in order and
advances a linear search over ``cumsum``: group g owns ceil(N_g / tile N) tiles, the last one
partial, and for a partial tile the epilogue switches from TMA stores to predicated per-element
stores. Group sizes here are equal, N / G each (the example's ``--uniform_group_sizes``; by
default it draws them at random in multiples of 8): FLOPs and bytes are then exact.
``cumsum`` is a static-shape tensor in the example's ``run()``, so G is a static shape param.
Compile-only (no SM100 GPU here); :mod:`..common` holds the A side.
"""

from __future__ import annotations

from typing import Any

from mla_var3.kernel.cute_python.attention.example_kernel import ExampleKernel
from mla_var3.kernel.cute_python.gemm.common import GEMM_SHAPE_PARAMS, MAX_EXTENT
from mla_var3.kernel.cute_python.gemm.cutlass_mixed_input_gemm.common import MixedInputGemmPlan, shuffles
from mla_var3.kernel.errors import UnsupportedShapeError
from mla_var3.kernel.plan import Config, Shape, ShapeParam, Tensors
from mla_var3.kernel.tensors import cute_dtype, element_size, randn

# The docstring's convert-scale problem: M 1024, K 6144, 16 groups; N is the total over the groups
# (its --mnkl gives 8192 per group, 131072 in all; half of that here keeps B at 0.8 GB).
DEFAULTS = {"m": 1024, "n": 65536, "k": 6144}


class CutlassSm100GroupedMixedInputGemmPlan(MixedInputGemmPlan):
    name = "cutlass_sm100_grouped_mixed_input_gemm"
    description = (
        "CUTLASS's Blackwell grouped_mixed_input_gemm.py: mixture-of-experts style grouped GEMM, int4/int8 "
        "weights per group, B rows cut into groups by a cumsum, a schedule warp maps tiles to groups "
        "(compile-only here)"
    )
    example_file = "grouped_mixed_input_gemm.py"
    shape_params = (
        *(ShapeParam(p.name, DEFAULTS[p.name], p.help, p.minimum, p.maximum) for p in GEMM_SHAPE_PARAMS),
        ShapeParam(
            "g", 16, "groups (experts): A holds G matrices, B's N rows are cut into G groups", 1, MAX_EXTENT
        ),
    )
    check_shapes = ({"m": 256, "n": 512, "k": 512, "g": 2}, {"m": 1024, "n": 4096, "k": 1536, "g": 8})
    static_shape_params = ("n", "k", "g")

    def validate_shape(self, shape: Shape) -> None:
        super().validate_shape(shape)
        if shape["n"] % (8 * shape["g"]):
            raise UnsupportedShapeError(
                f"{self.name} needs --n (={shape['n']}) to be a multiple of 8 x --g (={shape['g']}): equal groups "
                "of whole 16-byte rows"
            )

    def prepare_inputs(self, shape: Shape) -> Tensors:
        import torch

        groups = shape["g"]
        inputs = self.quantize_a(shape["m"], shape["k"], groups)
        inputs["b"] = randn((shape["n"], shape["k"]), self.dtype)
        sizes = torch.full((groups,), shape["n"] // groups, dtype=torch.int32)
        inputs["cumsum"] = torch.cat(
            (torch.zeros(1, dtype=torch.int32), sizes.cumsum(0).to(torch.int32))
        ).cuda()
        return inputs

    def allocate_outputs(self, inputs: Tensors, shape: Shape) -> Tensors:
        import torch

        return {
            "c": torch.empty((shape["m"], shape["n"]), dtype=inputs["b"].dtype, device=inputs["b"].device)
        }

    def reference_fn(self, inputs: Tensors) -> Tensors:
        import torch

        b = inputs["b"].float()
        offsets = inputs["cumsum"].tolist()
        parts = [
            self.dequantized_a(inputs, g) @ b[lo:hi].T
            for g, (lo, hi) in enumerate(zip(offsets, offsets[1:], strict=False))
        ]
        return {"c": torch.cat(parts, dim=1)}

    def _algorithmic_flops_bytes(self, shape: Shape) -> tuple[int, int]:
        m, n, k, g = shape["m"], shape["n"], shape["k"], shape["g"]
        return 2 * m * n * k, self.a_bytes(m, k, g) + (n * k + m * n) * element_size(self.dtype) + 4 * (g + 1)

    def plan(self, config: Config) -> ExampleKernel:
        import cutlass
        from cutlass.cute.runtime import from_dlpack, make_fake_tensor

        from mla_var3.kernel.upstream import load_example

        example = load_example(self.upstream_example())
        a = self.narrow(config)
        kernel_class = example.GroupedMixedInputGemmKernel

        def host_for(shape: Shape) -> Any:
            return kernel_class(
                a.scale_m, a.scale_k, cutlass.Float32, config["use_2cta_instrs"], tuple(config["mma_tiler_mnk"]),
                tuple(config["cluster_shape_mn"]), shape["g"], shuffles(a, shape["k"], self.dtype),
            )  # fmt: skip

        def compile_args(shape: Shape) -> tuple[Any, ...]:
            m, n, k, g = shape["m"], shape["n"], shape["k"], shape["g"]
            ab = cute_dtype(self.dtype)
            if not kernel_class.can_implement(
                (m, n // g, k, g), a.cute_type(), ab, ab, "k", "k", "n", a.scale_m, a.scale_k,
                tuple(config["mma_tiler_mnk"]), tuple(config["cluster_shape_mn"]), config["use_2cta_instrs"],
            ):  # fmt: skip
                raise UnsupportedShapeError(
                    f"{self.upstream_example()} cannot implement {shape} with {config}"
                )
            a_tensor, a_scale = self.fake_a_operands(k)
            b, c = self.fake_b_c(n // g, k)  # the example aligns C to the divisibility of one group's N
            cumsum = make_fake_tensor(cutlass.Int32, (g + 1,), (1,), assumed_align=4)
            return (a_tensor, a_scale, b, cumsum, c, self.max_active_clusters(config))

        def launch_args(inputs: Tensors, outputs: Tensors) -> tuple[Any, ...]:
            n, k = inputs["b"].shape
            groups = inputs["cumsum"].numel() - 1
            a_tensor, a_scale = self.a_operands(inputs, k)
            cumsum = from_dlpack(inputs["cumsum"], assumed_align=4)
            c = self.c_operand(outputs["c"], n // groups)
            return (a_tensor, a_scale, self.b_operand(inputs["b"], k), cumsum, c)

        return ExampleKernel(host_for=host_for, compile_args=compile_args, launch_args=launch_args)


__all__ = ["CutlassSm100GroupedMixedInputGemmPlan"]
