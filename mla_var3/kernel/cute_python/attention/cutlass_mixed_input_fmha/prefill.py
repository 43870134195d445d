"""The prefill half of the mixed-input family: ``mixed_input_fmha_prefill_d256.py`` and ``..._d512.py``.

Both files (``examples/python/CuTeDSL/cute/blackwell/kernel/attention/mixed_input_fmha/`` at the
pinned commit) share one interface: ``Kernel(scale_granularity, qk_acc, pv_acc, is_persistent,
mask)`` and ``__call__(q, k, v, o, k_scale, v_scale, (b, s, t, h, h_k, d), scale_log2,
scale_output, window_left, window_right, stream)`` over pointers aligned to 128 bytes
(``mixed_input_fmha_prefill_d256.py:56-63``, ``:133-147``, ``:1690``). They differ in the
head dimension they are built for (256 or 512) and the granularities they accept. The mask is
chosen as their ``run()`` chooses it (``:1708-1713``): causal is the *inference* window mask, so
the diagonal is aligned bottom-right (query ``i`` sees keys up to ``i + t - s``); without a mask,
a residual mask when ``t`` is not a multiple of 128.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

from mla_var3.kernel.cute_python.attention.cutlass_hopper_fmha.common import example_compile_context
from mla_var3.kernel.cute_python.attention.cutlass_mixed_input_fmha.common import (
    MixedInputPlanBase,
    mixed_reference,
    pointer,
    pointers,
    quantized_kv,
)
from mla_var3.kernel.cute_python.attention.example_kernel import B200_SM_COUNT, ExampleKernel
from mla_var3.kernel.errors import UnsupportedShapeError
from mla_var3.kernel.plan import Config, Shape, ShapeParam, Tensors
from mla_var3.kernel.tensors import randn

POINTER_ALIGN = 128  # run() builds its pointers from from_dlpack(..., assumed_align=128)
KV_TILE = 128
LOG2_E = math.log2(math.e)


def prefill_shape_params(d: int) -> tuple[ShapeParam, ...]:
    """The shape flags of a prefill plan: ``d`` is fixed by the example (its bounds say so)."""
    return (
        ShapeParam("b", 1, "batch"),
        ShapeParam("s", 256, "query length per sequence"),
        ShapeParam("t", 256, "key/value length per sequence"),
        ShapeParam("h", 8, "query heads"),
        ShapeParam("hk", 8, "key/value heads (h must be a multiple)"),
        ShapeParam("d", d, "head dimension (fixed by the example)", minimum=d, maximum=d),
        ShapeParam("causal", 0, "1: query i sees keys 0..i + t - s (bottom-right aligned); 0: no mask"),
    )


class MixedInputPrefillPlan(MixedInputPlanBase):
    """One prefill example; subclasses name the file, the class, ``d`` and the default granularity."""

    kernel_class: ClassVar[str]
    granularities: ClassVar[tuple[int, ...]]
    static_shape_params = ("t", "causal")  # d is fixed; t and causal pick the mask

    def validate_shape(self, shape: Shape) -> None:
        super().validate_shape(shape)
        if shape["causal"] not in (0, 1):
            raise UnsupportedShapeError(f"{self.name} needs --causal 0 or 1, got {shape['causal']}")

    def prepare_inputs(self, shape: Shape) -> Tensors:
        import torch

        b, s, t, h, hk, d = (shape[k] for k in ("b", "s", "t", "h", "hk", "d"))
        block = self.default_config()["scale_granularity"]
        causal = torch.tensor([shape["causal"]], dtype=torch.int32, device="cuda")
        return {"q": randn((b, h, s, d), self.dtype), **quantized_kv(b, hk, t, d, block), "causal": causal}

    def allocate_outputs(self, inputs: Tensors, shape: Shape) -> Tensors:
        import torch

        return {"o": torch.empty_like(inputs["q"])}

    def reference_fn(self, inputs: Tensors) -> Tensors:
        s, t = inputs["q"].shape[2], inputs["k"].shape[2]
        o, _ = mixed_reference(inputs, bool(inputs["causal"].item()), diagonal=t - s)
        return {"o": o}

    def _algorithmic_flops_bytes(self, shape: Shape) -> tuple[int, int]:
        """Two GEMMs over the visible pairs (bottom-right causal); q, o bf16, k, v int8, bf16 scales."""
        b, s, t, h, hk, d = (shape[k] for k in ("b", "s", "t", "h", "hk", "d"))
        pairs = sum(max(0, min(i + 1 + t - s, t)) for i in range(s)) if shape["causal"] else s * t
        block = self.default_config()["scale_granularity"]
        nbytes = 2 * 2 * b * h * s * d + 2 * b * hk * t * d + 2 * 2 * b * hk * t * (d // block)
        return 4 * b * h * d * pairs, nbytes

    def _autotune_configs(self) -> list[Config]:
        return [{"scale_granularity": self.granularities[0], "is_persistent": False}]

    # --8<-- [start:plan]
    def plan(self, config: Config) -> ExampleKernel:
        import cutlass

        from mla_var3.kernel.upstream import load_example

        example = load_example(self.upstream_example())
        masks, f32 = example.fmha_utils.MaskEnum, cutlass.Float32

        def host_for(shape: Shape) -> Any:
            if shape["causal"] or shape["t"] % KV_TILE == 0:
                mask = masks.WINDOW_MASK_INFERENCE
            else:
                mask = masks.RESIDUAL_MASK
            kernel_cls = getattr(example, self.kernel_class)
            return kernel_cls(config["scale_granularity"], f32, f32, config["is_persistent"], mask)

        def scalars(shape: Shape) -> tuple[Any, ...]:
            problem = tuple(shape[k] for k in ("b", "s", "t", "h", "hk", "d"))
            window_right = cutlass.Int32(0) if shape["causal"] else None
            return (problem, self.scale(shape) * LOG2_E, 1.0, None, window_right)

        def compile_args(shape: Shape) -> tuple[Any, ...]:
            types = (
                cutlass.BFloat16,
                cutlass.Int8,
                cutlass.Int8,
                cutlass.BFloat16,
                cutlass.BFloat16,
                cutlass.BFloat16,
            )
            return (*(pointer(t, align=POINTER_ALIGN) for t in types), *scalars(shape))

        def launch_args(inputs: Tensors, outputs: Tensors) -> tuple[Any, ...]:
            (b, h, s, d), (hk, t) = inputs["q"].shape, inputs["k"].shape[1:3]
            tensors = [
                inputs["q"],
                inputs["k"],
                inputs["v"],
                outputs["o"],
                inputs["k_scale"],
                inputs["v_scale"],
            ]
            shape = {"b": b, "s": s, "t": t, "h": h, "hk": hk, "d": d, "causal": int(inputs["causal"].item())}
            return (*pointers(tensors, POINTER_ALIGN), *scalars(shape))

        return ExampleKernel(
            host_for=host_for,
            compile_args=compile_args,
            launch_args=launch_args,
            options="--opt-level 2",  # the examples' own compile option
            compile_context=example_compile_context(example.fmha_utils, B200_SM_COUNT),
        )

    # --8<-- [end:plan]


__all__ = ["MixedInputPrefillPlan", "prefill_shape_params"]
