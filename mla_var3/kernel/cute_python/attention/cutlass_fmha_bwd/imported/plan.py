"""Plan for ``cutlass_fmha_bwd_sm100``: CUTLASS's Blackwell ``fmha_bwd.py`` imported from ``CUTLASS_DIR``.

The workload is the backward pass of dense attention: given ``q, k, v, do`` and the forward's
``o`` and natural-log ``lse``, produce ``dq, dk, dv``. Inputs are standard normal; ``o`` and
``lse`` come from the fp32 forward of the same ``q, k, v`` (so the gradients are those of a real
attention), and the reference differentiates that fp32 forward with autograd. The kernel is
NVIDIA's example, loaded at ``plan()`` time (never copied). Compile-only: no SM100 GPU here.

What the example expects (``examples/python/CuTeDSL/cute/blackwell/kernel/attention/fmha/``
at the pinned commit):

- ``BlackwellFusedMultiHeadAttentionBackward(element, acc, (128, 128, d), varlen, mask)``
  (``fmha_bwd.py:104-112``), ``d`` 64 or 128 (``:2859-2860``).
- ``__call__(problem_shape, q, k, v, o, dq, dk, dv, do, lse, cum_q, cum_k, scale, window_left,
  window_right, workspace, stream)`` (``:248-266``). The six ``(b, seq, heads, d)`` tensors are
  5-D ``(seq, d, h_r, h_k, b)`` views marked dynamic with ``d`` a multiple of 64
  (``:2892-2922``); LSE is ``(s, h_r, h_k, b)`` with ``s`` contiguous (``:3042-3051``), i.e. our
  ``(b, h, s)`` buffer. ``problem_shape = (s, t, d, ((h_r, h_k), b))`` (``:2987``).
- The fp32 workspace (``_get_workspace_size``, ``:2632-2644``) holds ``sum(O * dO)``, the
  scaled LSE and the fp32 dQ that CTAs accumulate with TMA reduce-adds: it must be zero before
  every launch (``run()`` zeroes it before its checked launch only, ``:3149``), so this plan zeroes it
  before each launch, inside the timed region.
- Mask as ``run()`` picks it (``:2978-2985``): causal is the backward window mask with right
  window 0 (top-left); otherwise a residual mask when ``s`` is not a multiple of 128.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

from mla_var3.kernel.cute_python.attention.cutlass_hopper_fmha.common import (
    PreparedLaunchKernel,
    as_heads_5d,
    attention_with_lse,
    example_compile_context,
    fake_heads_5d,
)
from mla_var3.kernel.cute_python.attention.example_kernel import fake_vector, vector
from mla_var3.kernel.cute_python.attention.fmha_workload import FMHA_SHAPE_PARAMS, FmhaPlanBase, visible_pairs
from mla_var3.kernel.errors import UnsupportedShapeError
from mla_var3.kernel.plan import Config, Shape, ShapeParam, Tensors
from mla_var3.kernel.tensors import element_size, randn

EXAMPLE = "examples/python/CuTeDSL/cute/blackwell/kernel/attention/fmha/fmha_bwd.py"
HEAD_DIMS = (64, 128)
TILE = 128  # mma_tiler_mn must be 128,128 (fmha_bwd.py:97)
D_DIVISIBILITY = 64  # run()'s mark_compact_shape_dynamic (fmha_bwd.py:2916-2920)


def _fake_lse() -> Any:
    """A tensor-free ``(s, h_r, h_k, b)`` fp32 LSE with ``s`` contiguous, as ``run()`` marks it."""
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.runtime import make_fake_tensor

    stride = (1, *(cute.sym_int64() for _ in range(3)))
    return make_fake_tensor(
        cutlass.Float32, tuple(cute.sym_int() for _ in range(4)), stride, assumed_align=16
    )


def _lse_view(lse: Any, kv_heads: int) -> Any:
    """Our ``(b, h, s)`` fp32 LSE as ``(s, h_r, h_k, b)``."""
    from cutlass.cute.runtime import from_dlpack

    b, h, s = lse.shape
    view = lse.view(b, kv_heads, h // kv_heads, s).permute(3, 2, 1, 0)
    return from_dlpack(view, assumed_align=16).mark_layout_dynamic(leading_dim=0)


def attention_grads(inputs: Tensors) -> Tensors:
    """``dq, dk, dv`` of the fp32 forward of ``q, k, v`` for the upstream gradient ``do`` (autograd)."""
    import torch

    causal = bool(inputs["causal"].item())
    grads: dict[str, list[torch.Tensor]] = {"dq": [], "dk": [], "dv": []}
    for i in range(inputs["q"].shape[0]):  # one batch at a time bounds the (h, s, t) scores
        leaves = [inputs[n][i : i + 1].float().requires_grad_() for n in ("q", "k", "v")]
        o, _ = attention_with_lse(*leaves, causal)
        o.backward(inputs["do"][i : i + 1].float())
        for name, leaf in zip(("dq", "dk", "dv"), leaves, strict=True):
            grads[name].append(leaf.grad)
    return {name: torch.cat(parts) for name, parts in grads.items()}


class CutlassFmhaBwdSm100Plan(FmhaPlanBase):
    name = "cutlass_fmha_bwd_sm100"
    description = (
        "CUTLASS's Blackwell fmha_bwd.py imported from CUTLASS_DIR: a CTA per 128 K/V rows walks every Q tile; "
        "S, dP, dQ, dK, dV in TMEM, P recomputed from the LSE, dQ reduced across CTAs with TMA (compile-only here)"
    )
    archs = ("sm_100a",)
    dtypes = ("bfloat16", "float16")
    shape_params: ClassVar[tuple[ShapeParam, ...]] = FMHA_SHAPE_PARAMS
    static_shape_params = ("s", "d", "causal")  # d is the tile's K; s and causal pick the mask

    @classmethod
    def upstream_example(cls) -> str:
        return EXAMPLE

    def validate_shape(self, shape: Shape) -> None:
        super().validate_shape(shape)
        if shape["d"] not in HEAD_DIMS:
            raise UnsupportedShapeError(
                f"{self.name} needs --d in {', '.join(map(str, HEAD_DIMS))}, got {shape['d']}"
            )

    def prepare_inputs(self, shape: Shape) -> Tensors:
        inputs = super().prepare_inputs(shape)
        o, lse = attention_with_lse(inputs["q"], inputs["k"], inputs["v"], bool(shape["causal"]))
        b, s, h, d = inputs["q"].shape
        return inputs | {
            "o": o.to(inputs["q"].dtype),
            "lse": lse.transpose(1, 2).contiguous(),  # (b, h, s): the example reads s contiguous
            "do": randn((b, s, h, d), self.dtype),
        }

    def allocate_outputs(self, inputs: Tensors, shape: Shape) -> Tensors:
        import cutlass
        import torch

        from mla_var3.kernel.upstream import load_example

        example_cls = load_example(EXAMPLE).BlackwellFusedMultiHeadAttentionBackward
        b, s, t, h, d = (shape[k] for k in ("b", "s", "t", "h", "d"))
        nbytes = example_cls._get_workspace_size(s, t, d, h, b, cutlass.Float32)
        q, k = inputs["q"], inputs["k"]
        return {
            "dq": torch.empty_like(q),
            "dk": torch.empty_like(k),
            "dv": torch.empty_like(k),
            "workspace": torch.empty(nbytes, dtype=torch.uint8, device=q.device),
        }

    def reference_fn(self, inputs: Tensors) -> Tensors:
        return attention_grads(inputs)

    def _algorithmic_flops_bytes(self, shape: Shape) -> tuple[int, int]:
        """Five GEMMs over the visible pairs (S and dP recomputed, dV, dK, dQ); each tensor moved once."""
        b, s, t, h, hk, d = (shape[k] for k in ("b", "s", "t", "h", "hk", "d"))
        flops = 10 * b * h * d * visible_pairs(shape)
        nbytes = (4 * b * s * h * d + 4 * b * t * hk * d) * element_size(self.dtype) + 4 * b * h * s
        return flops, nbytes

    def _autotune_configs(self) -> list[Config]:
        return [{"mma_tiler_mn": (TILE, TILE)}]

    # --8<-- [start:plan]
    def plan(self, config: Config) -> PreparedLaunchKernel:
        import cutlass

        from mla_var3.kernel.tensors import cute_dtype
        from mla_var3.kernel.upstream import load_example

        example = load_example(EXAMPLE)
        masks, dtype = example.fmha_utils.MaskEnum, cute_dtype(self.dtype)

        def host_for(shape: Shape) -> Any:
            if shape["causal"]:
                mask = masks.WINDOW_MASK_BWD
            else:
                mask = masks.RESIDUAL_MASK_BWD if shape["s"] % TILE else masks.WINDOW_MASK_BWD
            return example.BlackwellFusedMultiHeadAttentionBackward(
                dtype, cutlass.Float32, (*config["mma_tiler_mn"], shape["d"]), False, mask
            )

        def scalars(shape: Shape) -> tuple[Any, ...]:
            b, s, t, h, hk, d = (shape[k] for k in ("b", "s", "t", "h", "hk", "d"))
            problem = (s, t, d, ((h // hk, hk), b))
            window_right = cutlass.Int32(0) if shape["causal"] else None
            return problem, 1.0 / math.sqrt(d), window_right

        def arguments(
            problem: Any, tensors: list[Any], lse: Any, scale: float, right: Any, ws: Any
        ) -> tuple[Any, ...]:
            q, k, v, o, dq, dk, dv, do = tensors
            return (problem, q, k, v, o, dq, dk, dv, do, lse, None, None, scale, None, right, ws)

        def compile_args(shape: Shape) -> tuple[Any, ...]:
            tensors = [fake_heads_5d(dtype, d_divisibility=D_DIVISIBILITY) for _ in range(8)]
            problem, scale, right = scalars(shape)
            return arguments(problem, tensors, _fake_lse(), scale, right, fake_vector(cutlass.Uint8))

        def launch_args(inputs: Tensors, outputs: Tensors) -> tuple[Any, ...]:
            (b, s, h, d), (t, hk) = inputs["q"].shape, inputs["k"].shape[1:3]
            shape = {"b": b, "s": s, "t": t, "h": h, "hk": hk, "d": d, "causal": int(inputs["causal"].item())}
            names = [("q", inputs), ("k", inputs), ("v", inputs), ("o", inputs), ("dq", outputs), ("dk", outputs),
                     ("dv", outputs), ("do", inputs)]  # fmt: skip
            tensors = [as_heads_5d(src[n], hk, d_divisibility=D_DIVISIBILITY) for n, src in names]
            problem, scale, right = scalars(shape)
            return arguments(
                problem, tensors, _lse_view(inputs["lse"], hk), scale, right, vector(outputs["workspace"])
            )

        return PreparedLaunchKernel(
            host_for=host_for,
            compile_args=compile_args,
            launch_args=launch_args,
            compile_context=example_compile_context(),
            before_launch=lambda inputs, outputs: outputs["workspace"].zero_(),
        )

    # --8<-- [end:plan]


__all__ = ["EXAMPLE", "CutlassFmhaBwdSm100Plan", "attention_grads"]
