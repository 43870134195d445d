"""MLA decode v6 (sm_90a): v5 with the split path's partial output written two columns per store.

**What the b = 1 profile showed.** With 66 splits of two blocks each, every attention CTA ends by
writing a ``64 x 512`` fp32 partial of O (128 KiB; 17 MiB for the grid). v0's epilogue, which v1
to v5 inherit, stores it one value at a time: 128 ``STG.E`` (32-bit) per thread. In the WGMMA
accumulator a thread holds two adjacent columns of each 8-column block, so one warp-wide 32-bit
store writes 16 of the 32 bytes of each of 8 sectors, and the next store writes the other 16:
twice the store instructions and every sector written in two halves. ncu's top warp stall in v5's
attention kernel at b = 1 is ``lg_throttle`` -- warps waiting for the load/store queue -- and
its attention kernel runs longer than FlashMLA's for the same MMA work.

**The change.** The split path copies each row's values with ``cute.autovec_copy``, which
vectorizes to the widest access both layouts allow: the two adjacent columns, one 64-bit
``STG.E.64`` per pair. A warp-wide store now covers 8 rows x 32 contiguous bytes, whole sectors,
with half the instructions. The single-split path (bf16 O straight to the output) is v5's.

Everything else -- the walks, barriers, dispatch order and the combine over column quarters --
is v5's.
"""

import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline

from mla_var3.kernel.cute_python.mla.decode import common
from mla_var3.kernel.cute_python.mla.decode.common import TILE_M, V_HALF
from mla_var3.kernel.cute_python.mla.decode.v5.kernel import MlaDecodeV5


class MlaDecodeV6(MlaDecodeV5):
    """v5 with 64-bit stores of the split partials."""

    # --8<-- [start:epilogue]
    @cute.jit
    def _epilogue(
        self,
        outputs: tuple,
        s_factor: cute.Tensor,
        barrier: pipeline.NamedBarrier,
        half: cutlass.Int32,
        acc_o: cute.Tensor,
        row_stats: tuple[cute.Tensor, cute.Tensor],
        c_mn: cute.Tensor,
        thr_pv: cute.ThrMma,
        coords: tuple[cutlass.Int32, cutlass.Int32, cutlass.Int32],
        heads: cutlass.Int32,
    ) -> None:
        """v0's epilogue (``MlaDecodeV0._epilogue``: same arguments) with the split partial stored
        by ``autovec_copy`` per row: the two adjacent columns of a thread in one 64-bit store."""
        mO, mLse, mOPart, mLsePart = outputs
        if cutlass.const_expr(mOPart is None):
            MlaDecodeV5._epilogue(
                self, outputs, s_factor, barrier, half, acc_o, row_stats, c_mn, thr_pv, coords, heads
            )
        else:
            row_max, row_sum = row_stats
            m_tile, split, batch = coords
            tidx, _, _ = cute.arch.thread_idx()
            rows = mO.shape[0]
            inv_sum = cute.make_rmem_tensor_like(row_max)
            lse = cute.make_rmem_tensor_like(row_max)
            if half == 0:
                common.finish_rows(row_max, row_sum, inv_sum, lse)
                for i in cutlass.range_constexpr(cute.size(row_max)):
                    s_factor[c_mn[i, 0][0]] = inv_sum[i]
                    row = m_tile * TILE_M + c_mn[i, 0][0]
                    if tidx % 4 == 0 and row < rows:
                        mLsePart[row, split, batch] = lse[i]
            barrier.arrive_and_wait()
            for i in cutlass.range_constexpr(cute.size(row_max)):
                inv_sum[i] = s_factor[c_mn[i, 0][0]]
            o_mn = common.acc_mn(acc_o)
            common.scale_rows(o_mn, inv_sum)
            tile = (TILE_M, V_HALF)
            gO = cute.flat_divide(mOPart, tile)[(None, None, m_tile, half, split, batch)]  # (64, 256) fp32
            g_mn = common.acc_mn(thr_pv.partition_C(gO))
            oc_mn = common.acc_mn(thr_pv.partition_C(cute.make_identity_tensor(tile)))
            for i in cutlass.range_constexpr(cute.size(row_max)):
                if m_tile * TILE_M + oc_mn[i, 0][0] < rows:
                    cute.autovec_copy(o_mn[i, None], g_mn[i, None])

    # --8<-- [end:epilogue]


__all__ = ["MlaDecodeV6"]
