"""The ``@cute.jit`` adapter between our ``CuteKernel`` and an EFC GEMM's ``__call__``.

``DenseGemmEFC.__call__(a, b, max_active_clusters, stream, supplemental)`` takes the CUDA stream
before the epilogue's packed arguments, and its own ``compile()`` helper wraps the compiled
function in a closure. ``CuteKernel`` appends the stream last, so this adapter takes
``(a, b, supplemental, stream)`` and calls the example's ``__call__``, which traces inline (as
``compile()`` does, the EFC must have analysed the epilogue's arguments first: ``EfcHost.prepare``).
Imported only inside ``plan()``: it needs the CuTe DSL.
"""

from __future__ import annotations

from typing import Any

import cuda.bindings.driver as cuda
import cutlass.cute as cute


class EfcHost:
    """``gemm(a, b, max_active_clusters, stream, supplemental)`` called as ``(a, b, supplemental, stream)``."""

    def __init__(self, gemm: Any, max_active_clusters: int) -> None:
        self.gemm = gemm
        self.max_active_clusters = max_active_clusters

    def prepare(self, supplemental: tuple[Any, ...]) -> tuple[Any, ...]:
        """Let the EFC analyse the epilogue with these argument types; the packed tuple it expects."""
        self.gemm.efc.compile(supplemental)
        return self.gemm.efc.jit.pack_arguments(*supplemental)

    @cute.jit
    def __call__(self, a: cute.Tensor, b: cute.Tensor, supplemental: tuple, stream: cuda.CUstream) -> None:
        self.gemm(a, b, self.max_active_clusters, stream, supplemental)


__all__ = ["EfcHost"]
