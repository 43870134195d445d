"""Plan for ``cutlass_fmha_sm100``: CUTLASS's Blackwell ``fmha.py`` imported from ``CUTLASS_DIR``.

The kernel is NVIDIA's example, loaded at ``plan()`` time by
:func:`~mla_var3.kernel.upstream.load_example` (never copied); this module adapts the dense
attention workload of :mod:`~mla_var3.kernel.cute_python.attention.fmha_workload` to it.
Compile-verified only: no SM100 GPU here.

What the example expects (``examples/python/CuTeDSL/cute/blackwell/kernel/attention/fmha/``
at the pinned commit):

- Tensors ``q, o (b, s, h_k, h_r, d)`` and ``k, v (b, t, h_k, 1, d)``, d contiguous, 32-byte
  aligned, marked dynamic (``fmha.py:3611-3619``, ``:3593-3598``); ``__call__`` rebuilds their
  layouts from ``problem_size`` with a 0 stride over ``h_r`` for K and V (grouped-query
  attention, ``:454-471``). Our ``(b, s, h, d)`` tensors are viewed as such, no copy.
- The mask is a constructor argument chosen the way its ``run()`` chooses it (``:3685-3697``):
  causal is a window mask with right window 0; otherwise a residual mask when ``t`` is not a
  multiple of the 128-row KV tile, else none.
- Persistent grid: ``min(SM count, tiles)`` CTAs, the SM count from ``HardwareInfo`` while
  tracing (``helpers/fmha_helpers.py:189-196``): a B200's 148 here (``hardware_info_stub``).
- Head dimension 32, 64 or 128 for fp16/bf16 (``:3314-3327``); fp32 accumulators only.
- Scales: ``scale_softmax = 1/sqrt(d)`` and its log2 form, output scale 1 (``:3767-3775``).

Configs: the docstring's command (persistent, ``fmha.py:80-84``), then the argparse default
(one CTA per 256-row query tile, ``:4314-4318``).
"""

from __future__ import annotations

import math
from functools import partial
from typing import Any

from mla_var3.kernel.cute_python.attention.example_kernel import ExampleKernel, hardware_info_stub
from mla_var3.kernel.cute_python.attention.fmha_workload import FmhaPlanBase
from mla_var3.kernel.errors import UnsupportedShapeError
from mla_var3.kernel.plan import Config, Shape, Tensors

EXAMPLE = "examples/python/CuTeDSL/cute/blackwell/kernel/attention/fmha/fmha.py"
MMA_TILER_MN = (128, 128)  # the only tile the example supports (fmha.py:104)
HEAD_DIMS = (32, 64, 128)
TENSOR_ALIGN = 32  # bytes, as the example's run() assumes (fmha.py:3597)
LOG2_E = math.log2(math.e)


def _fake_5d(dtype: Any) -> Any:
    """A tensor-free ``(b, seq, h_k, h_r, d)`` operand typed like :func:`_as_5d`'s views."""
    import cutlass.cute as cute
    from cutlass.cute.runtime import make_fake_tensor

    stride = (*(cute.sym_int64() for _ in range(4)), 1)
    return make_fake_tensor(
        dtype, tuple(cute.sym_int() for _ in range(5)), stride, assumed_align=TENSOR_ALIGN
    )


def _as_5d(t: Any, kv_heads: int) -> Any:
    """``(b, seq, heads, d)`` viewed as ``(b, seq, h_k, heads / h_k, d)`` and marked dynamic."""
    from cutlass.cute.runtime import from_dlpack

    b, seq, heads, d = t.shape
    view = t.view(b, seq, kv_heads, heads // kv_heads, d)
    return from_dlpack(view, assumed_align=TENSOR_ALIGN).mark_layout_dynamic(leading_dim=4)


def _problem_size(b: int, s: int, t: int, h: int, hk: int, d: int) -> tuple[int, ...]:
    """``(b, s_q max, s_lse, s_k max, h_q, h_k, d, d_v)`` as the example passes it (``fmha.py:3786-3795``)."""
    return (b, s, s, t, h, hk, d, d)


class CutlassFmhaSm100Plan(FmhaPlanBase):
    name = "cutlass_fmha_sm100"
    description = (
        "CUTLASS's Blackwell fmha.py imported from CUTLASS_DIR: two softmax warpgroups ping-pong on two Q tiles, "
        "P kept in TMEM, K/V in one SMEM ring, TMA-store epilogue (compile-only here)"
    )
    archs = ("sm_100a",)
    backend = "cute"

    @classmethod
    def upstream_example(cls) -> str:
        return EXAMPLE

    def validate_shape(self, shape: Shape) -> None:
        super().validate_shape(shape)
        if shape["d"] not in HEAD_DIMS:
            raise UnsupportedShapeError(
                f"{self.name} needs --d in {', '.join(map(str, HEAD_DIMS))} for 16-bit inputs, got {shape['d']}"
            )

    def _autotune_configs(self) -> list[Config]:
        return [{"is_persistent": True}, {"is_persistent": False}]

    # --8<-- [start:plan]
    def plan(self, config: Config) -> ExampleKernel:
        import cutlass

        from mla_var3.kernel.cute_python.attention.cutlass_fmha.imported.entry import FmhaEntry
        from mla_var3.kernel.tensors import cute_dtype
        from mla_var3.kernel.upstream import load_example

        example = load_example(EXAMPLE)
        masks = example.fmha_utils.MaskEnum
        dtype = cute_dtype(self.dtype)

        def host_for(shape: Shape) -> FmhaEntry:
            if shape["causal"]:
                mask = masks.WINDOW_MASK  # with a right window of 0
            else:
                mask = masks.RESIDUAL_MASK if shape["t"] % MMA_TILER_MN[1] else masks.WINDOW_MASK
            fmha = example.BlackwellFusedMultiHeadAttentionForward(
                cutlass.Float32, cutlass.Float32, MMA_TILER_MN, shape["d"], config["is_persistent"], mask,
                False, False,  # exp2 emulation, skip-correction: the argparse defaults
            )  # fmt: skip
            return FmhaEntry(fmha)

        def scalars(d: int, causal: int) -> tuple[Any, ...]:
            scale = 1.0 / math.sqrt(d)
            return (scale * LOG2_E, scale, 1.0, cutlass.Int32(0) if causal else None)

        def compile_args(shape: Shape) -> tuple[Any, ...]:
            b, s, t, h, hk, d = (shape[k] for k in ("b", "s", "t", "h", "hk", "d"))
            operands = tuple(_fake_5d(dtype) for _ in range(4))
            return (*operands, _problem_size(b, s, t, h, hk, d), *scalars(d, shape["causal"]))

        def launch_args(inputs: Tensors, outputs: Tensors) -> tuple[Any, ...]:
            (b, s, h, d), (t, hk) = inputs["q"].shape, inputs["k"].shape[1:3]
            operands = (
                _as_5d(inputs["q"], hk),
                _as_5d(inputs["k"], hk),
                _as_5d(inputs["v"], hk),
                _as_5d(outputs["o"], hk),
            )
            return (*operands, _problem_size(b, s, t, h, hk, d), *scalars(d, int(inputs["causal"].item())))

        return ExampleKernel(
            host_for=host_for,
            compile_args=compile_args,
            launch_args=launch_args,
            options="--opt-level=2",  # the example's own compile option (fmha.py:3801)
            compile_context=partial(hardware_info_stub, example.fmha_utils),
        )

    # --8<-- [end:plan]


__all__ = ["EXAMPLE", "CutlassFmhaSm100Plan"]
