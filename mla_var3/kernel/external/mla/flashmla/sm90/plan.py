"""Plan for ``flashmla_decode``: FlashMLA's SM90 dense MLA decode as a peer, through our C ABI and ctypes.

FlashMLA at 9241ae3 (its last commit with ``csrc/sm90``) is built ahead of time into
``third_party/flashmla/libflashmla_sm90.so`` by :mod:`mla_var3.kernel.external.flashmla.build`;
this plan only loads it (:mod:`~mla_var3.kernel.external.flashmla.library`) and runs it on the
shared workload (:class:`~mla_var3.kernel.workloads.mla.MlaDecodePlanBase`, whose layouts are
FlashMLA's). What one launch does: the split-KV kernel (one CTA per SM part and 64 query rows,
a page of 64 KV rows per step) then the combine kernel (PDL). The scheduler metadata that
FlashMLA's ``get_mla_metadata`` computes -- which SM part takes which pages of which
sequences -- depends only on the lengths, so it is computed once per input set at ``bind``
and reused by every launch, as a serving engine does; it is not in the timed region.

Limits: page size 64 only (FlashMLA: "Currently page_block_size must be 64"), d_qk 576 and
d_v 512, sm_90a only. The LSE comes back as the natural-log LSE in FlashMLA's storage order
(b, s_q, h_q), seen as the workload's (b, h_q, s_q) through a transposed view.
"""

from __future__ import annotations

from collections.abc import Callable

from mla_var3.kernel.errors import UnsupportedShapeError
from mla_var3.kernel.external.flashmla import library
from mla_var3.kernel.external.library_kernel import LibraryKernel
from mla_var3.kernel.plan import Config, Shape, Tensors
from mla_var3.kernel.workloads.mla import SOFTMAX_SCALE, MlaDecodePlanBase, mla_shape

# The workload's check shapes at FlashMLA's one page size.
FLASHMLA_CHECK_SHAPES: tuple[Shape, ...] = (
    mla_shape(b=2, t=1, h=16),
    mla_shape(b=2, t=63, h=128),
    mla_shape(b=3, t=65, h=64),
    mla_shape(b=2, s=2, t=4097, h=128),
    mla_shape(b=8, s=1, t=300, h=128, varlen=1),
    mla_shape(b=4, s=2, t=1000, h=32, varlen=1),
)


def bind_decode(lib: library.FlashMla, inputs: Tensors, outputs: Tensors) -> Callable[[], None]:
    """Schedule once for these lengths, build the argument struct once, return the launch."""
    q, seqlens = inputs["q"], inputs["seqlens"]
    _, s_q, h_q, _ = q.shape
    schedule = lib.schedule(seqlens, s_q, h_q)
    args = lib.decode_args(q, inputs["kv_cache"], inputs["block_table"], seqlens, outputs["o"],
                           outputs["lse"].transpose(1, 2), schedule, SOFTMAX_SCALE, causal=True)
    return lambda: lib.launch(args)


class FlashMlaDecodePlan(MlaDecodePlanBase):
    name = "flashmla_decode"
    description = "FlashMLA's SM90 dense MLA decode (9241ae3) via ctypes: split-KV WGMMA kernel + combine, page 64"
    archs = ("sm_90a",)
    backend = "library"
    check_shapes = FLASHMLA_CHECK_SHAPES

    @classmethod
    def unavailable_reason(cls) -> str | None:
        """Why this peer cannot run here (one line), or ``None``."""
        return library.unavailable_reason()

    def validate_shape(self, shape: Shape) -> None:
        super().validate_shape(shape)
        if shape["page"] != library.PAGE_SIZE:
            raise UnsupportedShapeError(
                f"{self.name}: FlashMLA's SM90 decode supports page size {library.PAGE_SIZE} only, got --page "
                f"{shape['page']}; use --page {library.PAGE_SIZE}")

    def allocate_outputs(self, inputs: Tensors, shape: Shape) -> Tensors:
        """The workload's outputs, with the LSE stored (b, s_q, h_q) as FlashMLA writes it."""
        outputs = super().allocate_outputs(inputs, shape)
        outputs["lse"] = outputs["lse"].new_empty(outputs["lse"].transpose(1, 2).shape).transpose(1, 2)
        return outputs

    def _autotune_configs(self) -> list[Config]:
        return [{}]

    def plan(self, config: Config) -> LibraryKernel:
        return LibraryKernel(load=library.load, bind_fn=bind_decode)


__all__ = ["FLASHMLA_CHECK_SHAPES", "FlashMlaDecodePlan", "bind_decode"]
