"""FMHA forward v3 (sm_90a): v2 + O is rescaled only when a row's running max moved.

**The idea.** The online softmax multiplies a warpgroup's whole O accumulator (64 values per
thread at d = 128) by each row's factor ``exp2((old_max - new_max) * scale)`` before every
``P V``. Once a row has seen a few KV blocks its max rarely moves, and an unmoved max gives a
factor of exactly 1: the multiplies change nothing. v3 asks the warp (``vote.any``) whether
any of its 16 rows' factors differs from 1 and skips the 64 multiplies per thread when none
does. The decision is warp-uniform, so the branch never diverges; the result is bit-identical
to v2's (skipped rows would have been multiplied by 1). The SM100 FMHA example makes the same
vote before its correction warps' TMEM round trip; the SM80 and SM90 examples rescale always.

How often the vote skips depends on the data: with randn inputs a row's max over the keys seen
so far moves at about one block in ``j`` at block ``j``, so a warp of 16 rows skips more and more
as the walk goes on (``snippets/cpu/fmha_estimates.py`` simulates the fraction). Everything
else is v2's.
"""

import cutlass
import cutlass.cute as cute

from mla_var3.kernel.cute_python.attention.fmha import common
from mla_var3.kernel.cute_python.attention.fmha.v2.kernel import FmhaHopperV2


class FmhaHopperV3(FmhaHopperV2):
    """v2 whose O rescale is skipped by whole warps when no row's max moved."""

    # --8<-- [start:rescale]
    @cute.jit
    def _rescale(self, acc_o: cute.Tensor, factor: cute.Tensor) -> None:
        """O's rows times their factors, unless every factor of the warp's 16 rows is exactly 1."""
        moved = factor[0] != 1.0
        for i in cutlass.range_constexpr(1, cute.size(factor)):
            moved = moved | (factor[i] != 1.0)
        if cute.arch.vote_any_sync(moved):
            common.scale_rows(common.acc_mn(acc_o), factor)

    # --8<-- [end:rescale]


__all__ = ["FmhaHopperV3"]
