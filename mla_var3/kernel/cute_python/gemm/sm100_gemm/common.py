"""What our SM100 GEMM steps share: SMEM budget, host-side MMA/TMA set-up, and the per-tile work of each role.

The steps (``tcgen05``, ``two_cta``, ``ws_tma_store``, ``persistent_static``, ``persistent_clc``,
``tmem_double_buffer``) are variant packages beside this module. Each ``kernel.py`` shows the
structure its step adds and calls these pieces for the rest, so no step copies another's code:

- :class:`SmemBudget`: the dynamic SMEM of one CTA, computed before tracing (how many A/B stages
  fit, the launch size) and equal by construction to the struct :func:`make_shared_storage`
  builds;
- host side: :func:`make_tiled_mma` (one CTA or a CTA pair), :func:`make_ab_tma` (TMA atoms,
  multicast where the cluster shares an operand), :func:`make_c_tma_store`;
- device side: :class:`PairPlace` (the pair's leader and the multicast masks),
  :func:`partition_operands` and :class:`AbLoads` (TMA of one K tile), :func:`mma_k_tile` (the
  MMAs of one K tile), :func:`produce_tile` and :func:`mma_tile` (a whole tile, for
  warp-specialized roles), :func:`store_tile_direct` and :func:`store_tile_tma` (the two
  epilogues);
- :class:`Sm100Gemm`: the host function and the kernel entry of every step (a step writes
  ``run``); :class:`WarpSpecializedGemm`: the set-up of the warp-specialized steps (they write
  ``roles``); :class:`PersistentGemm`: roles looping over the tiles a schedule hands out (the
  static and the CLC step each bring their schedule).

Functions whose loops run on the device are ``@cute.jit`` and take and return the pipeline
participants they advance, as ``cutlass.utils.gemm.sm100`` does. Learned from CUTLASS's
Blackwell tutorial GEMMs ``fp16_gemm_0.py`` to ``fp16_gemm_3_1.py``
(``examples/python/CuTeDSL/cute/blackwell/tutorial/tutorial_gemm/``, pinned commit); the pages
cite the lines.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline
import cutlass.utils.blackwell_helpers as sm100_utils
from cutlass.cute.nvgpu import OperandMajorMode, cpasync, tcgen05
from cutlass.memory import SmemAllocator, TmemAllocator, get_num_tmem_alloc_cols, get_smem_capacity_in_bytes
from cutlass.tensor_utils import LayoutEnum

TILE_K = 64  # K per stage: 64 x 16-bit = 128 bytes, one 128-byte swizzle row
CTA_TILE_M = 128  # accumulator rows per CTA: the 128 TMEM lanes
SMEM_ALIGN = 1024  # a 128-byte-swizzle atom spans 8 rows x 128 B; the header is padded to this
SMEM_CAPACITY = get_smem_capacity_in_bytes("sm_100")  # opt-in dynamic SMEM per block on SM100
EPI_WARPS = 4  # warp w reads TMEM lanes 32w..32w+31: rows of the tile
EPI_THREADS = 32 * EPI_WARPS
DIRECT_EPI_COLUMNS = 64  # direct store: accumulator columns per tcgen05.ld (32x32b.x64)
EPI_TILE = (CTA_TILE_M, 32)  # TMA store: one 128 x 32 subtile of C per SMEM buffer
CLC_RESPONSE_BYTES = 16  # clusterlaunchcontrol.try_cancel writes a 16-byte response
EPI_BARRIER_ID = 1  # named barrier of the epilogue warps
TMEM_BARRIER_ID = 2  # named barrier on which TMEM users read the allocated address


@dataclass(frozen=True)
class SmemBudget:
    """Dynamic SMEM of one CTA: a 1 KiB header, ``ab_stages`` A/B stages and the C ring.

    The header holds every mbarrier, the TMEM address and the CLC response (< 1 KiB for any
    stage count that fits), padded so that the operand buffers start 1 KiB aligned; each buffer
    is a multiple of 1 KiB, so the struct's size is exactly :attr:`total`.
    """

    ab_stage_bytes: int  # one stage of this CTA's A rows and B rows
    ab_stages: int
    c_bytes: int = 0  # the TMA-store epilogue's ring (0 for a direct store)

    @classmethod
    def filling(cls, ab_stage_bytes: int, c_bytes: int = 0) -> SmemBudget:
        """As many A/B stages as fit in the SM's SMEM beside the header and the C ring."""
        return cls(ab_stage_bytes, (SMEM_CAPACITY - SMEM_ALIGN - c_bytes) // ab_stage_bytes, c_bytes)

    @property
    def total(self) -> int:
        return SMEM_ALIGN + self.ab_stages * self.ab_stage_bytes + self.c_bytes


def ab_stage_bytes(mma_n: int, pair: int, elem_bytes: int = 2) -> int:
    """One CTA's A/B stage: 128 rows of A and ``mma_n / pair`` rows of B, TILE_K deep.

    A CTA pair splits the MMA's B rows between its two CTAs: 256 x 256 MMA, fp16 -> 16 + 16 KiB.
    """
    return (CTA_TILE_M + mma_n // pair) * TILE_K * elem_bytes


def c_ring_bytes(c_stages: int, elem_bytes: int = 2) -> int:
    """The TMA-store epilogue's SMEM ring: ``c_stages`` subtiles of 128 x 32 (8 KiB each in fp16)."""
    return c_stages * EPI_TILE[0] * EPI_TILE[1] * elem_bytes


def check_tile(mma_tiler_mn: tuple[int, int], pair: int, cluster_mn: tuple[int, int] = (1, 1)) -> None:
    """The MMA tiles and clusters these kernels implement; anything else is a ValueError naming it."""
    mma_m, mma_n = mma_tiler_mn
    if mma_m != CTA_TILE_M * pair or mma_n % 64 or not 64 <= mma_n <= 256:
        raise ValueError(
            f"mma_tiler_mn must be ({CTA_TILE_M * pair}, N) with N a multiple of 64 up to 256 "
            f"for {pair} CTA(s) per MMA, got {mma_tiler_mn}"
        )
    if cluster_mn[0] % pair or cluster_mn[0] * cluster_mn[1] > 16:
        raise ValueError(
            f"cluster_mn must have an M extent divisible by {pair} and at most 16 CTAs, got {cluster_mn}"
        )


def make_shared_storage(
    ab_dtype: type[cutlass.Numeric],
    a_smem_layout: cute.ComposedLayout,
    b_smem_layout: cute.ComposedLayout,
    ab_stages: int,
    acc_stages: int,
    c_smem_layout: cute.ComposedLayout | None = None,
) -> Any:
    """The ``SharedStorage`` struct: the header's fields, then A, B (and C) buffers, each 1 KiB aligned."""
    fields: dict[str, Any] = {
        "ab_barriers": cute.struct.MemRange[cutlass.Int64, 2 * ab_stages],
        "acc_barriers": cute.struct.MemRange[cutlass.Int64, 2 * acc_stages],
        "clc_barriers": cute.struct.MemRange[cutlass.Int64, 2],
        "tmem_dealloc_barrier": cutlass.Int64,
        "tmem_address": cutlass.Int32,
        "clc_response": cute.struct.Align[cute.struct.MemRange[cutlass.Int32, 4], CLC_RESPONSE_BYTES],
        "sA": cute.struct.Align[cute.struct.MemRange[ab_dtype, cute.cosize(a_smem_layout)], SMEM_ALIGN],
        "sB": cute.struct.Align[cute.struct.MemRange[ab_dtype, cute.cosize(b_smem_layout)], SMEM_ALIGN],
    }
    if c_smem_layout is not None:
        fields["sC"] = cute.struct.Align[
            cute.struct.MemRange[ab_dtype, cute.cosize(c_smem_layout)], SMEM_ALIGN
        ]
    return cute.struct(type("SharedStorage", (), {"__annotations__": fields}))


# --8<-- [start:host_mma]
def make_tiled_mma(
    ab_dtype: type[cutlass.Numeric], mma_tiler_mn: tuple[int, int], pair: int
) -> cute.TiledMma:
    """The tcgen05 MMA of one CTA (``CtaGroup.ONE``) or of a CTA pair (``CtaGroup.TWO``, M = 256)."""
    return sm100_utils.make_trivial_tiled_mma(
        ab_dtype,
        ab_dtype,
        OperandMajorMode.K,
        OperandMajorMode.K,
        cutlass.Float32,
        tcgen05.CtaGroup.TWO if pair == 2 else tcgen05.CtaGroup.ONE,
        mma_tiler_mn,
    )


def cluster_layout_vmnk(tiled_mma: cute.TiledMma, cluster_mn: tuple[int, int]) -> cute.Layout:
    """The cluster as (V, M, N, K): V is a CTA's place in its MMA pair, M counts pairs, N columns."""
    return cute.tiled_divide(cute.make_layout((*cluster_mn, 1)), (tiled_mma.thr_id,))
# --8<-- [end:host_mma]


@dataclass(frozen=True)
class AbOperands:
    """Host-side A/B set-up: staged SMEM layouts and the TMA atoms (``TmaInfo``) that fill them."""

    a_smem_layout: cute.ComposedLayout
    b_smem_layout: cute.ComposedLayout
    tma_a: cpasync.TmaInfo
    tma_b: cpasync.TmaInfo


# --8<-- [start:host_tma]
def make_ab_tma(
    tiled_mma: cute.TiledMma,
    a: cute.Tensor,
    b: cute.Tensor,
    mma_tiler: tuple[int, int, int],
    stages: int,
    cluster_mn: tuple[int, int],
) -> AbOperands:
    """SMEM layouts with the swizzle the MMA descriptors expect, and the TMA atoms that fill them.

    The library picks each op from the cluster: ``CtaGroup.TWO`` when the MMA spans a pair (each
    CTA loads its half; the bytes complete on the leader's barrier), the multicast form when
    other CTAs of the cluster need the same tile (A along the cluster's N, B along its M).
    """
    a_layout = sm100_utils.make_smem_layout_a(tiled_mma, mma_tiler, a.element_type, stages)
    b_layout = sm100_utils.make_smem_layout_b(tiled_mma, mma_tiler, b.element_type, stages)
    cluster, vmnk = (*cluster_mn, 1), cluster_layout_vmnk(tiled_mma, cluster_mn).shape
    a_op = sm100_utils.cluster_shape_to_tma_atom_A(cluster, tiled_mma.thr_id)
    b_op = sm100_utils.cluster_shape_to_tma_atom_B(cluster, tiled_mma.thr_id)
    a_stage, b_stage = cute.select(a_layout, mode=[0, 1, 2]), cute.select(b_layout, mode=[0, 1, 2])
    tma_a = cute.nvgpu.make_tiled_tma_atom_A(a_op, a, a_stage, mma_tiler, tiled_mma, vmnk)
    tma_b = cute.nvgpu.make_tiled_tma_atom_B(b_op, b, b_stage, mma_tiler, tiled_mma, vmnk)
    return AbOperands(a_layout, b_layout, tma_a, tma_b)
# --8<-- [end:host_tma]


def make_c_tma_store(c: cute.Tensor, c_stages: int) -> tuple[cute.ComposedLayout, cpasync.TmaInfo]:
    """The C ring's staged SMEM layout (128 x 32 subtiles) and the TMA-store atom of one subtile."""
    layout_kind = LayoutEnum.from_tensor(c)
    c_layout = sm100_utils.make_smem_layout_epi(c.element_type, layout_kind, EPI_TILE, c_stages)
    tma_c = cpasync.make_tiled_tma_atom(
        cpasync.CopyBulkTensorTileS2GOp(), c, cute.slice_(c_layout, (None, None, 0)), EPI_TILE
    )
    return c_layout, tma_c


# --8<-- [start:pair_place]
@dataclass(frozen=True)
class PairPlace:
    """Where this CTA sits in its cluster, and whom its TMA loads also fill."""

    coord_vmnk: Any  # (V, M, N, K) in the cluster; V = 0 leads the MMA pair
    is_leader: Any  # the CTA that waits for full stages and issues the pair's MMAs
    mask_a: Any  # CTAs of the cluster's row that receive this CTA's A tile (None: no multicast)
    mask_b: Any  # CTAs of the cluster's column that receive its B tile (None: no multicast)


def pair_place(vmnk: cute.Layout, multicast_a: bool, multicast_b: bool) -> PairPlace:
    coord = vmnk.get_flat_coord(cute.arch.block_idx_in_cluster())
    mask_a = cpasync.create_tma_multicast_mask(vmnk, coord, mcast_mode=2) if multicast_a else None
    mask_b = cpasync.create_tma_multicast_mask(vmnk, coord, mcast_mode=1) if multicast_b else None
    return PairPlace(coord, coord[0] == 0, mask_a, mask_b)
# --8<-- [end:pair_place]


def tile_grid(c: cute.Tensor, mma_n: int, cluster_mn: tuple[int, int]) -> tuple[Any, Any, Any]:
    """One CTA per 128 x ``mma_n`` tile of C, rounded up to whole clusters (a pair shares one MMA tile)."""
    return cute.round_up(cute.ceil_div((*c.layout.shape, 1), (CTA_TILE_M, mma_n, 1)), (*cluster_mn, 1))


def _multicast(mask: Any) -> dict[str, Any]:
    return {} if mask is None else {"mcast_mask": mask}


# --8<-- [start:ab_loads]
@dataclass(frozen=True)
class AbLoads:
    """The TMA loads of A and B: global (TMA, RestM|RestN, RestK) and SMEM (TMA, stage) partitions."""

    atom_a: cute.CopyAtom
    tAgA: cute.Tensor
    tAsA: cute.Tensor
    mask_a: Any
    atom_b: cute.CopyAtom
    tBgB: cute.Tensor
    tBsB: cute.Tensor
    mask_b: Any

    def prefetch_descriptors(self) -> None:
        cpasync.prefetch_descriptor(self.atom_a)
        cpasync.prefetch_descriptor(self.atom_b)

    def issue(
        self, producer: pipeline.PipelineProducer, mma_m: Any, mma_n: Any, k_tile: Any
    ) -> pipeline.PipelineProducer:
        """Wait for a free stage, then TMA this CTA's part of one K tile of A and B into it."""
        empty = producer.acquire_and_advance()  # with a pair: the leader arms its barrier for both CTAs
        cute.copy(
            self.atom_a,
            self.tAgA[(None, mma_m, k_tile)],
            self.tAsA[(None, empty.index)],
            tma_bar_ptr=empty.barrier,
            **_multicast(self.mask_a),
        )
        cute.copy(
            self.atom_b,
            self.tBgB[(None, mma_n, k_tile)],
            self.tBsB[(None, empty.index)],
            tma_bar_ptr=empty.barrier,
            **_multicast(self.mask_b),
        )
        return producer
# --8<-- [end:ab_loads]


@dataclass(frozen=True)
class MmaOperands:
    """This CTA's share of the MMA: SMEM descriptors of the stages and C partitioned by MMA tile."""

    loads: AbLoads
    tCrA: cute.Tensor  # (MMA, MMA_M, MMA_K, stage): SMEM descriptors, not registers
    tCrB: cute.Tensor  # (MMA, MMA_N, MMA_K, stage)
    tCgC: cute.Tensor  # (MMA, MMA_M, MMA_N, RestM, RestN)
    stage_bytes: int  # what this CTA's TMA loads write into one stage

    @property
    def k_tiles(self) -> Any:
        return cute.size(self.loads.tAgA, mode=[2])


def partition_operands(
    tiled_mma: cute.TiledMma,
    mma_tiler: tuple[int, int, int],
    vmnk: cute.Layout,
    place: PairPlace,
    tma_a: cpasync.TmaInfo,
    tma_b: cpasync.TmaInfo,
    sA: cute.Tensor,
    sB: cute.Tensor,
    mC: cute.Tensor,
) -> MmaOperands:
    """Partition the whole of A, B and C by MMA tile, for this CTA's place in its pair and cluster."""
    gA = cute.local_tile(tma_a.tma_tensor, cute.slice_(mma_tiler, (None, 0, None)), (None, None))
    gB = cute.local_tile(tma_b.tma_tensor, cute.slice_(mma_tiler, (0, None, None)), (None, None))
    gC = cute.local_tile(mC, cute.slice_(mma_tiler, (None, None, 0)), (None, None))
    thr_mma = tiled_mma.get_slice(place.coord_vmnk[0])  # this CTA's half of the pair's MMA
    tCgA, tCgB = thr_mma.partition_A(gA), thr_mma.partition_B(gB)
    # A is shared along the cluster's N mode (2), B along its M mode (1).
    (tAsA, tAgA), (tBsB, tBgB) = (
        cpasync.tma_partition(
            tma.atom,
            place.coord_vmnk[mode],
            cute.make_layout(cute.size(vmnk, mode=[mode])),
            cute.group_modes(smem, 0, 3),
            cute.group_modes(gmem, 0, 3),
        )
        for tma, mode, smem, gmem in ((tma_a, 2, sA, tCgA), (tma_b, 1, sB, tCgB))
    )
    loads = AbLoads(tma_a.atom, tAgA, tAsA, place.mask_a, tma_b.atom, tBgB, tBsB, place.mask_b)
    stage_bytes = cute.size_in_bytes(sA.element_type, sA[None, None, None, 0].layout) + cute.size_in_bytes(
        sB.element_type, sB[None, None, None, 0].layout
    )
    return MmaOperands(
        loads,
        tiled_mma.make_fragment_A(sA),
        tiled_mma.make_fragment_B(sB),
        thr_mma.partition_C(gC),
        stage_bytes,
    )


def make_ab_pipeline(
    cta: CtaSetup, stages: int
) -> tuple[pipeline.PipelineProducer, pipeline.PipelineConsumer]:
    """The A/B ring: TMA bytes fill a stage, the (leader's) ``tcgen05.commit`` frees it.

    With a pair, the leader's full barrier expects both CTAs' bytes. One commit releases a stage
    in every CTA that loaded into it (the pair and its multicast peers), so the empty barrier
    expects one arrival per distinct MMA issuer of the cluster's row and column (``M + N - 1``).
    """
    vmnk = cta.vmnk
    issuers = cute.size(vmnk, mode=[1]) + cute.size(vmnk, mode=[2]) - 1
    return pipeline.PipelineTmaUmma.create(
        num_stages=stages,
        producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
        consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, issuers),
        tx_count=cute.size(vmnk, mode=[0]) * cta.ops.stage_bytes,
        barrier_storage=cta.storage.ab_barriers.data_ptr(),
        cta_layout_vmnk=vmnk,
    ).make_participants()


def make_acc_pipeline(
    stages: int, consumers_per_cta: int, vmnk: cute.Layout, barriers: cute.Pointer
) -> tuple[pipeline.PipelineProducer, pipeline.PipelineConsumer]:
    """The accumulator hand-over: the leader's commit fills a TMEM stage in both CTAs of the pair,
    and the epilogues of both CTAs release it to the leader (``pair x consumers_per_cta`` arrivals)."""
    return pipeline.PipelineUmmaAsync.create(
        num_stages=stages,
        producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
        consumer_group=pipeline.CooperativeGroup(
            pipeline.Agent.Thread, cute.size(vmnk, mode=[0]) * consumers_per_cta
        ),
        barrier_storage=barriers,
        cta_layout_vmnk=vmnk,
    ).make_participants()


# --8<-- [start:mma_k_tile]
@cute.jit
def mma_k_tile(
    consumer: pipeline.PipelineConsumer,
    tiled_mma: cute.TiledMma,
    acc: cute.Tensor,
    tCrA: cute.Tensor,
    tCrB: cute.Tensor,
) -> tuple[pipeline.PipelineConsumer, cute.TiledMma]:
    """Wait until a stage's bytes have landed, issue its MMAs, and free it with ``tcgen05.commit``."""
    full = consumer.wait_and_advance()
    for k_block in cutlass.range_constexpr(cute.size(tCrA, mode=[2])):
        k_coord = (None, None, k_block, full.index)
        cute.gemm(tiled_mma, acc, tCrA[k_coord], tCrB[k_coord], acc)
        tiled_mma.set(tcgen05.Field.ACCUMULATE, True)
    full.release()  # tcgen05.commit: arrives on the stage's empty barrier(s) once these MMAs are done
    return consumer, tiled_mma
# --8<-- [end:mma_k_tile]


# --8<-- [start:role_tiles]
@cute.jit
def produce_tile(
    loads: AbLoads, ab_producer: pipeline.PipelineProducer, mma_m: Any, mma_n: Any, k_tiles: Any
) -> pipeline.PipelineProducer:
    """TMA warp, one output tile: every K tile of A and B into the ring, as far ahead as it has room."""
    for k_tile in range(k_tiles):
        ab_producer = loads.issue(ab_producer, mma_m, mma_n, k_tile)
    return ab_producer


@cute.jit
def mma_tile(
    acc_producer: pipeline.PipelineProducer,
    ab_consumer: pipeline.PipelineConsumer,
    tiled_mma: cute.TiledMma,
    acc_stages: cute.Tensor,
    operands: MmaOperands,
) -> tuple[pipeline.PipelineProducer, pipeline.PipelineConsumer, cute.TiledMma]:
    """MMA warp of the leader CTA, one output tile: into a free accumulator stage, then commit it."""
    acc_empty = acc_producer.acquire_and_advance()  # the epilogue has drained this TMEM stage
    acc = acc_stages[(None, None, None, acc_empty.index)]
    tiled_mma.set(tcgen05.Field.ACCUMULATE, False)  # the tile's first MMA overwrites the stage
    for _ in range(operands.k_tiles):
        ab_consumer, tiled_mma = mma_k_tile(ab_consumer, tiled_mma, acc, operands.tCrA, operands.tCrB)
    acc_empty.commit()  # tcgen05.commit: the stage is full once every MMA above is done
    return acc_producer, ab_consumer, tiled_mma
# --8<-- [end:role_tiles]


# --8<-- [start:direct_epilogue]
@cute.jit
def store_tile_direct(
    acc_consumer: pipeline.PipelineConsumer, acc: cute.Tensor, tCgC_tile: cute.Tensor, tidx: Any
) -> pipeline.PipelineConsumer:
    """All four warps: wait for the accumulator, TMEM -> registers -> global in 64-column slices.

    Warp ``w`` owns TMEM lanes ``32w..32w+31``; ``tcgen05.ld`` (32x32b.x64) gives each thread 64
    fp32 values of its row, converted and stored with vectorized global stores.
    """
    epi_tiler = ((cute.size(acc, mode=[0, 0]), DIRECT_EPI_COLUMNS),)
    tCtAcc_epi = cute.zipped_divide(acc, epi_tiler)  # (EpiTile, subtiles)
    gC_epi = cute.zipped_divide(tCgC_tile, epi_tiler)
    tmem_load = tcgen05.make_tmem_copy(
        cute.make_copy_atom(tcgen05.Ld32x32bOp(tcgen05.Repetition.x64), cutlass.Float32), tCtAcc_epi[None, 0]
    )
    thr_load = tmem_load.get_slice(tidx)
    tDtAcc = thr_load.partition_S(tCtAcc_epi)  # (TmemCpy, NumTmemCpy, subtiles)
    tDgC = thr_load.partition_D(gC_epi)
    acc_regs = cute.make_rmem_tensor(tDgC[None, None, 0].shape, cutlass.Float32)
    out_regs = cute.make_rmem_tensor(tDgC[None, None, 0].shape, tCgC_tile.element_type)

    acc_full = acc_consumer.wait_and_advance()
    for subtile in cutlass.range(cute.size(tDtAcc, mode=[2])):
        cute.copy(tmem_load, tDtAcc[None, None, subtile], acc_regs)  # TMEM -> registers
        out_regs.store(acc_regs.load().to(tCgC_tile.element_type))
        cute.autovec_copy(out_regs, tDgC[None, None, subtile])  # registers -> global, vectorized
    acc_full.release()
    return acc_consumer
# --8<-- [end:direct_epilogue]


@dataclass(frozen=True)
class TmaStoreEpilogue:
    """The epilogue warps' view of C: the SMEM ring and the TMA partitions of ring and output."""

    atom_c: cute.CopyAtom
    sC: cute.Tensor  # (EPI_M, EPI_N, c_stage), swizzled
    bSG_sC: cute.Tensor  # (TMA, c_stage)
    bSG_gC: cute.Tensor  # (TMA, subtile_m, subtile_n, RestM, RestN)
    tCgC: cute.Tensor  # (MMA, MMA_M, MMA_N, RestM, RestN)
    c_stages: int
    sync: pipeline.NamedBarrier  # the four epilogue warps

    @staticmethod
    def partition(
        tma_c: cpasync.TmaInfo, sC: cute.Tensor, tCgC: cute.Tensor, c_stages: int
    ) -> TmaStoreEpilogue:
        gC_epi = cute.flat_divide(tCgC[((None, None), 0, 0, None, None)], EPI_TILE)
        bSG_sC, bSG_gC = cpasync.tma_partition(
            tma_c.atom, 0, cute.make_layout(1), cute.group_modes(sC, 0, 2), cute.group_modes(gC_epi, 0, 2)
        )
        sync = pipeline.NamedBarrier(barrier_id=EPI_BARRIER_ID, num_threads=EPI_THREADS)
        return TmaStoreEpilogue(tma_c.atom, sC, bSG_sC, bSG_gC, tCgC, c_stages, sync)


# --8<-- [start:tma_store_epilogue]
@cute.jit
def store_tile_tma(
    epi: TmaStoreEpilogue,
    acc_consumer: pipeline.PipelineConsumer,
    acc_stages: cute.Tensor,
    mma_m: Any,
    mma_n: Any,
    c_pipeline: pipeline.PipelineTmaStore,
    tidx: Any,
    warp_idx: Any,
) -> pipeline.PipelineConsumer:
    """Epilogue warps, one output tile: TMEM -> registers -> SMEM ring -> TMA store, 128 x 32 at a time.

    A ring buffer is rewritten only after ``producer_acquire`` has seen the store that read it
    complete (at most ``c_stages - 1`` bulk groups in flight). The tile's subtile count is a
    multiple of ``c_stages``, so every tile starts again at buffer 0.
    """
    acc_full = acc_consumer.wait_and_advance()  # the MMAs of this tile are done
    acc = acc_stages[(None, None, None, acc_full.index)]
    tCtAcc_epi = cute.flat_divide(acc[((None, None), 0, 0)], EPI_TILE)  # (EPI_M, EPI_N, subtile_m, subtile_n)
    tCgC_epi = cute.flat_divide(epi.tCgC[((None, None), 0, 0, mma_m, mma_n)], EPI_TILE)
    tmem_load = tcgen05.make_tmem_copy(
        cute.make_copy_atom(tcgen05.Ld32x32bOp(tcgen05.Repetition.x32), cutlass.Float32),
        tCtAcc_epi[(None, None, 0, 0)],
    )
    thr_load = tmem_load.get_slice(tidx)
    tTR_tAcc = thr_load.partition_S(tCtAcc_epi)  # (T2R, T2R_M, T2R_N, subtile_m, subtile_n)
    tTR_tAcc = cute.group_modes(tTR_tAcc, 3, cute.rank(tTR_tAcc))
    tTR_rAcc = cute.make_rmem_tensor(
        thr_load.partition_D(tCgC_epi)[(None, None, None, 0, 0)].shape, cutlass.Float32
    )
    c_dtype = epi.sC.element_type
    smem_store = cute.make_tiled_copy_D(
        sm100_utils.get_smem_store_op(
            LayoutEnum.ROW_MAJOR, c_dtype, cutlass.Float32, tmem_load
        ),
        tmem_load,
    )
    thr_store = smem_store.get_slice(tidx)
    tRS_sC = thr_store.partition_D(epi.sC)  # (R2S, R2S_M, R2S_N, c_stage)
    tRS_rAcc = smem_store.retile(tTR_rAcc)
    tRS_rC = cute.make_rmem_tensor(tRS_rAcc.shape, c_dtype)
    bSG_gC = epi.bSG_gC[(None, None, None, mma_m, mma_n)]
    bSG_gC = cute.group_modes(bSG_gC, 1, cute.rank(bSG_gC))  # (TMA, subtile)

    for subtile in cutlass.range(cute.size(tTR_tAcc, mode=[3])):
        cute.copy(tmem_load, tTR_tAcc[(None, None, None, subtile)], tTR_rAcc)  # TMEM -> registers
        tRS_rC.store(tRS_rAcc.load().to(c_dtype))
        buffer = subtile % epi.c_stages
        cute.copy(smem_store, tRS_rC, tRS_sC[(None, None, None, buffer)])  # registers -> SMEM
        cute.arch.fence_view_async_shared()  # make the generic-proxy stores visible to the TMA unit
        epi.sync.arrive_and_wait()
        if warp_idx == 0:
            cute.copy(epi.atom_c, epi.bSG_sC[(None, buffer)], bSG_gC[(None, subtile)])  # SMEM -> global
            c_pipeline.producer_commit()
            c_pipeline.producer_acquire()  # the store that read the next buffer is done
        epi.sync.arrive_and_wait()
    with cute.arch.elect_one():
        acc_full.release()  # one arrival per warp, on the leader's empty barrier
    return acc_consumer
# --8<-- [end:tma_store_epilogue]


class Sm100Gemm:
    """Host function and kernel entry of every step: C[M,N] = A[M,K] @ B[N,K]^T with tcgen05 MMAs.

    The host function builds the tiled MMA (``pair`` CTAs per MMA), the A/B TMA atoms, the C
    output (the tensor itself for a direct-store epilogue, a TMA-store atom and its SMEM ring
    when ``c_stages`` > 0) and the ``SharedStorage`` struct, and launches one CTA per tile of
    C in whole clusters (``grid``). The kernel entry allocates SMEM, finds the CTA's place in
    its pair and cluster, partitions A, B and C by MMA tile, and hands over to ``run``: what
    the CTA does, written by each step.
    """

    pair: ClassVar[int] = 2  # CTAs per MMA
    acc_stages: ClassVar[int] = 1  # TMEM accumulator stages
    c_stages: ClassVar[int] = 0  # TMA-store ring buffers; 0: the epilogue stores to global directly
    warps: ClassVar[int] = EPI_WARPS  # warps per CTA

    def __init__(
        self, mma_tiler_mn: tuple[int, int], cluster_mn: tuple[int, int] = (1, 1), stages: int | None = None
    ) -> None:
        mma_tiler_mn, cluster_mn = tuple(mma_tiler_mn), tuple(cluster_mn)
        check_tile(mma_tiler_mn, self.pair, cluster_mn)
        if self.c_stages and (mma_tiler_mn[1] // EPI_TILE[1]) % self.c_stages:
            raise ValueError(
                f"mma_tiler_mn N={mma_tiler_mn[1]} must hold a multiple of {self.c_stages} subtiles"
            )
        self.mma_tiler = (*mma_tiler_mn, TILE_K)
        self.cluster_mn = cluster_mn
        stage_bytes, c_bytes = ab_stage_bytes(mma_tiler_mn[1], self.pair), c_ring_bytes(self.c_stages)
        self.budget = (
            SmemBudget(stage_bytes, stages, c_bytes) if stages else SmemBudget.filling(stage_bytes, c_bytes)
        )

    # --8<-- [start:host]
    @cute.jit
    def __call__(self, a: cute.Tensor, b: cute.Tensor, c: cute.Tensor, stream: Any) -> None:
        tiled_mma = make_tiled_mma(a.element_type, self.mma_tiler[:2], self.pair)
        ab = make_ab_tma(tiled_mma, a, b, self.mma_tiler, self.budget.ab_stages, self.cluster_mn)
        c_out, c_layout = c, None
        if cutlass.const_expr(self.c_stages):
            c_layout, c_out = make_c_tma_store(c, self.c_stages)
        self.shared_storage = make_shared_storage(
            a.element_type,
            ab.a_smem_layout,
            ab.b_smem_layout,
            self.budget.ab_stages,
            self.acc_stages,
            c_layout,
        )
        vmnk = cluster_layout_vmnk(tiled_mma, self.cluster_mn)
        self.kernel(
            tiled_mma, ab.tma_a, ab.tma_b, c_out, ab.a_smem_layout, ab.b_smem_layout, c_layout, vmnk
        ).launch(
            grid=self.grid(c), block=(32 * self.warps, 1, 1), cluster=(*self.cluster_mn, 1), stream=stream
        )
    # --8<-- [end:host]

    def grid(self, c: cute.Tensor) -> Any:
        """One CTA per 128 x N tile of C, in whole clusters."""
        return tile_grid(c, self.mma_tiler[1], self.cluster_mn)

    @cute.kernel
    def kernel(
        self,
        tiled_mma: cute.TiledMma,
        tma_a: cpasync.TmaInfo,
        tma_b: cpasync.TmaInfo,
        c_out: Any,  # C (direct store) or its TMA-store atom
        a_layout: cute.ComposedLayout,
        b_layout: cute.ComposedLayout,
        c_layout: Any,  # the C ring's staged SMEM layout, or None
        vmnk: cute.Layout,
    ) -> None:
        storage = SmemAllocator().allocate(self.shared_storage)
        sA = storage.sA.get_tensor(a_layout.outer, swizzle=a_layout.inner)
        sB = storage.sB.get_tensor(b_layout.outer, swizzle=b_layout.inner)
        place = pair_place(
            vmnk, multicast_a=self.cluster_mn[1] > 1, multicast_b=self.cluster_mn[0] > self.pair
        )
        mC = c_out if c_layout is None else c_out.tma_tensor
        ops = partition_operands(tiled_mma, self.mma_tiler, vmnk, place, tma_a, tma_b, sA, sB, mC)
        tidx, _, _ = cute.arch.thread_idx()
        warp_idx = cute.arch.make_warp_uniform(cute.arch.warp_idx())
        self.run(CtaSetup(tidx, warp_idx, tiled_mma, vmnk, storage, place, ops, c_out, c_layout))

    def run(self, cta: CtaSetup) -> None:
        raise NotImplementedError(f"{type(self).__name__} must write what its CTAs do")


@dataclass(frozen=True)
class CtaSetup:
    """What the kernel entry hands to a step's ``run``."""

    tidx: Any
    warp_idx: Any  # warp-uniform
    tiled_mma: cute.TiledMma
    vmnk: cute.Layout  # the cluster as (V, M, N, K)
    storage: Any  # the SharedStorage struct in SMEM
    place: PairPlace
    ops: MmaOperands
    c_out: Any  # C, or its TMA-store atom
    c_layout: Any  # the C ring's staged SMEM layout, or None

    def acc_layout(self, mma_tiler: tuple[int, int, int], stages: int | None = None) -> cute.Tensor:
        """The accumulator fragment in TMEM: (MMA, MMA_M, MMA_N), with a stage mode if ``stages`` is given."""
        shape = self.tiled_mma.partition_shape_C(mma_tiler[:2])
        return self.tiled_mma.make_fragment_C(shape if stages is None else cute.append(shape, stages))


@dataclass(frozen=True)
class WsContext:
    """What every role of a warp-specialized CTA starts from (built once, before the roles split)."""

    epi: TmaStoreEpilogue
    ab_producer: pipeline.PipelineProducer
    ab_consumer: pipeline.PipelineConsumer
    acc_producer: pipeline.PipelineProducer
    acc_consumer: pipeline.PipelineConsumer
    tmem: TmemAllocator
    acc_layout: cute.Layout  # (MMA, MMA_M, MMA_N, acc_stage) in TMEM
    tmem_columns: int  # every accumulator stage, rounded up to a power of two (>= 32)

    def tmem_accumulator(self) -> tuple[Any, cute.Tensor]:
        """Wait until the allocator warp has published the TMEM address; the staged accumulator there."""
        self.tmem.wait_for_alloc()
        tmem_ptr = self.tmem.retrieve_ptr(cutlass.Float32)
        return tmem_ptr, cute.make_tensor(tmem_ptr, self.acc_layout)


class WarpSpecializedGemm(Sm100Gemm):
    """The warp-specialized steps: a CTA pair per MMA tile, roles that talk through barriers only.

    Warps 0-3 run the epilogue (one TMEM lane quarter each; epilogue warp 0 allocates TMEM),
    warp 4 issues the MMAs (on the pair's leader CTA), warp 5 issues the TMA loads; a CLC
    schedule adds warp 6. No role needs many registers (the accumulator is in TMEM), so there
    is no ``setmaxnreg``. The epilogue goes through a ``c_stages``-buffer SMEM ring into TMA
    stores. Subclasses write ``roles``.
    """

    MMA_WARP: ClassVar[int] = 4
    TMA_WARP: ClassVar[int] = 5
    SCHED_WARP: ClassVar[int] = 6
    c_stages: ClassVar[int] = 2
    warps: ClassVar[int] = EPI_WARPS + 2

    def __init__(
        self, mma_tiler_mn: tuple[int, int] = (256, 256), cluster_mn: tuple[int, int] = (2, 1)
    ) -> None:
        super().__init__(mma_tiler_mn, cluster_mn)

    # --8<-- [start:ws_setup]
    @cute.jit
    def run(self, cta: CtaSetup) -> None:
        """Before the roles split: TMEM allocator, the A/B and accumulator pipelines, the C ring."""
        storage, vmnk = cta.storage, cta.vmnk
        # Epilogue warp 0 allocates; the MMA warp and the epilogue warps read the address.
        tmem = TmemAllocator(
            storage.tmem_address.ptr,
            barrier_for_retrieve=pipeline.NamedBarrier(
                barrier_id=TMEM_BARRIER_ID, num_threads=32 + EPI_THREADS
            ),
            allocator_warp_id=0,
            is_two_cta=True,
            two_cta_tmem_dealloc_mbar_ptr=storage.tmem_dealloc_barrier.ptr,
        )
        ab_producer, ab_consumer = make_ab_pipeline(cta, self.budget.ab_stages)
        acc_producer, acc_consumer = make_acc_pipeline(
            self.acc_stages, EPI_WARPS, vmnk, storage.acc_barriers.data_ptr()
        )
        acc = cta.acc_layout(self.mma_tiler, self.acc_stages)
        sC = storage.sC.get_tensor(cta.c_layout.outer, swizzle=cta.c_layout.inner)
        epi = TmaStoreEpilogue.partition(cta.c_out, sC, cta.ops.tCgC, self.c_stages)
        ctx = WsContext(
            epi,
            ab_producer,
            ab_consumer,
            acc_producer,
            acc_consumer,
            tmem,
            acc.layout,
            get_num_tmem_alloc_cols(acc),
        )
        self.roles(cta, ctx)
    # --8<-- [end:ws_setup]

    def roles(self, cta: CtaSetup, ctx: WsContext) -> None:
        raise NotImplementedError(f"{type(self).__name__} must write its warp roles")


def make_c_pipeline(c_stages: int) -> pipeline.PipelineTmaStore:
    """The TMA-store ring's bookkeeping: bulk-store groups, no mbarrier (the epilogue warps produce)."""
    return pipeline.PipelineTmaStore.create(
        num_stages=c_stages, producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, EPI_THREADS)
    )


class PersistentGemm(WarpSpecializedGemm):
    """The warp roles of :class:`WarpSpecializedGemm`, each looping over the tiles a schedule hands out.

    A schedule (``make_schedule``, chosen by the subclass) answers ``first()`` and
    ``next(state)`` with ``(state, tile_m, tile_n, valid)``: CTA tile coordinates and whether
    there is a tile. Every role walks the same sequence on its own; the pipelines' states run
    on from tile to tile and only ``ACCUMULATE`` is reset per tile, so the TMA warp starts the
    next tile's loads while the MMA warp finishes the current one. A schedule that must be
    asked for tiles (CLC) runs its producer on warp 6 (``warps = 7``).
    """

    def make_schedule(self, cta: CtaSetup) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must choose its tile schedule")

    @cute.jit
    def roles(self, cta: CtaSetup, ctx: WsContext) -> None:
        schedule = self.make_schedule(cta)
        tidx, warp_idx, ops, tiled_mma = cta.tidx, cta.warp_idx, cta.ops, cta.tiled_mma

        # --8<-- [start:persistent_roles]
        if warp_idx == self.TMA_WARP:
            ops.loads.prefetch_descriptors()
            cpasync.prefetch_descriptor(ctx.epi.atom_c)
            ab_producer = ctx.ab_producer
            state, tile_m, tile_n, valid = schedule.first()
            while valid:
                ab_producer = produce_tile(ops.loads, ab_producer, tile_m // self.pair, tile_n, ops.k_tiles)
                state, tile_m, tile_n, valid = schedule.next(state)
            ab_producer.tail()  # once per CTA, after its last tile
        if warp_idx == self.MMA_WARP:
            _, acc = ctx.tmem_accumulator()
            acc_producer, ab_consumer = ctx.acc_producer, ctx.ab_consumer
            state, tile_m, tile_n, valid = schedule.first()
            while valid:
                if cta.place.is_leader:
                    acc_producer, ab_consumer, tiled_mma = mma_tile(
                        acc_producer, ab_consumer, tiled_mma, acc, ops
                    )
                state, tile_m, tile_n, valid = schedule.next(state)
            acc_producer.tail()  # leader only: the last accumulator stage has been released
        if warp_idx < self.MMA_WARP:
            ctx.tmem.allocate(ctx.tmem_columns)
            tmem_ptr, acc = ctx.tmem_accumulator()
            c_pipeline = make_c_pipeline(self.c_stages)
            acc_consumer = ctx.acc_consumer
            state, tile_m, tile_n, valid = schedule.first()
            while valid:
                acc_consumer = store_tile_tma(
                    ctx.epi, acc_consumer, acc, tile_m // self.pair, tile_n, c_pipeline, tidx, warp_idx
                )
                state, tile_m, tile_n, valid = schedule.next(state)
            c_pipeline.producer_tail()
            ctx.tmem.relinquish_alloc_permit()
            ctx.tmem.free(tmem_ptr)
        if cutlass.const_expr(self.warps > self.SCHED_WARP):
            if warp_idx == self.SCHED_WARP:
                schedule.produce()
        # --8<-- [end:persistent_roles]
