"""MLA decode v1 (sm_90a): v0 + split-KV with an LSE-weighted combine kernel.

**What it changes.** v0 launches ``b * ceil(h_q s_q / 64)`` CTAs: 8 at b = 4, h_q = 128 --
8 of 132 SMs busy. v1 splits each sequence's KV blocks into ``splits`` equal shares (grid
``(query tiles, splits, b)``, ``splits`` chosen on the host so the grid fills the GPU about
once; see ``common.default_splits``). Each split writes its normalized fp32 partial
``O_i = sum_j p_ij v_j / l_i`` and partial ``lse_i`` to a workspace; a second kernel (one
CTA of 128 threads per query row, 4 output columns per thread) merges them:
``lse = log sum_i exp(lse_i)``, ``O = sum_i exp(lse_i - lse) O_i``. A split that got no
KV block (a short sequence) writes ``lse_i = -inf`` and weighs nothing.

With one split (the grid already full, e.g. b = 128, h_q = 128) v1 is v0: no workspace, no
combine launch. The attention kernel itself is v0's, run on a split's block range. Whether
to split is compile-time (two binaries per page size); the count is the workspace's, so one
binary serves every split count.

**What the measurements said** (H200, debugging runs): at b = 4, h_q = 128, s_k = 8192 the
split grid (17 splits, 136 CTAs) runs about 6x faster than v0's 8 CTAs; with one split
(b = 128) v1 is v0 to within noise.

**Cost.** The workspace round trip: ``splits * rows * 512 * 4`` bytes written and read per
sequence (17.8 MB at b = 4, h_q = 128, 17 splits: ~10 us of HBM traffic), plus a second
launch; the split kernel still exposes every TMA latency (one KV buffer).
"""

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute

from mla_var3.kernel.cute_python.mla.decode.common import D_LATENT, LOG2_E
from mla_var3.kernel.cute_python.mla.decode.v0.kernel import MlaDecodeV0

COMBINE_THREADS = 128
COLUMNS_PER_THREAD = D_LATENT // COMBINE_THREADS  # 4


class MlaDecodeV1(MlaDecodeV0):
    """v0's attention kernel on ``splits`` KV shares per (query tile, sequence), then a combine."""

    def __init__(self, page: int, split_kv: bool) -> None:
        super().__init__(page)
        self.split_kv = split_kv

    @cute.jit
    def __call__(
        self,
        q: cute.Tensor,
        kv: cute.Tensor,
        block_table: cute.Tensor,
        seqlens: cute.Tensor,
        o: cute.Tensor,
        lse: cute.Tensor,
        heads: cutlass.Int32,
        o_part: cute.Tensor,
        lse_part: cute.Tensor,
        stream: cuda.CUstream,
    ) -> None:
        """v0's arguments plus the workspace ``o_part (b, splits, rows, 512)``, ``lse_part
        (b, splits, rows)`` fp32: its ``splits`` is the runtime split count (unused, and may be
        tiny, when the kernel was built without ``split_kv``)."""
        if cutlass.const_expr(not self.split_kv):
            self._launch_attention(q, kv, block_table, seqlens, o, lse, None, None, heads, stream)
        else:
            self._launch_attention(q, kv, block_table, seqlens, o, lse, o_part, lse_part, heads, stream)
            mO = cute.make_tensor(o.iterator, cute.select(o.layout, mode=[1, 2, 0]))  # (rows, 512, b)
            mOPart = cute.make_tensor(o_part.iterator, cute.select(o_part.layout, mode=[2, 3, 1, 0]))
            mLsePart = cute.make_tensor(lse_part.iterator, cute.select(lse_part.layout, mode=[2, 1, 0]))
            self.combine_kernel(mOPart, mLsePart, mO, lse, heads).launch(
                grid=(mO.shape[0], 1, mO.shape[2]), block=(COMBINE_THREADS, 1, 1), stream=stream
            )

    # --8<-- [start:combine]
    @cute.kernel
    def combine_kernel(
        self,
        mOPart: cute.Tensor,
        mLsePart: cute.Tensor,
        mO: cute.Tensor,
        mLse: cute.Tensor,
        heads: cutlass.Int32,
    ) -> None:
        """One query row of one sequence: merge the splits' partials by their LSE weights."""
        tidx, _, _ = cute.arch.thread_idx()
        row, _, batch = cute.arch.block_idx()
        splits = mLsePart.shape[1]
        lse_max = -cutlass.Float32.inf
        for s in cutlass.range(splits, unroll=1):
            lse_max = cute.arch.fmax(lse_max, mLsePart[row, s, batch])
        total = cutlass.Float32(0.0)
        acc = cute.make_rmem_tensor(cute.make_layout(COLUMNS_PER_THREAD), cutlass.Float32)
        acc.fill(0.0)
        for s in cutlass.range(splits, unroll=1):
            lse_s = mLsePart[row, s, batch]
            if lse_s > -cutlass.Float32.inf:  # an empty split's partial O was never written
                weight = cute.math.exp2((lse_s - lse_max) * LOG2_E, fastmath=True)
                total += weight
                part = cute.local_tile(mOPart[(row, None, s, batch)], (COLUMNS_PER_THREAD,), (tidx,))
                acc.store(acc.load() + weight * part.load())
        out = cute.local_tile(mO[(row, None, batch)], (COLUMNS_PER_THREAD,), (tidx,))
        out.store((acc.load() / total).to(mO.element_type))
        if tidx == 0:
            mLse[batch, row % heads, row // heads] = lse_max + cute.math.log(total, fastmath=True)

    # --8<-- [end:combine]


__all__ = ["MlaDecodeV1"]
