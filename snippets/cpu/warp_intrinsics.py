"""``cute.arch`` inside a warp: lane and warp ids, electing one lane, shuffles, votes and warp reductions.

The warp-intrinsics concept page runs these while it is built. ``intrinsic_table`` compiles one small
kernel per call for sm_90a -- each thread reads a value, applies the call, writes the result -- and
lists the SASS instructions the call added to a kernel that only copies. ``redux_table`` compiles the
float ``redux.sync`` for sm_100a, the only target of the two that has it; ``error_float_redux_on_hopper``
is the ptxas refusal for sm_90a.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import cutlass
import cutlass.cute as cute
from cutlass.base_dsl.compiler import CompilerDiagnosticError
from cutlass.cute.runtime import make_fake_compact_tensor

from mla_var3.knowledge.expected import expect
from snippets.cpu.dsl_tools import compile_for, sass_counts

THREADS = 64  # two warps


# --8<-- [start:kernel]
@cute.kernel
def apply(x: cute.Tensor, out: cute.Tensor, op: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    out[tidx] = op(x[tidx])  # op is a Python function, called once while tracing


@cute.kernel
def elect_and_write(x: cute.Tensor, out: cute.Tensor, op: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    with cute.arch.elect_one():  # the body runs on one lane of each warp
        out[tidx] = x[tidx]
# --8<-- [end:kernel]


# --8<-- [start:calls]
CALLS: dict[str, Callable[[Any], Any]] = {
    "v + lane_idx()": lambda v: v + cute.arch.lane_idx(),
    "v + warp_idx()": lambda v: v + cute.arch.warp_idx(),
    "shuffle_sync(v, 0)": lambda v: cute.arch.shuffle_sync(v, 0),  # lane 0's v
    "shuffle_sync_bfly(v, 1)": lambda v: cute.arch.shuffle_sync_bfly(v, 1),  # lane i ^ 1's v
    "shuffle_sync_down(v, 1)": lambda v: cute.arch.shuffle_sync_down(v, 1),  # lane i + 1's v
    "shuffle_sync_up(v, 1)": lambda v: cute.arch.shuffle_sync_up(v, 1),  # lane i - 1's v
    "vote_ballot_sync(v > 0)": lambda v: cute.arch.vote_ballot_sync(v > 0),  # one bit per lane
    "vote_any_sync(v > 0)": lambda v: cutlass.Int32(cute.arch.vote_any_sync(v > 0)),
    "vote_all_sync(v > 0)": lambda v: cutlass.Int32(cute.arch.vote_all_sync(v > 0)),
    "popc(vote_ballot_sync(v > 0))": lambda v: cute.arch.popc(cute.arch.vote_ballot_sync(v > 0)),
    "warp_reduction(v, operator.add)": lambda v: cute.arch.warp_reduction(v, operator.add),
    "warp_reduction_max(v)": lambda v: cute.arch.warp_reduction_max(v),
    "warp_redux_sync(v, 'add')": lambda v: cute.arch.warp_redux_sync(v, "add"),
}
# --8<-- [end:calls]


@cute.jit
def launch(x: cute.Tensor, out: cute.Tensor, kernel: cutlass.Constexpr, op: cutlass.Constexpr):
    kernel(x, out, op).launch(grid=[1, 1, 1], block=[THREADS, 1, 1])


def _sass(dtype: type, kernel: object, op: object, arch: str = "sm_90a") -> dict[str, int]:
    t = make_fake_compact_tensor(dtype, (THREADS,), assumed_align=16)
    return sass_counts(compile_for(launch, t, t, kernel, op, arch=arch))


def _added(sass: dict[str, int], base: dict[str, int]) -> str:
    """The instructions ``sass`` has more of than ``base`` (``NOP`` padding aside)."""
    more = {m: n - base.get(m, 0) for m, n in sorted(sass.items()) if m != "NOP" and n > base.get(m, 0)}
    return ", ".join(f"`{m}`" + (f" ×{n}" if n > 1 else "") for m, n in more.items()) or "nothing"


def intrinsic_table() -> str:
    """For each call on an ``Int32`` ``v``: the SASS (sm_90a) it adds to a kernel that copies ``v``."""
    base = _sass(cutlass.Int32, apply, lambda v: v)
    rows = ["| call (`cute.arch.`) | SASS it added |", "|---|---|"]
    rows += [f"| `{name}` | {_added(_sass(cutlass.Int32, apply, op), base)} |" for name, op in CALLS.items()]
    rows.append(f"| `with elect_one():` | {_added(_sass(cutlass.Int32, elect_and_write, None), base)} |")
    return "\n".join(rows)


# --8<-- [start:float_max]
def float_max_tree(v: Any) -> Any:
    return cute.arch.warp_reduction(v, cute.arch.fmax)  # five shuffles and five max


def float_max_redux(v: Any) -> Any:
    return cute.arch.warp_redux_sync(v, "fmax")  # one redux.sync.max.f32
# --8<-- [end:float_max]


def redux_table() -> str:
    """The two float maxima of a warp, compiled for sm_100a: what each added to a copy."""
    base = _sass(cutlass.Float32, apply, lambda v: v, arch="sm_100a")
    rows = ["| `Float32` warp max, sm_100a | SASS it added |", "|---|---|"]
    for fn in (float_max_tree, float_max_redux):
        rows.append(f"| `{fn.__name__}` | {_added(_sass(cutlass.Float32, apply, fn, arch='sm_100a'), base)} |")
    return "\n".join(rows)


@expect(raises=CompilerDiagnosticError, message="Instruction 'redux.f32' not supported on .target 'sm_90a'")
def error_float_redux_on_hopper() -> None:
    _sass(cutlass.Float32, apply, float_max_redux, arch="sm_90a")
