"""Tensor helpers shared by plans: dtype maps, fresh random inputs, fake and real CuTe tensors.

A kernel compiled against :func:`fake_tensor` is specialised on the static shape; one compiled
against :func:`fake_dynamic_tensor` serves every shape whose extents have the declared
divisibility, and is launched on tensors from :func:`to_cute_dynamic` with the same marks
(the compiled code is byte-identical to one built from real tensors marked that way).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

_ELEMENT_SIZE = {"float16": 2, "bfloat16": 2, "float32": 4, "float8_e4m3fn": 1}


def element_size(dtype: str) -> int:
    return _ELEMENT_SIZE[dtype]


def torch_dtype(dtype: str) -> torch.dtype:
    import torch

    return getattr(torch, dtype)


def cute_dtype(dtype: str) -> Any:
    import cutlass

    return {
        "float16": cutlass.Float16,
        "bfloat16": cutlass.BFloat16,
        "float32": cutlass.Float32,
        "float8_e4m3fn": cutlass.Float8E4M3FN,
    }[dtype]


def randn(shape: tuple[int, ...], dtype: str, device: str = "cuda") -> torch.Tensor:
    """Fresh standard-normal data (never zeros or small integers: they change power and clocks)."""
    import torch

    return torch.randn(shape, dtype=torch.float32, device=device).to(torch_dtype(dtype))


def fake_tensor(dtype: Any, shape: tuple[int, ...], stride_order: tuple[int, ...] | None = None, align: int = 16) -> Any:
    """A tensor-free stand-in for compiling (row-major unless ``stride_order`` says otherwise)."""
    from cutlass.cute.runtime import make_fake_compact_tensor

    order = stride_order if stride_order is not None else tuple(reversed(range(len(shape))))
    return make_fake_compact_tensor(dtype, shape, stride_order=order, assumed_align=align)


def to_cute(t: torch.Tensor, align: int = 16) -> Any:
    """A real torch tensor as a CuTe tensor for a compiled function."""
    from cutlass.cute.runtime import from_dlpack

    return from_dlpack(t, assumed_align=align)


def fake_dynamic_tensor(dtype: Any, divisibility: tuple[int, ...], align: int = 16) -> Any:
    """A tensor-free row-major tensor with dynamic extents, mode ``i`` a multiple of ``divisibility[i]``."""
    import cutlass.cute as cute
    from cutlass.cute.runtime import make_fake_compact_tensor

    shape = tuple(cute.sym_int(divisibility=d) for d in divisibility)
    order = tuple(reversed(range(len(shape))))
    return make_fake_compact_tensor(dtype, shape, stride_order=order, assumed_align=align)


def to_cute_dynamic(t: torch.Tensor, divisibility: tuple[int, ...], align: int = 16) -> Any:
    """A real row-major torch tensor marked exactly like :func:`fake_dynamic_tensor`."""
    from cutlass.cute.runtime import from_dlpack

    tensor = from_dlpack(t, assumed_align=align)
    order = tuple(range(t.dim()))  # torch's dim_order of a row-major tensor
    for mode, d in enumerate(divisibility):
        tensor = tensor.mark_compact_shape_dynamic(mode=mode, stride_order=order, divisibility=d)
    return tensor
