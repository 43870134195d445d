"""What the imported MLA decode plans share: CUTLASS's SM100 MLA decode over our absorbed-MLA workload.

Upstream, at the pinned commit: ``mla_decode_fp16.py`` and ``mla_decode_fp8.py`` (one kernel class
each, the same interface) with ``mla_helpers.py`` (the tile scheduler), all in
``examples/python/CuTeDSL/cute/blackwell/kernel/attention/mla/``. ``plan()`` loads them with
:func:`~mla_var3.kernel.upstream.load_example`; nothing of them is copied here. This module
only adapts the workload of :mod:`mla_var3.kernel.workloads.mla` to their ``__call__``
(``mla_decode_fp16.py:275-291``):

- **Q** is two tensors ``(H, D, S, B)``, latent (D = 512) and rope (D = 64), D contiguous. We
  pass strided views of our ``(b, s_q, h_q, 576)`` q, split at column 512: no copy.
- **The cache** is two tensors ``(page, D, pages)`` (a page's rows, then the columns, then the
  page index, which is the TMA coordinate the loading warp sets from the page table). We pass
  views of our ``(pages, page, 1, 576)`` cache; the example builds V itself as the transposed
  view ``(512, page, pages)`` of the latent part (``:367-370``).
- **The page table** is ``(pages per sequence, B)`` with the page index contiguous: our
  ``block_table`` transposed. **cache_seqs** is our ``seqlens``.
- **O** is ``(H, 512, S, B)``, compact: our ``o`` permuted. **The LSE** is ``(H, S, B)`` with H
  contiguous (``:354``), so :meth:`CutlassMlaDecodePlanBase.allocate_outputs` stores our
  ``(b, h_q, s_q)`` LSE as the transpose of a ``(b, s_q, h_q)`` buffer. The example's LSE is in
  base 2 (``log2(row_sum) + scale_log2 * row_max``, ``:3048-3051``, as its own reference,
  ``:3949-3954``); the plan multiplies it by ln 2 after every launch.
- **No causal mask inside the query block**: the s_q tokens are independent work tiles that all
  see the whole KV (the only mask is the KV length, ``:2506-2514``), so ``--s`` must be 1.
- **Unused cache rows must be finite**: the last tile's scores past the length are set to
  -inf, but its P = 0 still multiplies whatever V rows the tile loaded, and 0 x NaN = NaN. The
  workload poisons those rows with NaN; :meth:`CutlassMlaDecodePlanBase.prepare_inputs` zeroes them.
- **Split-KV and the SM count.** The example's ``run()`` asks ``HardwareInfo`` for the active
  clusters of 2 CTAs and picks ``split_kv`` with ``get_split_kv(..., clusters * 2)``
  (``:3787-3801``, ``:1370-1394``). We fix a B200: 148 SMs, 74 clusters. ``split_kv == 1``
  means no workspace, and with no workspace the reduction kernel is not even compiled
  (``:647``). Fewer than 128 heads force ``split_kv = 1`` (``can_implement``, ``:3452``).

Configs: the docstring's command (persistent, lengths and splits per sequence, ``:85-91``), then
the argparse defaults (one CTA pair per work tile, one split count for all, ``:4220-4292``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from mla_var3.kernel.cute_python.attention.example_kernel import (
    B200_SM_COUNT,
    ExampleKernel,
    fake_vector,
    vector,
)
from mla_var3.kernel.errors import UnsupportedShapeError
from mla_var3.kernel.plan import Config, Shape, Tensors
from mla_var3.kernel.tensors import cute_dtype
from mla_var3.kernel.workloads.mla import (
    D_LATENT,
    MLA_CHECK_SHAPES,
    SOFTMAX_SCALE,
    MlaDecodePlanBase,
    sequence_lengths,
)

if TYPE_CHECKING:
    import torch

MLA_DIR = "examples/python/CuTeDSL/cute/blackwell/kernel/attention/mla"
# (heads, KV rows) of one S tile: the argparse default (mla_decode_fp16.py:4207-4212)
QK_TILER_MN = (128, 128)
PV_TILER_MN = (128, 256)  # (heads, latent columns) of one PV MMA (:4213-4218)
CLUSTER_CTAS = 2  # the kernel always runs CTA pairs with 2-CTA MMAs (:184-185)
MAX_ACTIVE_CLUSTERS = B200_SM_COUNT // CLUSTER_CTAS
MAX_HEADS = QK_TILER_MN[0]
LN2 = math.log(2.0)
TMA_ALIGN = 16  # bytes: base address and strides of every TMA-loaded tensor
WORKSPACE_ALIGN = 32  # the example's workspace alignment (run(), :3777)


@dataclass(frozen=True)
class SplitKv:
    """How the KV length is split: the count the kernels see, per sequence or not, and the workspace."""

    split_kv: int
    per_sequence: tuple[int, ...] | None  # block_split_kvs, when the config varies the split per sequence
    workspace_bytes: int  # 0: no workspace, hence no reduction kernel


def choose_split(example_cls: Any, b: int, s_q: int, h_q: int, lengths: list[int], config: Config) -> SplitKv:
    """The split the example's ``run()`` would choose on a B200 (``:3722-3758``)."""
    import cutlass

    if h_q < MAX_HEADS:
        splits = [1] * b
    elif config["is_var_split_kv"]:
        blocks = MAX_ACTIVE_CLUSTERS * CLUSTER_CTAS
        splits = [example_cls.get_split_kv(b, s_q, n, QK_TILER_MN, blocks) for n in lengths]
    else:
        splits = [
            example_cls.get_split_kv(b, s_q, lengths[0], QK_TILER_MN, MAX_ACTIVE_CLUSTERS * CLUSTER_CTAS)
        ] * b
    split_kv = max(splits)
    workspace = example_cls.get_workspace_size(h_q, s_q, D_LATENT, b, split_kv, cutlass.Float32)
    return SplitKv(split_kv, tuple(splits) if config["is_var_split_kv"] else None, workspace)


# --8<-- [start:views]
def _fake_view(dtype: Any, rank: int, leading: int, align: int = TMA_ALIGN) -> Any:
    """A tensor-free stand-in typed like ``from_dlpack(view).mark_layout_dynamic(leading)``."""
    import cutlass.cute as cute
    from cutlass.cute.runtime import make_fake_tensor

    stride = tuple(1 if mode == leading else cute.sym_int64() for mode in range(rank))
    return make_fake_tensor(dtype, tuple(cute.sym_int() for _ in range(rank)), stride, assumed_align=align)


def _view(t: torch.Tensor, leading: int, align: int = TMA_ALIGN) -> Any:
    from cutlass.cute.runtime import from_dlpack

    return from_dlpack(t, assumed_align=align).mark_layout_dynamic(leading_dim=leading)


def _fake_compact_o(dtype: Any) -> Any:
    """O typed as the example's run() marks it: compact (H, D, S, B), D of 128-bit multiples (:3668-3675)."""
    import cutlass.cute as cute
    from cutlass.cute.runtime import make_fake_tensor

    div = 128 // dtype.width
    shape = (cute.sym_int(), cute.sym_int(divisibility=div), cute.sym_int(), cute.sym_int())
    stride = (
        cute.sym_int64(divisibility=div),
        1,
        cute.sym_int64(divisibility=div),
        cute.sym_int64(divisibility=div),
    )
    return make_fake_tensor(dtype, shape, stride, assumed_align=TMA_ALIGN)


def _compact_o(o: torch.Tensor, dtype: Any) -> Any:
    view = o.permute(2, 3, 1, 0)  # (b, s, h, 512) -> (h, 512, s, b)
    marked = _view(view, leading=1)
    return marked.mark_compact_shape_dynamic(
        mode=1, stride_order=(3, 2, 0, 1), divisibility=128 // dtype.width
    )


def example_views(inputs: Tensors, outputs: Tensors, dtype: Any) -> tuple[Any, ...]:
    """q latent/rope, cache latent/rope, page table, O and LSE as the example's tensors (no copies)."""
    q, cache = inputs["q"], inputs["kv_cache"][:, :, 0, :]  # (b, s, h, 576), (pages, page, 576)
    return (
        _view(q[..., :D_LATENT].permute(2, 3, 1, 0), leading=1),  # (h, 512, s, b)
        _view(q[..., D_LATENT:].permute(2, 3, 1, 0), leading=1),  # (h, 64, s, b)
        _view(cache[..., :D_LATENT].permute(1, 2, 0), leading=1),  # (page, 512, pages)
        _view(cache[..., D_LATENT:].permute(1, 2, 0), leading=1),  # (page, 64, pages)
        _view(inputs["block_table"].T, leading=0),  # (pages per sequence, b)
        _compact_o(outputs["o"], dtype),
        _view(outputs["lse"].permute(1, 2, 0), leading=0),  # (b, h, s) view of (b, s, h) -> (h, s, b)
    )


def fake_example_views(dtype: Any) -> tuple[Any, ...]:
    """The tensor-free types of :func:`example_views`, for compiling."""
    import cutlass

    return (
        _fake_view(dtype, 4, leading=1),
        _fake_view(dtype, 4, leading=1),
        _fake_view(dtype, 3, leading=1),
        _fake_view(dtype, 3, leading=1),
        _fake_view(cutlass.Int32, 2, leading=0),
        _fake_compact_o(dtype),
        _fake_view(cutlass.Float32, 3, leading=0),
    )


# --8<-- [end:views]


def _lse_to_natural_log(inputs: Tensors, outputs: Tensors) -> None:
    outputs["lse"].mul_(LN2)


class CutlassMlaDecodePlanBase(MlaDecodePlanBase):
    """One of CUTLASS's SM100 MLA decode examples, on our workload; subclasses name the file and class."""

    example_file: ClassVar[str]
    example_class: ClassVar[str]
    archs = ("sm_100a",)
    backend = "cute"
    # The workload's edge cases the example can take: one query token per sequence.
    check_shapes = tuple(shape for shape in MLA_CHECK_SHAPES if shape["s"] == 1)
    data_distribution = (
        "q and the KV cache standard normal (torch.randn in fp32, cast to the dtype); cache rows no sequence "
        "uses are 0, not the workload's NaN (the example multiplies P = 0 by them); lengths fixed or seeded "
        "N(t, t/2) clipped to [s, 2t]; pages a seeded permutation"
    )

    @classmethod
    def upstream_example(cls) -> str:
        return cls.example_file

    def validate_shape(self, shape: Shape) -> None:
        super().validate_shape(shape)
        if shape["s"] != 1:
            raise UnsupportedShapeError(
                f"{self.name} needs --s 1: the example has no causal mask inside the query block (its s_q "
                f"tokens all see the whole KV), so s_q = {shape['s']} is not this workload"
            )
        if shape["h"] > MAX_HEADS:
            raise UnsupportedShapeError(
                f"{self.name} needs --h <= {MAX_HEADS} (one {MAX_HEADS}-row MMA tile of heads), got {shape['h']}"
            )
        if shape["page"] == 1 or QK_TILER_MN[1] % shape["page"]:
            raise UnsupportedShapeError(
                f"{self.name} needs --page to divide {QK_TILER_MN[1]} and exceed 1 (a {QK_TILER_MN[1]}-row KV "
                f"tile holds whole pages), got {shape['page']}"
            )

    def _autotune_configs(self) -> list[Config]:
        return [
            {"is_persistent": True, "is_var_seq": True, "is_var_split_kv": True},
            {"is_persistent": False, "is_var_seq": False, "is_var_split_kv": False},
        ]

    def prepare_inputs(self, shape: Shape) -> Tensors:
        """The workload's inputs with its NaN-poisoned unused cache rows set to zero (see the module doc)."""
        import torch

        inputs = super().prepare_inputs(shape)
        cache = inputs["kv_cache"]
        inputs["kv_cache"] = torch.nan_to_num(cache.float(), nan=0.0).to(cache.dtype)
        return inputs

    def allocate_outputs(self, inputs: Tensors, shape: Shape) -> Tensors:
        """The workload's outputs, the ``(b, h, s)`` LSE stored head-contiguous as the example writes it."""
        import torch

        outputs = super().allocate_outputs(inputs, shape)
        b, h, s = outputs["lse"].shape
        outputs["lse"] = torch.empty((b, s, h), dtype=torch.float32, device=inputs["q"].device).transpose(
            1, 2
        )
        return outputs

    # --8<-- [start:plan]
    def plan(self, config: Config) -> ExampleKernel:
        import cutlass
        from cutlass.cute.runtime import from_dlpack

        from mla_var3.kernel.upstream import load_example

        example_cls = getattr(load_example(self.example_file), self.example_class)
        dtype = cute_dtype(self.dtype)

        def split_for(shape: Shape) -> SplitKv:
            return choose_split(
                example_cls, shape["b"], shape["s"], shape["h"], sequence_lengths(shape), config
            )

        def host_for(shape: Shape) -> Any:
            split = split_for(shape)
            flags = (config["is_persistent"], config["is_var_seq"], config["is_var_split_kv"])
            if not example_cls.can_implement(
                shape["b"], shape["s"], max(sequence_lengths(shape)), shape["h"], D_LATENT, 64,
                dtype, dtype, cutlass.Float32, cutlass.Float32, QK_TILER_MN, PV_TILER_MN,
                split.split_kv, *flags, shape["page"],
            ):  # fmt: skip
                raise UnsupportedShapeError(f"{self.example_file} cannot implement {shape} with {config}")
            return example_cls(
                cutlass.Float32, cutlass.Float32, QK_TILER_MN, PV_TILER_MN, MAX_ACTIVE_CLUSTERS,
                shape["page"], 0.0, *flags,
            )  # fmt: skip

        def compile_args(shape: Shape) -> tuple[Any, ...]:
            split = split_for(shape)
            workspace = (
                fake_vector(cutlass.Int8, split.workspace_bytes, WORKSPACE_ALIGN)
                if split.workspace_bytes
                else None
            )
            per_sequence = fake_vector(cutlass.Int32) if split.per_sequence else None
            return (
                *fake_example_views(dtype),
                workspace,
                split.split_kv,
                fake_vector(cutlass.Int32),  # cache_seqs
                per_sequence,  # block_split_kvs
                SOFTMAX_SCALE,
                1.0,  # output_scale
            )

        def launch_args(inputs: Tensors, outputs: Tensors) -> tuple[Any, ...]:
            import torch

            q, seqlens = inputs["q"], inputs["seqlens"]
            b, s_q, h_q, _ = q.shape
            split = choose_split(example_cls, b, s_q, h_q, seqlens.tolist(), config)
            workspace = None
            if split.workspace_bytes:
                buffer = torch.empty(split.workspace_bytes, dtype=torch.int8, device=q.device)
                workspace = from_dlpack(buffer, assumed_align=WORKSPACE_ALIGN)  # holds the buffer alive
            per_sequence = None
            if split.per_sequence:
                per_sequence = vector(torch.tensor(split.per_sequence, dtype=torch.int32, device=q.device))
            return (
                *example_views(inputs, outputs, dtype),
                workspace,
                split.split_kv,
                vector(seqlens),
                per_sequence,
                SOFTMAX_SCALE,
                1.0,
            )

        return ExampleKernel(
            host_for=host_for,
            compile_args=compile_args,
            launch_args=launch_args,
            options="--opt-level 2",  # the example's own compile option (:3894)
            after_launch=_lse_to_natural_log,
        )

    # --8<-- [end:plan]


__all__ = [
    "CLUSTER_CTAS",
    "MAX_ACTIVE_CLUSTERS",
    "MLA_DIR",
    "CutlassMlaDecodePlanBase",
    "SplitKv",
    "choose_split",
    "example_views",
    "fake_example_views",
]
