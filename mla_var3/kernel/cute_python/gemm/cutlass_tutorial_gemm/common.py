"""What the plans of CUTLASS's Blackwell tutorial GEMMs share: the adapter from our GEMM workload to a
tutorial's ``host_function``, the operand marks its ``run()`` uses, and its SMEM budget.

The tutorials (``examples/python/CuTeDSL/cute/blackwell/tutorial/tutorial_gemm/fp16_gemm_*.py`` at
the pinned commit) are loaded with :func:`mla_var3.kernel.upstream.load_example` inside ``plan()``,
never copied. They compute our workload (:class:`~mla_var3.kernel.cute_python.gemm.common.GemmPlanBase`:
C = A @ B^T, A (M,K) and B (N,K) K-major, C (M,N) row-major, fp32 accumulation) in fp16 only: the
element type, tile, stage counts and cluster shape are module constants of each file. They need
no sibling module: ``utils`` in them is ``cutlass.utils``, not the folder's ``utils.py`` (which
only the nvfp4 tutorials import).

What a variant declares (:class:`Tutorial`): the file, the M and N multiples its docstring
requires, whether its MMA spans one or two CTAs, how its ``run()`` marks the operands, and the
cluster size behind each ``max_active_clusters`` constant its host function takes. Persistent
tutorials size their grid with ``HardwareInfo().get_max_active_clusters(cluster size)``, which needs
a GPU; we compile for a B200's 148 SMs instead, ``148 // cluster size`` clusters (an upper bound:
on a B200 the occupancy query may return fewer for large clusters; only the grid changes).

The plans are compile-verified only: SM100 code never runs on our H200. The workload methods
are real, so a B200 could run and check them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from mla_var3.kernel.backends import CuteKernel
from mla_var3.kernel.cute_python.gemm.common import GemmPlanBase, check_rows_16b_aligned
from mla_var3.kernel.errors import UnsupportedShapeError
from mla_var3.kernel.plan import Config, Shape, Tensors

TUTORIAL_DIR = "examples/python/CuTeDSL/cute/blackwell/tutorial/tutorial_gemm"
B200_SM_COUNT = 148
# Every buffer the tutorials take from SmemAllocator is 128-byte aligned (fp16_gemm_0.py:105-116).
SMEM_ALIGN = 128
# utils.compute_epilogue_tile_shape picks a 128 x 32 subtile for every CTA tile of these
# tutorials (128 x 256 and 128 x 64); tests check the budget against the launch's SMEM size.
EPI_SUBTILE_MN = (128, 32)


@dataclass(frozen=True)
class Tutorial:
    """The facts about one tutorial file that its plan needs."""

    file: str  # e.g. "fp16_gemm_3_1.py"
    tile_mn: tuple[int, int]  # the M and N multiples its docstring requires
    cta_group: int  # CTAs per tcgen05 MMA: 1, or 2 with the 2-CTA instructions
    # run() marks A, B and C compact with 32-byte alignment and the row length as divisibility
    # (fp16_gemm_0/1); otherwise it calls only mark_layout_dynamic() (fp16_gemm_2 on).
    compact_marks: bool
    cluster_sizes: tuple[int, ...] = ()  # CTAs per cluster, one per max_active_clusters constant

    @property
    def example(self) -> str:
        return f"{TUTORIAL_DIR}/{self.file}"

    def max_active_clusters(self, sm_count: int) -> tuple[int, ...]:
        return tuple(sm_count // size for size in self.cluster_sizes)


# --8<-- [start:operand_marks]
def fake_operand(dtype: Any, row_divisibility: int | None) -> Any:
    """A tensor-free row-major (rows, cols) operand typed like a tutorial's ``run()`` marks it.

    ``None``: ``from_dlpack(t).mark_layout_dynamic()``, type ``(?,?):(?{i64},1)``. An int ``d``:
    ``from_dlpack(t, assumed_align=32).mark_layout_dynamic(leading_dim=1)
    .mark_compact_shape_dynamic(mode=1, divisibility=d)``, type ``(?,?{div=d}):(?{i64},1)``, 32-byte aligned.
    """
    import cutlass.cute as cute
    from cutlass.cute.runtime import make_fake_tensor

    if row_divisibility is None:
        return make_fake_tensor(dtype, (cute.sym_int(), cute.sym_int()), (cute.sym_int64(), 1))
    cols = cute.sym_int(divisibility=row_divisibility)
    return make_fake_tensor(dtype, (cute.sym_int(), cols), (cute.sym_int64(), 1), assumed_align=32)


def real_operand(t: Any, row_divisibility: int | None) -> Any:
    """A row-major torch tensor marked exactly like :func:`fake_operand`."""
    from cutlass.cute.runtime import from_dlpack

    if row_divisibility is None:
        return from_dlpack(t).mark_layout_dynamic()
    marked = from_dlpack(t, assumed_align=32).mark_layout_dynamic(leading_dim=1)
    return marked.mark_compact_shape_dynamic(mode=1, divisibility=row_divisibility)


# --8<-- [end:operand_marks]


# --8<-- [start:smem_budget]
def smem_bytes(example: Any, cta_group: int) -> int:
    """The dynamic SMEM a tutorial's kernel launches with, from its module constants.

    The barrier struct (rounded up to the alignment), then ``ab_stages`` of one A and one B tile
    per CTA -- a 2-CTA MMA splits both its M and its N extent between the pair -- then
    ``epi_stages`` epilogue subtiles where the tutorial stores through SMEM.
    """
    tile_m, tile_n, tile_k = example.mma_tiler_mnk
    elem = example.io_dtype.width // 8
    storage = -(-example.SharedStorage.size_in_bytes() // SMEM_ALIGN) * SMEM_ALIGN
    ab_stage = (tile_m + tile_n) // cta_group * tile_k * elem
    epi_stages = getattr(example, "epi_stages", 0)
    return storage + example.ab_stages * ab_stage + epi_stages * EPI_SUBTILE_MN[0] * EPI_SUBTILE_MN[1] * elem


# --8<-- [end:smem_budget]


class TutorialGemmPlan(GemmPlanBase):
    """A tutorial GEMM for sm_100a; a variant sets ``name``, ``description`` and ``tutorial``."""

    tutorial: ClassVar[Tutorial]
    archs = ("sm_100a",)
    dtypes = ("float16",)
    backend = "cute"
    check_shapes = ({"m": 256, "n": 256, "k": 64}, {"m": 512, "n": 1024, "k": 520})

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "static_shape_params" not in cls.__dict__:
            # Compact marks put K's and N's values into the operand types (divisibility = the
            # row length); plain mark_layout_dynamic() leaves one binary for every shape.
            cls.static_shape_params = ("k", "n") if cls.tutorial.compact_marks else ()

    @classmethod
    def upstream_example(cls) -> str:
        return cls.tutorial.example

    def validate_shape(self, shape: Shape) -> None:
        super().validate_shape(shape)
        check_rows_16b_aligned(shape, self.dtype, self.name)
        for dim, multiple in zip(("m", "n"), self.tutorial.tile_mn, strict=True):
            if shape[dim] % multiple:
                raise UnsupportedShapeError(
                    f"{self.name} needs --{dim} (={shape[dim]}) to be a multiple of {multiple} "
                    f"({self.tutorial.file} does not predicate partial tiles); pad {dim} with zeros"
                )

    def _autotune_configs(self) -> list[Config]:
        return [{"sm_count": B200_SM_COUNT}] if self.tutorial.cluster_sizes else [{}]

    def _row_divisibility(self, rows: int) -> int | None:
        return rows if self.tutorial.compact_marks else None

    def plan(self, config: Config) -> CuteKernel:
        from mla_var3.kernel.cute_python.gemm.cutlass_tutorial_gemm.host import DefaultStreamHost
        from mla_var3.kernel.upstream import load_example

        example = load_example(self.tutorial.example)
        constants = self.tutorial.max_active_clusters(config.get("sm_count", B200_SM_COUNT))
        host = DefaultStreamHost(example.host_function, constants)

        def compile_args(shape: Shape) -> tuple[Any, ...]:
            k, n = self._row_divisibility(shape["k"]), self._row_divisibility(shape["n"])
            return (
                fake_operand(example.io_dtype, k),
                fake_operand(example.io_dtype, k),
                fake_operand(example.io_dtype, n),
            )

        def launch_args(inputs: Tensors, outputs: Tensors) -> tuple[Any, ...]:
            k, n = self._row_divisibility(inputs["a"].shape[1]), self._row_divisibility(outputs["c"].shape[1])
            return (real_operand(inputs["a"], k), real_operand(inputs["b"], k), real_operand(outputs["c"], n))

        return CuteKernel(
            host_fn=host,
            compile_args=compile_args,
            launch_args=launch_args,
            dynamic_smem_bytes=lambda shape: smem_bytes(example, self.tutorial.cta_group),
        )


__all__ = [
    "B200_SM_COUNT",
    "EPI_SUBTILE_MN",
    "TUTORIAL_DIR",
    "Tutorial",
    "TutorialGemmPlan",
    "fake_operand",
    "real_operand",
    "smem_bytes",
]
