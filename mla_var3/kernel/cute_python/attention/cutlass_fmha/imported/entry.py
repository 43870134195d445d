"""The ``@cute.jit`` entry the ``cutlass_fmha_sm100`` plan compiles: CUTLASS's FMHA with the stream last.

``CuteKernel`` appends the stream as the last argument; the example's ``__call__`` takes
``use_pdl`` after it (``fmha.py:366-387``). This wrapper calls it with PDL off and every optional
input off (no variable lengths, LSE, attention sink, skip-softmax threshold or counters, no
left window). The DSL inlines the call, so the device kernel is the example's own. (No
``from __future__ import annotations`` here: the DSL reads these annotations as types.)
"""

from typing import Optional, Tuple  # noqa: UP035 - the DSL reads the example's own annotation style

import cuda.bindings.driver as cuda
import cutlass.cute as cute
from cutlass import Float32, Int32

ProblemSize = Tuple[Int32, Int32, Int32, Int32, Int32, Int32, Int32, Int32]  # noqa: UP006


class FmhaEntry:
    """Holds one ``BlackwellFusedMultiHeadAttentionForward`` and forwards to it."""

    def __init__(self, fmha: object) -> None:
        self.fmha = fmha

    @cute.jit
    def __call__(
        self,
        q: cute.Tensor,
        k: cute.Tensor,
        v: cute.Tensor,
        o: cute.Tensor,
        problem_size: ProblemSize,
        scale_softmax_log2: Float32,
        scale_softmax: Float32,
        scale_output: Float32,
        window_size_right: Optional[Int32],  # noqa: UP045
        stream: cuda.CUstream,
    ):
        self.fmha(
            q, k, v, o, problem_size,
            None, None, None, None,  # cum_seqlen_q, cum_seqlen_k, lse, sink
            scale_softmax_log2, scale_softmax, scale_output,
            None, None, window_size_right,  # skip-softmax threshold, left and right window
            None, None,  # skip-softmax counters
            stream, False,  # use_pdl
        )  # fmt: skip


__all__ = ["FmhaEntry"]
