"""FMA contraction in the online-softmax rescale: ``exp2(old*c - new*c)`` is not 1 when ``old == new``.

The rescale factor of a row is ``exp2((old_max - new_max) * c)`` with ``c = log2(e) / sqrt(d)``. A
kernel that wants to skip the rescale when no row max moved (factor exactly 1) needs that factor to
be exactly 1 then. Written ``old * c - new * c``, the PTX has two ``mul.f32`` and a ``sub.f32`` and
ptxas contracts one product with the subtraction into an ``FFMA``: it computes ``old * c`` exactly
minus the *rounded* ``new * c``, so ``old == new`` leaves the rounding error of that product. Written
``(old - new) * c``, the argument is ``0 * c = 0``. ``sass_table`` compiles both for sm_90a on the CPU
(the contracted one with and without ``fastmath`` on the exponential); ``residuals`` replays the FFMA
exactly in numpy (a float32 product is exact in float64).
"""

from __future__ import annotations

import math

import cutlass
import cutlass.cute as cute
import numpy as np
from cutlass.cute.runtime import make_fake_compact_tensor

from mla_var3.knowledge.expected import expect
from snippets.cpu.dsl_tools import compile_for, opcode_count, sass_counts

HEAD_DIM = 128
SCALE_LOG2 = math.log2(math.e) / math.sqrt(HEAD_DIM)


# --8<-- [start:factor]
@cute.kernel
def rescale_factor(rows: cute.Tensor, c: cutlass.Float32, difference_first: cutlass.Constexpr,
                   fastmath: cutlass.Constexpr):  # fmt: skip
    old_max, new_max = rows[0], rows[1]
    if cutlass.const_expr(difference_first):
        rows[2] = cute.math.exp2((old_max - new_max) * c, fastmath=fastmath)  # FIXED: exp2(0) when unmoved
    else:
        rows[2] = cute.math.exp2(old_max * c - new_max * c, fastmath=fastmath)  # BAD: contracted into an FFMA
# --8<-- [end:factor]


@cute.jit
def launch(rows: cute.Tensor, c: cutlass.Float32, difference_first: cutlass.Constexpr, fastmath: cutlass.Constexpr):
    rescale_factor(rows, c, difference_first, fastmath).launch(grid=[1, 1, 1], block=[32, 1, 1])


def arithmetic(difference_first: bool, fastmath: bool = True, arch: str = "sm_90a") -> tuple[str, str]:
    """(the PTX arithmetic before ``ex2``, the SASS float arithmetic) of one form, compiled for ``arch``."""
    rows = make_fake_compact_tensor(cutlass.Float32, (4,), assumed_align=16)
    scale = cutlass.Float32(SCALE_LOG2)
    compiled = compile_for(launch, rows, scale, difference_first, fastmath, arch=arch, options="--keep-ptx")
    ptx = [line.split()[0] for line in compiled.artifacts.PTX.splitlines() if line.strip().startswith(("mul.f32", "sub.f32", "fma"))]
    sass = sass_counts(compiled)
    return " ".join(ptx), ", ".join(f"{op} ×{opcode_count(sass, op)}" for op in ("FMUL", "FADD", "FFMA") if opcode_count(sass, op))


def sass_table() -> str:
    """A Markdown table: what each form is in PTX and what ptxas made of it."""
    rows = ["| written as | `fastmath` | PTX arithmetic | SASS |", "|---|---|---|---|"]
    forms = (("`exp2(old * c - new * c)`", False, True), ("`exp2(old * c - new * c)`", False, False),
             ("`exp2((old - new) * c)`", True, True))  # fmt: skip
    for label, difference_first, fastmath in forms:
        ptx, sass = arithmetic(difference_first, fastmath)
        rows.append(f"| {label} | {fastmath} | `{ptx}` | {sass} |")
    return "\n".join(rows)


# --8<-- [start:replay]
def residuals(samples: int = 100_000, seed: int = 0) -> tuple[int, int, float]:
    """Row maxima m drawn from randn scores; with old = new = m, what the contracted form computes.

    ``FFMA(old, c, -round(new * c))`` is exact before its one rounding, and the rounding error of a
    float32 product is a float32 (it fits in 24 bits), so float64 replays it exactly.
    Returns (nonzero arguments, factors exp2(argument) != 1 in float32, largest |argument|)."""
    m = (np.random.default_rng(seed).standard_normal(samples) * 4).astype(np.float32)
    c = np.float32(SCALE_LOG2)
    rounded = (m * c).astype(np.float32)  # the FMUL
    argument = (m.astype(np.float64) * np.float64(c) - rounded).astype(np.float32)  # the FFMA
    factor = np.exp2(argument)
    return int(np.count_nonzero(argument)), int(np.count_nonzero(factor != np.float32(1))), float(np.abs(argument).max())
# --8<-- [end:replay]


@expect(prints="old * c - new * c: FMUL ×1, FFMA ×1\n(old - new) * c: FMUL ×1, FADD ×1")
def symptom() -> None:
    for label, difference_first in (("old * c - new * c", False), ("(old - new) * c", True)):
        print(f"{label}: {arithmetic(difference_first)[1]}")
    nonzero, not_one, largest = residuals()
    print(f"old = new = m for 100000 maxima m: the contracted argument is nonzero for {nonzero}, "
          f"exp2 of it differs from 1 for {not_one} (largest |argument| {largest:.3g}); "
          f"(old - new) * c is 0 for all of them")  # fmt: skip
