"""Warp-specialized persistent Hopper GEMM (sm_90a): C = A @ B^T, A and B K-major, fp32 accumulation.

What it shows, end to end, in the CuTe DSL:

- **TMA loads** (``cp.async.bulk.tensor``) of A and B tiles into 128-byte-swizzled SMEM, with
  **multicast** of the operand that CTAs of a cluster share (B for a 2x1 cluster).
- A **multistage mbarrier pipeline** (``cutlass.pipeline.PipelineTmaAsync``): the TMA unit
  completes the "full" barrier with a transaction count; consumers arrive on the "empty"
  barrier of every CTA whose TMA wrote into their SMEM.
- **Warp specialization**: warpgroup 0 is the producer (one warp issues TMA, the whole
  warpgroup gives registers back with ``setmaxregister_decrease``); warpgroups 1.. are
  consumers that take the registers (``setmaxregister_increase``) and run **WGMMA**,
  each on its own 64-row slice of the CTA tile.
- A **persistent** grid with our own grouped tile order (clusters walk the output in bands
  of ``raster_group_m`` cluster rows, so concurrently running tiles share A and B in L2).
- An **epilogue per consumer warpgroup**: accumulators -> bf16/fp16 -> ``stmatrix`` into a
  small ring of SMEM buffers -> TMA store (clipped at the matrix edges), one named barrier
  per 64x32 subtile.

Any M, N, K whose rows are 16-byte aligned run (K and N multiples of 8 for 16-bit types):
TMA fills out-of-bounds loads with zeros and clips out-of-bounds stores, so ragged edges
need no predication in the kernel. M, N and K are dynamic: one binary per config serves
every shape.

Run it: ``python -m mla_var3.kernel hopper_gemm_ws --m 8192 --n 8192 --k 8192 --check``
(on an H100/H200), or ``--compile-only --arch sm_90a`` anywhere.

**Instrumentation stays out of this file.** Two seams let a subclass time the kernel without
a line in the loops above: :meth:`HopperGemmWS._attach_probes` (the pipeline the warp roles
use; the default build uses it as created) and :meth:`HopperGemmWS._store_tile` (the
epilogue of one tile), plus the optional ``extra`` argument. ``timeline.py`` beside
this file is that subclass: it records an in-kernel timeline; with its probes stubbed it
compiles to this file's cubin byte for byte (a test checks it).

Learned from CUTLASS ``examples/python/CuTeDSL/cute/hopper/kernel/dense_gemm/dense_gemm.py``
and ``dense_gemm_persistent.py`` at the pinned commit (cited ``path:line`` below); the
structure, the per-warpgroup epilogue with a single barrier per subtile, the tile order
and the SMEM budget are ours.
"""

from dataclasses import dataclass
from typing import ClassVar, NamedTuple

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute
import cutlass.memory
import cutlass.pipeline as pipeline
import cutlass.utils.hopper_helpers as sm90_utils
from cutlass.cute.nvgpu import OperandMajorMode, cpasync, warp, warpgroup
from cutlass.memory import SmemAllocator
from cutlass.tensor_utils import LayoutEnum

WARPGROUP_THREADS = 128
WARPS_PER_WARPGROUP = WARPGROUP_THREADS // 32
WGMMA_M = 64  # rows of one warpgroup's WGMMA: each consumer warpgroup owns 64 rows of the CTA tile
TILE_K = 64  # one 128-byte swizzle row of 16-bit elements per K tile
# SMEM a Hopper block may opt into (227 KiB, from the DSL) minus the 1 KiB of static SMEM the
# DSL's kernels already hold (cuobjdump: SHARED:1024): what the dynamic buffers may use.
DSL_STATIC_SMEM = 1024
SMEM_CAPACITY_SM90 = cutlass.memory.get_smem_capacity_in_bytes("sm_90") - DSL_STATIC_SMEM
MBARRIER_BYTES = 8
SMEM_ALIGN = 1024  # 128-byte swizzle atoms repeat every 1 KiB: align each buffer to it
EPI_TILE_N = 32  # columns per epilogue subtile; a subtile is (64 rows, 32 cols) per warpgroup
PRODUCER_REGISTERS = 40  # registers/thread left to the producer warpgroup
# setmaxnreg only moves registers within the pool the CTA got at launch: 168 per thread for 384
# threads under min_blocks_per_mp=1. Three warpgroups at 40 + 232 + 232 = 504 = 3 * 168 fill it
# exactly; 32 + 240 + 240 = 512 passes a check against the SM's 64 Ki registers but exceeds the
# CTA's pool, and the increase waits forever (the kernel hangs).
CONSUMER_REGISTERS = 232


# --8<-- [start:smem_budget]
@dataclass(frozen=True)
class SmemBudget:
    """Bytes of dynamic SMEM one CTA uses, by buffer (each buffer 1 KiB aligned)."""

    barriers: int
    a_stages: int
    b_stages: int
    c_ring: int

    @property
    def total(self) -> int:
        return self.barriers + self.a_stages + self.b_stages + self.c_ring


def _align(nbytes: int, to: int = SMEM_ALIGN) -> int:
    return (nbytes + to - 1) // to * to


def smem_budget(
    tile_mnk: tuple[int, int, int], stages: int, epi_stages: int, elem_bytes: int = 2
) -> SmemBudget:
    """The SMEM a config needs: ``stages`` A and B tiles, a C ring of ``epi_stages`` subtiles
    per consumer warpgroup, and one full and one empty mbarrier per stage.

    For 128x256x64 bf16 with 4 stages: 4 x (16 + 32) KiB of operands + 2 x 4 x 4 KiB of C
    ring + 1 KiB of barriers = 225 KiB of the 226 KiB left next to the DSL's static 1 KiB.
    (dense_gemm_persistent.py:1008-1023 budgets the same way, with a 1 KiB allowance.)
    """
    tile_m, tile_n, tile_k = tile_mnk
    consumer_wgs = tile_m // WGMMA_M
    return SmemBudget(
        barriers=_align(2 * stages * MBARRIER_BYTES),
        a_stages=_align(tile_m * tile_k * elem_bytes * stages),
        b_stages=_align(tile_n * tile_k * elem_bytes * stages),
        c_ring=_align(WGMMA_M * EPI_TILE_N * elem_bytes * epi_stages * consumer_wgs),
    )


def max_stages(tile_mnk: tuple[int, int, int], epi_stages: int, elem_bytes: int = 2) -> int:
    """The most A/B stages that fit next to the C ring (what ``_compute_stages`` defaults to)."""
    stages = 1
    while smem_budget(tile_mnk, stages + 1, epi_stages, elem_bytes).total <= SMEM_CAPACITY_SM90:
        stages += 1
    return stages


# --8<-- [end:smem_budget]


class Epilogue(NamedTuple):
    """What one consumer warpgroup's epilogue keeps across its tiles (built once by ``_consume``)."""

    r2s: cute.TiledCopy  # registers -> SMEM ring (stmatrix)
    tRS_acc: cute.Tensor  # the accumulator, retiled for r2s
    tRS_sC: cute.Tensor  # the ring partitioned for r2s: (R2S, R2S_M, R2S_N, slot)
    sub_f32: cute.Tensor  # one subtile of the accumulator ...
    sub_out: cute.Tensor  # ... and converted to C's dtype
    tma_c: cute.CopyAtom  # the TMA store
    bSG_sC: cute.Tensor  # the ring partitioned for it: (TMA, slot)
    bSG_gC: cute.Tensor  # C in (64, 32) subtiles: (TMA, rest_m64, rest_n32)
    ring_base: cutlass.Int32  # this warpgroup's first ring slot
    consumer_wg: cutlass.Int32
    is_store_warp: cutlass.Boolean  # the warpgroup's first warp issues the stores
    barrier: pipeline.NamedBarrier  # the warpgroup's own named barrier


class HopperGemmWS:
    """C[M,N] = A[M,K] @ B[N,K]^T on sm_90a, fp16/bf16 in, fp32 accumulate, C in the input dtype.

    ``tile_mn``: CTA tile, M in {64, 128} (one consumer warpgroup per 64 rows), N in
    {64, 128, 256}; K tile is 64 (one 128-byte swizzle row of 16-bit data).
    ``cluster_mn``: CTAs per cluster along M and N; the operand the cluster shares is
    multicast (B along M, A along N). ``stages``: A/B pipeline depth (``None``: as many as
    fit). ``epi_stages``: SMEM buffers per consumer warpgroup in the epilogue ring (>= 2).
    ``raster_group_m``: cluster rows per band of the persistent tile order.
    """

    # The timeline variant (timeline.py) sets this and takes a ``timeline_buf`` as ``extra``.
    records_timeline = False
    # A and B element types the host accepts (the FP8 subclass narrows them to e4m3).
    AB_DTYPES: ClassVar[tuple[type, ...]] = (cutlass.Float16, cutlass.BFloat16)

    def __init__(
        self,
        tile_mn: tuple[int, int] = (128, 256),
        cluster_mn: tuple[int, int] = (2, 1),
        stages: int | None = None,
        epi_stages: int = 4,
        raster_group_m: int = 8,
    ) -> None:
        self.tile_mnk = (tile_mn[0], tile_mn[1], TILE_K)
        self.cluster_mn = tuple(cluster_mn)
        self.epi_stages = epi_stages
        self.raster_group_m = raster_group_m
        self.consumer_wgs = tile_mn[0] // WGMMA_M
        self.threads = WARPGROUP_THREADS * (1 + self.consumer_wgs)
        self.stages = stages if stages is not None else self._compute_stages()
        self._check_config()

    # --- host-side set-up -------------------------------------------------------------
    def _check_config(self) -> None:
        tile_m, tile_n, _ = self.tile_mnk
        if tile_m not in (64, 128):
            raise ValueError(f"tile M must be 64 or 128 (one consumer warpgroup per 64 rows), got {tile_m}")
        if tile_n not in (64, 128, 256):
            raise ValueError(f"tile N must be 64, 128 or 256 (WGMMA N <= 256), got {tile_n}")
        cm, cn = self.cluster_mn
        if cm * cn > 4 or cm not in (1, 2, 4) or cn not in (1, 2, 4):
            raise ValueError(f"cluster must be a power of two per mode with at most 4 CTAs, got {cm}x{cn}")
        if self.epi_stages < 2:
            raise ValueError("epi_stages must be >= 2 (one buffer drains while the next fills)")
        need = smem_budget(self.tile_mnk, self.stages, self.epi_stages).total
        if need > SMEM_CAPACITY_SM90:
            raise ValueError(
                f"{self.stages} stages of {tile_m}x{tile_n}x64 need {need} B of SMEM, more than the "
                f"{SMEM_CAPACITY_SM90} B a block may use; use at most {self._compute_stages()} stages"
            )

    def _compute_stages(self) -> int:
        return max_stages(self.tile_mnk, self.epi_stages)

    def dynamic_smem_bytes(self) -> int:
        return smem_budget(self.tile_mnk, self.stages, self.epi_stages).total

    def _make_tiled_mma(self, ab_dtype: type[cutlass.Numeric], warpgroups: int) -> cute.TiledMma:
        # One WGMMA atom is 64 x tile_n x 16 per warpgroup; stacking `warpgroups` atoms along M
        # gives each consumer warpgroup its own 64-row slice (dense_gemm.py:269-275, 319-327).
        return sm90_utils.make_trivial_tiled_mma(
            ab_dtype,
            ab_dtype,
            OperandMajorMode.K,
            OperandMajorMode.K,
            cutlass.Float32,
            (warpgroups, 1, 1),
            tiler_mn=(WGMMA_M, self.tile_mnk[1]),
        )

    def _make_smem_layouts(
        self, ab_dtype: type[cutlass.Numeric], c_dtype: type[cutlass.Numeric]
    ) -> tuple[cute.ComposedLayout, cute.ComposedLayout, cute.ComposedLayout]:
        """Swizzled, staged SMEM layouts: A (tile_m, 64, stages), B (tile_n, 64, stages) with the
        K-major 128-byte swizzle atom WGMMA reads, and the C ring (64, 32, epi_stages * wgs)."""
        a_layout = sm90_utils.make_smem_layout_a(LayoutEnum.ROW_MAJOR, self.tile_mnk, ab_dtype, self.stages)
        b_layout = sm90_utils.make_smem_layout_b(LayoutEnum.ROW_MAJOR, self.tile_mnk, ab_dtype, self.stages)
        c_layout = sm90_utils.make_smem_layout_epi(
            c_dtype,
            LayoutEnum.ROW_MAJOR,
            (WGMMA_M, EPI_TILE_N),
            self.epi_stages,
            smem_trg_shape=(WGMMA_M, EPI_TILE_N, self.epi_stages * self.consumer_wgs),
        )
        return a_layout, b_layout, c_layout

    def _make_tma_atoms(
        self,
        a: cute.Tensor,
        b: cute.Tensor,
        c: cute.Tensor,
        a_layout: cute.ComposedLayout,
        b_layout: cute.ComposedLayout,
        c_layout: cute.ComposedLayout,
    ) -> tuple[cute.CopyAtom, cute.Tensor, cute.CopyAtom, cute.Tensor, cute.CopyAtom, cute.Tensor]:
        """TMA descriptors for A and B loads (multicast when the cluster shares the operand)
        and the C store (dense_gemm.py:1162-1225)."""
        tile_m, tile_n, tile_k = self.tile_mnk
        cm, cn = self.cluster_mn

        def load_op(multicast: int) -> cpasync.CopyOp:
            return (
                cpasync.CopyBulkTensorTileG2SMulticastOp()
                if multicast > 1
                else cpasync.CopyBulkTensorTileG2SOp()
            )

        # A's tile is shared by the cn CTAs of a cluster row; B's by the cm CTAs of a column.
        tma_a, gA = cpasync.make_tiled_tma_atom(
            load_op(cn), a, cute.slice_(a_layout, (None, None, 0)), (tile_m, tile_k), num_multicast=cn
        )
        tma_b, gB = cpasync.make_tiled_tma_atom(
            load_op(cm), b, cute.slice_(b_layout, (None, None, 0)), (tile_n, tile_k), num_multicast=cm
        )
        tma_c, gC = cpasync.make_tiled_tma_atom(
            cpasync.CopyBulkTensorTileS2GOp(),
            c,
            cute.slice_(c_layout, (None, None, 0)),
            (WGMMA_M, EPI_TILE_N),
        )
        return tma_a, gA, tma_b, gB, tma_c, gC

    def _make_shared_storage(
        self,
        ab_dtype: type[cutlass.Numeric],
        c_dtype: type[cutlass.Numeric],
        a_layout: cute.ComposedLayout,
        b_layout: cute.ComposedLayout,
        c_layout: cute.ComposedLayout,
    ) -> type:
        stages = self.stages

        @cute.struct
        class SharedStorage:
            ab_barriers: cute.struct.MemRange[cutlass.Int64, 2 * stages]  # full[stages], empty[stages]
            sA: cute.struct.Align[cute.struct.MemRange[ab_dtype, cute.cosize(a_layout)], SMEM_ALIGN]
            sB: cute.struct.Align[cute.struct.MemRange[ab_dtype, cute.cosize(b_layout)], SMEM_ALIGN]
            sC: cute.struct.Align[cute.struct.MemRange[c_dtype, cute.cosize(c_layout)], SMEM_ALIGN]

        return SharedStorage

    @cute.jit
    def __call__(
        self,
        a: cute.Tensor,
        b: cute.Tensor,
        c: cute.Tensor,
        max_clusters: cutlass.Int32,
        stream: cuda.CUstream,
        extra: cute.Tensor | None = None,
    ) -> None:
        """Build the TMA descriptors and launch a persistent grid of at most ``max_clusters``
        clusters (pass the number of clusters that fit on the GPU at once). ``extra``: the one
        tensor a subclass hands to the kernel (the timeline variant's record buffer,
        ``timeline.py``; the FP8 kernel's scales); the default build takes none."""
        if cutlass.const_expr(a.element_type not in self.AB_DTYPES or b.element_type != a.element_type):
            raise TypeError(f"A and B must both be one of {self.AB_DTYPES}, got {a.element_type} and {b.element_type}")
        if cutlass.const_expr((extra is not None) != self.records_timeline):
            raise ValueError("pass timeline_buf exactly when the kernel records a timeline (timeline.py)")
        self._launch(a, b, c, max_clusters, stream, extra)

    def _launch(
        self,
        a: cute.Tensor,
        b: cute.Tensor,
        c: cute.Tensor,
        max_clusters: cutlass.Int32,
        stream: cuda.CUstream,
        extra: cute.Tensor | None,
    ) -> None:
        """The host body every build shares (called while ``__call__`` is traced): SMEM layouts,
        TMA atoms, shared storage, and the persistent launch with ``extra`` as the kernel's last
        argument."""
        ab_dtype = a.element_type
        c_dtype = c.element_type
        a_layout, b_layout, c_layout = self._make_smem_layouts(ab_dtype, c_dtype)
        tma_a, gA, tma_b, gB, tma_c, gC = self._make_tma_atoms(a, b, c, a_layout, b_layout, c_layout)
        self.shared_storage = self._make_shared_storage(ab_dtype, c_dtype, a_layout, b_layout, c_layout)

        # Persistent grid: (cm, cn, clusters) with cluster (cm, cn, 1), so blockIdx.z numbers
        # clusters and each cluster loops over cluster tiles (dense_gemm_persistent.py:1179-1193).
        cm, cn = self.cluster_mn
        tiles_m = cute.ceil_div(c.shape[0], self.tile_mnk[0])
        tiles_n = cute.ceil_div(c.shape[1], self.tile_mnk[1])
        cluster_tiles = cute.ceil_div(tiles_m, cm) * cute.ceil_div(tiles_n, cn)
        self.kernel(tma_a, gA, tma_b, gB, tma_c, gC, a_layout, b_layout, c_layout, extra).launch(
            grid=(cm, cn, cutlass.min(cluster_tiles, max_clusters)),
            block=(self.threads, 1, 1),
            cluster=(cm, cn, 1),
            min_blocks_per_mp=1,  # a register cap at entry, so setmaxnreg can move registers
            stream=stream,
        )

    # --- device side ------------------------------------------------------------------
    # --8<-- [start:tile_order]
    @cute.jit
    def _cluster_tile(
        self, work: cutlass.Int32, clusters_mn: tuple[cutlass.Int32, cutlass.Int32]
    ) -> tuple[cutlass.Int32, cutlass.Int32]:
        """The (M, N) cluster tile of work unit ``work``.

        Work units are cluster tiles in bands of ``raster_group_m`` cluster rows, each band
        walked column by column, M fastest: a wave of clusters covers a compact block of C,
        so the A rows and B columns it reads are shared in L2. The last band may be shorter:
        without the ``min`` its units would wrap into rows past C and skip tiles inside it.
        """
        clusters_m, clusters_n = clusters_mn
        per_band = self.raster_group_m * clusters_n
        band = work // per_band
        first_m = band * self.raster_group_m
        rows = cutlass.min(clusters_m - first_m, self.raster_group_m)
        within = work - band * per_band
        return first_m + within % rows, within // rows

    @cute.jit
    def _cta_tile(
        self, work: cutlass.Int32, clusters_mn: tuple[cutlass.Int32, cutlass.Int32]
    ) -> tuple[cutlass.Int32, cutlass.Int32]:
        """The (M, N) tile this CTA computes for work unit ``work`` of its cluster. Cluster
        tiles that stick out of C are computed on zero-filled loads; TMA clips their stores."""
        cluster_m, cluster_n = self._cluster_tile(work, clusters_mn)
        cta_m, cta_n, _ = cute.arch.block_in_cluster_idx()
        return cluster_m * self.cluster_mn[0] + cta_m, cluster_n * self.cluster_mn[1] + cta_n

    @cute.jit
    def _work_units(self) -> tuple[cutlass.Int32, cutlass.Int32]:
        """First work unit of this cluster and the stride between its units (the grid's
        z extent: the number of persistent clusters)."""
        _, _, first = cute.arch.block_idx()
        _, _, step = cute.arch.grid_dim()
        return first, step

    # --8<-- [end:tile_order]

    # --- seams for instrumentation (timeline.py overrides them) --------------------------
    def _attach_probes(
        self, ab_pipeline: pipeline.PipelineTmaAsync, extra: cute.Tensor | None
    ) -> pipeline.PipelineTmaAsync:
        """The pipeline the warp roles use: the one just created (a timeline variant wraps it;
        ``extra`` is the host's ``extra`` tensor, which a subclass reads here in kernel scope)."""
        return ab_pipeline

    @cute.kernel
    def kernel(
        self,
        tma_a: cute.CopyAtom,
        mA: cute.Tensor,
        tma_b: cute.CopyAtom,
        mB: cute.Tensor,
        tma_c: cute.CopyAtom,
        mC: cute.Tensor,
        a_layout: cute.ComposedLayout,
        b_layout: cute.ComposedLayout,
        c_layout: cute.ComposedLayout,
        extra: cute.Tensor | None,
    ) -> None:
        tile_m, tile_n, tile_k = self.tile_mnk
        cm, cn = self.cluster_mn
        tidx, _, _ = cute.arch.thread_idx()
        warp_idx = cute.arch.make_warp_uniform(cute.arch.warp_idx())
        warpgroup_idx = warp_idx // WARPS_PER_WARPGROUP

        if warp_idx == 0:
            cpasync.prefetch_descriptor(tma_a)
            cpasync.prefetch_descriptor(tma_b)
            cpasync.prefetch_descriptor(tma_c)

        # Where this CTA sits in its cluster, and which peers receive its multicast loads.
        cta_layout_mnk = cute.make_layout((cm, cn, 1))
        cta_m, cta_n, _ = cute.arch.block_in_cluster_idx()
        a_mcast_mask = cute.make_layout_image_mask(cta_layout_mnk, (cta_m, cta_n, 0), mode=1) if cn > 1 else 0
        b_mcast_mask = cute.make_layout_image_mask(cta_layout_mnk, (cta_m, cta_n, 0), mode=0) if cm > 1 else 0

        storage = SmemAllocator().allocate(self.shared_storage)
        sA = storage.sA.get_tensor(a_layout.outer, swizzle=a_layout.inner)  # (tile_m, 64, stages)
        sB = storage.sB.get_tensor(b_layout.outer, swizzle=b_layout.inner)  # (tile_n, 64, stages)
        sC = storage.sC.get_tensor(c_layout.outer, swizzle=c_layout.inner)  # (64, 32, ring)

        # --8<-- [start:tma_pipeline_setup]
        # Full barrier: one producer arrival plus the TMA transaction bytes of one stage (the
        # whole A and B tiles land in every CTA, its own half of a multicast included).
        # Empty barrier: every consumer warp signals each CTA that multicasts into its SMEM;
        # enable_multicast_signaling counts those arrivals for us (cutlass/pipeline/sm90.py,
        # PipelineTmaAsync.create); upstream counts them by hand (dense_gemm_persistent.py:615-636).
        stage_bytes = (tile_m + tile_n) * tile_k * sA.element_type.width // 8
        ab_pipeline = pipeline.PipelineTmaAsync.create(
            barrier_storage=storage.ab_barriers.data_ptr(),
            num_stages=self.stages,
            producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
            consumer_group=pipeline.CooperativeGroup(
                pipeline.Agent.Thread, self.consumer_wgs * WARPGROUP_THREADS
            ),
            tx_count=stage_bytes,
            cta_layout_vmnk=cute.make_layout((1, cm, cn, 1)),
            enable_multicast_signaling=True,
            defer_sync=True,
        )
        # Barrier inits must be visible cluster-wide before any peer multicasts into us
        # (dense_gemm_persistent.py:638-639, 718-719).
        pipeline.pipeline_init_arrive(cluster_shape_mn=self.cluster_mn, is_relaxed=True)

        # Global tiles: (tile, tile, rest_m_or_n, rest_k), partitioned for TMA. A CTA issues
        # its slice of a multicast tile; tma_partition splits the tile among the peers.
        gA = cute.local_tile(mA, (tile_m, tile_k), (None, None))
        gB = cute.local_tile(mB, (tile_n, tile_k), (None, None))
        tAsA, tAgA = cpasync.tma_partition(
            tma_a, cta_n, cute.make_layout(cn), cute.group_modes(sA, 0, 2), cute.group_modes(gA, 0, 2)
        )
        tBsB, tBgB = cpasync.tma_partition(
            tma_b, cta_m, cute.make_layout(cm), cute.group_modes(sB, 0, 2), cute.group_modes(gB, 0, 2)
        )
        # --8<-- [end:tma_pipeline_setup]
        ab_pipeline = self._attach_probes(ab_pipeline, extra)
        gC = cute.local_tile(mC, (WGMMA_M, EPI_TILE_N), (None, None))  # (64, 32, rest_m64, rest_n32)
        bSG_sC, bSG_gC = cpasync.tma_partition(
            tma_c, 0, cute.make_layout(1), cute.group_modes(sC, 0, 2), cute.group_modes(gC, 0, 2)
        )

        k_tiles = cute.size(gA, mode=[3])
        clusters_mn = (cute.ceil_div(cute.size(gA, mode=[2]), cm), cute.ceil_div(cute.size(gB, mode=[2]), cn))

        pipeline.pipeline_init_wait(cluster_shape_mn=self.cluster_mn)

        # --8<-- [start:register_reallocation]
        # Warpgroup 0 produces, warpgroups 1.. consume. setmaxnreg is warpgroup-wide, so all
        # four producer warps give registers back even though only warp 0 issues TMA; the
        # consumers raise their cap to hold a 64 x tile_n fp32 accumulator (128 regs at N=256).
        # One if/else, one role per branch (dense_gemm_persistent.py:721-725, 781-783).
        if warpgroup_idx == 0:
            cute.arch.setmaxregister_decrease(PRODUCER_REGISTERS)
            if warp_idx == 0:
                self._produce(
                    ab_pipeline,
                    (tma_a, tAgA, tAsA, a_mcast_mask),
                    (tma_b, tBgB, tBsB, b_mcast_mask),
                    k_tiles,
                    clusters_mn,
                )
        else:
            cute.arch.setmaxregister_increase(CONSUMER_REGISTERS)
            self._consume(
                ab_pipeline,
                sA,
                sB,
                sC,
                (tma_c, bSG_sC, bSG_gC),
                tidx,
                warpgroup_idx - 1,
                k_tiles,
                clusters_mn,
            )
        # --8<-- [end:register_reallocation]

    @cute.jit
    def _produce(
        self,
        ab_pipeline: pipeline.PipelineTmaAsync,
        a_load: tuple[cute.CopyAtom, cute.Tensor, cute.Tensor, cutlass.Int16],
        b_load: tuple[cute.CopyAtom, cute.Tensor, cute.Tensor, cutlass.Int16],
        k_tiles: cutlass.Int32,
        clusters_mn: tuple[cutlass.Int32, cutlass.Int32],
    ) -> None:
        """The producer warp: for every tile this CTA owns, stream its K tiles into the ring.

        ``a_load``/``b_load``: the TMA atom, the partitioned global tiles (TMA, rest, k), the
        partitioned SMEM ring (TMA, stage) and the multicast mask of each operand.
        """
        tma_a, tAgA, tAsA, a_mcast_mask = a_load
        tma_b, tBgB, tBsB, b_mcast_mask = b_load
        # --8<-- [start:tma_pipeline_producer]
        # (dense_gemm_persistent.py:725-779, re-cut around our tile order)
        state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, self.stages)
        first, step = self._work_units()
        for work in cutlass.range(first, clusters_mn[0] * clusters_mn[1], step, unroll=1):
            m_tile, n_tile = self._cta_tile(work, clusters_mn)
            for k in cutlass.range(k_tiles, unroll=1):
                # Wait until every consumer (here and in the peers we multicast to) freed the
                # slot, then arm its full barrier with the stage's transaction bytes.
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
        # Do not exit while peers may still arrive on our empty barriers.
        ab_pipeline.producer_tail(state)
        # --8<-- [end:tma_pipeline_producer]

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
        """A consumer warpgroup: WGMMA over its 64-row slice, then its own epilogue.

        ``c_store``: the TMA store atom, the ring partitioned for it (TMA, slot) and C
        partitioned into (64, 32) subtiles (TMA, rest_m64, rest_n32).
        """
        tma_c, bSG_sC, bSG_gC = c_store
        ab_dtype = sA.element_type
        c_dtype = sC.element_type
        tiled_mma = self._make_tiled_mma(ab_dtype, self.consumer_wgs)
        thr_mma = tiled_mma.get_slice(consumer_wg * WARPGROUP_THREADS)
        tCrA = tiled_mma.make_fragment_A(thr_mma.partition_A(sA))  # SMEM descriptors, per stage
        tCrB = tiled_mma.make_fragment_B(thr_mma.partition_B(sB))
        acc_shape = tiled_mma.partition_shape_C((self.tile_mnk[0], self.tile_mnk[1]))
        acc = cute.make_rmem_tensor(acc_shape, cutlass.Float32)
        tiled_mma.set(warpgroup.Field.ACCUMULATE, True)

        # --8<-- [start:epilogue_setup]
        # stmatrix (8x8 16-bit, x4) from the accumulator layout of ONE warpgroup's WGMMA, so
        # each consumer warpgroup writes its own (64, 32) subtiles (dense_gemm.py:931-962).
        store_atom = cute.make_copy_atom(warp.StMatrix8x8x16bOp(False, 4), c_dtype)
        wg_mma = self._make_tiled_mma(ab_dtype, 1)
        r2s = cute.make_tiled_copy_S(store_atom, cute.make_tiled_copy_C_atom(store_atom, wg_mma))
        thr_r2s = r2s.get_slice(tidx % WARPGROUP_THREADS)
        sub_shape = thr_r2s.partition_S(sC).shape[:3]
        # The warpgroup's first warp issues its TMA stores.
        is_store_warp = cute.arch.make_warp_uniform(cute.arch.warp_idx()) % WARPS_PER_WARPGROUP == 0
        epi = Epilogue(
            r2s=r2s,
            tRS_acc=r2s.retile(acc),
            tRS_sC=thr_r2s.partition_D(sC),  # (R2S, R2S_M, R2S_N, ring)
            sub_f32=cute.make_rmem_tensor(sub_shape, cutlass.Float32),
            sub_out=cute.make_rmem_tensor(sub_shape, c_dtype),
            tma_c=tma_c,
            bSG_sC=bSG_sC,
            bSG_gC=bSG_gC,
            ring_base=consumer_wg * self.epi_stages,
            consumer_wg=consumer_wg,
            is_store_warp=is_store_warp,
            barrier=pipeline.NamedBarrier(barrier_id=1 + consumer_wg, num_threads=WARPGROUP_THREADS),
        )
        # --8<-- [end:epilogue_setup]

        read = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, self.stages)
        release = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, self.stages)
        stored = cutlass.Int32(0)  # subtiles this warpgroup has stored so far (ring position)
        first, step = self._work_units()
        for work in cutlass.range(first, clusters_mn[0] * clusters_mn[1], step, unroll=1):
            m_tile, n_tile = self._cta_tile(work, clusters_mn)

            # --8<-- [start:wgmma_consumer_mainloop]
            acc.fill(0.0)
            # K tile 0: issue its WGMMAs and keep them in flight.
            self._mma_k_tile(ab_pipeline, read, tiled_mma, acc, tCrA, tCrB)
            read.advance()
            # K tiles 1..: issue tile k, then wait until only it is in flight, so tile k-1's
            # WGMMAs are done reading SMEM and its slot can go back to the producer
            # (one WGMMA batch in flight, as dense_gemm_persistent.py:836-912).
            for _k in cutlass.range(1, k_tiles, 1, unroll=1):
                self._mma_k_tile(ab_pipeline, read, tiled_mma, acc, tCrA, tCrB)
                warpgroup.wait_group(1)
                ab_pipeline.consumer_release(release)
                release.advance()
                read.advance()
            warpgroup.wait_group(0)
            ab_pipeline.consumer_release(release)
            release.advance()
            # --8<-- [end:wgmma_consumer_mainloop]
            stored = self._store_tile(epi, m_tile, n_tile, stored)
        if is_store_warp:
            cute.arch.cp_async_bulk_wait_group(0, read=True)  # SMEM must outlive the stores

    # --8<-- [start:wgmma_k_tile]
    @cute.jit
    def _mma_k_tile(
        self,
        ab_pipeline: pipeline.PipelineTmaAsync,
        read: pipeline.PipelineState,
        tiled_mma: cute.TiledMma,
        acc: cute.Tensor,
        tCrA: cute.Tensor,
        tCrB: cute.Tensor,
    ) -> None:
        """Wait until the stage ``read`` points at is full, then issue its K tile's WGMMAs
        (64 / 16 = 4 per K tile) as one group; they are still in flight on return."""
        ab_pipeline.consumer_wait(read)
        warpgroup.fence()
        for kb in cutlass.range_constexpr(cute.size(tCrA, mode=[2])):
            cute.gemm(
                tiled_mma,
                acc,
                tCrA[(None, None, kb, read.index)],
                tCrB[(None, None, kb, read.index)],
                acc,
            )
        warpgroup.commit_group()

    # --8<-- [end:wgmma_k_tile]

    # --8<-- [start:epilogue]
    @cute.jit
    def _store_tile(
        self, epi: Epilogue, m_tile: cutlass.Int32, n_tile: cutlass.Int32, stored: cutlass.Int32
    ) -> cutlass.Int32:
        """Store this warpgroup's 64 x tile_n slice of C tile (m_tile, n_tile); returns
        ``stored`` (subtiles stored so far: the ring position) advanced past it.

        Subtile j -> ring slot -> TMA store. The store warp waits (before the barrier) until at
        most epi_stages-2 stores still read the ring, so after the barrier the slot the NEXT
        subtile writes is free: one named barrier per subtile instead of two
        (dense_gemm_persistent.py:933-969).
        """
        subtiles = self.tile_mnk[1] // EPI_TILE_N
        sub_size = cute.size(epi.sub_f32)
        c_dtype = epi.sub_out.element_type
        for j in cutlass.range_constexpr(subtiles):
            for v in cutlass.range_constexpr(sub_size):
                epi.sub_f32[v] = epi.tRS_acc[j * sub_size + v]
            epi.sub_out.store(epi.sub_f32.load().to(c_dtype))
            slot = epi.ring_base + stored % self.epi_stages
            cute.copy(epi.r2s, epi.sub_out, epi.tRS_sC[(None, None, None, slot)])
            # Make the generic-proxy SMEM writes visible to the TMA (async proxy).
            cute.arch.fence_proxy("async.shared", space="cta")
            if epi.is_store_warp:
                cute.arch.cp_async_bulk_wait_group(self.epi_stages - 2, read=True)
            epi.barrier.arrive_and_wait()
            if epi.is_store_warp:
                m64 = m_tile * self.consumer_wgs + epi.consumer_wg
                n32 = n_tile * subtiles + j
                cute.copy(epi.tma_c, epi.bSG_sC[(None, slot)], epi.bSG_gC[(None, m64, n32)])
                cute.arch.cp_async_bulk_commit_group()
            stored += 1
        return stored

    # --8<-- [end:epilogue]


__all__ = ["Epilogue", "HopperGemmWS", "SmemBudget", "max_stages", "smem_budget"]
