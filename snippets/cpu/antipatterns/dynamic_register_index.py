"""A register array indexed by a run-time value: the array moves to local memory.

A thread fills a 16-element ``make_rmem_tensor`` and reads it back in another order. With
``cutlass.range(..., unroll=1)`` (or a partial ``unroll=4``) the index is a loop counter known only on
the GPU, and registers cannot be addressed by a run-time index, so the array lives in local memory
(``STL``/``LDL``); with ``cutlass.range_constexpr`` (or ``cutlass.range(..., unroll_full=True)``) every
index is a constant and the array stays in registers. Compiled for sm_90a on the CPU: SASS, and the
cubin's registers, stack frame and spill bytes per thread.
"""

from __future__ import annotations

import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import make_fake_compact_tensor

from mla_var3.analysis.resources import resource_usage
from mla_var3.knowledge.expected import expect
from snippets.cpu.antipatterns.remarks import compile_with_remarks, headline
from snippets.cpu.dsl_tools import compile_for, opcode_count, sass_counts

N = 16


# --8<-- [start:kernels]
@cute.kernel
def reverse_dot_runtime_index(t: cute.Tensor, unroll: cutlass.Constexpr):
    frag = cute.make_rmem_tensor((N,), cutlass.Float32)
    for i in cutlass.range(N, unroll=unroll):  # BAD: i is a run-time value in the loop body
        frag[i] = t[i] * 2.0
    acc = cutlass.Float32(0)
    for i in cutlass.range(N, unroll=unroll):
        acc += frag[i] * frag[N - 1 - i]
    t[0] = acc


@cute.kernel
def reverse_dot_static_index(t: cute.Tensor):
    frag = cute.make_rmem_tensor((N,), cutlass.Float32)
    for i in cutlass.range_constexpr(N):  # FIXED: i is a Python int, every index a constant
        frag[i] = t[i] * 2.0
    acc = cutlass.Float32(0)
    for i in cutlass.range(N, unroll_full=True):  # also fixed: the DSL unrolls it, indices fold
        acc += frag[i] * frag[N - 1 - i]
    t[0] = acc
# --8<-- [end:kernels]


@cute.jit
def launch(t: cute.Tensor, kernel: cutlass.Constexpr, unroll: cutlass.Constexpr):
    args = (t, unroll) if cutlass.const_expr(unroll) else (t,)  # unroll = 0: the static kernel
    kernel(*args).launch(grid=[1, 1, 1], block=[32, 1, 1])


FORMS = (
    ("range(N, unroll=1)", reverse_dot_runtime_index, 1),
    ("range(N, unroll=4)", reverse_dot_runtime_index, 4),
    ("range_constexpr / unroll_full", reverse_dot_static_index, 0),
)


def local_memory(kernel: object, unroll: int, arch: str = "sm_90a") -> dict[str, int]:
    """SASS counts (``STL``, ``LDL``, ``FFMA``) and the cubin's per-thread resources of ``kernel`` for ``arch``."""
    t = make_fake_compact_tensor(cutlass.Float32, (64,), assumed_align=16)
    compiled = compile_for(launch, t, kernel, unroll, arch=arch)
    sass = sass_counts(compiled)
    (resources,) = resource_usage(compiled.artifacts.CUBIN)
    counts = {op: opcode_count(sass, op) for op in ("STL", "LDL", "FFMA")}
    return counts | {"registers": resources.registers, "stack": resources.stack_bytes, "spill": resources.local_bytes}


@expect(prints="range(N, unroll=1): 1 STL, 2 LDL; stack frame 80 B, spills 0 B, 9 registers per thread\n"
               "range(N, unroll=4): 1 STL, 2 LDL; stack frame 80 B, spills 0 B, 15 registers per thread\n"
               "range_constexpr / unroll_full: 0 STL, 0 LDL; stack frame 0 B, spills 0 B, 24 registers per thread")  # fmt: skip
def symptom() -> None:
    for label, kernel, unroll in FORMS:
        r = local_memory(kernel, unroll)
        print(f"{label}: {r['STL']} STL, {r['LDL']} LDL; stack frame {r['stack']} B, spills {r['spill']} B, "
              f"{r['registers']} registers per thread")  # fmt: skip


@expect(prints="ptxas detected local memory usage")
def remark() -> None:
    """What ``remarks{ptx}`` says about the run-time-indexed form, and where it points."""
    t = make_fake_compact_tensor(cutlass.Float32, (64,), assumed_align=16)
    print(headline(compile_with_remarks(launch, t, reverse_dot_runtime_index, 1)[1]))
