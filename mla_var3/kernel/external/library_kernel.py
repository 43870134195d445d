"""``LibraryKernel``: a backend kernel for a prebuilt native library called through ctypes (FlashMLA).

It implements the :class:`~mla_var3.kernel.backends.Kernel` protocol. ``compile`` only loads the
library (nothing is compiled per shape: the library was built ahead of time for its one arch);
``bind`` does the per-input-set host work once -- for FlashMLA, its scheduler metadata and the
argument struct -- and returns the launch that timing loops call.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from mla_var3.kernel.arch import Arch
from mla_var3.kernel.backends import Compiled
from mla_var3.kernel.plan import Shape, Tensors


@dataclass
class LibraryKernel:
    """``load()`` returns the library handle; ``bind_fn(handle, inputs, outputs)`` returns a no-argument launch."""

    load: Callable[[], Any]
    bind_fn: Callable[[Any, Tensors, Tensors], Callable[[], None]]
    backend: ClassVar[str] = "library"

    def compile(self, shape: Shape, arch: Arch) -> Compiled:
        start = time.perf_counter()
        handle = self.load()
        return Compiled(fn=handle, arch=arch.name, cubin=None, compile_s=time.perf_counter() - start)

    def launch(self, compiled: Compiled, inputs: Tensors, outputs: Tensors) -> None:
        self.bind(compiled, inputs, outputs)()

    def bind(self, compiled: Compiled, inputs: Tensors, outputs: Tensors) -> Callable[[], None]:
        return self.bind_fn(compiled.fn, inputs, outputs)
