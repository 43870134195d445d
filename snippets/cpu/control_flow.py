"""Static vs dynamic control flow in the CuTe DSL, shown by what the compiler receives and emits.

Three kernels sum the same 8 elements with the three loop forms; two more branch on a
``Constexpr`` and on a run-time value. ``loop_table`` and ``branch_table`` compile them for sm_90a
on a CPU and count, in the IR the DSL hands to the compiler (``scf.for``, ``scf.if``, loads) and
in the final SASS (branches, global loads), what each form became. The ``@expect`` functions at
the end are the mistakes the DSL rejects, with the error each must keep raising.
"""

from __future__ import annotations

import cutlass
import cutlass.cute as cute
from cutlass.base_dsl.common import DSLUserCodeError
from cutlass.cute.runtime import make_fake_compact_tensor

from mla_var3.knowledge.expected import expect
from snippets.cpu.dsl_tools import clean_ir, compile_for, kernel_ir, opcode_count, sass_counts

N = 8


# --8<-- [start:loops]
@cute.kernel
def sum_builtin_range(t: cute.Tensor):
    acc = cutlass.Float32(0)
    for i in range(N):  # a device loop, even with constant bounds
        acc += t[i]
    t[0] = acc


@cute.kernel
def sum_cutlass_range(t: cute.Tensor):
    acc = cutlass.Float32(0)
    for i in cutlass.range(N, unroll=1):  # a device loop; unroll=1 asks the compiler to keep it
        acc += t[i]
    t[0] = acc


@cute.kernel
def sum_range_constexpr(t: cute.Tensor):
    acc = cutlass.Float32(0)
    for i in cutlass.range_constexpr(N):  # Python runs this loop while tracing: 8 copies of the body
        acc += t[i]
    t[0] = acc
# --8<-- [end:loops]


# --8<-- [start:branches]
@cute.kernel
def scale_static(t: cute.Tensor, triple: cutlass.Constexpr):
    x = t[0]
    if cutlass.const_expr(triple):  # decided while tracing: only one side reaches the kernel
        x = x * cutlass.Float32(3.0)
    t[1] = x


@cute.kernel
def scale_dynamic(t: cute.Tensor, triple: cutlass.Boolean):
    x = t[0]
    if triple:  # a run-time value: the branch reaches the kernel
        x = x * cutlass.Float32(3.0)
    t[1] = x
# --8<-- [end:branches]


@cute.jit
def launch(t: cute.Tensor, kernel: cutlass.Constexpr, flag: cutlass.Constexpr):
    """Launch one of the kernels above on one warp (``flag`` is passed on to the branch kernels)."""
    if cutlass.const_expr(flag is None):
        kernel(t).launch(grid=[1, 1, 1], block=[32, 1, 1])
    else:
        kernel(t, flag).launch(grid=[1, 1, 1], block=[32, 1, 1])


def _compile(kernel: object, flag: object) -> tuple[str, dict[str, int]]:
    t = make_fake_compact_tensor(cutlass.Float32, (64,), assumed_align=16)
    return kernel_ir(clean_ir(launch, t, kernel, flag)), sass_counts(compile_for(launch, t, kernel, flag))


def _mnemonics(sass: dict[str, int], opcode: str) -> str:
    found = [f"`{m}` ×{n}" for m, n in sorted(sass.items()) if m.split(".", 1)[0] == opcode]
    return ", ".join(found) or "none"


def loop_table() -> str:
    """What each loop form became: the IR handed to the compiler, and the sm_90a SASS."""
    rows = ["| loop | `scf.for` in IR | loads in IR | branches in SASS | global loads in SASS |", "|---|---|---|---|---|"]
    for name, kernel in (("`range(8)`", sum_builtin_range), ("`cutlass.range(8, unroll=1)`", sum_cutlass_range),
                         ("`cutlass.range_constexpr(8)`", sum_range_constexpr)):  # fmt: skip
        ir, sass = _compile(kernel, None)
        branches = opcode_count(sass, "BRA") - 1  # every kernel ends in a branch-to-self after EXIT
        rows.append(f"| {name} | {ir.count('scf.for')} | {ir.count('cute.memref.load')} | {branches} | {_mnemonics(sass, 'LDG')} |")
    return "\n".join(rows)


def branch_table() -> str:
    """What a ``const_expr`` branch and a run-time branch became."""
    rows = ["| branch | `scf.if` in IR | `arith.mulf` in IR | `FMUL` in SASS | branches in SASS |", "|---|---|---|---|---|"]
    for name, kernel, flag in (("`if cutlass.const_expr(triple)`, triple=False", scale_static, False),
                               ("`if cutlass.const_expr(triple)`, triple=True", scale_static, True),
                               ("`if triple`, a run-time `Boolean`", scale_dynamic, cutlass.Boolean(True))):  # fmt: skip
        ir, sass = _compile(kernel, flag)
        rows.append(f"| {name} | {ir.count('scf.if')} | {ir.count('arith.mulf')} | {opcode_count(sass, 'FMUL')} | "
                    f"{opcode_count(sass, 'BRA') - 1} |")  # fmt: skip
    return "\n".join(rows)


# --8<-- [start:trace_print]
@cute.jit
def trace_time_values(bound: cutlass.Int32, tile: cutlass.Constexpr):
    print("tile =", tile, "| bound =", bound)  # Python's print runs while tracing, once
    for i in range(4):
        print("range: i =", i)  # traced once, i is a run-time value
    for j in cutlass.range_constexpr(2):
        print("range_constexpr: j =", j)  # runs once per value
# --8<-- [end:trace_print]


@expect(prints="range: i = ?")
def show_trace_time_values() -> None:
    compile_for(trace_time_values, cutlass.Int32(7), 128)


# --8<-- [start:mistakes]
@cute.jit
def constexpr_loop_over_dynamic_bound(bound: cutlass.Int32):
    for i in cutlass.range_constexpr(bound):
        cute.printf("%d", i)


@cute.jit
def const_expr_of_dynamic_value(n: cutlass.Int32):
    if cutlass.const_expr(n == 10):
        cute.printf("ten")


@cute.jit
def break_out_of_device_loop(n: cutlass.Int32):
    for i in range(n):
        if i == 5:
            break


@cute.jit
def type_changes_in_branch(flag: cutlass.Boolean):
    x = cutlass.Int32(1)
    if flag:
        x = cutlass.Float32(2.0)
    cute.printf("{}", x)
# --8<-- [end:mistakes]


@expect(raises=DSLUserCodeError, message="error[ARG_NON_CONSTANT]")
def error_constexpr_loop() -> None:
    compile_for(constexpr_loop_over_dynamic_bound, cutlass.Int32(4))


@expect(raises=DSLUserCodeError, message="error[PHASE_REQUIRES_CONSTANT]")
def error_const_expr() -> None:
    compile_for(const_expr_of_dynamic_value, cutlass.Int32(4))


@expect(raises=DSLUserCodeError, message="error[UNSUP_EARLY_EXIT]: Early exit (break)")
def error_break() -> None:
    compile_for(break_out_of_device_loop, cutlass.Int32(4))


@expect(raises=DSLUserCodeError, message="error[TYPE_UNSTABLE_JOIN]")
def error_type_change() -> None:
    compile_for(type_changes_in_branch, cutlass.Boolean(True))
