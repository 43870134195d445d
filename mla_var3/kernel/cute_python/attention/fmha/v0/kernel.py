"""FMHA forward v0 (sm_90a): the correct baseline -- TMA, WGMMA, online softmax, nothing overlapped.

**What it does.** One CTA per (128-row query block, head, batch), 256 threads = two
warpgroups, each owning 64 query rows (one WGMMA M), walking the head's keys one KV block of
``tile_n`` rows at a time, **last block first** (``common.kv_schedule``):

1. Warp 0 loads both Q tiles once, then per KV block the K block and the V block with TMA, each
   onto its own mbarrier (V lands while ``Q K^T`` and the softmax run).
2. Each warpgroup computes ``S = Q K^T`` (WGMMA, both operands in SMEM), runs the online-softmax
   step on S in registers (masked steps first, then steps compiled without mask code), converts
   P in place into the A operand of the next WGMMA and adds ``O += P V`` (P from registers, V
   from SMEM).
3. A CTA barrier, then the next block's loads. At the end O is divided by the row sums, written
   into the warpgroup's Q tile in SMEM and stored with TMA (which clips rows past the sequence);
   the LSE goes out with plain stores.

Under the causal mask the walk starts at the diagonal block: blocks above it are never loaded.

**Why it is slow** (what the next variants fix): one K and one V buffer, so every block waits
for its TMA; the two warpgroups move in lockstep, so the tensor cores idle during every softmax;
and the CTA barrier after each block stalls both warpgroups on the slower one.

This class also holds what every variant shares: the host side (layouts, TMA descriptors,
launch), the block coordinates, the TMA and MMA views and the epilogue.
"""

import math

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline
from cutlass.cute.nvgpu import cpasync, warpgroup
from cutlass.memory import SmemAllocator

from mla_var3.kernel.cute_python.attention.fmha import common
from mla_var3.kernel.cute_python.attention.fmha.common import (
    CTA_M,
    HEAD_DIM,
    LOG2_E,
    TILE_M,
    WARPGROUP_THREADS,
)

EPILOGUE_BARRIER = 3  # named barriers 3 and 4: one per consumer warpgroup (1 and 2 are v2's turn barriers)


class FmhaHopperV0:
    """Attention forward ``O = softmax(Q K^T / sqrt(d)) V`` with the LSE, d = 128, fp16/bf16, on sm_90a.

    ``causal``: top-left causal mask (compile-time: it shapes the walk). ``tile_n``: keys per KV
    block. Everything else -- batch, heads (GQA), query and key lengths -- is dynamic.
    """

    threads = 2 * WARPGROUP_THREADS
    stages = 1  # K and V buffers
    tile_ns = common.TILE_NS  # the KV block sizes this variant compiles without spills

    def __init__(self, causal: bool, tile_n: int = 128) -> None:
        if tile_n not in self.tile_ns:
            raise ValueError(f"{type(self).__name__} takes tile_n in {self.tile_ns}, got {tile_n}")
        self.causal = causal
        self.tile_n = tile_n
        self.scale = 1.0 / math.sqrt(HEAD_DIM)
        self.scale_log2 = self.scale * LOG2_E  # scores are exponentiated as exp2(s * scale_log2 - max)

    def dynamic_smem_bytes(self) -> int:
        return common.smem_budget(self.tile_n, self.stages).total

    # --- host side ----------------------------------------------------------------------------
    @cute.jit
    def __call__(
        self,
        q: cute.Tensor,
        k: cute.Tensor,
        v: cute.Tensor,
        o: cute.Tensor,
        lse: cute.Tensor,
        stream: cuda.CUstream,
    ) -> None:
        """Every operand ``(seq, d, h_r, h_k, b)`` with d contiguous, as ``cutlass_hopper_fmha/common.py``'s
        ``as_heads_5d`` views ``(b, seq, heads, d)`` tensors: query head ``(r, g)`` reads KV head
        ``g`` (K and V have ``h_r = 1``). ``lse`` is ``(s, 1, h_r, h_k, b)`` fp32."""
        dtype = q.element_type
        if cutlass.const_expr(dtype not in (cutlass.BFloat16, cutlass.Float16)):
            raise TypeError(f"q must be BFloat16 or Float16, got {dtype}")
        if cutlass.const_expr(k.element_type != dtype or v.element_type != dtype or o.element_type != dtype):
            raise TypeError(
                f"q, k, v and o must share one dtype, got {dtype}, {k.element_type}, {v.element_type}, {o.element_type}"
            )
        self.dtype = dtype  # a compile-time constant the device helpers read
        # V as the B operand of O += P V: (d, t), d contiguous.
        v_t = cute.make_tensor(v.iterator, cute.select(v.layout, mode=[1, 0, 2, 3, 4]))
        q_layout, k_layout, v_layout = common.make_smem_layouts(dtype, self.tile_n, self.stages)
        q_tile = cute.slice_(q_layout, (None, None, 0))
        load = cpasync.CopyBulkTensorTileG2SOp()
        tma_q, mQ = cpasync.make_tiled_tma_atom(load, q, q_tile, (TILE_M, HEAD_DIM))
        tma_k, mK = cpasync.make_tiled_tma_atom(
            load, k, cute.slice_(k_layout, (None, None, 0)), (self.tile_n, HEAD_DIM)
        )
        tma_v, mV = cpasync.make_tiled_tma_atom(
            load, v_t, cute.slice_(v_layout, (None, None, 0)), (HEAD_DIM, self.tile_n)
        )
        # O leaves through the warpgroup's Q tile: same SMEM layout, a TMA store per 64-row tile.
        tma_o, mO = cpasync.make_tiled_tma_atom(
            cpasync.CopyBulkTensorTileS2GOp(), o, q_tile, (TILE_M, HEAD_DIM)
        )
        self.shared_storage = self._shared_storage(dtype, q_layout, k_layout, v_layout)
        self.kernel(tma_q, mQ, tma_k, mK, tma_v, mV, tma_o, mO, lse, q_layout, k_layout, v_layout).launch(
            grid=(cute.ceil_div(q.shape[0], CTA_M), q.shape[2] * q.shape[3], q.shape[4]),
            block=(self.threads, 1, 1),
            min_blocks_per_mp=1,  # one CTA per SM (SMEM allows no more): a register cap at entry for setmaxnreg
            stream=stream,
        )

    def _shared_storage(
        self,
        dtype: type[cutlass.Numeric],
        q_layout: cute.ComposedLayout,
        k_layout: cute.ComposedLayout,
        v_layout: cute.ComposedLayout,
    ) -> type:
        barriers = 2 + 4 * self.stages  # Q tiles; full and empty per K stage and per V stage

        @cute.struct
        class SharedStorage:
            barriers_: cute.struct.MemRange[cutlass.Int64, barriers]
            sQ: cute.struct.Align[cute.struct.MemRange[dtype, cute.cosize(q_layout)], common.SMEM_ALIGN]
            sK: cute.struct.Align[cute.struct.MemRange[dtype, cute.cosize(k_layout)], common.SMEM_ALIGN]
            sV: cute.struct.Align[cute.struct.MemRange[dtype, cute.cosize(v_layout)], common.SMEM_ALIGN]

        return SharedStorage

    # --- device side: the baseline's kernel ---------------------------------------------------
    @cute.kernel
    def kernel(
        self,
        tma_q: cute.CopyAtom,
        mQ: cute.Tensor,
        tma_k: cute.CopyAtom,
        mK: cute.Tensor,
        tma_v: cute.CopyAtom,
        mV: cute.Tensor,
        tma_o: cute.CopyAtom,
        mO: cute.Tensor,
        mLse: cute.Tensor,
        q_layout: cute.ComposedLayout,
        k_layout: cute.ComposedLayout,
        v_layout: cute.ComposedLayout,
    ) -> None:
        tidx, _, _ = cute.arch.thread_idx()
        warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
        wg = warp // 4
        storage = SmemAllocator().allocate(self.shared_storage)
        smem = self._smem_tensors(storage, q_layout, k_layout, v_layout)
        q_bar = storage.barriers_.data_ptr()
        k_bar, v_bar = q_bar + 2, q_bar + 3
        if tidx == 0:
            for atom in (tma_q, tma_k, tma_v, tma_o):
                cpasync.prefetch_descriptor(atom)
            for i in cutlass.range_constexpr(4):
                cute.arch.mbarrier_init(q_bar + i, 1)
        cute.arch.mbarrier_init_fence()
        cute.arch.sync_threads()

        coords = self._block_coords(mQ)
        tma = self._tma_views(tma_q, mQ, tma_k, mK, tma_v, mV, tma_o, mO, smem)
        n_blocks, masked = common.kv_schedule(
            coords[0] * CTA_M, mK.shape[0], self.tile_n, self.causal, cutlass.min
        )
        if warp == 0:
            for tile in cutlass.range_constexpr(2):
                self._load_q(tma, coords, tile, q_bar + tile)
        mma = self._mma_views(smem, wg, tidx % WARPGROUP_THREADS)
        state = self._row_state(mma, coords, wg, mK.shape[0])
        cute.arch.mbarrier_wait(q_bar + wg, 0)
        # --8<-- [start:lockstep]
        for step in cutlass.range(masked, unroll=1):
            self._lockstep_block(tma, mma, state, coords, (k_bar, v_bar), warp, n_blocks, step, True)
        for step in cutlass.range(masked, n_blocks, unroll=1):
            self._lockstep_block(tma, mma, state, coords, (k_bar, v_bar), warp, n_blocks, step, False)
        # --8<-- [end:lockstep]
        self._epilogue(mma, state, tma, coords, mLse, smem[0], wg)

    @cute.jit
    def _lockstep_block(
        self,
        tma: tuple,
        mma: tuple,
        state: tuple,
        coords: tuple,
        bars: tuple,
        warp: cutlass.Int32,
        n_blocks: cutlass.Int32,
        step: cutlass.Int32,
        masked: cutlass.Constexpr,
    ) -> None:
        """One KV block, every step waited for: load K and V, S, softmax, P V, CTA barrier."""
        k_bar, v_bar = bars
        n = n_blocks - 1 - step
        if warp == 0:
            self._load_k(tma, coords, n, 0, k_bar, arm=True)
            self._load_v(tma, coords, n, 0, v_bar, arm=True)
        _, _, tSrQ, tSrK, tOrV, tOrP, acc_s, acc_o, _ = mma
        cute.arch.mbarrier_wait(k_bar, step % 2)
        common.issue_qk(self.dtype, self.tile_n, acc_s, tSrQ, tSrK[(None, None, None, 0)])
        warpgroup.wait_group(0)
        self._softmax(mma, state, n, masked)
        self._rescale(acc_o, state[3])
        common.probs_to_operand(acc_s, tOrP)
        cute.arch.mbarrier_wait(v_bar, step % 2)
        common.issue_pv(self.dtype, self.tile_n, acc_o, tOrP, tOrV[(None, None, None, 0)])
        warpgroup.wait_group(0)
        # Every WGMMA on this K and V is done: the buffers can be refilled.
        cute.arch.sync_threads()

    # --- pieces every variant reuses ----------------------------------------------------------
    def _smem_tensors(
        self,
        storage: object,
        q_layout: cute.ComposedLayout,
        k_layout: cute.ComposedLayout,
        v_layout: cute.ComposedLayout,
    ) -> tuple[cute.Tensor, cute.Tensor, cute.Tensor]:
        """Q ``(64, d, 2)``, K ``(tile_n, d, stages)``, V ``(d, tile_n, stages)``."""
        sQ = storage.sQ.get_tensor(q_layout.outer, swizzle=q_layout.inner)
        sK = storage.sK.get_tensor(k_layout.outer, swizzle=k_layout.inner)
        sV = storage.sV.get_tensor(v_layout.outer, swizzle=v_layout.inner)
        return sQ, sK, sV

    @cute.jit
    def _block_coords(
        self, mQ: cute.Tensor
    ) -> tuple[cutlass.Int32, cutlass.Int32, cutlass.Int32, cutlass.Int32]:
        """``(query block, h_r index, h_k index, batch)`` of this CTA. Causal: block indices run
        backwards, so the longest walks (last query blocks, most KV blocks) start first and the
        short ones fill the tail."""
        x, head, batch = cute.arch.block_idx()
        m_block = x
        if cutlass.const_expr(self.causal):
            blocks, _, _ = cute.arch.grid_dim()
            m_block = blocks - 1 - x
        h_r = mQ.shape[2]
        return m_block, head % h_r, head // h_r, batch

    def _tma_views(
        self,
        tma_q: cute.CopyAtom,
        mQ: cute.Tensor,
        tma_k: cute.CopyAtom,
        mK: cute.Tensor,
        tma_v: cute.CopyAtom,
        mV: cute.Tensor,
        tma_o: cute.CopyAtom,
        mO: cute.Tensor,
        smem: tuple,
    ) -> tuple:
        """TMA partitions ``(atom, SMEM (TMA, stage), global (TMA, tiles..., h_r, h_k, b))`` of Q, K, V and O."""
        sQ, sK, sV = smem
        views = []
        for atom, gmem, buffer, tile in (
            (tma_q, mQ, sQ, (TILE_M, HEAD_DIM)),
            (tma_k, mK, sK, (self.tile_n, HEAD_DIM)),
            (tma_v, mV, sV, (HEAD_DIM, self.tile_n)),
            (tma_o, mO, sQ, (TILE_M, HEAD_DIM)),
        ):
            s, g = cpasync.tma_partition(
                atom,
                0,
                cute.make_layout(1),
                cute.group_modes(buffer, 0, 2),
                cute.group_modes(cute.flat_divide(gmem, tile), 0, 2),
            )
            views.append((atom, s, g))
        return tuple(views)

    def _kv_bytes(self) -> int:
        """One K or V block's bytes: what its TMA load adds to a barrier's transaction count."""
        return self.tile_n * HEAD_DIM * self.dtype.width // 8

    @cute.jit
    def _tma_load(
        self,
        view: tuple,
        tile: tuple,
        stage: cutlass.Int32,
        bar: cute.Pointer,
        arm: cutlass.Constexpr,
        tx_bytes: int,
    ) -> None:
        """Global tile ``tile`` of a TMA view ``(atom, SMEM, global)`` into SMEM ``stage``, completing
        on ``bar``; ``arm``: one lane arms ``bar`` with the load's ``tx_bytes`` first."""
        atom, smem, gmem = view
        if cutlass.const_expr(arm):
            with cute.arch.elect_one():
                cute.arch.mbarrier_arrive_and_expect_tx(bar, tx_bytes)
        cute.copy(atom, gmem[tile], smem[(None, stage)], tma_bar_ptr=bar)

    @cute.jit
    def _load_q(self, tma: tuple, coords: tuple, tile: cutlass.Int32, bar: cute.Pointer) -> None:
        """Arm ``bar`` with one Q tile's bytes and load query tile ``tile`` of the block into Q
        stage ``tile`` (a whole warp calls this; rows past the sequence are zero-filled)."""
        m_block, hr, hk, batch = coords
        q_bytes = TILE_M * HEAD_DIM * self.dtype.width // 8
        self._tma_load(tma[0], (None, m_block * 2 + tile, 0, hr, hk, batch), tile, bar, True, q_bytes)

    @cute.jit
    def _load_k(
        self,
        tma: tuple,
        coords: tuple,
        n: cutlass.Int32,
        stage: cutlass.Int32,
        bar: cute.Pointer,
        arm: cutlass.Constexpr = False,
    ) -> None:
        """K block ``n`` into ``stage``; ``arm``: arm ``bar`` with its bytes first (a pipeline arms its own)."""
        _, _, hk, batch = coords
        self._tma_load(tma[1], (None, n, 0, 0, hk, batch), stage, bar, arm, self._kv_bytes())

    @cute.jit
    def _load_v(
        self,
        tma: tuple,
        coords: tuple,
        n: cutlass.Int32,
        stage: cutlass.Int32,
        bar: cute.Pointer,
        arm: cutlass.Constexpr = False,
    ) -> None:
        """V block ``n`` (``(d, tile_n)``) into ``stage``, as :meth:`_load_k`."""
        _, _, hk, batch = coords
        self._tma_load(tma[2], (None, 0, n, 0, hk, batch), stage, bar, arm, self._kv_bytes())

    def _mma_views(self, smem: tuple, wg: cutlass.Int32, wg_tidx: cutlass.Int32) -> tuple:
        """This thread's MMA slices, operand views and accumulators: ``(thr_qk, thr_pv, tSrQ (MMA, 1,
        d/16) of its own Q tile, tSrK (MMA, 1, d/16, stages), tOrV (MMA, 1, tile_n/16, stages), tOrP
        (P in registers), acc_s, acc_o, c_mn)`` with ``c_mn[i, j]`` the (row, key) of ``S``'s value."""
        sQ, sK, sV = smem
        qk_mma, pv_mma = common.make_tiled_mmas(self.dtype, self.tile_n)
        thr_qk = qk_mma.get_slice(wg_tidx)
        thr_pv = pv_mma.get_slice(wg_tidx)
        tSrQ = qk_mma.make_fragment_A(thr_qk.partition_A(sQ))[(None, None, None, wg)]
        tSrK = qk_mma.make_fragment_B(thr_qk.partition_B(sK))
        tOrV = pv_mma.make_fragment_B(thr_pv.partition_B(sV))
        tOrP = cute.make_rmem_tensor(pv_mma.partition_shape_A((TILE_M, self.tile_n)), self.dtype)
        acc_s = cute.make_rmem_tensor(thr_qk.partition_shape_C((TILE_M, self.tile_n)), cutlass.Float32)
        acc_o = cute.make_rmem_tensor(thr_pv.partition_shape_C((TILE_M, HEAD_DIM)), cutlass.Float32)
        acc_o.fill(0.0)
        c_mn = common.acc_mn(thr_qk.partition_C(cute.make_identity_tensor((TILE_M, self.tile_n))))
        return thr_qk, thr_pv, tSrQ, tSrK, tOrV, tOrP, acc_s, acc_o, c_mn

    @cute.jit
    def _row_state(self, mma: tuple, coords: tuple, wg: cutlass.Int32, seqlen_k: cutlass.Int32) -> tuple:
        """This thread's query rows: ``(visible keys, running max, partial sum, rescale factor)``."""
        c_mn = mma[-1]
        rows = cute.size(c_mn, mode=[0])
        visible = cute.make_rmem_tensor(cute.make_layout(rows), cutlass.Int32)
        row_max = cute.make_rmem_tensor(cute.make_layout(rows), cutlass.Float32)
        row_sum = cute.make_rmem_tensor(cute.make_layout(rows), cutlass.Float32)
        factor = cute.make_rmem_tensor(cute.make_layout(rows), cutlass.Float32)
        for i in cutlass.range_constexpr(rows):
            row = coords[0] * CTA_M + wg * TILE_M + c_mn[i, 0][0]
            visible[i] = seqlen_k
            if cutlass.const_expr(self.causal):
                visible[i] = cutlass.min(row + 1, seqlen_k)
            row_max[i] = -cutlass.Float32.inf
            row_sum[i] = 0.0
        return visible, row_max, row_sum, factor

    @cute.jit
    def _softmax(self, mma: tuple, state: tuple, n: cutlass.Int32, masked: cutlass.Constexpr) -> None:
        """The online-softmax step on KV block ``n``'s scores (in ``acc_s``); ``masked``: compile
        the mask in (each row's visible keys, shifted to the block), else no compare at all."""
        acc_s = mma[6]
        if cutlass.const_expr(masked):
            self._mask(mma, state, n)
        common.softmax_step(common.acc_mn(acc_s), *state[1:], self.scale_log2)

    @cute.jit
    def _mask(self, mma: tuple, state: tuple, n: cutlass.Int32) -> None:
        """Mask KV block ``n``'s scores against each row's visible keys."""
        visible = state[0]
        col_limit = cute.make_rmem_tensor_like(visible)
        for i in cutlass.range_constexpr(cute.size(visible)):
            col_limit[i] = visible[i] - n * self.tile_n
        common.apply_mask(common.acc_mn(mma[6]), mma[8], col_limit)

    @cute.jit
    def _rescale(self, acc_o: cute.Tensor, factor: cute.Tensor) -> None:
        """O's rows times the softmax step's factors, before the block's ``P V`` is added (every block)."""
        common.scale_rows(common.acc_mn(acc_o), factor)

    # --8<-- [start:epilogue]
    @cute.jit
    def _epilogue(
        self,
        mma: tuple,
        state: tuple,
        tma: tuple,
        coords: tuple,
        mLse: cute.Tensor,
        sQ: cute.Tensor,
        wg: cutlass.Int32,
    ) -> None:
        """Normalize O, write the LSE of each row that exists, and store O with TMA through this
        warpgroup's Q tile in SMEM (its last ``Q K^T`` is done, so the tile is free)."""
        _, thr_pv, _, _, _, _, _, acc_o, c_mn = mma
        _, row_max, row_sum, _ = state
        m_block, hr, hk, batch = coords
        tidx, _, _ = cute.arch.thread_idx()
        inv_sum = cute.make_rmem_tensor_like(row_max)
        lse = cute.make_rmem_tensor_like(row_max)
        common.finish_rows(row_max, row_sum, inv_sum, lse, self.scale)
        for i in cutlass.range_constexpr(cute.size(lse)):
            row = m_block * CTA_M + wg * TILE_M + c_mn[i, 0][0]
            if tidx % 4 == 0 and row < mLse.shape[0]:
                mLse[row, 0, hr, hk, batch] = lse[i]
        common.scale_rows(common.acc_mn(acc_o), inv_sum)
        o_regs = cute.make_rmem_tensor(acc_o.layout, self.dtype)
        o_regs.store(acc_o.load().to(self.dtype))
        cute.autovec_copy(o_regs, thr_pv.partition_C(sQ[(None, None, wg)]))
        # The TMA store reads SMEM through the async proxy: make the generic writes visible to it.
        cute.arch.fence_proxy("async.shared", space="cta")
        pipeline.NamedBarrier(
            barrier_id=EPILOGUE_BARRIER + wg, num_threads=WARPGROUP_THREADS
        ).arrive_and_wait()
        if cute.arch.make_warp_uniform(cute.arch.warp_idx()) % 4 == 0:
            atom, sO, gO = tma[3]
            cute.copy(atom, sO[(None, wg)], gO[(None, m_block * 2 + wg, 0, hr, hk, batch)])
            cute.arch.cp_async_bulk_commit_group()
            cute.arch.cp_async_bulk_wait_group(0, read=True)  # SMEM must outlive the store

    # --8<-- [end:epilogue]


__all__ = ["EPILOGUE_BARRIER", "FmhaHopperV0"]
