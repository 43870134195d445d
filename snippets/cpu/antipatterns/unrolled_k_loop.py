"""A K loop written with ``cutlass.range_constexpr`` where a device loop (``cutlass.range``) was meant:
Python runs the loop while tracing, so the kernel holds one copy of the body per K tile -- the SASS
and the compile time grow with K, and K must be a compile-time constant (a new compile per K).

Three kernels compute the same per-thread dot product over ``k_tiles`` tiles of ``VEC`` elements; only
the outer loop differs. ``measure`` compiles each for sm_90a on the CPU at several ``k_tiles`` and
counts the SASS instructions (``nvdisasm``) and the seconds ``cute.compile`` took, on the machine
that runs it. The inner ``range_constexpr(VEC)`` is meant: a fixed, small body unrolled on purpose.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import make_fake_compact_tensor

from snippets.cpu.dsl_tools import compile_for, opcode_count, sass_counts

VEC = 8  # elements of one K tile per thread
THREADS = 128
K_TILES = (4, 16, 64)


# --8<-- [start:loops]
@cute.kernel
def dot_range_constexpr(a: cute.Tensor, b: cute.Tensor, out: cute.Tensor, k_tiles: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    acc = cutlass.Float32(0)
    for k in cutlass.range_constexpr(k_tiles):  # WRONG for a K loop: Python unrolls it while tracing
        for j in cutlass.range_constexpr(VEC):
            acc += a[tidx, k * VEC + j] * b[k * VEC + j]
    out[tidx] = acc


@cute.kernel
def dot_builtin_range(a: cute.Tensor, b: cute.Tensor, out: cute.Tensor, k_tiles: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    acc = cutlass.Float32(0)
    for k in range(k_tiles):  # a device loop; with a constant trip count the compiler may unroll it
        for j in cutlass.range_constexpr(VEC):
            acc += a[tidx, k * VEC + j] * b[k * VEC + j]
    out[tidx] = acc


@cute.kernel
def dot_cutlass_range(a: cute.Tensor, b: cute.Tensor, out: cute.Tensor, k_tiles: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    acc = cutlass.Float32(0)
    for k in cutlass.range(k_tiles, unroll=1):  # FIXED: one device loop, one copy of the body
        for j in cutlass.range_constexpr(VEC):
            acc += a[tidx, k * VEC + j] * b[k * VEC + j]
    out[tidx] = acc
# --8<-- [end:loops]


@cute.jit
def launch(a: cute.Tensor, b: cute.Tensor, out: cute.Tensor, kernel: cutlass.Constexpr, k_tiles: cutlass.Constexpr):
    kernel(a, b, out, k_tiles).launch(grid=[1, 1, 1], block=[THREADS, 1, 1])


FORMS = {
    "`cutlass.range_constexpr(k_tiles)`": dot_range_constexpr,
    "`range(k_tiles)`": dot_builtin_range,
    "`cutlass.range(k_tiles, unroll=1)`": dot_cutlass_range,
}


@dataclass(frozen=True)
class Compiled:
    form: str
    k_tiles: int
    instructions: int  # SASS instructions in the cubin
    ffma: int
    branches: int  # BRA, less the branch-to-self every kernel ends with
    seconds: float  # wall time of cute.compile on this machine


def compile_one(form: str, k_tiles: int) -> Compiled:
    a = make_fake_compact_tensor(cutlass.Float32, (THREADS, k_tiles * VEC), assumed_align=16)
    b = make_fake_compact_tensor(cutlass.Float32, (k_tiles * VEC,), assumed_align=16)
    out = make_fake_compact_tensor(cutlass.Float32, (THREADS,), assumed_align=16)
    start = time.perf_counter()
    compiled = compile_for(launch, a, b, out, FORMS[form], k_tiles)
    seconds = time.perf_counter() - start
    sass = sass_counts(compiled)
    return Compiled(form, k_tiles, sum(sass.values()), opcode_count(sass, "FFMA"), opcode_count(sass, "BRA") - 1, seconds)


def measure(k_tiles: tuple[int, ...] = K_TILES) -> list[Compiled]:
    return [compile_one(form, k) for form in FORMS for k in k_tiles]


def table(results: list[Compiled]) -> str:
    rows = ["| outer K loop | K tiles | SASS instructions | `FFMA` | branches | compile s (this build) |",
            "|---|---|---|---|---|---|"]  # fmt: skip
    rows += [f"| {r.form} | {r.k_tiles} | {r.instructions} | {r.ffma} | {r.branches} | {r.seconds:.2f} |" for r in results]
    return "\n".join(rows)
