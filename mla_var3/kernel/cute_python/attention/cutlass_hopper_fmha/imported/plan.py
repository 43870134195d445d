"""Plan for ``cutlass_hopper_fmha``: CUTLASS's Hopper ``fmha.py`` imported from ``CUTLASS_DIR``.

The kernel is NVIDIA's example, loaded at ``plan()`` time by
:func:`~mla_var3.kernel.upstream.load_example` (never copied); this module adapts the dense
attention workload of :mod:`~mla_var3.kernel.cute_python.attention.fmha_workload` to it and adds
the log-sum-exp the example writes. It targets ``sm_90a`` and runs on the H200.

What the example expects (``examples/python/CuTeDSL/cute/hopper/kernel/attention/fmha.py`` at
the pinned commit):

- ``HopperFusedMultiHeadAttentionForward(qk_acc, pv_acc, (tile_m, tile_n, d), is_persistent,
  mask)`` (``fmha.py:170-177``); the CTA owns ``2 x tile_m`` query rows, one per MMA warpgroup
  (``:208-215``).
- ``__call__(q, k, v, o, lse, scale_log2, scale, scale_output, window_left, window_right,
  stream)`` (``:262-275``), every tensor 5-D ``(s, d, h_r, h_k, b)`` with ``d`` contiguous,
  marked dynamic, 16-byte aligned (``:2064-2112``); K and V with ``h_r = 1``, broadcast with a
  0 stride (``:282-307``). LSE is ``(s, 1, h_r, h_k, b)`` fp32 (``:2124-2126``), natural log.
- The mask is the constructor's, chosen as ``run()`` chooses it (``:2130-2137``): causal is a
  window mask with right window 0 (top-left aligned); otherwise a residual mask when ``t`` is
  not a multiple of ``tile_n``, else a window mask with no windows (nothing masked).
- Persistent grid: ``min(SMs, tiles)`` CTAs, the SM count asked from ``HardwareInfo`` while
  tracing (``helpers/fmha_helpers.py:189-196``): this machine's GPU, or an H200's 132 without one.
- ``can_implement`` (``:1800-1917``) is asked before compiling: it bounds ``d`` and the tile by
  SMEM. Scales as in ``run()``: ``1/sqrt(d)`` and its log2 form, output scale 1 (``:2182-2189``;
  its default of 0 turns into ``1/sqrt(q_shape[1])``, the query *length*: we pass the scale).

Configs: the docstring's persistent command (tile 64x128, ``fmha.py:47-52``), then the same
tile without persistence (the argparse default, ``:2464-2469``).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, ClassVar

from mla_var3.kernel.cute_python.attention.cutlass_hopper_fmha.common import (
    as_heads_5d,
    attention_with_lse,
    example_compile_context,
    fake_heads_5d,
    sm_count_for_trace,
)
from mla_var3.kernel.cute_python.attention.example_kernel import ExampleKernel
from mla_var3.kernel.cute_python.attention.fmha_workload import FMHA_SHAPE_PARAMS, FmhaPlanBase
from mla_var3.kernel.errors import UnsupportedShapeError
from mla_var3.kernel.plan import Config, Shape, ShapeParam, Tensors

EXAMPLE = "examples/python/CuTeDSL/cute/hopper/kernel/attention/fmha.py"
HEAD_DIMS = (32, 64, 128, 256)  # fmha.py:72
H200_SM_COUNT = 132
LOG2_E = math.log2(math.e)
# The measurement shape: d 128, 8K tokens, batch 2, 16 heads (causal 0 and 1).
_DEFAULTS = {"b": 2, "s": 8192, "t": 8192, "h": 16, "hk": 16, "d": 128}
SHAPE_PARAMS = tuple(replace(p, default=_DEFAULTS.get(p.name, p.default)) for p in FMHA_SHAPE_PARAMS)


def _windows(causal: int) -> tuple[Any, Any]:
    """``(window_left, window_right)`` as ``run()`` passes them: causal is a right window of 0."""
    import cutlass

    return (None, cutlass.Int32(0) if causal else None)


class CutlassHopperFmhaPlan(FmhaPlanBase):
    name = "cutlass_hopper_fmha"
    description = (
        "CUTLASS's Hopper fmha.py imported from CUTLASS_DIR: a TMA warpgroup and two WGMMA warpgroups on two "
        "64-row Q tiles, K and V alternating in one 5-stage ring, softmax in registers, TMA-store epilogue, LSE"
    )
    archs = ("sm_90a",)
    dtypes = ("bfloat16", "float16")
    shape_params: ClassVar[tuple[ShapeParam, ...]] = SHAPE_PARAMS
    check_shapes = (
        {"b": 2, "s": 1024, "t": 1024, "h": 8, "hk": 8, "d": 128, "causal": 1},
        {"b": 1, "s": 1000, "t": 1000, "h": 16, "hk": 4, "d": 128, "causal": 0},  # residual mask, GQA
        {"b": 2, "s": 512, "t": 512, "h": 4, "hk": 4, "d": 64, "causal": 0},
    )
    # d, the mask (causal, and t against the KV tile) and nothing else are compiled in.
    static_shape_params = ("t", "d", "causal")

    @classmethod
    def upstream_example(cls) -> str:
        return EXAMPLE

    def validate_shape(self, shape: Shape) -> None:
        super().validate_shape(shape)
        if shape["d"] not in HEAD_DIMS:
            raise UnsupportedShapeError(
                f"{self.name} needs --d in {', '.join(map(str, HEAD_DIMS))}, got {shape['d']}"
            )

    def allocate_outputs(self, inputs: Tensors, shape: Shape) -> Tensors:
        import torch

        b, s, h, _ = inputs["q"].shape
        return {
            "o": torch.empty_like(inputs["q"]),
            "lse": torch.empty((b, s, h), dtype=torch.float32, device=inputs["q"].device),
        }

    def reference_fn(self, inputs: Tensors) -> Tensors:
        o, lse = attention_with_lse(inputs["q"], inputs["k"], inputs["v"], bool(inputs["causal"].item()))
        return {"o": o, "lse": lse}

    def _algorithmic_flops_bytes(self, shape: Shape) -> tuple[int, int]:
        flops, nbytes = super()._algorithmic_flops_bytes(shape)
        return flops, nbytes + 4 * shape["b"] * shape["s"] * shape["h"]  # + the fp32 LSE

    def _autotune_configs(self) -> list[Config]:
        return [
            {"mma_tiler_mn": (64, 128), "is_persistent": True},
            {"mma_tiler_mn": (64, 128), "is_persistent": False},
        ]

    # --8<-- [start:plan]
    def plan(self, config: Config) -> ExampleKernel:
        import cutlass

        from mla_var3.kernel.tensors import cute_dtype
        from mla_var3.kernel.upstream import load_example

        example = load_example(EXAMPLE)
        fmha_cls, masks = example.HopperFusedMultiHeadAttentionForward, example.fmha_utils.MaskEnum
        dtype, f32 = cute_dtype(self.dtype), cutlass.Float32
        tile_mn, persistent = tuple(config["mma_tiler_mn"]), config["is_persistent"]

        def host_for(shape: Shape) -> Any:
            b, s, t, h, hk, d = (shape[k] for k in ("b", "s", "t", "h", "hk", "d"))
            window = (-1, 0 if shape["causal"] else -1)
            ok, why = fmha_cls.can_implement(
                (b, s, h, d),
                (b, t, hk, d),
                dtype,
                dtype,
                f32,
                f32,
                tile_mn,
                persistent,
                1 / math.sqrt(d),
                window,
                1,
            )
            if not ok:
                raise UnsupportedShapeError(
                    f"{EXAMPLE} cannot run {shape} with {config}: {why}; pick another --config or shape"
                )
            if shape["causal"]:
                mask = masks.WINDOW_MASK
            else:
                mask = masks.RESIDUAL_MASK if t % tile_mn[1] else masks.WINDOW_MASK
            return fmha_cls(f32, f32, (*tile_mn, d), persistent, mask)

        def scalars(d: int, causal: int) -> tuple[Any, ...]:
            scale = 1.0 / math.sqrt(d)
            return (scale * LOG2_E, scale, 1.0, *_windows(causal))

        def compile_args(shape: Shape) -> tuple[Any, ...]:
            return (
                *(fake_heads_5d(dtype) for _ in "qkvo"),
                fake_heads_5d(f32),
                *scalars(shape["d"], shape["causal"]),
            )

        def launch_args(inputs: Tensors, outputs: Tensors) -> tuple[Any, ...]:
            hk, d = inputs["k"].shape[2], inputs["q"].shape[3]
            views = [
                as_heads_5d(t, hk)
                for t in (inputs["q"], inputs["k"], inputs["v"], outputs["o"], outputs["lse"])
            ]
            return (*views, *scalars(d, int(inputs["causal"].item())))

        return ExampleKernel(
            host_for=host_for,
            compile_args=compile_args,
            launch_args=launch_args,
            compile_context=example_compile_context(example.fmha_utils, sm_count_for_trace(H200_SM_COUNT)),
        )

    # --8<-- [end:plan]


__all__ = ["EXAMPLE", "CutlassHopperFmhaPlan"]
