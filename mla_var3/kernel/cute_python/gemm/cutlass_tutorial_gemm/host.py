"""The ``@cute.jit`` adapter between our ``CuteKernel`` and a tutorial's ``host_function``.

``CuteKernel`` calls its host function with the CUDA stream as the last argument. The tutorials up
to ``fp16_gemm_5.py`` take ``(a, b, c)`` plus compile-time constants (the persistent ones take
``max_active_clusters``) and launch on the default stream; this wrapper drops the stream and
passes the constants. Calling one ``@cute.jit`` function from another traces it inline: the cubin
is byte-identical to compiling the tutorial's ``host_function`` directly (checked for
``fp16_gemm_1.py``). Imported only inside ``plan()``: it needs the CuTe DSL.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import cuda.bindings.driver as cuda
import cutlass.cute as cute


class DefaultStreamHost:
    """``host_function(a, b, c, *constants)`` called as ``(a, b, c, stream)``; the stream is unused."""

    def __init__(self, host_function: Callable[..., Any], constants: tuple[int, ...] = ()) -> None:
        self.host_function = host_function
        self.constants = constants

    @cute.jit
    def __call__(self, a: cute.Tensor, b: cute.Tensor, c: cute.Tensor, stream: cuda.CUstream) -> None:
        self.host_function(a, b, c, *self.constants)


__all__ = ["DefaultStreamHost"]
