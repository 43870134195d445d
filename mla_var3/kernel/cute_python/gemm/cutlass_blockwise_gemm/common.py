"""What the two imported blockwise FP8 GEMM plans share: quantization, scales, configs, operand marks.

CUTLASS's ``blockwise_gemm.py`` and ``contiguous_grouped_gemm.py`` (folder
``examples/python/CuTeDSL/cute/blackwell/kernel/blockwise_gemm/`` at the pinned commit) multiply e4m3
A (M, K) and B (N, K), both K-major, with fp32 scales the tensor cores never see: one per row of A
and 128 elements of K (SFA, stored M-major), one per 128 x 128 block of B (SFB). The MMA warp
accumulates one 128-wide K block at a time in TMEM; four "acc update" warps read it, multiply by
SFA x SFB and add into a second, final accumulator (also TMEM), and the epilogue warps store
that. This is the scaling DeepSeek-V3 trains with. The workload here: standard normal A and B,
quantized per block with scale amax / 448 (e4m3's largest value); the reference multiplies the
dequantized values in fp32; C is bf16. The plan's dtype names A and B.
Compile-only: no SM100 GPU here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mla_var3.kernel.cute_python.gemm.cutlass_blockscaled_gemm.operands import fake_batched
from mla_var3.kernel.errors import UnsupportedShapeError
from mla_var3.kernel.plan import Config, Shape

if TYPE_CHECKING:
    import torch

EXAMPLES_DIR = "examples/python/CuTeDSL/cute/blackwell/kernel/blockwise_gemm"
SCALE_BLOCK = 128  # elements of K (and rows of B) per scale factor
E4M3_MAX = 448.0
# --8<-- [start:configs]
# The docstrings' command: one-CTA 128x128 MMA on a 1x2 cluster (B's scale granularity fixes N at 128),
# then 2-CTA 256x128 on a 2x1 cluster.
CONFIGS: tuple[Config, ...] = (
    {"mma_tiler_mn": (128, 128), "cluster_shape_mn": (1, 2), "use_2cta_instrs": False},
    {"mma_tiler_mn": (256, 128), "cluster_shape_mn": (2, 1), "use_2cta_instrs": True},
)
# --8<-- [end:configs]
DATA_DISTRIBUTION = (
    f"A and B standard normal, quantized to e4m3 with fp32 scales amax / {E4M3_MAX:g} per 1 x {SCALE_BLOCK} "
    f"(A) and {SCALE_BLOCK} x {SCALE_BLOCK} (B) blocks; the reference multiplies the dequantized values"
)


def quantize_blocks(x: torch.Tensor, block_rows: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``x`` (rows, K) as e4m3 values and fp32 scales (ceil(rows / block_rows), K / 128), one per block."""
    import torch

    rows, k = x.shape
    row_blocks = -(-rows // block_rows)
    padded = torch.zeros((row_blocks * block_rows, k), device=x.device)
    padded[:rows] = x
    blocks = padded.reshape(row_blocks, block_rows, k // SCALE_BLOCK, SCALE_BLOCK)
    scale = (blocks.abs().amax(dim=(1, 3), keepdim=True) / E4M3_MAX).clamp(min=1e-12)
    q = (blocks / scale).to(torch.float8_e4m3fn).reshape(row_blocks * block_rows, k)[:rows]
    return q, scale.reshape(row_blocks, k // SCALE_BLOCK)


def dequantize_blocks(q: torch.Tensor, scale: torch.Tensor, block_rows: int) -> torch.Tensor:
    """The fp32 values of :func:`quantize_blocks`' output."""
    expanded = scale.repeat_interleave(block_rows, dim=0)[: q.shape[0]].repeat_interleave(SCALE_BLOCK, dim=1)
    return q.float() * expanded


def check_blockwise_shape(shape: Shape, kernel: str) -> None:
    """K in whole scale blocks; N in whole 16-byte rows of C."""
    if shape["k"] % SCALE_BLOCK:
        raise UnsupportedShapeError(
            f"{kernel} needs --k (={shape['k']}) to be a multiple of {SCALE_BLOCK} (one scale per 128 of K); pad K"
        )
    if shape["n"] % 8:
        raise UnsupportedShapeError(
            f"{kernel} needs --n (={shape['n']}) to be a multiple of 8 (16-byte rows of C)"
        )


def fake_scales() -> tuple[Any, Any]:
    """SFA and SFB typed as the examples' ``run()`` marks them: SFA M-major, SFB K-major, fp32."""
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.runtime import make_fake_tensor

    dims = tuple(cute.sym_int() for _ in range(3))
    sfa = make_fake_tensor(cutlass.Float32, dims, (1, cute.sym_int64(), cute.sym_int64()), assumed_align=16)
    return sfa, fake_batched(cutlass.Float32)


def sfa_operand(sfa: Any) -> Any:
    """SFA as the examples pass it: (M, K/128, L=1), M-major, from our row-major (M, K/128) scales."""
    from cutlass.cute.runtime import from_dlpack

    return from_dlpack(sfa.T.contiguous().T.unsqueeze(-1), assumed_align=16).mark_layout_dynamic(
        leading_dim=0
    )


def stacked(t: Any, fp8: bool = False) -> Any:
    """A (rows, cols) matrix, or G of them stacked on a last mode, as the (rows, cols, L) operand the
    examples pass: cols contiguous, batch stride rows x cols; e4m3 travels as uint8 storage."""
    import cutlass
    import torch
    from cutlass.cute.runtime import from_dlpack

    if t.dim() == 2:
        t = t.unsqueeze(-1)
    planes = t.permute(2, 0, 1).contiguous()
    tensor = from_dlpack((planes.view(torch.uint8) if fp8 else planes).permute(1, 2, 0), assumed_align=16)
    if fp8:
        tensor.element_type = cutlass.Float8E4M3FN
    return tensor.mark_layout_dynamic(leading_dim=1)


def fake_operands() -> tuple[Any, ...]:
    """(a, b, c, sfa, sfb), tensor-free: e4m3 A and B, bf16 C, all dynamic, 16-byte aligned."""
    import cutlass

    return (fake_batched(cutlass.Float8E4M3FN), fake_batched(cutlass.Float8E4M3FN), fake_batched(cutlass.BFloat16),
            *fake_scales())  # fmt: skip


def operands(inputs: Any, outputs: Any) -> tuple[Any, ...]:
    """(a, b, c, sfa, sfb) from real tensors (B and SFB may stack one matrix per group on a last mode)."""
    return (
        stacked(inputs["a"], fp8=True),
        stacked(inputs["b"], fp8=True),
        stacked(outputs["c"]),
        sfa_operand(inputs["sfa"]),
        stacked(inputs["sfb"]),
    )


__all__ = [
    "CONFIGS",
    "DATA_DISTRIBUTION",
    "E4M3_MAX",
    "EXAMPLES_DIR",
    "SCALE_BLOCK",
    "check_blockwise_shape",
    "dequantize_blocks",
    "fake_operands",
    "operands",
    "quantize_blocks",
    "sfa_operand",
    "stacked",
]
