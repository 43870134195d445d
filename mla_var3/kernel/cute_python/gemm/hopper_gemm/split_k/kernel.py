"""Split-K Hopper GEMM (sm_90a): the v5 kernel (``HopperGemmWS``) over (output tile, K slice) work units,
fp32 partial tiles into a workspace, then a vectorized reduce kernel that sums them into C.

When C has few tiles (M = 16 x N = 8192: 64 tiles of 64 x 128 for 132 SMs), too few CTAs
stream A and B: each SM's intake, not the GPU's, bounds the time. Splitting K into ``splits``
slices multiplies the work units without shrinking the tile:

- **work unit** ``u`` is (cluster tile ``u % cluster_tiles``, slice ``u // cluster_tiles``):
  a wave of units walks every tile of one K slice in the v5 tile order before the next slice,
  so concurrent units share A rows and B columns in L2 as they do unsplit;
- slice ``s`` of ``k_tiles`` K tiles is ``[s * k_tiles // splits, (s + 1) * k_tiles // splits)``:
  balanced to one K tile, never empty while ``splits <= k_tiles`` (the plan's rule ensures it);
- the **workspace** is fp32 ``(M, splits, N_pad)`` (``N_pad``: N rounded up to whole cluster
  tiles), which the GEMM sees as an ordinary row-major ``(M, splits * N_pad)`` matrix whose
  column tile ``s * tiles_n + n`` is slice ``s``'s partial of tile ``n``: the v5 epilogue
  (SMEM ring + TMA store, rows past M clipped) stores it unchanged, with an fp32 ring;
- the **reduce kernel** reads the ``splits`` partials of 4 consecutive columns with one 128-bit
  load each (all in flight before the first add), sums them in fp32 and stores 4 elements of C.
  It is launched with PDL: the GEMM triggers it early (``griddepcontrol.launch_dependents``) and
  it waits (``griddepcontrol.wait``) before its first load, so its launch overlaps the GEMM.

What the subclass overrides: ``_attach_probes`` (the v5 kernel's kernel-scope hook, here the PDL
trigger), the two warp roles' loops (``_produce``/``_consume``: the unit count and each unit's K
range are not seams of the v5 kernel) and the epilogue's register -> SMEM atom (``stmatrix``
stores 16-bit values; fp32 takes plain ``st.shared``, as dense_gemm_persistent.py:799-818
selects by the output width). Everything else -- TMA atoms, pipeline, warp specialization,
tile order, the per-subtile TMA-store epilogue -- is the v5 kernel's own code.
"""

from dataclasses import replace
from typing import Any

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline
from cutlass.cute.nvgpu import CopyUniversalOp, warp, warpgroup

from mla_var3.kernel.cute_python.gemm.hopper_gemm.warp_specialized.kernel import (
    SMEM_CAPACITY_SM90,
    WARPGROUP_THREADS,
    WARPS_PER_WARPGROUP,
    Epilogue,
    HopperGemmWS,
    SmemBudget,
    smem_budget,
)

REDUCE_THREADS = 256
REDUCE_VEC = 4  # fp32 partials per 128-bit load (LDG.E.128); C is stored 4 elements at a time
MAX_LOAD_BITS = 128
EPI_STAGES = 4  # fp32 C ring slots per consumer warpgroup (the v5 default)


def splitk_smem_budget(tile_mnk: tuple[int, int, int], stages: int, epi_stages: int) -> SmemBudget:
    """The v5 budget with an fp32 C ring: an fp32 ring slot holds as many bytes as two 16-bit ones."""
    return replace(
        smem_budget(tile_mnk, stages, epi_stages), c_ring=smem_budget(tile_mnk, stages, 2 * epi_stages).c_ring
    )


def splitk_max_stages(tile_mnk: tuple[int, int, int], epi_stages: int) -> int:
    """The most A/B stages that fit next to the fp32 C ring."""
    stages = 1
    while splitk_smem_budget(tile_mnk, stages + 1, epi_stages).total <= SMEM_CAPACITY_SM90:
        stages += 1
    return stages


def k_slice(split: Any, k_tiles: Any, splits: int) -> tuple[Any, Any]:
    """First K tile and K tile count of slice ``split`` of ``k_tiles``: ``[split * k_tiles // splits,
    (split + 1) * k_tiles // splits)``, balanced to one tile, none empty while ``splits <= k_tiles``.
    Plain arithmetic: the kernel calls it on Int32 values, the tests on Python ints."""
    first = split * k_tiles // splits
    return first, (split + 1) * k_tiles // splits - first


class HopperGemmSplitK(HopperGemmWS):
    """C = A @ B^T in ``splits`` K slices: partial tiles (fp32) into a workspace, then a reduce.

    ``splits``: K slices (work units = cluster tiles x splits). The other arguments are
    :class:`HopperGemmWS`'s; ``stages`` defaults to what SMEM holds next to the fp32 C ring.
    """

    def __init__(
        self,
        tile_mn: tuple[int, int] = (128, 256),
        cluster_mn: tuple[int, int] = (1, 1),
        splits: int = 2,
        stages: int | None = None,
        epi_stages: int = EPI_STAGES,
        raster_group_m: int = 8,
    ) -> None:
        if splits < 1:
            raise ValueError(f"splits must be >= 1, got {splits}")
        self.splits = splits
        super().__init__(tile_mn, cluster_mn, stages, epi_stages, raster_group_m)

    # --- host side ------------------------------------------------------------------------
    def _compute_stages(self) -> int:
        return splitk_max_stages(self.tile_mnk, self.epi_stages)

    def _check_config(self) -> None:
        super()._check_config()
        need = splitk_smem_budget(self.tile_mnk, self.stages, self.epi_stages).total
        if need > SMEM_CAPACITY_SM90:
            raise ValueError(
                f"{self.stages} stages with an fp32 C ring need {need} B of SMEM, more than the "
                f"{SMEM_CAPACITY_SM90} B a block may use; use at most {self._compute_stages()} stages"
            )

    def dynamic_smem_bytes(self) -> int:
        return splitk_smem_budget(self.tile_mnk, self.stages, self.epi_stages).total

    def padded_n(self, n: int) -> int:
        """Columns of one slice in the workspace: N rounded up to whole cluster tiles, so a
        cluster tile sticking out of C never stores into the next slice."""
        width = self.tile_mnk[1] * self.cluster_mn[1]
        return (n + width - 1) // width * width

    @cute.jit
    def __call__(
        self,
        a: cute.Tensor,
        b: cute.Tensor,
        c: cute.Tensor,
        workspace: cute.Tensor,
        max_clusters: cutlass.Int32,
        stream: cuda.CUstream,
    ) -> None:
        """Two launches on ``stream``: the GEMM into ``workspace`` (fp32, ``(M, splits *
        padded_n(N))`` row-major), then the reduce into ``c``."""
        if cutlass.const_expr(a.element_type not in self.AB_DTYPES or b.element_type != a.element_type):
            raise TypeError(
                f"A and B must both be one of {self.AB_DTYPES}, got {a.element_type} and {b.element_type}"
            )
        if cutlass.const_expr(workspace.element_type != cutlass.Float32):
            raise TypeError(f"the workspace must be Float32, got {workspace.element_type}")
        # The v5 host body with the workspace as C: its grid counts cluster tiles of the
        # (M, splits * N_pad) matrix, which are exactly the work units.
        self._launch(a, b, workspace, max_clusters, stream, None)
        vectors = c.shape[0] * (c.shape[1] // REDUCE_VEC)
        self.reduce_kernel(workspace, c).launch(
            grid=(cute.ceil_div(vectors, REDUCE_THREADS), 1, 1),
            block=(REDUCE_THREADS, 1, 1),
            stream=stream,
            use_pdl=True,
        )

    # --- device side: the GEMM over (tile, K slice) units ---------------------------------
    def _attach_probes(
        self, ab_pipeline: pipeline.PipelineTmaAsync, extra: cute.Tensor | None
    ) -> pipeline.PipelineTmaAsync:
        """The v5 kernel's one kernel-scope hook before the warp roles (its instrumentation seam),
        used for PDL: once every GEMM CTA is resident and past this point, the reduce grid may
        launch onto SMs the GEMM leaves idle, where it waits in ``griddepcontrol.wait``. Every
        GEMM CTA is resident already (the persistent grid is at most what fits), so the early
        reduce CTAs cannot hold SMs a GEMM CTA needs."""
        cute.arch.griddepcontrol_launch_dependents()
        return ab_pipeline

    @cute.jit
    def _unit(
        self, work: cutlass.Int32, cluster_tiles: cutlass.Int32, k_tiles: cutlass.Int32
    ) -> tuple[cutlass.Int32, cutlass.Int32, cutlass.Int32, cutlass.Int32]:
        """Work unit ``work`` -> (cluster tile, slice, first K tile, K tiles of the slice)."""
        split = work // cluster_tiles
        k_first, k_count = k_slice(split, k_tiles, self.splits)
        return work - split * cluster_tiles, split, k_first, k_count

    @cute.jit
    def _produce(
        self,
        ab_pipeline: pipeline.PipelineTmaAsync,
        a_load: tuple[cute.CopyAtom, cute.Tensor, cute.Tensor, cutlass.Int16],
        b_load: tuple[cute.CopyAtom, cute.Tensor, cute.Tensor, cutlass.Int16],
        k_tiles: cutlass.Int32,
        clusters_mn: tuple[cutlass.Int32, cutlass.Int32],
    ) -> None:
        """The v5 producer over split units: each unit streams its slice's K tiles only."""
        tma_a, tAgA, tAsA, a_mcast_mask = a_load
        tma_b, tBgB, tBsB, b_mcast_mask = b_load
        cluster_tiles = clusters_mn[0] * clusters_mn[1]
        state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, self.stages)
        first, step = self._work_units()
        for work in cutlass.range(first, cluster_tiles * self.splits, step, unroll=1):
            tile, _split, k_first, k_count = self._unit(work, cluster_tiles, k_tiles)
            m_tile, n_tile = self._cta_tile(tile, clusters_mn)
            for k in cutlass.range(k_first, k_first + k_count, unroll=1):
                ab_pipeline.producer_acquire(state)
                full = ab_pipeline.producer_get_barrier(state)
                cute.copy(
                    tma_a,
                    tAgA[(None, m_tile, k)],
                    tAsA[(None, state.index)],
                    tma_bar_ptr=full,
                    mcast_mask=a_mcast_mask,
                )
                cute.copy(
                    tma_b,
                    tBgB[(None, n_tile, k)],
                    tBsB[(None, state.index)],
                    tma_bar_ptr=full,
                    mcast_mask=b_mcast_mask,
                )
                state.advance()
        ab_pipeline.producer_tail(state)

    @cute.jit
    def _consume(
        self,
        ab_pipeline: pipeline.PipelineTmaAsync,
        sA: cute.Tensor,
        sB: cute.Tensor,
        sC: cute.Tensor,
        c_store: tuple[cute.CopyAtom, cute.Tensor, cute.Tensor],
        tidx: cutlass.Int32,
        consumer_wg: cutlass.Int32,
        k_tiles: cutlass.Int32,
        clusters_mn: tuple[cutlass.Int32, cutlass.Int32],
    ) -> None:
        """The v5 consumer over split units: WGMMA over the unit's K slice, then the v5
        epilogue (``_store_tile``) into the slice's columns of the workspace."""
        tma_c, bSG_sC, bSG_gC = c_store
        ab_dtype = sA.element_type
        tiled_mma = self._make_tiled_mma(ab_dtype, self.consumer_wgs)
        thr_mma = tiled_mma.get_slice(consumer_wg * WARPGROUP_THREADS)
        tCrA = tiled_mma.make_fragment_A(thr_mma.partition_A(sA))
        tCrB = tiled_mma.make_fragment_B(thr_mma.partition_B(sB))
        acc = cute.make_rmem_tensor(
            tiled_mma.partition_shape_C((self.tile_mnk[0], self.tile_mnk[1])), cutlass.Float32
        )
        tiled_mma.set(warpgroup.Field.ACCUMULATE, True)

        # fp32 out: the thread -> value map of stmatrix over one warpgroup's WGMMA accumulator
        # (as the v5 epilogue's), stored with a plain 32-bit st.shared atom.
        wg_mma = self._make_tiled_mma(ab_dtype, 1)
        c_map = cute.make_copy_atom(warp.StMatrix8x8x16bOp(False, 4), cutlass.Float32)
        r2s = cute.make_tiled_copy_S(
            cute.make_copy_atom(CopyUniversalOp(), cutlass.Float32),
            cute.make_tiled_copy_C_atom(c_map, wg_mma),
        )
        thr_r2s = r2s.get_slice(tidx % WARPGROUP_THREADS)
        sub_shape = thr_r2s.partition_S(sC).shape[:3]
        is_store_warp = cute.arch.make_warp_uniform(cute.arch.warp_idx()) % WARPS_PER_WARPGROUP == 0
        epi = Epilogue(
            r2s=r2s,
            tRS_acc=r2s.retile(acc),
            tRS_sC=thr_r2s.partition_D(sC),
            sub_f32=cute.make_rmem_tensor(sub_shape, cutlass.Float32),
            sub_out=cute.make_rmem_tensor(sub_shape, cutlass.Float32),
            tma_c=tma_c,
            bSG_sC=bSG_sC,
            bSG_gC=bSG_gC,
            ring_base=consumer_wg * self.epi_stages,
            consumer_wg=consumer_wg,
            is_store_warp=is_store_warp,
            barrier=pipeline.NamedBarrier(barrier_id=1 + consumer_wg, num_threads=WARPGROUP_THREADS),
        )

        read = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, self.stages)
        release = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, self.stages)
        stored = cutlass.Int32(0)
        cluster_tiles = clusters_mn[0] * clusters_mn[1]
        tiles_n = clusters_mn[1] * self.cluster_mn[1]  # CTA tiles per slice along the workspace's N
        first, step = self._work_units()
        for work in cutlass.range(first, cluster_tiles * self.splits, step, unroll=1):
            tile, split, _k_first, k_count = self._unit(work, cluster_tiles, k_tiles)
            m_tile, n_tile = self._cta_tile(tile, clusters_mn)
            acc.fill(0.0)
            self._mma_k_tile(ab_pipeline, read, tiled_mma, acc, tCrA, tCrB)
            read.advance()
            for _k in cutlass.range(1, k_count, 1, unroll=1):
                self._mma_k_tile(ab_pipeline, read, tiled_mma, acc, tCrA, tCrB)
                warpgroup.wait_group(1)
                ab_pipeline.consumer_release(release)
                release.advance()
                read.advance()
            warpgroup.wait_group(0)
            ab_pipeline.consumer_release(release)
            release.advance()
            stored = self._store_tile(epi, m_tile, split * tiles_n + n_tile, stored)
        if is_store_warp:
            cute.arch.cp_async_bulk_wait_group(0, read=True)

    # --- device side: the reduce ------------------------------------------------------------
    @cute.kernel
    def reduce_kernel(self, workspace: cute.Tensor, c: cute.Tensor) -> None:
        """C[m, n:n+4] = sum over slices s of workspace[m, s * N_pad + n : ... + 4], one thread
        per 4 columns: ``splits`` 128-bit loads in flight, fp32 sums, one 64-bit store of C."""
        cute.arch.griddepcontrol_wait()  # PDL: the GEMM has completed and its stores are visible
        tidx, _, _ = cute.arch.thread_idx()
        bidx, _, _ = cute.arch.block_idx()
        row_vecs = c.shape[1] // REDUCE_VEC
        slice_vecs = workspace.shape[1] // (REDUCE_VEC * self.splits)
        gW = cute.zipped_divide(workspace, (1, REDUCE_VEC))  # ((1, 4), (M, splits * N_pad / 4))
        gC = cute.zipped_divide(c, (1, REDUCE_VEC))  # ((1, 4), (M, N / 4))
        vec = bidx * REDUCE_THREADS + tidx
        if vec < c.shape[0] * row_vecs:
            row = vec // row_vecs
            col = vec - row * row_vecs
            load = cute.make_copy_atom(CopyUniversalOp(), cutlass.Float32, num_bits_per_copy=MAX_LOAD_BITS)
            parts = []
            for s in cutlass.range_constexpr(self.splits):
                src = gW[(None, (row, s * slice_vecs + col))]
                part = cute.make_fragment_like(src)
                cute.copy(load, src, part)
                parts.append(part)
            total = parts[0].load()
            for s in cutlass.range_constexpr(1, self.splits):
                total = total + parts[s].load()
            dst = gC[(None, (row, col))]
            out = cute.make_fragment_like(dst)
            out.store(total.to(c.element_type))
            store = cute.make_copy_atom(
                CopyUniversalOp(), c.element_type, num_bits_per_copy=REDUCE_VEC * c.element_type.width
            )
            cute.copy(store, out, dst)


__all__ = [
    "EPI_STAGES",
    "REDUCE_THREADS",
    "REDUCE_VEC",
    "HopperGemmSplitK",
    "k_slice",
    "splitk_max_stages",
    "splitk_smem_budget",
]
