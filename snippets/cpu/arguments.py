"""Scalars, ``Constexpr`` and tensors as arguments: what a compile is specialized on, and what a printed layout says.

The arguments concept page runs these while it is built. ``show_scalar_kinds`` traces a function with
each kind of scalar argument and prints what the trace saw; ``scalar_calls_table`` calls a host-only
``@cute.jit`` function (it launches nothing, so it runs on the CPU) with new values and records which
calls compiled again and what ``cute.printf`` printed at run time; ``divisibility_table`` compiles a
row copy for sm_90a with a dynamic row length promised divisible by 1, 2 and 8 and counts the width
of its loads; ``show_printed_forms`` prints the objects a learner meets, at trace time.
"""

from __future__ import annotations

import ctypes
import os
import tempfile
from collections.abc import Callable

import cutlass
import cutlass.cute as cute
import torch
from cutlass.base_dsl.common import DSLUserCodeError
from cutlass.cute.runtime import from_dlpack, make_fake_compact_tensor

from mla_var3.knowledge.expected import expect, program_name_only
from snippets.cpu.dsl_tools import compile_for, sass_counts


# --8<-- [start:kinds]
@cute.jit
def scalar_kinds(a: cutlass.Int32, b: int, c, d: cutlass.Constexpr, e: cutlass.Float32, f: bool):
    for name, value in (("a: Int32", a), ("b: int", b), ("c (no annotation)", c), ("d: Constexpr", d),
                        ("e: Float32", e), ("f: bool", f)):  # fmt: skip
        print(f"{name:18} -> {type(value).__name__:8} {value}")


# called as: cute.compile(scalar_kinds, cutlass.Int32(1), 2, 3, 4, 5.0, True)
# --8<-- [end:kinds]


@expect(prints="c (no annotation)  -> Int32    ?")
def show_scalar_kinds() -> None:
    compile_for(scalar_kinds, cutlass.Int32(1), 2, 3, 4, 5.0, True)


# --8<-- [start:calls]
@cute.jit
def report(n: cutlass.Int32, scale: cutlass.Constexpr):
    cute.printf("n = {}, scale = {}", n, scale)  # a host-only function: runs on the CPU


DIRECT_CALLS = (("report(7, 2)", lambda: report(7, 2)),
                ("report(7, 2)", lambda: report(7, 2)),
                ("report(9, 2)", lambda: report(9, 2)),
                ("report(cutlass.Int32(11), 2)", lambda: report(cutlass.Int32(11), 2)),
                ("report(cutlass.Int32(12), 2)", lambda: report(cutlass.Int32(12), 2)),
                ("report(cutlass.Int32(12), 3)", lambda: report(cutlass.Int32(12), 3)))  # fmt: skip

compiled = None  # compiled once, below: cute.compile(report, cutlass.Int32(0), 2)
COMPILED_CALLS = (("compiled(9)", lambda: compiled(9)),
                  ("compiled(cutlass.Int32(10))", lambda: compiled(cutlass.Int32(10))),
                  ("compiled(2.7)", lambda: compiled(2.7)))  # fmt: skip
# --8<-- [end:calls]


def _run_printing(call: Callable[[], object]) -> str:
    """Run ``call`` and return what it printed from C (``cute.printf`` of a host function writes to fd 1)."""
    libc = ctypes.CDLL(None)
    with tempfile.TemporaryFile() as sink, program_name_only():
        libc.fflush(None)
        saved = os.dup(1)
        os.dup2(sink.fileno(), 1)
        try:
            call()
        finally:
            libc.fflush(None)
            os.dup2(saved, 1)
            os.close(saved)
        sink.seek(0)
        return sink.read().decode().strip()


def scalar_calls_table() -> str:
    """Per call of ``report``, direct or compiled: did the DSL's JIT cache get a new entry, and what ran."""
    from cutlass.cutlass_dsl import CuTeDSL

    global compiled
    cache = CuTeDSL._get_dsl().jit_cache
    cache.clear()  # start cold, also when `mkdocs serve` rebuilds in the same process
    rows = ["| call | new compiled entry | `cute.printf` printed |", "|---|---|---|"]
    for name, call in DIRECT_CALLS:
        entries = len(cache)
        printed = _run_printing(call)
        rows.append(f"| `{name}` | {'yes' if len(cache) > entries else 'no (cache hit)'} | `{printed}` |")
    with program_name_only():
        compiled = cute.compile(report, cutlass.Int32(0), 2)
    for name, call in COMPILED_CALLS:
        rows.append(f"| `{name}` | no (the compiled object) | `{_run_printing(call)}` |")
    return "\n".join(rows)


@expect(raises=DSLUserCodeError, message="error[ARG_WORKSPACE_COUNT_MISMATCH]")
def error_constexpr_passed_to_compiled() -> None:
    again = cute.compile(report, cutlass.Int32(0), 2)
    again(cutlass.Int32(9), 2)  # the Constexpr is part of the compiled code, not an argument


@expect(raises=DSLUserCodeError, message="error[ARG_ANNOTATION_MISMATCH]")
def error_int32_into_int_parameter() -> None:
    with program_name_only():
        cute.compile(scalar_kinds, cutlass.Int32(1), cutlass.Int32(2), 3, 4, 5.0, True)  # b: int refuses Int32


_seen: list[str] = []


# --8<-- [start:divisibility]
@cute.kernel
def copy_rows(src: cute.Tensor, dst: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, bidy, _ = cute.arch.block_idx()
    coord = (bidx, bidy * 32 + tidx)  # 8 consecutive elements of row bidx per thread
    cute.local_tile(dst, (1, 8), coord).store(cute.local_tile(src, (1, 8), coord).load())


@cute.jit
def launch_rows(src: cute.Tensor, dst: cute.Tensor):
    _seen.append(str(src.layout))  # the layout the kernel is specialised on
    grid = [src.shape[0], src.shape[1] // 256, 1]  # rows a multiple of 256 long: no tail here
    copy_rows(src, dst).launch(grid=grid, block=[32, 1, 1])


def row_major(divisibility: int) -> cute.Tensor:
    """A fake (rows, n) bf16 tensor, row-major, 16-byte aligned, n promised divisible by ``divisibility``."""
    n = cute.sym_int(divisibility=divisibility)
    return make_fake_compact_tensor(cutlass.BFloat16, (cute.sym_int(), n), stride_order=(1, 0), assumed_align=16)
# --8<-- [end:divisibility]


@expect(raises=RuntimeError, message="is not divisible by the divisibility(8)")
def error_broken_divisibility() -> None:
    rows_of_12 = torch.zeros(4, 12, dtype=torch.bfloat16)
    from_dlpack(rows_of_12, assumed_align=16).mark_compact_shape_dynamic(mode=1, divisibility=8)


def divisibility_table() -> str:
    """The global loads and stores of ``copy_rows`` for sm_90a, per promised divisibility of the row length."""
    rows = ["| `n` divisible by | layout at trace time | global loads | global stores |", "|---|---|---|---|"]
    for divisibility in (1, 2, 8):
        t = row_major(divisibility)
        sass = sass_counts(compile_for(launch_rows, t, t))
        found = {op: ", ".join(f"`{m}` ×{c}" for m, c in sorted(sass.items()) if m.startswith(op)) for op in ("LDG", "STG")}
        rows.append(f"| {divisibility} | `{_seen[-1]}` | {found['LDG']} | {found['STG']} |")
    return "\n".join(rows)


# --8<-- [start:forms]
@cute.jit
def printed_forms(t: cute.Tensor, n: cutlass.Int32):
    forms = {
        "make_layout((4, 8), stride=(8, 1))": cute.make_layout((4, 8), stride=(8, 1)),
        "make_layout((4, 8))": cute.make_layout((4, 8)),
        "make_layout((n, 8), stride=(8, 1))": cute.make_layout((n, 8), stride=(8, 1)),
        "make_layout((assume(n, divby=4), 8))": cute.make_layout((cute.assume(n, divby=4), 8)),
        "zipped_divide(make_layout((4, 8)), (2, 4))": cute.zipped_divide(cute.make_layout((4, 8)), (2, 4)),
        "t": t,
        "size(t)": cute.size(t),
        "(t.shape, t.stride)": (t.shape, t.stride),
        "make_identity_tensor((4, 8))": cute.make_identity_tensor((4, 8)),
        "a swizzled layout": cute.make_composed_layout(cute.make_swizzle(3, 4, 3), 0, cute.make_layout((8, 64), stride=(64, 1))),
    }
    for name, obj in forms.items():
        print(f"{name:43} {obj}")
# --8<-- [end:forms]


@expect(prints="tensor<(0,0) o (4,8):(1@0,1@1)>")
def show_printed_forms() -> None:
    compile_for(printed_forms, row_major(8), cutlass.Int32(3))
