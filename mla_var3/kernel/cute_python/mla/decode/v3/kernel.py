"""MLA decode v3 (sm_90a): v2 + the softmax warpgroup issues the next block's ``Q K^T`` before its softmax.

**The idea.** In v2 the softmax warpgroup runs, per KV block: ``S = Q K^T`` (wait) ->
softmax -> P to SMEM -> ``O_left += P V_left`` (wait). While it computes the softmax (exp2,
row reductions, the P store) the tensor cores have only the second warpgroup's small
``O_right += P V_right`` (2.1 of 8.9 MFLOP per block) to work on. v3 software-pipelines the
softmax warpgroup one block deep (FlashAttention-3's intra-warpgroup overlap):

    S(j) <- second accumulator;  issue QK(j+1) into it      (tensor cores: 4.7 MFLOP)
    softmax(j), P(j) to SMEM, "P ready"                    (CUDA cores, overlapped with QK(j+1))
    issue PV_left(j); wait for QK(j+1) and PV_left(j); release block j's stage

Block j+1's scores land in a second 64 x 64 fp32 accumulator (32 more registers per thread:
128 for O and 2 x 32 for S fit the 240 that setmaxnreg gives, no spills). The last block has
no successor and recomputes its own S instead, so that no WGMMA is issued under a branch.

**What the measurements said** (H200, debugging runs; records come from ``verify``):

1. The first version waited for ``QK(j+1)`` and ``PV_left(j)`` at the *top of the next*
   iteration, leaving WGMMAs in flight across the loop back-edge. ptxas then gave up on
   asynchronous WGMMA for the whole kernel: the SASS has a ``WARPGROUP.DEPBAR`` after every
   one of the 80 ``HGMMA`` (v2: 3), and it ran about 2x slower than v2. Waiting inside the
   iteration (above) restores asynchronous WGMMA; a CPU test now counts the DEPBARs.
2. Even so, v3 is slower than v2 at every shape timed (b = 128, h_q = 128, s_k = 8192: about
   1.5x the time). Looking one block ahead means waiting for block j+1's stage while block j
   still holds the other one: with the 2 stages that fit beside the 72 KiB Q tile, the
   producer cannot start block j+2 until block j is released at the end of the iteration, so
   each 72 KiB load (~2 us at an SM's share of HBM bandwidth, against ~1.2 us of MMA per
   block) is exposed again -- what v2's ring hid.

**What it implies next.** Overlap needs a deeper ring than SMEM allows for whole blocks:
finer-grained barriers (one per 64-column piece of a KV block, so ``Q K^T`` starts on the
first piece, as FlashMLA's SM90 kernel does), or freeing SMEM (Q held in registers by the
softmax warpgroup) for a third stage; FlashMLA's "seesaw" schedule balances the two
warpgroups instead of deepening one.
"""

import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline
from cutlass.cute.nvgpu import warpgroup

from mla_var3.kernel.cute_python.mla.decode.common import TILE_M, TILE_N
from mla_var3.kernel.cute_python.mla.decode.v2.kernel import MlaDecodeV2


class MlaDecodeV3(MlaDecodeV2):
    """v2 whose softmax warpgroup overlaps block j's softmax with block j+1's ``Q K^T``."""

    # --8<-- [start:softmax_half]
    @cute.jit
    def _softmax_half(
        self,
        kv_pipeline: pipeline.PipelineTmaAsync,
        smem: tuple,
        views: tuple,
        acc_o: cute.Tensor,
        rows_state: tuple,
        blocks: tuple,
    ) -> None:
        _, sKV, _, sP, s_factor = smem
        thr_qk, tSrQ, tSrK, tOrP, tOrV, c_mn = views
        length, first_block, end_block = blocks
        acc_s = cute.make_rmem_tensor(thr_qk.partition_shape_C((TILE_M, TILE_N)), cutlass.Float32)
        acc_next = cute.make_rmem_tensor(thr_qk.partition_shape_C((TILE_M, TILE_N)), cutlass.Float32)
        read = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, self.kv_stages)  # next to wait for
        current = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, self.kv_stages)  # block j's stage
        if first_block < end_block:
            kv_pipeline.consumer_wait(read)
            self._issue_qk(tSrQ, tSrK, read.index, acc_next)
            read.advance()
            warpgroup.wait_group(0)
        for block in cutlass.range(first_block, end_block, unroll=1):
            acc_s.store(acc_next.load())
            # Issue the next block's Q K^T now; it runs on the tensor cores during this block's
            # softmax. The last block has no next one: it recomputes its own S, unconditionally,
            # so no WGMMA is issued under a branch (see the module docstring).
            next_stage = current.index
            if block + 1 < end_block:
                kv_pipeline.consumer_wait(read)
                next_stage = read.index
            self._issue_qk(tSrQ, tSrK, next_stage, acc_next)
            read.advance()
            kv_start = block * TILE_N
            self._zero_v_half(sKV, current.index, kv_start, length, 0)
            if block > first_block:
                self._p_free().arrive_and_wait()  # the other half is done reading the previous P
            self._probs_to_smem(thr_qk, acc_s, c_mn, kv_start, rows_state, sP, s_factor)
            self._p_ready().arrive()
            self._accumulate_pv(acc_o, tOrP, tOrV, current.index, s_factor, c_mn, wait=False)
            warpgroup.wait_group(0)  # QK(j+1) and PV_left(j): nothing stays in flight across iterations
            kv_pipeline.consumer_release(current)
            current.advance()
        if first_block < end_block:
            # The epilogue overwrites the row factors: wait until the other half read the last ones.
            self._p_free().arrive_and_wait()

    # --8<-- [end:softmax_half]


__all__ = ["MlaDecodeV3"]
