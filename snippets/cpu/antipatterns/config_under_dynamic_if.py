"""A configuration chosen under a run-time ``if``: the Python int becomes a run-time value.

``n = 8; if wide: n = 16`` with ``wide`` a run-time ``Boolean`` does not pick 8 or 16 while tracing:
the DSL turns ``n`` into an ``Int32`` yielded by the branch, decided on the GPU, and everything
built from it follows (a loop over ``range(n)`` has an unknown trip count). With ``wide`` a
``Constexpr`` and ``if cutlass.const_expr(wide)``, ``n`` stays a Python int. Compiled for sm_90a
on the CPU: what the trace saw (Python's ``print``) and the SASS each became. A mutable Python object
changed under the run-time ``if`` (an attribute of a config object, a list that grows) cannot be
carried through the branch at all: the two ``error_*`` functions capture what the DSL says.
"""

from __future__ import annotations

import cutlass
import cutlass.cute as cute
from cutlass.base_dsl.common import DSLUserCodeError
from cutlass.cute.runtime import make_fake_compact_tensor

from mla_var3.knowledge.expected import expect
from snippets.cpu.dsl_tools import compile_for, opcode_count, sass_counts


# --8<-- [start:kernels]
@cute.kernel
def sum_prefix_dynamic(t: cute.Tensor, wide: cutlass.Boolean):
    n = 8
    if wide:  # BAD: a run-time condition; n leaves the branch as a run-time Int32
        n = 16
    print("run-time flag:  n =", n)
    acc = cutlass.Float32(0)
    for i in range(n):
        acc += t[i]
    t[0] = acc


@cute.kernel
def sum_prefix_static(t: cute.Tensor, wide: cutlass.Constexpr):
    n = 8
    if cutlass.const_expr(wide):  # FIXED: decided while tracing; n stays a Python int
        n = 16
    print("Constexpr flag: n =", n)
    acc = cutlass.Float32(0)
    for i in range(n):
        acc += t[i]
    t[0] = acc
# --8<-- [end:kernels]


class Tiling:
    """A host-side configuration object, as kernels often carry one (tile sizes, stage counts)."""

    def __init__(self, n: int) -> None:
        self.n = n


# --8<-- [start:mutable]
@cute.kernel
def sum_prefix_config(t: cute.Tensor, wide: cutlass.Boolean):
    tiling = Tiling(8)
    if wide:  # BAD: a run-time condition around a change to a Python object
        tiling.n = 16
    acc = cutlass.Float32(0)
    for i in cutlass.range_constexpr(tiling.n):
        acc += t[i]
    t[0] = acc


@cute.kernel
def sum_columns_list(t: cute.Tensor, wide: cutlass.Boolean):
    columns = [0, 1]
    if wide:  # BAD: the list's length would depend on a run-time value
        columns.append(2)
    acc = cutlass.Float32(0)
    for c in columns:
        acc += t[c]
    t[0] = acc
# --8<-- [end:mutable]


@cute.jit
def launch(t: cute.Tensor, kernel: cutlass.Constexpr, wide: cutlass.Constexpr):
    kernel(t, wide).launch(grid=[1, 1, 1], block=[32, 1, 1])


@cute.jit
def launch_runtime_flag(t: cute.Tensor, kernel: cutlass.Constexpr, wide: cutlass.Boolean):
    kernel(t, wide).launch(grid=[1, 1, 1], block=[32, 1, 1])


def loads_and_branches(host: object, kernel: object, wide: object) -> str:
    """The global loads and the branches of ``kernel`` launched by ``host``, compiled for sm_90a, as one line."""
    t = make_fake_compact_tensor(cutlass.Float32, (64,), assumed_align=16)
    sass = sass_counts(compile_for(host, t, kernel, wide, arch="sm_90a"))
    loads = ", ".join(f"{m} ×{n}" for m, n in sorted(sass.items()) if m.startswith("LDG"))
    return f"{loads}; {opcode_count(sass, 'BRA') - 1} branches"  # every kernel ends in a branch-to-self


@expect(prints="run-time flag:  n = ?\nConstexpr flag: n = 16\n"
               "SASS, run-time flag:  LDG.E ×24; 2 branches\nSASS, Constexpr flag: LDG.E ×16; 0 branches")
def symptom() -> None:
    dynamic = loads_and_branches(launch_runtime_flag, sum_prefix_dynamic, cutlass.Boolean(True))
    static = loads_and_branches(launch, sum_prefix_static, True)
    print(f"SASS, run-time flag:  {dynamic}\nSASS, Constexpr flag: {static}")


@expect(raises=DSLUserCodeError, message="error[TYPE_DYNAMIC_EXPR_UNSUPPORTED]: A value carried through this `if` is a "
        "plain Python value (Meta value) (a `Tiling`) that cannot be turned into a Runtime value")  # fmt: skip
def error_config_object() -> None:
    t = make_fake_compact_tensor(cutlass.Float32, (64,), assumed_align=16)
    compile_for(launch_runtime_flag, t, sum_prefix_config, cutlass.Boolean(True), arch="sm_90a")


@expect(raises=DSLUserCodeError, message="error[TYPE_UNSTABLE_JOIN]: `columns` has type `list<2>` on one path and "
        "`list<3>` on another")  # fmt: skip
def error_growing_list() -> None:
    t = make_fake_compact_tensor(cutlass.Float32, (64,), assumed_align=16)
    compile_for(launch_runtime_flag, t, sum_columns_list, cutlass.Boolean(True), arch="sm_90a")
