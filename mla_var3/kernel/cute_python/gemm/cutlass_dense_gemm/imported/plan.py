"""Plan for ``cutlass_hopper_dense_gemm``: CUTLASS's Hopper ``dense_gemm.py`` imported from ``CUTLASS_DIR``.

The kernel is NVIDIA's example, loaded at ``plan()`` time by :func:`mla_var3.kernel.upstream.load_example`
from the CUTLASS checkout (never copied here). This module only adapts our GEMM workload
(:class:`~mla_var3.kernel.cute_python.gemm.common.GemmPlanBase`: C = A @ B^T, A (M,K) and B
(N,K) K-major, C (M,N) row-major, fp32 accumulation) to the example's interface, so it runs
the same problem, inputs, reference and roofline as ``hopper_gemm_ws`` and ``cublas_gemm``.

What the example expects (paths relative to ``examples/python/CuTeDSL/cute/hopper/kernel/dense_gemm/``
at the pinned commit 7107b055):

- Construction: ``HopperWgmmaGemmKernel(acc_dtype, tile_shape_mn, cluster_shape_mn)``
  (``dense_gemm.py:243-248``); CTA tile K is fixed at 4 MMA-atom K steps, 64 for fp16
  (``dense_gemm.py:328-334``), and tiles with M > 64 and N > 128 use two consumer warpgroups
  (``dense_gemm.py:271-275``). A/B stages fill the SM90 SMEM capacity (``dense_gemm.py:1032-1072``).
- Tensors are batched, (M,K,L), (N,K,L) and (M,N,L) with L the batch mode
  (``dense_gemm.py:46-48``). Its ``run()`` builds them as (L, rows, cols) torch tensors
  permuted to (rows, cols, L) and marks the layout dynamic with the contiguous mode as
  leading dimension (``dense_gemm.py:1477-1478``, ``1504-1509``). We pass the same views of
  our 2-D tensors with L = 1, and compile against fake tensors of the type those views get:
  every extent and stride dynamic except the unit stride of mode 1.
- Launch: ``__call__(a, b, c, stream)`` (``dense_gemm.py:373-380``). The example is not
  persistent: one CTA per C tile, the grid rounded up to whole clusters
  (``dense_gemm.py:1137-1160``), so unlike a persistent kernel it takes no
  ``max_active_clusters`` and never asks ``HardwareInfo`` for the SM count.
- Dtypes: A/B fp16, fp8 or 8-bit integers (``dense_gemm.py:1257-1263``). bf16 is rejected by
  ``is_valid_dtypes`` at this commit, so this plan is fp16 only; ``plan()`` re-asks
  ``is_valid_dtypes`` so a new pin that changes this fails loudly.
- Alignment: the contiguous mode of A, B and C must be 16-byte aligned
  (``dense_gemm.py:1330-1380``): K and N multiples of 8 for fp16, as for our own kernel.

Configs: tile 128x256 with a 2x1 cluster (the configuration measured against cuBLAS on the
H200 in this plan's run records; the tile of the docstring's example command,
``dense_gemm.py:70-74``), then the example's own argument defaults, tile 128x128 with no
cluster (``dense_gemm.py:127-139``).
"""

from __future__ import annotations

from typing import Any

from mla_var3.kernel.backends import CuteKernel
from mla_var3.kernel.cute_python.gemm.common import GemmPlanBase, check_rows_16b_aligned
from mla_var3.kernel.errors import UnsupportedDtypeError
from mla_var3.kernel.plan import Config, Shape, Tensors
from mla_var3.kernel.tensors import cute_dtype

EXAMPLE = "examples/python/CuTeDSL/cute/hopper/kernel/dense_gemm/dense_gemm.py"


# --8<-- [start:batched_views]
def fake_batched_operand(dtype: Any) -> Any:
    """A tensor-free (rows, cols, L) operand typed like :func:`batched_operand`'s views:
    ``(?,?,?):(?,1,?)`` -- dynamic extents and strides, unit stride along the row."""
    import cutlass.cute as cute
    from cutlass.cute.runtime import make_fake_tensor

    shape = (cute.sym_int(), cute.sym_int(), cute.sym_int())
    stride = (cute.sym_int64(), 1, cute.sym_int64())
    return make_fake_tensor(dtype, shape, stride, assumed_align=16)


def batched_operand(t: Any) -> Any:
    """A row-major 2-D torch tensor as the example's (rows, cols, L=1) operand.

    ``unsqueeze(0).permute(1, 2, 0)`` is the view the example's ``run()`` makes from an
    (L, rows, cols) tensor, so the batch stride is rows*cols (a TMA descriptor needs every
    stride 16-byte aligned; ``unsqueeze(-1)`` would give it stride 1).
    """
    from cutlass.cute.runtime import from_dlpack

    return from_dlpack(t.unsqueeze(0).permute(1, 2, 0), assumed_align=16).mark_layout_dynamic(leading_dim=1)
# --8<-- [end:batched_views]


class CutlassHopperDenseGemmPlan(GemmPlanBase):
    name = "cutlass_hopper_dense_gemm"
    description = "CUTLASS's Hopper dense_gemm.py imported from CUTLASS_DIR: TMA multicast, mbarrier pipeline, WGMMA, TMA-store epilogue"
    archs = ("sm_90a",)
    dtypes = ("float16",)
    backend = "cute"
    static_shape_params = ()  # compiled against fully dynamic views: one binary per config

    @classmethod
    def upstream_example(cls) -> str:
        return EXAMPLE

    def validate_shape(self, shape: Shape) -> None:
        super().validate_shape(shape)
        check_rows_16b_aligned(shape, self.dtype, self.name)

    def _autotune_configs(self) -> list[Config]:
        return [
            {"tile_mn": (128, 256), "cluster_mn": (2, 1)},
            {"tile_mn": (128, 128), "cluster_mn": (1, 1)},
        ]

    # --8<-- [start:plan]
    def plan(self, config: Config) -> CuteKernel:
        import cutlass

        from mla_var3.kernel.upstream import load_example

        example = load_example(EXAMPLE)
        ab = cute_dtype(self.dtype)
        if not example.HopperWgmmaGemmKernel.is_valid_dtypes(ab, ab, cutlass.Float32, ab, "k", "k"):
            raise UnsupportedDtypeError(f"{EXAMPLE} rejects {self.dtype} A/B/C with fp32 accumulation")
        tile_mn, cluster_mn = tuple(config["tile_mn"]), tuple(config["cluster_mn"])
        gemm = example.HopperWgmmaGemmKernel(cutlass.Float32, tile_mn, cluster_mn)

        def compile_args(shape: Shape) -> tuple[Any, ...]:
            return (fake_batched_operand(ab), fake_batched_operand(ab), fake_batched_operand(ab))

        def launch_args(inputs: Tensors, outputs: Tensors) -> tuple[Any, ...]:
            return (batched_operand(inputs["a"]), batched_operand(inputs["b"]), batched_operand(outputs["c"]))

        return CuteKernel(
            host_fn=gemm,
            compile_args=compile_args,
            launch_args=launch_args,
            # The example sizes its SharedStorage struct while it traces __call__ (dense_gemm.py:441-459).
            dynamic_smem_bytes=lambda shape: gemm.shared_storage.size_in_bytes(),
        )
    # --8<-- [end:plan]


__all__ = ["EXAMPLE", "CutlassHopperDenseGemmPlan", "batched_operand", "fake_batched_operand"]
