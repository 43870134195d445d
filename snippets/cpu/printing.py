"""``cute.printf`` formats and ``cute.print_tensor``, run on the CPU.

The debugging page's printing section runs ``formats``: a host-only ``@cute.jit`` function (it
launches no kernel) compiled once and called with real values and a NumPy array wrapped by
``from_dlpack``, so its run-time output is printed by this machine.
"""

from __future__ import annotations

import cutlass
import cutlass.cute as cute
import numpy as np
from cutlass.cute.runtime import from_dlpack

from mla_var3.knowledge.expected import expect


# --8<-- [start:formats]
@cute.jit
def print_formats(n: cutlass.Int32, x: cutlass.Float32, t: cute.Tensor):
    cute.printf("braces:  n = {}, x = {}", n, x)  # the DSL picks the format from the type
    cute.printf("C style: n = %d, x = %.3f", n, x)  # or write printf's own conversions
    cute.printf("layout:  {}", t.layout)  # layouts and shapes print like Python's print does
    cute.printf("shape:   {}", t.shape)
    cute.print_tensor(t)  # the elements, with the tensor's pointer and layout


values = np.arange(6, dtype=np.float32).reshape(2, 3)  # host memory: the function runs on the CPU
# --8<-- [end:formats]


@expect(prints="C style: n = 7, x = 2.500")
def formats() -> None:
    t = from_dlpack(values)
    compiled = cute.compile(print_formats, cutlass.Int32(0), cutlass.Float32(0.0), t)
    compiled(cutlass.Int32(7), cutlass.Float32(2.5), t)
