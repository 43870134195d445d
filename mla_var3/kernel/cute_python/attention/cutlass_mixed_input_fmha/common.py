"""What the three imported mixed-input FMHA plans share: quantized K/V, the dequantized reference, pointers.

CUTLASS's ``mixed_input_fmha_decode.py``, ``mixed_input_fmha_prefill_d256.py`` and
``mixed_input_fmha_prefill_d512.py`` (folder ``examples/python/CuTeDSL/cute/blackwell/kernel/
attention/mixed_input_fmha/`` at the pinned commit) take bf16 queries and int8 keys and values
with one bf16 scale per block of ``block`` head-dimension elements of each key row: the
dequantized key is ``k_int8 * scale``. Their ``run()`` fills K/V with integers in [-8, 7) or
[-2, 2); this workload quantizes standard-normal K and V instead, as a KV cache would be
(scale = block absmax / 127, values rounded and clamped to [-127, 127]), so the data has the
spread of real weights. All three take raw pointers (``cute.Pointer``) and rebuild layouts from a
problem-shape tuple, so the fake arguments are typed pointers, 16- or 128-byte aligned.

Layouts, row-major: Q and O ``(b, h, s, d)`` (``(b, h, d)`` for decode), K and V
``(b, h_k, t, d)``, scales ``(b, h_k, t, d / block)``; query head ``i`` reads KV head
``i // (h / h_k)``. Compile-only: no SM100 GPU here.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, ClassVar

from mla_var3.kernel.cute_python.attention.cutlass_hopper_fmha.common import attention_with_lse
from mla_var3.kernel.errors import UnsupportedShapeError
from mla_var3.kernel.plan import KernelPlan, Shape, Tensors
from mla_var3.kernel.tensors import randn

if TYPE_CHECKING:
    import torch

EXAMPLES_DIR = "examples/python/CuTeDSL/cute/blackwell/kernel/attention/mixed_input_fmha"
INT8_MAX = 127
DATA = (
    "q standard normal (bf16); k and v standard normal quantized to int8 per block of the head dimension "
    "(scale = block absmax / 127, bf16)"
)


def quantize_blocks(x: torch.Tensor, block: int) -> tuple[torch.Tensor, torch.Tensor]:
    """fp32 ``(..., d)`` -> int8 ``(..., d)`` and bf16 scales ``(..., d / block)``, symmetric per block."""
    import torch

    blocks = x.unflatten(-1, (x.shape[-1] // block, block))
    scale = (blocks.abs().amax(dim=-1) / INT8_MAX).clamp_min(1e-8).to(torch.bfloat16)
    q = (blocks / scale.float()[..., None]).round().clamp(-INT8_MAX, INT8_MAX).to(torch.int8)
    return q.flatten(-2), scale


def dequantize_blocks(q: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """int8 ``(..., d)`` and scales ``(..., d / block)`` -> fp32 ``(..., d)``."""
    block = q.shape[-1] // scale.shape[-1]
    return (q.float().unflatten(-1, (scale.shape[-1], block)) * scale.float()[..., None]).flatten(-2)


def quantized_kv(b: int, hk: int, t: int, d: int, block: int) -> Tensors:
    """``k, v`` int8 ``(b, h_k, t, d)`` and their scales ``k_scale, v_scale`` ``(b, h_k, t, d / block)``."""
    k, k_scale = quantize_blocks(randn((b, hk, t, d), "float32"), block)
    v, v_scale = quantize_blocks(randn((b, hk, t, d), "float32"), block)
    return {"k": k, "v": v, "k_scale": k_scale, "v_scale": v_scale}


def mixed_reference(inputs: Tensors, causal: bool, diagonal: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """fp32 attention of ``q (b, h, s, d)`` over the dequantized K/V: ``o (b, h, s, d)``, ``lse (b, h, s)``."""
    k = dequantize_blocks(inputs["k"], inputs["k_scale"]).transpose(1, 2)  # (b, t, h_k, d)
    v = dequantize_blocks(inputs["v"], inputs["v_scale"]).transpose(1, 2)
    o, lse = attention_with_lse(inputs["q"].transpose(1, 2), k, v, causal, diagonal=diagonal)
    return o.transpose(1, 2), lse.transpose(1, 2)


def pointer(dtype: Any, address: int = 0, align: int = 16) -> Any:
    """A typed global-memory pointer: ``address`` 0 is the tensor-free stand-in a compile takes."""
    import cutlass.cute as cute
    from cutlass.cute.runtime import make_ptr

    return make_ptr(dtype, address, cute.AddressSpace.gmem, assumed_align=align)


def pointers(tensors: list[torch.Tensor], align: int) -> tuple[Any, ...]:
    """Typed pointers to real torch tensors (their element types mapped to CuTe's)."""
    import cutlass

    types = {"int8": cutlass.Int8, "bfloat16": cutlass.BFloat16, "float32": cutlass.Float32}
    return tuple(pointer(types[str(t.dtype).removeprefix("torch.")], t.data_ptr(), align) for t in tensors)


class MixedInputPlanBase(KernelPlan):
    """Inputs and checks common to the mixed-input plans; subclasses add shapes, reference and kernel."""

    layer: ClassVar[str] = "attention"
    archs: ClassVar[tuple[str, ...]] = ("sm_100a",)
    dtypes: ClassVar[tuple[str, ...]] = ("bfloat16",)
    data_distribution: ClassVar[str] = DATA
    example_file: ClassVar[str]

    @classmethod
    def upstream_example(cls) -> str:
        return f"{EXAMPLES_DIR}/{cls.example_file}"

    def validate_shape(self, shape: Shape) -> None:
        if shape["h"] % shape["hk"]:
            raise UnsupportedShapeError(
                f"{self.name} needs --h (={shape['h']}) to be a multiple of --hk (={shape['hk']})"
            )

    def scale(self, shape: Shape) -> float:
        """The softmax scale ``run()`` defaults to: ``1/sqrt(d)``."""
        return 1.0 / math.sqrt(shape["d"])


__all__ = [
    "DATA",
    "EXAMPLES_DIR",
    "MixedInputPlanBase",
    "dequantize_blocks",
    "mixed_reference",
    "pointer",
    "pointers",
    "quantize_blocks",
    "quantized_kv",
]
