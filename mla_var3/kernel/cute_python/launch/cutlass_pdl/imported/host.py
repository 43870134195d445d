"""The ``@cute.jit`` host that launches the PDL tutorial's two dependent kernels back to back.

The tutorial compiles ``elementwise_add`` twice (``is_first_kernel`` is a compile-time constant) and
calls the two compiled functions one after the other from Python. Here one host function traces
both calls (a ``@cute.jit`` function called from another is traced inline), so one compile yields
one cubin holding both kernels and one launch runs the pair on one stream, with no Python between
the two launches. Imported only inside ``plan()``: it needs the CuTe DSL.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import cuda.bindings.driver as cuda
import cutlass.cute as cute


class DependentAdds:
    """``w = u + v`` then ``y = w + x`` with the tutorial's ``elementwise_add``, PDL on or off."""

    def __init__(self, elementwise_add: Callable[..., Any], use_pdl: bool) -> None:
        self.elementwise_add = elementwise_add
        self.use_pdl = use_pdl

    @cute.jit
    def __call__(
        self,
        u: cute.Tensor,
        v: cute.Tensor,
        w: cute.Tensor,
        x: cute.Tensor,
        y: cute.Tensor,
        stream: cuda.CUstream,
    ) -> None:
        self.elementwise_add(
            u, v, w, stream, self.use_pdl, True
        )  # ends with griddepcontrol.launch_dependents
        self.elementwise_add(w, x, y, stream, self.use_pdl, False)  # griddepcontrol.wait before it reads w


__all__ = ["DependentAdds"]
