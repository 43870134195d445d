"""The config rule of the Hopper GEMM: tile, cluster, stages and tile order from M, N, K, dtype, SM count.

One 128 x 256 tile serves 8192^3 well and 1024^3 badly (32 tiles for 132 SMs). Instead of a
table of shapes, :func:`pick_config` scores every config the v5 kernel (``hopper_gemm_ws``)
can run with a small throughput model (:func:`estimate`) and takes the fastest, preferring
the larger tile when two are within :data:`TIE` of each other. The model, per CTA and K tile
of 64, in SM clocks:

- **MMA**: the tile's WGMMAs at the SM's dense fp16/bf16 rate, or slower when the operands'
  SMEM reads cannot keep up (``m64nNk16`` reads 64 x 16 of A and N x 16 of B per warpgroup:
  at N = 64 the reads take longer than the math);
- **feed**: the bytes of A and B the CTA receives, against what one SM takes in per clock,
  and the bytes L2 serves (a cluster multicasts the operand its CTAs share, so L2 reads it
  once), against L2's share per running CTA;
- per tile, the epilogue's subtiles; per launch, a fixed cost; and the time to read A and B
  and write C once from DRAM as a floor.

A tile takes ``k_tiles x max(MMA, feed)`` plus its epilogue; a persistent grid of at most
one CTA per SM runs ``waves = ceil(cluster tiles / clusters at once)`` tiles per cluster:
that ceiling is the **wave quantization** the rule trades against per-tile efficiency.
Stages: as many as SMEM holds (the v5 kernel's :func:`max_stages`); more never costs, since
one CTA per SM runs either way. Tile order: bands of ``raster_group_m`` cluster rows, chosen
so that a wave covers a block of C about as tall as it is wide in loaded bytes.

The constants are the H200's where they are published and **assumptions** where they are
not (named below); the ``gemm_bf16_shapes`` comparison group measures the rule's picks
against cuBLAS at shapes on and off the issue's list.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from mla_var3.kernel.tensors import element_size

TILE_K = 64  # K per pipeline stage (one 128-byte swizzle row of 16-bit data); the v5 kernel's
EPI_STAGES = 4  # C ring slots per consumer warpgroup, the v5 kernel's default
# Tiles and clusters the v5 kernel runs: M in {64, 128} (one consumer warpgroup per 64 rows),
# N in {64, 128, 256}; clusters of two at most (multicast of the shared operand).
TILES: tuple[tuple[int, int], ...] = ((128, 256), (128, 128), (128, 64), (64, 256), (64, 128), (64, 64))
CLUSTERS: tuple[tuple[int, int], ...] = ((1, 1), (2, 1), (1, 2))
TIE = 0.02  # configs within 2 % of the best count as equal: the larger tile wins


@dataclass(frozen=True)
class Machine:
    """What the model knows of the GPU; the defaults are our H200's."""

    sm_count: int = 132  # device.sm_count of our H200's run records
    clock_hz: float = 1.98e9  # NVML's max_sm_mhz in the same records
    # Dense fp16/bf16 WGMMA per SM and clock: 989.4 TFLOP/s (H100/H200 SXM datasheet) at the
    # 1.83 GHz boost clock over 132 SMs = 4096.
    mma_flops_per_clk: int = 4096
    smem_bytes_per_clk: int = 128  # 32 banks x 4 bytes
    smem_sustained: float = 0.8  # ASSUMPTION: the share of SMEM bandwidth WGMMA's operand reads get
    sm_feed_bytes_per_clk: int = 64  # ASSUMPTION: what one SM takes in from L2 per clock
    # ASSUMPTION: what L2 serves per clock, all SMs together: 44 bytes per SM, a little less than
    # a 128 x 256 tile without multicast reads while its math runs -- so multicast pays at full
    # occupancy, as the 2 x 1 default of the v5 kernel, CUTLASS's and cuBLAS's choices suggest.
    l2_bytes_per_clk: int = 44 * 132
    load_latency_clk: int = 2000  # ASSUMPTION: a TMA load's round trip to DRAM (about 1 us)
    hbm_bytes_per_s: float = 4.8e12  # NVIDIA H200 datasheet, HBM3e
    epilogue_clk_per_subtile: int = 256  # ASSUMPTION: stmatrix, fence, named barrier, TMA store of 64 x 32
    fixed_us: float = 3.0  # ASSUMPTION: launch, barrier set-up, pipeline fill, last store drain


H200 = Machine()


@dataclass(frozen=True)
class GemmConfig:
    """A config of the v5 kernel; :meth:`kernel_kwargs` are ``HopperGemmWS``'s arguments."""

    tile_mn: tuple[int, int]
    cluster_mn: tuple[int, int]
    stages: int
    raster_group_m: int

    def kernel_kwargs(self) -> dict[str, Any]:
        return {
            "tile_mn": self.tile_mn,
            "cluster_mn": self.cluster_mn,
            "stages": self.stages,
            "raster_group_m": self.raster_group_m,
        }

    def __str__(self) -> str:
        (tm, tn), (cm, cn) = self.tile_mn, self.cluster_mn
        return f"{tm}x{tn} tile, {cm}x{cn} cluster, {self.stages} stages, bands of {self.raster_group_m}"


@dataclass(frozen=True)
class Estimate:
    """The model's account of one config at one shape."""

    config: GemmConfig
    tiles: int  # CTA tiles covering C
    cluster_tiles: int  # cluster tiles (a cluster tile sticking out of C still runs)
    concurrent_clusters: int  # clusters the GPU runs at once: the persistent grid
    waves: int  # cluster tiles per persistent cluster, at most
    k_tile_clk: float  # one K tile: max(MMA, feed)
    bound: str  # "mma" or "feed" (per K tile), or "dram" (the floor)
    time_us: float

    @property
    def wave_efficiency(self) -> float:
        """The share of cluster slots the waves fill (1.0: the last wave is full)."""
        return self.cluster_tiles / (self.waves * self.concurrent_clusters)

    @property
    def tiles_per_sm(self) -> float:
        return self.tiles / (self.concurrent_clusters * self.config.cluster_mn[0] * self.config.cluster_mn[1])


def tile_grid(m: int, n: int, tile_mn: tuple[int, int]) -> tuple[int, int]:
    """Tiles along M and N covering C."""
    return math.ceil(m / tile_mn[0]), math.ceil(n / tile_mn[1])


def concurrent_clusters(cluster_mn: tuple[int, int], sm_count: int) -> int:
    """Clusters of one CTA per SM that run at once (ASSUMPTION: pairs pack every SM; the plan
    asks the driver for the real number at launch)."""
    return sm_count // (cluster_mn[0] * cluster_mn[1])


def max_stages(tile_mn: tuple[int, int], elem_bytes: int) -> int:
    """The A/B stages the v5 kernel fits next to its C ring (its own SMEM budget)."""
    from mla_var3.kernel.cute_python.gemm.hopper_gemm.warp_specialized.kernel import max_stages as kernel_max

    return kernel_max((*tile_mn, TILE_K), EPI_STAGES, elem_bytes)


# --8<-- [start:model]
def mma_clk(tile_mn: tuple[int, int], machine: Machine = H200) -> float:
    """One K tile of WGMMAs: each consumer warpgroup issues 4 ``m64nNk16``; the warpgroups share
    the SM's tensor cores and SMEM bandwidth, so their times add."""
    tm, tn = tile_mn
    math_clk = 2 * 64 * tn * 16 / machine.mma_flops_per_clk
    smem_clk = (64 + tn) * 16 * 2 / (machine.smem_bytes_per_clk * machine.smem_sustained)
    return (tm // 64) * (TILE_K // 16) * max(math_clk, smem_clk)


def feed_clk(config: GemmConfig, active_ctas: int, elem_bytes: int, machine: Machine = H200) -> float:
    """One K tile's operands: the bytes the SM receives; the bytes L2 reads for this CTA (A is
    shared by the ``cluster_n`` CTAs of a cluster row, B by the ``cluster_m`` of a column) at
    its share of L2's rate; and Little's law: ``stages`` loads in flight per load latency."""
    (tm, tn), (cm, cn) = config.tile_mn, config.cluster_mn
    received = (tm + tn) * TILE_K * elem_bytes
    from_l2 = (tm / cn + tn / cm) * TILE_K * elem_bytes
    return max(
        received / machine.sm_feed_bytes_per_clk,
        from_l2 * active_ctas / machine.l2_bytes_per_clk,
        machine.load_latency_clk / config.stages,
    )


# --8<-- [end:model]


def raster_group(m: int, n: int, tile_mn: tuple[int, int], cluster_mn: tuple[int, int], sm_count: int) -> int:
    """Cluster rows per band of the tile order: a wave of ``c`` clusters in bands of ``g`` rows
    reads ``g`` cluster rows of A and ``c / g`` cluster columns of B; their bytes balance at
    ``g = sqrt(c x cluster width / cluster height)`` (in elements), at most the rows there are."""
    (tm, tn), (cm, cn) = tile_mn, cluster_mn
    tiles_m, _ = tile_grid(m, n, tile_mn)
    clusters_m = math.ceil(tiles_m / cm)
    g = math.sqrt(concurrent_clusters(cluster_mn, sm_count) * cn * tn / (cm * tm))
    return max(1, min(clusters_m, round(g)))


def estimate(
    m: int, n: int, k: int, config: GemmConfig, dtype: str = "bfloat16", machine: Machine = H200
) -> Estimate:
    """The model's time for ``config`` at M x N x K (see the module docstring)."""
    elem = element_size(dtype)
    (cm, cn) = config.cluster_mn
    tiles_m, tiles_n = tile_grid(m, n, config.tile_mn)
    cluster_tiles = math.ceil(tiles_m / cm) * math.ceil(tiles_n / cn)
    at_once = concurrent_clusters(config.cluster_mn, machine.sm_count)
    waves = math.ceil(cluster_tiles / at_once)
    active = min(cluster_tiles, at_once) * cm * cn
    mma, feed = mma_clk(config.tile_mn, machine), feed_clk(config, active, elem, machine)
    k_tile = max(mma, feed)
    epilogue = (config.tile_mn[1] // 32) * machine.epilogue_clk_per_subtile
    compute_s = waves * (math.ceil(k / TILE_K) * k_tile + epilogue) / machine.clock_hz
    dram_s = (m * k + n * k + m * n) * elem / machine.hbm_bytes_per_s
    bound = "dram" if dram_s > compute_s else ("mma" if mma >= feed else "feed")
    return Estimate(
        config=config,
        tiles=tiles_m * tiles_n,
        cluster_tiles=cluster_tiles,
        concurrent_clusters=at_once,
        waves=waves,
        k_tile_clk=k_tile,
        bound=bound,
        time_us=max(compute_s, dram_s) * 1e6 + machine.fixed_us,
    )


def candidates(m: int, n: int, dtype: str = "bfloat16", sm_count: int = H200.sm_count) -> list[GemmConfig]:
    """Every tile x cluster the v5 kernel runs, with its stages and tile order for this shape.
    A cluster wider than the tile grid (two CTAs, one tile) is left out."""
    configs = []
    for tile in TILES:
        tiles_m, tiles_n = tile_grid(m, n, tile)
        for cluster in CLUSTERS:
            if cluster[0] > tiles_m or cluster[1] > tiles_n:
                continue
            raster = raster_group(m, n, tile, cluster, sm_count)
            configs.append(GemmConfig(tile, cluster, max_stages(tile, element_size(dtype)), raster))
    return configs


def ranked(m: int, n: int, k: int, dtype: str = "bfloat16", machine: Machine = H200) -> list[Estimate]:
    """Every candidate's estimate, the rule's pick first: fastest, and among those within
    :data:`TIE` of it the largest tile, then the smallest cluster."""
    estimates = [estimate(m, n, k, c, dtype, machine) for c in candidates(m, n, dtype, machine.sm_count)]
    best = min(e.time_us for e in estimates)

    def key(e: Estimate) -> tuple[int, int, int, float]:
        if e.time_us > best * (1 + TIE):
            return (1, 0, 0, e.time_us)
        (tm, tn), (cm, cn) = e.config.tile_mn, e.config.cluster_mn
        return (0, -tm * tn, cm * cn, e.time_us)

    return sorted(estimates, key=key)


def pick_config(m: int, n: int, k: int, dtype: str = "bfloat16", sm_count: int = H200.sm_count) -> GemmConfig:
    """The rule: the config :func:`ranked` puts first, for a GPU of ``sm_count`` SMs."""
    return ranked(m, n, k, dtype, replace(H200, sm_count=sm_count))[0].config


__all__ = [
    "CLUSTERS",
    "H200",
    "TIE",
    "TILES",
    "Estimate",
    "GemmConfig",
    "Machine",
    "candidates",
    "concurrent_clusters",
    "estimate",
    "feed_clk",
    "max_stages",
    "mma_clk",
    "pick_config",
    "ranked",
    "raster_group",
    "tile_grid",
]
