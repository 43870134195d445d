"""The batched (rows, cols, L) operands CUTLASS's SM100 GEMM examples take, fake and real.

Those examples' ``run()`` build every operand as an (L, rows, cols) torch tensor permuted to
(rows, cols, L), call ``mark_layout_dynamic(leading_dim=1)`` on it and, in several files,
``mark_compact_shape_dynamic(mode=1, stride_order=(2, 0, 1), divisibility=d)``. The type that gives
is ``(?, ?{div=d}, ?):(?{div=d}, 1, ?{div=d})``: every extent and stride dynamic, the row length a
multiple of ``d``. :func:`fake_batched` builds that type without a tensor (for compiling) and
:func:`batched` marks a real 2-D tensor the same way (for launching), so one binary serves every
shape whose rows keep the divisibility. Shared by the block-scaled, mixed-input, epilogue-fusion
and blockwise GEMM plan families.

Sub-byte operands (fp4, int4) travel as the examples' ``cutlass.torch.cute_tensor_like`` makes
them: a uint8 buffer with one byte per element, retyped to the 4-bit element type. A retyped
tensor keeps its element strides, so the packed data (two elements per byte, the first in the
low nibble) fills the first half of the buffer: :func:`pack_nibbles` and :func:`nibble_storage`.
"""

from __future__ import annotations

from typing import Any

# Where the examples' run() put the batch mode: (rows, cols, L) views of (L, rows, cols) tensors.
STRIDE_ORDER = (2, 0, 1)


def fake_batched(dtype: Any, align: int = 16, divisibility: int = 1) -> Any:
    """A tensor-free ``(rows, cols, L)`` operand, cols contiguous and a multiple of ``divisibility``."""
    import cutlass.cute as cute
    from cutlass.cute.runtime import make_fake_tensor

    shape = (cute.sym_int(), cute.sym_int(divisibility=divisibility), cute.sym_int())
    stride = (cute.sym_int64(divisibility=divisibility), 1, cute.sym_int64(divisibility=divisibility))
    return make_fake_tensor(dtype, shape, stride, assumed_align=align)


def batched(t: Any, align: int = 16, divisibility: int = 1, element_type: Any = None) -> Any:
    """A row-major 2-D torch tensor as the same ``(rows, cols, L=1)`` operand (batch stride rows*cols).

    ``element_type`` retypes the elements (fp4 and fp8 operands travel as uint8 storage, as in the
    examples' ``cutlass.torch.cute_tensor_like``).
    """
    from cutlass.cute.runtime import from_dlpack

    tensor = from_dlpack(t.unsqueeze(0).permute(1, 2, 0), assumed_align=align)
    if element_type is not None:
        tensor.element_type = element_type
    tensor = tensor.mark_layout_dynamic(leading_dim=1)
    if divisibility > 1:
        tensor = tensor.mark_compact_shape_dynamic(
            mode=1, stride_order=STRIDE_ORDER, divisibility=divisibility
        )
    return tensor


def pack_nibbles(codes: Any) -> Any:
    """4-bit codes (rows, K), one per uint8, as bytes (rows, K / 2): element 2i in the low nibble of byte i."""
    low, high = codes[:, 0::2] & 15, codes[:, 1::2] & 15
    return low | (high << 4)


def unpack_nibbles(packed: Any) -> Any:
    """The inverse of :func:`pack_nibbles`: codes (rows, K), one per uint8."""
    import torch

    return torch.stack((packed & 15, packed >> 4), dim=-1).reshape(packed.shape[0], -1)


def nibble_storage(packed: Any) -> Any:
    """Packed 4-bit rows (rows, K / 2) at the front of a (rows, K) uint8 buffer (see the module docstring)."""
    import torch

    rows, half_k = packed.shape
    storage = torch.zeros((rows, 2 * half_k), dtype=torch.uint8, device=packed.device)
    storage.view(-1)[: packed.numel()] = packed.reshape(-1)
    return storage


__all__ = ["STRIDE_ORDER", "batched", "fake_batched", "nibble_storage", "pack_nibbles", "unpack_nibbles"]
