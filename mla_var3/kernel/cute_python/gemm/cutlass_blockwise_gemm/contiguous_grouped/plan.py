"""Plan for ``cutlass_sm100_blockwise_contiguous_grouped_gemm``: CUTLASS's ``contiguous_grouped_gemm.py``.

The blockwise FP8 GEMM (see :mod:`..common`) grouped along M, as in a mixture-of-experts layer
whose tokens are sorted by expert: A (sum of M_g, K) holds every group's rows one after the other,
each group padded to a multiple of 128 rows; B (N, K, G) holds one weight matrix per group;
``gidx_mapping`` (one int32 per row of A) names the group of each row, and a scheduler warp reads it
to pick B for each tile. Groups here are equal, M rows each (the example draws sizes around
``expect_m`` at random unless ``--fixed_m``); FLOPs and bytes are then exact. Its ``run()`` compiles
with ``--opt-level 2`` under CUDA 13.1+ (this DSL ships 13.4). Compile-only (no SM100 GPU here).
"""

from __future__ import annotations

from typing import Any

from mla_var3.kernel.cute_python.attention.example_kernel import B200_SM_COUNT, ExampleKernel
from mla_var3.kernel.cute_python.gemm.common import MAX_EXTENT
from mla_var3.kernel.cute_python.gemm.cutlass_blockwise_gemm.common import (
    CONFIGS,
    DATA_DISTRIBUTION,
    EXAMPLES_DIR,
    SCALE_BLOCK,
    check_blockwise_shape,
    dequantize_blocks,
    fake_operands,
    operands,
    quantize_blocks,
)
from mla_var3.kernel.errors import UnsupportedShapeError
from mla_var3.kernel.plan import Config, KernelPlan, Shape, ShapeParam, Tensors
from mla_var3.kernel.tensors import randn

EXAMPLE = f"{EXAMPLES_DIR}/contiguous_grouped_gemm.py"
GROUP_M_MULTIPLE = 128  # the example pads every group's rows to this


class CutlassSm100BlockwiseContiguousGroupedGemmPlan(KernelPlan):
    name = "cutlass_sm100_blockwise_contiguous_grouped_gemm"
    description = (
        "CUTLASS's Blackwell contiguous_grouped_gemm.py: blockwise-scaled FP8 grouped GEMM, groups stacked "
        "along M, a per-row group index read by a scheduler warp (compile-only here)"
    )
    layer = "gemm"
    archs = ("sm_100a",)
    dtypes = ("float8_e4m3fn",)
    backend = "cute"
    # The docstring's command: --mnkl 256,4096,4096,16 (expected rows per group, N, K, groups).
    shape_params = (
        ShapeParam("m", 256, "rows of A per group (a multiple of 128)", 1, MAX_EXTENT),
        ShapeParam("n", 4096, "rows of each group's B (K-major), columns of C", 1, MAX_EXTENT),
        ShapeParam("k", 4096, "the reduction dimension", 1, MAX_EXTENT),
        ShapeParam(
            "g", 16, "groups (experts): B holds G matrices, A's rows are G contiguous groups", 1, MAX_EXTENT
        ),
    )
    check_shapes = ({"m": 128, "n": 256, "k": 512, "g": 2}, {"m": 256, "n": 1048, "k": 640, "g": 3})
    static_shape_params = ()
    data_distribution = DATA_DISTRIBUTION + "; equal groups of M rows"

    @classmethod
    def upstream_example(cls) -> str:
        return EXAMPLE

    def validate_shape(self, shape: Shape) -> None:
        check_blockwise_shape(shape, self.name)
        if shape["m"] % GROUP_M_MULTIPLE:
            raise UnsupportedShapeError(
                f"{self.name} needs --m (={shape['m']}, rows per group) to be a multiple of {GROUP_M_MULTIPLE}"
            )

    def _autotune_configs(self) -> list[Config]:
        return [dict(config) for config in CONFIGS]

    def tolerance(self) -> float:
        return 5e-3

    def prepare_inputs(self, shape: Shape) -> Tensors:
        import torch

        m, n, k, g = shape["m"], shape["n"], shape["k"], shape["g"]
        a, sfa = quantize_blocks(randn((m * g, k), "float32"), 1)
        weights = [quantize_blocks(randn((n, k), "float32"), SCALE_BLOCK) for _ in range(g)]
        gidx = torch.arange(g, dtype=torch.int32, device=a.device).repeat_interleave(m)
        return {
            "a": a,
            "sfa": sfa,
            "b": torch.stack([w for w, _ in weights], dim=-1),
            "sfb": torch.stack([s for _, s in weights], dim=-1),
            "gidx": gidx,
        }

    def allocate_outputs(self, inputs: Tensors, shape: Shape) -> Tensors:
        import torch

        rows = shape["m"] * shape["g"]
        return {"c": torch.empty((rows, shape["n"]), dtype=torch.bfloat16, device=inputs["a"].device)}

    def reference_fn(self, inputs: Tensors) -> Tensors:
        import torch

        a = dequantize_blocks(inputs["a"], inputs["sfa"], 1)
        groups = inputs["b"].shape[-1]
        rows = a.shape[0] // groups
        parts = [
            a[g * rows : (g + 1) * rows]
            @ dequantize_blocks(inputs["b"][..., g], inputs["sfb"][..., g], SCALE_BLOCK).T
            for g in range(groups)
        ]
        return {"c": torch.cat(parts, dim=0)}

    def _algorithmic_flops_bytes(self, shape: Shape) -> tuple[int, int]:
        m, n, k, g = shape["m"], shape["n"], shape["k"], shape["g"]
        kb = k // SCALE_BLOCK
        scales = 4 * (m * g * kb + g * -(-n // SCALE_BLOCK) * kb)
        return 2 * m * g * n * k, (m * g + n * g) * k + scales + 2 * m * g * n + 4 * m * g

    def plan(self, config: Config) -> ExampleKernel:
        import cutlass
        import cutlass.cute as cute
        from cutlass.cute.runtime import from_dlpack, make_fake_tensor

        from mla_var3.kernel.upstream import load_example

        example = load_example(EXAMPLE)
        tiler, cluster = tuple(config["mma_tiler_mn"]), tuple(config["cluster_shape_mn"])
        kernel_class = example.BlockwiseContiguousGroupedGemmKernel
        gemm = kernel_class(cutlass.Float32, config["use_2cta_instrs"], tiler, cluster)

        def compile_args(shape: Shape) -> tuple[Any, ...]:
            m, n, k, g = shape["m"], shape["n"], shape["k"], shape["g"]
            if not kernel_class.can_implement(
                cutlass.Float8E4M3FN, cutlass.Float32, cutlass.BFloat16, config["use_2cta_instrs"], tiler, cluster,
                m * g, n, k, g, "k", "k", "n",
            ):  # fmt: skip
                raise UnsupportedShapeError(f"{EXAMPLE} cannot implement {shape} with {config}")
            gidx = make_fake_tensor(cutlass.Int32, (cute.sym_int(),), (1,), assumed_align=4)
            return (*fake_operands(), gidx, B200_SM_COUNT // (cluster[0] * cluster[1]))

        def launch_args(inputs: Tensors, outputs: Tensors) -> tuple[Any, ...]:
            gidx = from_dlpack(inputs["gidx"], assumed_align=4).mark_layout_dynamic()
            return (*operands(inputs, outputs), gidx)

        return ExampleKernel(
            host_for=lambda shape: gemm,
            compile_args=compile_args,
            launch_args=launch_args,
            options="--opt-level 2",
        )


__all__ = ["CutlassSm100BlockwiseContiguousGroupedGemmPlan"]
