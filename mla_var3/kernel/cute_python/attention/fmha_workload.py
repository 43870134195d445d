"""The dense attention forward workload (FMHA): inputs, fp32 reference, roofline.

``o = softmax(q k^T / sqrt(d)) v`` per batch and query head, with grouped-query attention
(``h`` query heads share ``hk`` KV heads; query head ``i`` reads KV head ``i // (h / hk)``) and an
optional causal mask aligned top-left (query ``i`` sees keys ``0..i``, the default of CUTLASS's
``fmha.py``). Layouts: ``q (b, s, h, d)``, ``k`` and ``v (b, t, hk, d)``, ``o (b, s, h, d)`` in
the input dtype. The causal flag travels with the inputs (``inputs["causal"]``, one int32) so
the reference sees the same problem the kernel was compiled for.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, ClassVar

from mla_var3.kernel.errors import UnsupportedShapeError
from mla_var3.kernel.plan import KernelPlan, Shape, ShapeParam, Tensors
from mla_var3.kernel.tensors import element_size, randn

if TYPE_CHECKING:
    import torch

FMHA_SHAPE_PARAMS = (
    ShapeParam("b", 4, "batch"),
    ShapeParam("s", 1024, "query length per sequence"),
    ShapeParam("t", 1024, "key/value length per sequence"),
    ShapeParam("h", 8, "query heads"),
    ShapeParam("hk", 8, "key/value heads (h must be a multiple)"),
    ShapeParam("d", 64, "head dimension of q, k and v"),
    ShapeParam("causal", 0, "1: query i sees keys 0..i (top-left aligned); 0: no mask"),
)


def visible_pairs(shape: Shape) -> int:
    """Query-key pairs the mask keeps per batch and head."""
    s, t = shape["s"], shape["t"]
    if not shape["causal"]:
        return s * t
    return sum(min(i + 1, t) for i in range(s))


def fmha_reference(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool) -> torch.Tensor:
    """fp32 attention, one batch at a time, TF32 off: ``(b, s, h, d)``."""
    import torch

    b, s, h, d = q.shape
    t, hk = k.shape[1], k.shape[2]
    out = torch.empty((b, s, h, d), dtype=torch.float32, device=q.device)
    saved = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        for i in range(b):
            qi = q[i].float().transpose(0, 1)  # (h, s, d)
            ki = k[i].float().transpose(0, 1).repeat_interleave(h // hk, dim=0)  # (h, t, d)
            vi = v[i].float().transpose(0, 1).repeat_interleave(h // hk, dim=0)
            scores = (qi @ ki.transpose(1, 2)) / math.sqrt(d)
            if causal:
                hidden = torch.arange(t, device=q.device)[None, :] > torch.arange(s, device=q.device)[:, None]
                scores = scores.masked_fill(hidden, float("-inf"))
            out[i] = (torch.softmax(scores, dim=-1) @ vi).transpose(0, 1)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = saved
    return out


class FmhaPlanBase(KernelPlan):
    """Inputs, reference and roofline of dense attention forward; subclasses add the kernel."""

    layer: ClassVar[str] = "attention"
    dtypes: ClassVar[tuple[str, ...]] = ("float16", "bfloat16")
    shape_params: ClassVar[tuple[ShapeParam, ...]] = FMHA_SHAPE_PARAMS

    def validate_shape(self, shape: Shape) -> None:
        for dim in ("b", "s", "t", "h", "hk", "d"):
            if shape[dim] < 1:
                raise UnsupportedShapeError(f"{self.name} needs --{dim} >= 1, got {shape[dim]}")
        if shape["h"] % shape["hk"]:
            raise UnsupportedShapeError(
                f"{self.name} needs --h (={shape['h']}) to be a multiple of --hk (={shape['hk']})"
            )
        if shape["causal"] not in (0, 1):
            raise UnsupportedShapeError(f"{self.name} needs --causal 0 or 1, got {shape['causal']}")

    def prepare_inputs(self, shape: Shape) -> Tensors:
        import torch

        b, s, t, h, hk, d = (shape[k] for k in ("b", "s", "t", "h", "hk", "d"))
        q = randn((b, s, h, d), self.dtype)
        causal = torch.tensor([shape["causal"]], dtype=torch.int32, device=q.device)
        return {
            "q": q,
            "k": randn((b, t, hk, d), self.dtype),
            "v": randn((b, t, hk, d), self.dtype),
            "causal": causal,
        }

    def allocate_outputs(self, inputs: Tensors, shape: Shape) -> Tensors:
        import torch

        return {"o": torch.empty_like(inputs["q"])}

    def reference_fn(self, inputs: Tensors) -> Tensors:
        causal = bool(inputs["causal"].item())
        return {"o": fmha_reference(inputs["q"], inputs["k"], inputs["v"], causal)}

    def _algorithmic_flops_bytes(self, shape: Shape) -> tuple[int, int]:
        """Two GEMMs over the visible pairs; q, k, v read once and o written once."""
        b, s, t, h, hk, d = (shape[k] for k in ("b", "s", "t", "h", "hk", "d"))
        flops = 4 * b * h * d * visible_pairs(shape)
        nbytes = (2 * b * s * h * d + 2 * b * t * hk * d) * element_size(self.dtype)
        return flops, nbytes


__all__ = ["FMHA_SHAPE_PARAMS", "FmhaPlanBase", "fmha_reference", "visible_pairs"]
