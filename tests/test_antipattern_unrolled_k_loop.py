"""The constexpr K loop (snippets/cpu/antipatterns/unrolled_k_loop.py), compiled for sm_90a on the CPU: a
``range_constexpr`` K loop holds one copy of the body per K tile in the SASS, ``cutlass.range(unroll=1)``
one copy at any K, and the built-in ``range`` is a device loop the compiler unrolls only partly at large K (at K = 4 it
unrolled it fully)."""

from __future__ import annotations

from snippets.cpu.antipatterns.unrolled_k_loop import VEC, compile_one


def test_a_constexpr_k_loop_grows_with_k_and_a_device_loop_does_not() -> None:
    small, large = (compile_one("`cutlass.range_constexpr(k_tiles)`", k) for k in (4, 64))
    assert (small.ffma, large.ffma) == (4 * VEC, 64 * VEC)  # every K tile's FMAs, spelled out
    assert small.branches == large.branches == 0 and large.instructions > 8 * small.instructions
    loop = [compile_one("`cutlass.range(k_tiles, unroll=1)`", k) for k in (4, 64)]
    assert [r.ffma for r in loop] == [VEC, VEC] and [r.branches for r in loop] == [1, 1]
    assert loop[0].instructions == loop[1].instructions < small.instructions


def test_the_builtin_range_stays_a_loop_at_large_k() -> None:
    builtin = compile_one("`range(k_tiles)`", 64)
    assert builtin.branches >= 1 and VEC <= builtin.ffma < 64 * VEC  # the compiler unrolled some, not all
