"""What the five imported Blackwell dense GEMM plans share: configs, operands, the SMEM read-back.

CUTLASS's ``dense_gemm.py``, ``dense_gemm_software_pipeline.py``, ``dense_gemm_persistent.py``,
``dense_gemm_persistent_prefetch.py`` and ``dense_gemm_persistent_dynamic.py`` (folder
``examples/python/CuTeDSL/cute/blackwell/kernel/dense_gemm/`` at the pinned commit) are one
series: each adds one idea to the previous. They share a constructor
``Kernel(acc_dtype, use_2cta_instrs, mma_tiler_mn, cluster_shape_mn, use_tma_store)`` and take
batched (rows, cols, L) tensors. :class:`BlackwellDenseGemmPlan` adapts our GEMM workload
(:class:`~mla_var3.kernel.cute_python.gemm.common.GemmPlanBase`: A (M,K) and B (N,K) K-major, C
(M,N) row-major, fp32 accumulation) to that interface once; a variant names its file and class,
how the example checks a problem (``can_implement`` differs across the files), and whether its
``__call__`` takes ``max_active_clusters``.

Compile-only: the examples target SM100 (B200), and our GPU is an H200. The workload methods are
real, so a B200 could run the plans as they are. Fake tensors copy the marks of each example's
``run()``: every extent and stride dynamic except the unit stride along K (or N for C), and the
base alignment it assumes -- 16 bytes, or the element size where it passes none
(``from_dlpack``'s default, the prefetch example).

The SMEM a launch requests is not in the cubin and the examples do not expose it (their
``SharedStorage`` lives inside the kernel): the attention family's
:class:`~mla_var3.kernel.cute_python.attention.example_kernel.ExampleKernel` reads it back from the
host code the DSL generated, and it serves these plans as it is.
"""

from __future__ import annotations

from typing import Any, ClassVar

from mla_var3.kernel.cute_python.attention.example_kernel import B200_SM_COUNT, ExampleKernel
from mla_var3.kernel.cute_python.gemm.common import GemmPlanBase, check_rows_16b_aligned
from mla_var3.kernel.errors import UnsupportedShapeError
from mla_var3.kernel.plan import Config, Shape, Tensors
from mla_var3.kernel.tensors import cute_dtype, element_size

EXAMPLES_DIR = "examples/python/CuTeDSL/cute/blackwell/kernel/dense_gemm"
# --8<-- [start:configs]
# The docstring's command (2-CTA 256x128 MMA on a 2x1 cluster), the same with a 2x2 cluster (A is
# multicast to the CTA pair next to it along N), and a one-CTA 128x128 MMA without a cluster (the
# argparse defaults' tile and cluster). C always goes out through TMA: the examples' other store
# path refuses partial tiles.
CONFIGS: tuple[Config, ...] = (
    {"mma_tiler_mn": (256, 128), "cluster_shape_mn": (2, 1), "use_2cta_instrs": True},
    {"mma_tiler_mn": (256, 128), "cluster_shape_mn": (2, 2), "use_2cta_instrs": True},
    {"mma_tiler_mn": (128, 128), "cluster_shape_mn": (1, 1), "use_2cta_instrs": False},
)
# --8<-- [end:configs]


def fake_operand(dtype: Any, align: int) -> Any:
    """A tensor-free (rows, cols, L) operand: ``(?,?,?):(?,1,?)``, base aligned to ``align`` bytes."""
    import cutlass.cute as cute
    from cutlass.cute.runtime import make_fake_tensor

    shape = (cute.sym_int(), cute.sym_int(), cute.sym_int())
    return make_fake_tensor(dtype, shape, (cute.sym_int64(), 1, cute.sym_int64()), assumed_align=align)


def real_operand(t: Any, align: int) -> Any:
    """A row-major 2-D torch tensor as the same (rows, cols, L=1) operand (batch stride rows*cols)."""
    from cutlass.cute.runtime import from_dlpack

    return from_dlpack(t.unsqueeze(0).permute(1, 2, 0), assumed_align=align).mark_layout_dynamic(
        leading_dim=1
    )


def accepted_in_parts(gemm: Any, mnkl: tuple[int, int, int, int], ab: Any) -> bool:
    """``dense_gemm.py``'s checks one by one (its ``can_implement`` wants real tensors, not shapes)."""
    m, n, k, batch = mnkl
    return bool(
        gemm.is_valid_dtypes(ab, ab)
        and gemm.is_valid_mma_tiler_and_cluster_shape()
        and gemm.is_valid_tensor_alignment(m, n, k, batch, ab, ab, "k", "k", "n")
        and gemm.is_valid_epilog_store_option(m, n)
    )


class BlackwellDenseGemmPlan(GemmPlanBase):
    """One example of the series; subclasses name the file, the class and the example's own check."""

    archs = ("sm_100a",)
    dtypes = ("float16", "bfloat16")
    backend = "cute"
    example_file: ClassVar[str]
    kernel_class: ClassVar[str]
    # Base alignment (bytes) the example's run() assumes; None: the element size.
    operand_align: ClassVar[int | None] = 16
    # Whether __call__ takes max_active_clusters (a Constexpr, so the launch omits it).
    takes_max_active_clusters: ClassVar[bool] = False

    @classmethod
    def upstream_example(cls) -> str:
        return f"{EXAMPLES_DIR}/{cls.example_file}"

    def validate_shape(self, shape: Shape) -> None:
        super().validate_shape(shape)
        check_rows_16b_aligned(shape, self.dtype, self.name)

    def _autotune_configs(self) -> list[Config]:
        return [dict(config) for config in CONFIGS]

    def example_accepts(self, gemm: Any, mnkl: tuple[int, int, int, int], ab: Any) -> bool:
        """The example's own check of dtypes, tile, cluster and alignment (K-major A/B, N-major C)."""
        raise NotImplementedError

    def plan(self, config: Config) -> ExampleKernel:
        import cutlass

        from mla_var3.kernel.upstream import load_example

        example = load_example(self.upstream_example())
        ab = cute_dtype(self.dtype)
        cluster = tuple(config["cluster_shape_mn"])
        gemm = getattr(example, self.kernel_class)(
            cutlass.Float32, config["use_2cta_instrs"], tuple(config["mma_tiler_mn"]), cluster, True
        )
        align = self.operand_align or element_size(self.dtype)
        # max_active_clusters (persistent examples): one CTA per SM, so a B200's SMs over the cluster
        # size; the examples ask HardwareInfo, which needs a GPU, and compile the answer in.
        constexprs = (B200_SM_COUNT // (cluster[0] * cluster[1]),) if self.takes_max_active_clusters else ()

        def compile_args(shape: Shape) -> tuple[Any, ...]:
            if not self.example_accepts(gemm, (shape["m"], shape["n"], shape["k"], 1), ab):
                raise UnsupportedShapeError(
                    f"{self.upstream_example()} cannot implement {shape} in {self.dtype} with {config}; "
                    "pick another --config or shape"
                )
            return (*(fake_operand(ab, align) for _ in "abc"), *constexprs)

        def launch_args(inputs: Tensors, outputs: Tensors) -> tuple[Any, ...]:
            return tuple(real_operand(t, align) for t in (inputs["a"], inputs["b"], outputs["c"]))

        return ExampleKernel(host_for=lambda shape: gemm, compile_args=compile_args, launch_args=launch_args)


__all__ = [
    "CONFIGS",
    "EXAMPLES_DIR",
    "BlackwellDenseGemmPlan",
    "accepted_in_parts",
    "fake_operand",
    "real_operand",
]
