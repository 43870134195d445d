"""FMHA forward v2 (sm_90a): v1 + the two consumer warpgroups take turns on the tensor cores, and each
overlaps its softmax with its own next WGMMAs (FlashAttention-3's ping-pong and intra-warpgroup overlap).

**The problem it attacks.** Per KV block a warpgroup issues two GEMMs (``Q K^T`` and ``P V``,
8.4 MFLOP for the CTA at tile_n = 128) and runs a softmax whose ``exp2`` alone is 64 MUFU
operations per thread; in v1 nothing inside a warpgroup overlaps the two, and whether the
other warpgroup's WGMMAs fill the gap depends on how their timing happens to fall.

**Inter-warpgroup ping-pong.** Two named barriers, one per warpgroup, hand a *turn* back and
forth: a warpgroup waits for its turn, issues its WGMMAs for the step, and gives the turn to
the other. So the issue order is strictly WG1, WG2, WG1, ...: while one warpgroup runs its
softmax, the other's GEMMs are already queued on the tensor cores. Warpgroup 2 arrives once
up front so warpgroup 1 goes first, and warpgroup 2 does not hand the turn back after its last
step, so every barrier ends balanced.

**Intra-warpgroup overlap.** Step ``i`` issues ``S(i) = Q K(i)^T`` and ``O += P(i-1) V(i-1)``
back to back, waits only for the first (``wait_group(1)``), and runs the softmax of ``S(i)``
while ``P V`` is still on the tensor cores; then it waits for ``P V`` and converts ``S(i)`` into
``P(i)``. O's rescale by step i's factor moves to the next step, between the two issues. The
walk is peeled: step 0 issues only ``Q K^T``, a tail issues the last ``P V``. Every WGMMA is
waited for inside the step that issued it: MLA decode v3 showed that ptxas serializes every
WGMMA of a kernel that leaves one in flight across a loop back-edge (a CPU test counts
``WARPGROUP.DEPBAR``). Registers: O (64 per thread), S (64) and P (32) are live together.

Loads, stages, register split, epilogue and walk are v1's.
"""

import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline
from cutlass.cute.nvgpu import warpgroup

from mla_var3.kernel.cute_python.attention.fmha import common
from mla_var3.kernel.cute_python.attention.fmha.v1.kernel import FmhaHopperV1

TURN_BARRIER = 1  # named barriers 1 and 2: warpgroup w waits on 1 + w, the other arrives on it


class FmhaHopperV2(FmhaHopperV1):
    """v1 whose consumer warpgroups alternate their WGMMA issue and overlap softmax with ``P V``."""

    # At tile_n = 176, O (64), S (88) and P (44 registers per thread) live together leave too
    # little of the 240 for the softmax: ptxas spills and serializes the WGMMAs.
    tile_ns = (128,)

    # --8<-- [start:consume]
    @cute.jit
    def _consume(
        self,
        mma: tuple,
        state: tuple,
        pipes: tuple,
        n_blocks: cutlass.Int32,
        masked: cutlass.Int32,
        wg: cutlass.Int32,
    ) -> None:
        """The peeled walk: step 0's ``Q K^T``; steps 1.. (masked ones first) each with the previous
        block's ``P V``; the last block's ``P V``. ``n_blocks >= 1`` always (``kv_schedule``)."""
        k_pipe, v_pipe = pipes
        _, _, tSrQ, tSrK, tOrV, tOrP, acc_s, acc_o, _ = mma
        turns = (self._turn(wg), self._turn(1 - wg))
        if wg == 1:
            turns[1].arrive()  # the second consumer warpgroup lets the first go first
        read_k = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, self.stages)
        read_v = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, self.stages)

        k_pipe.consumer_wait(read_k)
        turns[0].arrive_and_wait()
        common.issue_qk(self.dtype, self.tile_n, acc_s, tSrQ, tSrK[(None, None, None, read_k.index)])
        turns[1].arrive()
        warpgroup.wait_group(0)
        k_pipe.consumer_release(read_k)
        read_k.advance()
        self._softmax(mma, state, n_blocks - 1, True)
        common.probs_to_operand(acc_s, tOrP)

        for step in cutlass.range(1, n_blocks, unroll=1):
            self._overlapped_step(
                mma, state, pipes, turns, (read_k, read_v), n_blocks - 1 - step, step < masked
            )
            read_k.advance()
            read_v.advance()

        v_pipe.consumer_wait(read_v)
        turns[0].arrive_and_wait()
        self._rescale(acc_o, state[3])
        common.issue_pv(self.dtype, self.tile_n, acc_o, tOrP, tOrV[(None, None, None, read_v.index)])
        if wg == 0:
            turns[1].arrive()  # warpgroup 2's last turn; it hands none back
        warpgroup.wait_group(0)
        v_pipe.consumer_release(read_v)

    # --8<-- [end:consume]

    # --8<-- [start:overlapped_step]
    @cute.jit
    def _overlapped_step(
        self,
        mma: tuple,
        state: tuple,
        pipes: tuple,
        turns: tuple,
        reads: tuple,
        n: cutlass.Int32,
        masked: cutlass.Boolean,
    ) -> None:
        """Block ``n``'s ``Q K^T`` and the previous block's ``P V`` issued in this warpgroup's turn;
        block ``n``'s softmax while ``P V`` runs; P of block ``n`` once ``P V`` is done."""
        k_pipe, v_pipe = pipes
        read_k, read_v = reads
        _, _, tSrQ, tSrK, tOrV, tOrP, acc_s, acc_o, _ = mma
        k_pipe.consumer_wait(read_k)  # before taking the turn, so a late load does not hold up the other
        turns[0].arrive_and_wait()
        common.issue_qk(self.dtype, self.tile_n, acc_s, tSrQ, tSrK[(None, None, None, read_k.index)])
        self._rescale(acc_o, state[3])  # the previous step's factor, while Q K^T runs
        v_pipe.consumer_wait(read_v)
        common.issue_pv(self.dtype, self.tile_n, acc_o, tOrP, tOrV[(None, None, None, read_v.index)])
        turns[1].arrive()
        warpgroup.wait_group(1)  # Q K^T done, P V still running
        k_pipe.consumer_release(read_k)
        if masked:
            self._mask(mma, state, n)
        common.softmax_step(common.acc_mn(acc_s), *state[1:], self.scale_log2)
        warpgroup.wait_group(0)
        v_pipe.consumer_release(read_v)
        common.probs_to_operand(acc_s, tOrP)

    # --8<-- [end:overlapped_step]

    @staticmethod
    def _turn(wg: cutlass.Int32) -> pipeline.NamedBarrier:
        """Warpgroup ``wg``'s turn: its 128 threads wait on it, the other warpgroup's 128 arrive."""
        return pipeline.NamedBarrier(barrier_id=TURN_BARRIER + wg, num_threads=2 * common.WARPGROUP_THREADS)


__all__ = ["TURN_BARRIER", "FmhaHopperV2"]
