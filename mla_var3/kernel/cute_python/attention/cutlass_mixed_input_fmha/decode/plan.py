"""Plan for ``cutlass_mixed_input_fmha_decode``: ``mixed_input_fmha_decode.py`` imported from ``CUTLASS_DIR``.

One query token per sequence and head (decode), bf16 Q against int8 K/V with one bf16 scale per
``block`` head-dimension elements. What the example expects (``mixed_input_fmha_decode.py`` at the
pinned commit):

- ``MixedInputFusedMultiHeadAttentionDecode(headdim, block_scaledim, grouped_head_tile,
  convert_warpgroups)`` (``:71-78``), built as ``run()`` builds it (``:1663-1676``): the query
  heads of one KV head are packed as the MMA's N, ``min(round_up(h / h_k, 8), 32)`` of them; two
  convert warpgroups for ``d > 128`` (four for int4 at ``d`` 512 with 8 grouped heads).
- ``__call__((b, h, h_k, t, d), kv_splits, q, k, v, k_scale, v_scale, o, m, l, o_partial,
  m_partial, l_partial, scale_qs, scale_o, stream)`` over pointers (``:166-185``). The split
  count is a runtime value: ``run()`` takes one wave of a B200, ``148 // (b * h_k * head
  tiles)``, and 9 when that product is 32 (``:1679-1689``); this plan does the same.
- ``m`` (the running maximum, taken with global atomics) must start at ``-inf`` and the partial
  buffers of splits that find no KV tile stay as initialised (``:1763-1769``); this plan fills
  all four before each launch, inside the timed region. ``l`` is the natural-log LSE.
"""

from __future__ import annotations

import math
from typing import Any

from mla_var3.kernel.cute_python.attention.cutlass_hopper_fmha.common import (
    PreparedLaunchKernel,
    example_compile_context,
)
from mla_var3.kernel.cute_python.attention.cutlass_mixed_input_fmha.common import (
    MixedInputPlanBase,
    mixed_reference,
    pointer,
    pointers,
    quantized_kv,
)
from mla_var3.kernel.cute_python.attention.example_kernel import B200_SM_COUNT
from mla_var3.kernel.errors import UnsupportedShapeError
from mla_var3.kernel.plan import Config, Shape, ShapeParam, Tensors
from mla_var3.kernel.tensors import randn

POINTER_ALIGN = 16  # run()'s from_dlpack(..., assumed_align=16) (mixed_input_fmha_decode.py:1740)
WORKSPACES = ("m", "o_partial", "m_partial", "l_partial")


def grouped_head_tile(shape: Shape) -> int:
    """Query heads per KV head packed into the MMA's N (``run()``, :1671)."""
    return min(-(-(shape["h"] // shape["hk"]) // 8) * 8, 32)


def kv_splits(shape: Shape, sm_count: int = B200_SM_COUNT) -> int:
    """CTAs per sequence, as ``run()`` picks them for one wave of ``sm_count`` SMs (:1679-1689)."""
    grid_yz = shape["b"] * shape["hk"] * math.ceil((shape["h"] // shape["hk"]) / grouped_head_tile(shape))
    if sm_count == B200_SM_COUNT and grid_yz == 32:
        return 9  # two waves
    return max(1, sm_count // grid_yz)


class MixedInputDecodePlan(MixedInputPlanBase):
    name = "cutlass_mixed_input_fmha_decode"
    description = (
        "CUTLASS's mixed_input_fmha_decode.py imported from CUTLASS_DIR: KV rows are the MMA's M, grouped query heads "
        "its N; convert warpgroups dequantize int8 K/V into TMEM; split-KV with a reduction kernel (compile-only here)"
    )
    example_file = "mixed_input_fmha_decode.py"
    shape_params = (
        ShapeParam("b", 1, "batch"),
        ShapeParam("t", 1024, "key/value length per sequence"),
        ShapeParam("h", 32, "query heads"),
        ShapeParam("hk", 4, "key/value heads (h must be a multiple)"),
        ShapeParam("d", 512, "head dimension (a multiple of 64)", minimum=64),
        ShapeParam("block", 512, "head-dimension elements per K/V scale", minimum=1),
    )
    static_shape_params = ("h", "hk", "d", "block")  # the constructor's arguments follow these

    def validate_shape(self, shape: Shape) -> None:
        super().validate_shape(shape)
        d, block = shape["d"], shape["block"]
        if d % 64 or d % block:
            raise UnsupportedShapeError(
                f"{self.name} needs --d a multiple of 64 and of --block, got d={d}, block={block}"
            )
        scales_per_row = d // block  # a TMA row of scales needs 16 bytes, else rows are grouped (:152-158)
        if scales_per_row * 16 < 128 and shape["t"] % (128 // (scales_per_row * 16)):
            raise UnsupportedShapeError(
                f"{self.name} needs --t a multiple of {128 // (scales_per_row * 16)} for {scales_per_row} scale(s) per row"
            )

    def prepare_inputs(self, shape: Shape) -> Tensors:
        b, t, h, hk, d = (shape[k] for k in ("b", "t", "h", "hk", "d"))
        return {"q": randn((b, h, 1, d), self.dtype), **quantized_kv(b, hk, t, d, shape["block"])}

    def allocate_outputs(self, inputs: Tensors, shape: Shape) -> Tensors:
        import torch

        b, h, _, d = inputs["q"].shape
        splits, f32, dev = kv_splits(shape), torch.float32, inputs["q"].device
        return {
            "o": torch.empty_like(inputs["q"]),
            "lse": torch.empty((b, h, 1), dtype=f32, device=dev),
            "m": torch.empty((b, h), dtype=f32, device=dev),
            "o_partial": torch.empty((splits, b, h, d), dtype=f32, device=dev),
            "m_partial": torch.empty((splits, b, h), dtype=f32, device=dev),
            "l_partial": torch.empty((splits, b, h), dtype=f32, device=dev),
        }

    def reference_fn(self, inputs: Tensors) -> Tensors:
        o, lse = mixed_reference(inputs, causal=False)
        return {"o": o, "lse": lse}

    def _algorithmic_flops_bytes(self, shape: Shape) -> tuple[int, int]:
        """Two GEMVs per head over the KV length; int8 K/V and bf16 scales read once, q and o once."""
        b, t, h, hk, d = (shape[k] for k in ("b", "t", "h", "hk", "d"))
        nbytes = 2 * b * hk * t * d + 2 * 2 * b * hk * t * (d // shape["block"]) + 2 * 2 * b * h * d
        return 4 * b * h * t * d, nbytes

    def _autotune_configs(self) -> list[Config]:
        return [{"kv_dtype": "int8"}]

    # --8<-- [start:plan]
    def plan(self, config: Config) -> PreparedLaunchKernel:
        import cutlass

        from mla_var3.kernel.upstream import load_example

        example = load_example(self.upstream_example())
        bf16, i8, f32 = cutlass.BFloat16, cutlass.Int8, cutlass.Float32

        def host_for(shape: Shape) -> Any:
            d = shape["d"]
            convert_warpgroups = 2 if d > 128 else 1  # run()'s rule for int8 K/V (:1663-1668)
            return example.MixedInputFusedMultiHeadAttentionDecode(
                d, shape["block"], grouped_head_tile(shape), convert_warpgroups
            )

        def scalars(shape: Shape) -> tuple[Any, ...]:
            return ((shape["b"], shape["h"], shape["hk"], shape["t"], shape["d"]), kv_splits(shape))

        def compile_args(shape: Shape) -> tuple[Any, ...]:
            types = (bf16, i8, i8, bf16, bf16, bf16, f32, f32, f32, f32, f32)
            ptrs = tuple(pointer(t, align=POINTER_ALIGN) for t in types)
            return (*scalars(shape), *ptrs, self.scale(shape), 1.0)

        def launch_args(inputs: Tensors, outputs: Tensors) -> tuple[Any, ...]:
            (b, h, _, d), (hk, t) = inputs["q"].shape, inputs["k"].shape[1:3]
            shape = {"b": b, "t": t, "h": h, "hk": hk, "d": d, "block": d // inputs["k_scale"].shape[-1]}
            names = ("q", "k", "v", "k_scale", "v_scale")
            tensors = [inputs[n] for n in names] + [outputs[n] for n in ("o", "m", "lse", *WORKSPACES[1:])]
            return (*scalars(shape), *pointers(tensors, POINTER_ALIGN), self.scale(shape), 1.0)

        def reset_workspaces(inputs: Tensors, outputs: Tensors) -> None:
            for name, value in zip(WORKSPACES, (-math.inf, 0.0, -math.inf, 0.0), strict=True):
                outputs[name].fill_(value)

        return PreparedLaunchKernel(
            host_for=host_for,
            compile_args=compile_args,
            launch_args=launch_args,
            options="--opt-level 2",  # the example's own compile option (:1793)
            compile_context=example_compile_context(),
            before_launch=reset_workspaces,
        )

    # --8<-- [end:plan]


__all__ = ["MixedInputDecodePlan", "grouped_head_tile", "kv_splits"]
