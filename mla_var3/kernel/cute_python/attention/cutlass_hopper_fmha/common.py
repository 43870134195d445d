"""Adapters the imported attention examples share: 5-D head views, the LSE reference, pre-launch fills.

CUTLASS's Hopper ``fmha.py`` and Blackwell ``fmha_bwd.py`` take every ``(batch, seq, heads, d)``
operand as a 5-D tensor ``(seq, d, h_r, h_k, batch)``: the query heads split into ``h_k`` groups of
``h_r`` (grouped-query attention), ``d`` contiguous. :func:`as_heads_5d` views our row-major
``(b, s, h, d)`` tensors that way without a copy (the permute their ``run()`` applies to
``(b, s, h_k, h_r, d)`` tensors), and :func:`fake_heads_5d` is the tensor-free stand-in the plans
compile against: every extent and stride dynamic, the unit stride of ``d`` static, optionally the
divisibility ``fmha_bwd.py``'s ``mark_compact_shape_dynamic`` adds.

:func:`attention_with_lse` is the fp32 forward reference with the natural-log log-sum-exp both
examples use. :class:`PreparedLaunchKernel` runs a fill before every launch, inside the timed
region, for examples whose workspaces must start in a given state (``fmha_bwd.py`` accumulates dQ
with TMA reduce-adds into a zeroed buffer; the mixed-input decode takes a running maximum with
atomics over a buffer that must start at ``-inf``).

:func:`example_compile_context` is what every imported attention plan compiles under. It hides
our CLI's flags from the DSL: each ``cute.compile`` parses ``sys.argv`` for ``-diagnostic`` with
``argparse.parse_known_args``, and argparse reads our ``--h 16`` as an abbreviation of ``--help``,
prints the DSL's usage and exits with status 0 before anything compiles. It also stubs
``HardwareInfo`` where an example sizes a persistent grid while tracing.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

from mla_var3.kernel.backends import Compiled
from mla_var3.kernel.cute_python.attention.example_kernel import ExampleKernel, hardware_info_stub
from mla_var3.kernel.plan import Tensors

if TYPE_CHECKING:
    import torch

HEADS_5D = (1, 4, 3, 2, 0)  # (b, s, h_k, h_r, d) -> (s, d, h_r, h_k, b), as the examples' run() permutes


def fake_heads_5d(dtype: Any, align: int = 16, d_divisibility: int = 1) -> Any:
    """A tensor-free ``(s, d, h_r, h_k, b)`` operand typed like :func:`as_heads_5d`'s views."""
    import cutlass.cute as cute
    from cutlass.cute.runtime import make_fake_tensor

    shape = (
        cute.sym_int(),
        cute.sym_int(divisibility=d_divisibility),
        cute.sym_int(),
        cute.sym_int(),
        cute.sym_int(),
    )
    div = d_divisibility
    stride = (cute.sym_int64(divisibility=div), 1, *(cute.sym_int64(divisibility=div) for _ in range(3)))
    return make_fake_tensor(dtype, shape, stride, assumed_align=align)


def as_heads_5d(t: torch.Tensor, kv_heads: int, align: int = 16, d_divisibility: int = 1) -> Any:
    """``(b, seq, heads, d)`` (or ``(b, seq, heads)`` with a unit ``d``) as the examples' 5-D view, marked dynamic."""
    from cutlass.cute.runtime import from_dlpack

    b, seq, heads = t.shape[:3]
    d = t.shape[3] if t.dim() == 4 else 1
    view = t.view(b, seq, kv_heads, heads // kv_heads, d).permute(*HEADS_5D)
    tensor = from_dlpack(view, assumed_align=align).mark_layout_dynamic(leading_dim=1)
    if d_divisibility > 1:
        tensor = tensor.mark_compact_shape_dynamic(
            mode=1, stride_order=view.dim_order(), divisibility=d_divisibility
        )
    return tensor


def attention_with_lse(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    causal: bool,
    scale: float | None = None,
    diagonal: int = 0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """fp32 attention of ``(b, s, h, d)`` inputs (GQA over ``k, v (b, t, h_k, d)``) and its log-sum-exp
    ``(b, s, h)``: ``ln sum_j exp(scale * q_i . k_j)``, TF32 off. Causal: query ``i`` sees keys
    ``0..i + diagonal`` (0: aligned top-left; ``t - s``: bottom-right)."""
    import torch

    b, s, h, d = q.shape
    t, hk = k.shape[1], k.shape[2]
    scale = 1.0 / math.sqrt(d) if scale is None else scale
    out = torch.empty((b, s, h, d), dtype=torch.float32, device=q.device)
    lse = torch.empty((b, s, h), dtype=torch.float32, device=q.device)
    saved = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        for i in range(b):
            kv = [x[i].float().transpose(0, 1).repeat_interleave(h // hk, dim=0) for x in (k, v)]  # (h, t, d)
            scores = (q[i].float().transpose(0, 1) @ kv[0].transpose(1, 2)) * scale  # (h, s, t)
            if causal:
                hidden = (
                    torch.arange(t, device=q.device)[None, :]
                    > torch.arange(s, device=q.device)[:, None] + diagonal
                )
                scores = scores.masked_fill(hidden, float("-inf"))
            row_lse = torch.logsumexp(scores, dim=-1)  # (h, s)
            out[i] = (torch.exp(scores - row_lse[..., None]) @ kv[1]).transpose(0, 1)
            lse[i] = row_lse.transpose(0, 1)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = saved
    return out, lse


@dataclass
class PreparedLaunchKernel(ExampleKernel):
    """An :class:`ExampleKernel` whose every launch is preceded by ``before_launch(inputs, outputs)``."""

    before_launch: Callable[[Tensors, Tensors], None] | None = None

    def bind(self, compiled: Compiled, inputs: Tensors, outputs: Tensors) -> Callable[[], None]:
        run = super().bind(compiled, inputs, outputs)
        prepare = self.before_launch
        if prepare is None:
            return run

        def prepare_and_run() -> None:
            prepare(inputs, outputs)
            run()

        return prepare_and_run


@contextmanager
def dsl_argv_shield() -> Iterator[None]:
    """``sys.argv`` cut to the program name while the DSL compiles (see the module docstring)."""
    saved = sys.argv
    sys.argv = saved[:1]
    try:
        yield
    finally:
        sys.argv = saved


def example_compile_context(helpers: ModuleType | None = None, sm_count: int = 0) -> Callable[[], Any]:
    """A ``compile_context`` for :class:`ExampleKernel`: the argv shield, and when ``helpers`` is
    given, its ``HardwareInfo`` answering ``sm_count`` SMs."""

    @contextmanager
    def context() -> Iterator[None]:
        with ExitStack() as stack:
            stack.enter_context(dsl_argv_shield())
            if helpers is not None:
                stack.enter_context(hardware_info_stub(helpers, sm_count))
            yield

    return context


def sm_count_for_trace(default: int) -> int:
    """The SM count a persistent example should size its grid for: this machine's GPU, else ``default``."""
    try:
        import torch

        if torch.cuda.is_available():
            return int(torch.cuda.get_device_properties(0).multi_processor_count)
    except ImportError:  # the light docs environment has no torch
        pass
    return default


__all__ = [
    "HEADS_5D",
    "PreparedLaunchKernel",
    "as_heads_5d",
    "attention_with_lse",
    "dsl_argv_shield",
    "example_compile_context",
    "fake_heads_5d",
    "sm_count_for_trace",
]
