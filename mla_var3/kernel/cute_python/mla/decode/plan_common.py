"""The plan side every CuTe DSL MLA decode variant shares: fake tensors to compile, real ones to launch.

A variant's kernel takes ``(q, kv, block_table, seqlens, o, lse, heads, *workspace, stream)``
with ``q`` viewed ``(b, h_q s_q, 576)``, the cache ``(pages, page, 576)`` and ``o``
``(b, h_q s_q, 512)``. Compile-time parameters come from the shape through
:meth:`MlaDecodeCutePlanBase.make_kernel` (the page size, and the KV split count where a
variant splits); batch, rows, pool size, lengths and block-table width are dynamic.
Workspace buffers (split partials) are extra outputs, so the runner allocates and poisons
them with the rest and the bound launch keeps them alive.
"""

from dataclasses import dataclass
from functools import cache
from typing import Any, ClassVar

from mla_var3.kernel.arch import Arch
from mla_var3.kernel.backends import Compiled, CuteKernel
from mla_var3.kernel.errors import UnsupportedShapeError
from mla_var3.kernel.plan import Config, Shape, Tensors
from mla_var3.kernel.tensors import cute_dtype
from mla_var3.kernel.workloads.mla import D_LATENT, D_QK, MlaDecodePlanBase

# Compile-only runs have no GPU to ask: an H100/H200 has 132 SMs.
COMPILE_SM_COUNT = 132
PAGE_SIZES = (16, 32, 64, 128, 256)
TILE_M = 64  # query rows per CTA: one WGMMA M
TILE_N = 64  # KV rows per block


def default_splits(batch: int, query_tiles: int, kv_blocks: int, sm_count: int) -> int:
    """KV splits per (sequence, query tile) so the grid fills the GPU at most once: none when the
    tiles alone do, never more than the sequence has KV blocks. Rounded down: rounding up gave
    a second, almost empty wave (batch 8, two query tiles: 9 splits = 144 CTAs on 132 SMs)."""
    tiles = batch * query_tiles
    if tiles >= sm_count:
        return 1
    return max(1, min(kv_blocks, sm_count // tiles))


@cache
def _device_sm_count() -> int | None:
    try:
        import torch

        return torch.cuda.get_device_properties(0).multi_processor_count if torch.cuda.is_available() else None
    except ImportError:
        return None


def sm_count() -> int:
    """SMs of the GPU that will run the kernel (132, an H100/H200's, without one)."""
    return _device_sm_count() or COMPILE_SM_COUNT


def fake_tensor(dtype: Any, shape: tuple[Any, ...], align: int = 16) -> Any:
    """A row-major tensor-free stand-in; ``None`` in ``shape`` is a dynamic extent."""
    import cutlass.cute as cute
    from cutlass.cute.runtime import make_fake_compact_tensor

    dims = tuple(cute.sym_int() if d is None else d for d in shape)
    return make_fake_compact_tensor(dtype, dims, stride_order=tuple(reversed(range(len(dims)))), assumed_align=align)


def real_tensor(t: Any, dynamic_modes: tuple[int, ...], align: int = 16) -> Any:
    """A row-major torch tensor as a CuTe tensor with ``dynamic_modes`` marked as :func:`fake_tensor` makes them."""
    from cutlass.cute.runtime import from_dlpack

    out = from_dlpack(t, assumed_align=align)
    for mode in dynamic_modes:
        out = out.mark_compact_shape_dynamic(mode=mode, stride_order=t.dim_order())
    return out


@dataclass
class ShapedCuteKernel(CuteKernel):
    """A :class:`CuteKernel` whose host function (the kernel object) depends on the shape's
    compile-time parameters: ``kernel_for(shape)`` returns it."""

    kernel_for: Any = None

    def compile(self, shape: Shape, arch: Arch) -> Compiled:
        kernel = self.kernel_for(shape)
        fixed = CuteKernel(
            host_fn=kernel,
            compile_args=self.compile_args,
            launch_args=self.launch_args,
            options=self.options,
            dynamic_smem_bytes=lambda _shape: kernel.dynamic_smem_bytes(),
        )
        return fixed.compile(shape, arch)


class MlaDecodeCutePlanBase(MlaDecodePlanBase):
    """Shape checks, argument building and the kernel object of our CuTe DSL variants."""

    archs: ClassVar[tuple[str, ...]] = ("sm_90a",)
    backend: ClassVar[str] = "cute"
    # Only the page size shapes the binary (TMA copies per block); a split variant adds its
    # split count, derived from the shape, through static_shape.
    static_shape_params: ClassVar[tuple[str, ...] | None] = ("page",)

    def validate_shape(self, shape: Shape) -> None:
        super().validate_shape(shape)
        if shape["page"] not in PAGE_SIZES:
            raise UnsupportedShapeError(
                f"{self.name} needs --page in {', '.join(map(str, PAGE_SIZES))} (a divisor or multiple of the "
                f"64-row KV block), got {shape['page']}"
            )

    def _autotune_configs(self) -> list[Config]:
        return [{}]

    def make_kernel(self, config: Config, params: Shape) -> Any:
        """The variant's kernel object for the compile-time parameters :meth:`static_shape` returns."""
        raise NotImplementedError

    def workspace_args(self, outputs: Tensors | None, shape: Shape) -> tuple[Any, ...]:
        """Extra kernel arguments after ``heads``: fake ones when ``outputs`` is None (none by default)."""
        return ()

    def plan(self, config: Config) -> ShapedCuteKernel:
        kernels: dict[tuple[tuple[str, int], ...], Any] = {}

        def kernel_for(shape: Shape) -> Any:
            params = self.static_shape(shape)
            key = tuple(sorted(params.items()))
            if key not in kernels:
                kernels[key] = self.make_kernel(config, params)
            return kernels[key]

        def compile_args(shape: Shape) -> tuple[Any, ...]:
            import cutlass

            dt = cute_dtype(self.dtype)
            return (
                fake_tensor(dt, (None, None, D_QK)),
                fake_tensor(dt, (None, shape["page"], D_QK)),
                fake_tensor(cutlass.Int32, (None, None), align=4),
                fake_tensor(cutlass.Int32, (None,), align=4),
                fake_tensor(dt, (None, None, D_LATENT)),
                fake_tensor(cutlass.Float32, (None, None, None), align=4),
                cutlass.Int32(shape["h"]),
                *self.workspace_args(None, shape),
            )

        def launch_args(inputs: Tensors, outputs: Tensors) -> tuple[Any, ...]:
            import cutlass

            q, kv, o = inputs["q"], inputs["kv_cache"], outputs["o"]
            b, s_q, h_q, _ = q.shape
            return (
                real_tensor(q.view(b, s_q * h_q, D_QK), (0, 1)),
                real_tensor(kv.view(kv.shape[0], kv.shape[1], D_QK), (0,)),
                real_tensor(inputs["block_table"], (0, 1), align=4),
                real_tensor(inputs["seqlens"], (0,), align=4),
                real_tensor(o.view(b, s_q * h_q, D_LATENT), (0, 1)),
                real_tensor(outputs["lse"], (0, 1, 2), align=4),
                cutlass.Int32(h_q),
                *self.workspace_args(outputs, self.shape_of(inputs)),
            )

        return ShapedCuteKernel(host_fn=None, compile_args=compile_args, launch_args=launch_args, kernel_for=kernel_for)

    @staticmethod
    def shape_of(inputs: Tensors) -> Shape:
        """The shape flags that fix a kernel's compile-time parameters, read back from its inputs."""
        q, kv = inputs["q"], inputs["kv_cache"]
        return {"b": q.shape[0], "s": q.shape[1], "h": q.shape[2], "page": kv.shape[1]}


__all__ = [
    "COMPILE_SM_COUNT",
    "TILE_M",
    "TILE_N",
    "default_splits",
    "PAGE_SIZES",
    "MlaDecodeCutePlanBase",
    "ShapedCuteKernel",
    "fake_tensor",
    "real_tensor",
    "sm_count",
]
