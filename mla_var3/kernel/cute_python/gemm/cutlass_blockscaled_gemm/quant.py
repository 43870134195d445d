"""Block-scaled operands in torch: quantize, dequantize, and the scale-factor atom layout of SM100.

A block-scaled operand X (rows x K) is stored as narrow elements Q (fp4 e2m1 or fp8 e4m3) and one
scale factor per ``vec`` consecutive elements along K (e8m0, a power of two, or e4m3); X = Q * SF.
The formats, named as the examples' comments name them: MXF8 (e4m3 elements, e8m0 scales per 32),
MXF4 (e2m1, e8m0 per 32, or per 16 as in the block-scaled examples' docstring command) and NVF4
(e2m1, e4m3 scales per 16). The
tcgen05 block-scaled MMA reads the scale factors from TMEM in a fixed atom: 128 rows x 4 scale
columns, stored so that the 4 K-scales of a row are contiguous, then 4 groups of 32 rows, then 32
rows, then the K atoms, then the row atoms (CUTLASS's ``tile_atom_to_shape_SF``; the examples
convert with ``cvt_sf_MKL_to_M32x4xrm_K4xrk_L``). :func:`sf_to_atoms` and :func:`sf_from_atoms`
are that permutation and its inverse. Everything here runs on any torch device (tests use the CPU).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

SF_ATOM_ROWS = 128  # 4 x 32 rows per scale-factor atom
SF_ATOM_K = 4  # scale factors per row in one atom
# The non-negative e2m1 values in code order (codes 0..7; bit 3 is the sign).
E2M1_VALUES = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)


@dataclass(frozen=True)
class BlockScaledFormat:
    """Element type, scale type and scale vector length of one block-scaled format."""

    name: str  # nvf4, mxf4, mxf8
    element: str  # cutlass dtype name of A and B
    scale: str  # cutlass dtype name of the scale factors
    vec: int  # elements per scale factor along K
    max_value: float  # largest finite element value
    bits: int  # element width

    @property
    def torch_scale(self) -> torch.dtype:
        import torch

        return torch.float8_e8m0fnu if self.scale == "Float8E8M0FNU" else torch.float8_e4m3fn

    def cute_types(self) -> tuple[object, object]:
        import cutlass

        return getattr(cutlass, self.element), getattr(cutlass, self.scale)


FORMATS = {
    f.name: f
    for f in (
        BlockScaledFormat("mxf4_v16", "Float4E2M1FN", "Float8E8M0FNU", 16, 6.0, 4),
        BlockScaledFormat("mxf4", "Float4E2M1FN", "Float8E8M0FNU", 32, 6.0, 4),
        BlockScaledFormat("nvf4", "Float4E2M1FN", "Float8E4M3FN", 16, 6.0, 4),
        BlockScaledFormat("mxf8", "Float8E4M3FN", "Float8E8M0FNU", 32, 448.0, 8),
    )
}


def quantize(x: torch.Tensor, fmt: BlockScaledFormat) -> tuple[torch.Tensor, torch.Tensor]:
    """``x`` (rows, K; K a multiple of ``fmt.vec``) as (elements, scales (rows, K / vec) in fp32).

    Each block's scale brings its largest magnitude to the format's largest value: rounded up to a
    power of two for e8m0 scales, rounded to e4m3 for e4m3 ones. fp4 elements come back as their
    codes (uint8, one per element), fp8 ones as ``torch.float8_e4m3fn``.
    """
    import torch

    rows, k = x.shape
    blocks = x.float().reshape(rows, k // fmt.vec, fmt.vec)
    amax = blocks.abs().amax(dim=-1, keepdim=True)
    if fmt.scale == "Float8E8M0FNU":
        scale = torch.exp2(torch.ceil(torch.log2(amax / fmt.max_value)))
    else:
        scale = (amax / fmt.max_value).to(torch.float8_e4m3fn).float()
    scale = scale.where(scale > 0, torch.ones_like(scale))
    scaled = (blocks / scale).reshape(rows, k)
    q = _e2m1_codes(scaled) if fmt.bits == 4 else scaled.to(torch.float8_e4m3fn)
    return q, scale.reshape(rows, k // fmt.vec)


def dequantize(q: torch.Tensor, scales: torch.Tensor, fmt: BlockScaledFormat) -> torch.Tensor:
    """The fp32 values of :func:`quantize`'s output."""
    import torch

    if fmt.bits == 4:
        codes = q.long()
        elements = torch.tensor(E2M1_VALUES, device=q.device)[codes & 7] * (1 - 2 * (codes >> 3))
    else:
        elements = q.float()
    return elements * scales.float().repeat_interleave(fmt.vec, dim=1)


def sf_to_atoms(scales: torch.Tensor) -> torch.Tensor:
    """Scales (rows, K / vec) padded to whole atoms, in the MMA's atom order, contiguous."""
    import torch

    rows, sf_k = scales.shape
    rm, rk = -(-rows // SF_ATOM_ROWS), -(-sf_k // SF_ATOM_K)
    padded = torch.ones((rm * SF_ATOM_ROWS, rk * SF_ATOM_K), dtype=scales.dtype, device=scales.device)
    padded[:rows, :sf_k] = scales
    # row = rm*128 + m4*32 + m32, col = rk*4 + k4  ->  memory order (rm, rk, m32, m4, k4)
    atoms = padded.reshape(rm, 4, 32, rk, SF_ATOM_K).permute(0, 3, 2, 1, 4)
    return atoms.contiguous()


def sf_from_atoms(atoms: torch.Tensor, rows: int, sf_k: int) -> torch.Tensor:
    """The inverse of :func:`sf_to_atoms`: scales (rows, K / vec)."""
    rm, rk = atoms.shape[0], atoms.shape[1]
    return atoms.permute(0, 3, 2, 1, 4).reshape(rm * SF_ATOM_ROWS, rk * SF_ATOM_K)[:rows, :sf_k]


def _e2m1_codes(x: torch.Tensor) -> torch.Tensor:
    """Round to the nearest e2m1 value (ties to the lower magnitude) and return 4-bit codes."""
    import torch

    values = torch.tensor(E2M1_VALUES, device=x.device)
    magnitude = x.abs().clamp(max=E2M1_VALUES[-1])
    index = torch.bucketize(magnitude, (values[1:] + values[:-1]) / 2)
    return (index | ((x < 0).long() << 3)).to(torch.uint8)


__all__ = [
    "E2M1_VALUES",
    "FORMATS",
    "SF_ATOM_K",
    "SF_ATOM_ROWS",
    "BlockScaledFormat",
    "dequantize",
    "quantize",
    "sf_from_atoms",
    "sf_to_atoms",
]
