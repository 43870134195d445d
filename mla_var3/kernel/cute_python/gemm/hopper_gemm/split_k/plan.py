"""Plan for ``hopper_gemm_splitk``: the v5 GEMM over (tile, K slice) units + a reduce, split per shape.

**The split rule** (:func:`pick_splitk`). When C has fewer tiles than the GPU has SMs, the
persistent grid leaves SMs idle and the running CTAs stream the operands alone
(``hopper_gemm_auto`` at M = 16 x 8192 x 8192: 64 CTAs of 64 x 128 read all of B, each limited
by what its SM takes in and by A boxes three-quarters out of bounds). Split-K multiplies the
work units without shrinking the tile, spreading the same bytes over more SMs, at the price of
fp32 partials and a reduce; so the rule splits only as much as filling the GPU needs:

1. Every tile the v5 kernel runs (128 x 256 down to 64 x 64; only 64-row tiles when M <= 64)
   is tried with a 2 x 1 cluster (B multicast) when its tile rows pair up, else none.
2. Its ``splits`` = as many as one wave of clusters holds -- ``concurrent clusters // cluster
   tiles`` -- but at most ``min(16, k_tiles // 4)``: every slice streams at least
   :data:`MIN_K_TILES` K tiles, so its pipeline fill and its partial tile's store and reduce
   stay small against its math.
3. A tile qualifies when its ``splits >= 2`` units occupy at least :data:`MIN_FILL` of the SMs
   and its fp32 partials (``splits x M x N_pad x 4`` bytes, written once and read once) are at
   most :data:`MAX_PARTIAL_SHARE` of the bytes of A and B: split-K pays where K is long against
   M x N (skinny M), not where the reduce would move as many bytes as the GEMM (1024^3: 16 MiB
   of partials for 4 MiB of operands). The pick is the qualifying tile with the fewest splits
   (the least partial traffic), then the larger tile.
4. If no tile qualifies (the tiles already fill a wave, e.g. 2048^3 or 9616 x 784, or the
   partials would dominate), the pick is ``splits = 1``: the v5 kernel with the config rule's
   own pick, C written directly (no workspace, no reduce).

:func:`estimate_splitk` is the config rule's throughput model applied to a split config: the
GEMM's units are the unsplit kernel's on an ``(M, splits * N_pad)`` output with K / splits
(exactly the grid the kernel runs), the epilogue stores fp32 (twice the bytes per subtile), and
the reduce reads ``splits x M x N`` fp32 and writes C at HBM speed (ASSUMPTION: the partials
are not found in L2) after a launch PDL mostly hides (:data:`REDUCE_LAUNCH_US`, ASSUMPTION).
It does not model the per-SM feed limit the rule acts on (it rates an SM's intake at 64 B per
clock), so it predicts no gain where the rule splits: the measurement decides.

Config 0 is the rule (its pick depends on M, N and K); configs 1.. are fixed picks for
measuring the rule against alternatives (``--config N``). The fp32 workspace
``(M, splits, N_pad)`` is allocated when the launch is bound, not inside the timed launch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from mla_var3.kernel.backends import CuteKernel
from mla_var3.kernel.cute_python.gemm.hopper_gemm.auto.plan import (
    HopperGemmAutoPlan,
    RuleKernel,
    device_sm_count,
)
from mla_var3.kernel.cute_python.gemm.hopper_gemm.config_rule import (
    H200,
    TILES,
    GemmConfig,
    Machine,
    concurrent_clusters,
    estimate,
    max_stages,
    pick_config,
    raster_group,
    tile_grid,
)
from mla_var3.kernel.cute_python.gemm.hopper_gemm.warp_specialized.plan import (
    COMPILE_SM_COUNT,
    HopperGemmWSPlan,
    compile_operands,
    launch_operands,
    max_active_clusters,
)
from mla_var3.kernel.errors import UnsupportedShapeError
from mla_var3.kernel.plan import Config, Shape, Tensors
from mla_var3.kernel.tensors import element_size

if TYPE_CHECKING:
    from mla_var3.profile.timeline import Timeline

RULE = "pick_splitk"
TILE_K = 64
MIN_K_TILES = 4  # a slice streams at least 4 K tiles (256 of K): its pipeline fill is amortized
MAX_SPLITS = 16
MIN_FILL = 0.75  # the split units must occupy at least 3/4 of the SMs
MAX_PARTIAL_SHARE = 0.25  # fp32 partials at most 1/4 of the bytes of A and B
REDUCE_LAUNCH_US = 1.0  # ASSUMPTION: the reduce's launch and tail, PDL overlapping most of its launch
FP32_EPILOGUE_FACTOR = 2  # fp32 subtiles carry twice the bytes of 16-bit ones
WORKSPACE_DIVISIBILITY = (1, 64)  # N_pad is a whole number of tiles (tile N >= 64)
# The reduce indexes 4-column vectors of C with Int32: M x N / 4 must stay below 2^31.
MAX_C_ELEMENTS = 4 * (2**31 - 256)  # (the last CTA of 256 threads included)


@dataclass(frozen=True)
class SplitKConfig:
    """A v5 tile x cluster with a number of K slices; :meth:`kernel_kwargs` are the kernel's arguments."""

    tile_mn: tuple[int, int]
    cluster_mn: tuple[int, int]
    splits: int
    raster_group_m: int

    def kernel_kwargs(self) -> dict[str, Any]:
        return {
            "tile_mn": self.tile_mn,
            "cluster_mn": self.cluster_mn,
            "splits": self.splits,
            "raster_group_m": self.raster_group_m,
        }

    def __str__(self) -> str:
        (tm, tn), (cm, cn) = self.tile_mn, self.cluster_mn
        return f"{tm}x{tn} tile, {cm}x{cn} cluster, {self.splits} split(s), bands of {self.raster_group_m}"


@dataclass(frozen=True)
class SplitKEstimate:
    """The model's account of one split config at one shape."""

    config: SplitKConfig
    units: int  # CTA work units: tiles x splits (cluster tiles sticking out of C included)
    waves: int  # units per persistent CTA, at most
    bound: str  # the GEMM part's: "mma", "feed" or "dram"
    time_us: float


def padded_n(n: int, tile_mn: tuple[int, int], cluster_mn: tuple[int, int]) -> int:
    """Columns of one slice in the workspace: N in whole cluster tiles (the kernel's ``padded_n``)."""
    width = tile_mn[1] * cluster_mn[1]
    return math.ceil(n / width) * width


def max_splits(k: int) -> int:
    """The most slices of at least :data:`MIN_K_TILES` K tiles (1 when K is shorter than that)."""
    return max(1, min(MAX_SPLITS, math.ceil(k / TILE_K) // MIN_K_TILES))


def splitk_stages(tile_mn: tuple[int, int]) -> int:
    """A/B stages next to the fp32 C ring (the kernel's own budget)."""
    from mla_var3.kernel.cute_python.gemm.hopper_gemm.split_k.kernel import EPI_STAGES, splitk_max_stages

    return splitk_max_stages((*tile_mn, TILE_K), EPI_STAGES)


def estimate_splitk(
    m: int, n: int, k: int, config: SplitKConfig, dtype: str = "bfloat16", machine: Machine = H200
) -> SplitKEstimate:
    """The model's time of ``config`` at M x N x K (see the module docstring)."""
    tile, cluster, raster = config.tile_mn, config.cluster_mn, config.raster_group_m
    if config.splits == 1:  # the v5 kernel, C written directly
        unsplit = GemmConfig(tile, cluster, max_stages(tile, element_size(dtype)), raster)
        e = estimate(m, n, k, unsplit, dtype, machine)
        return SplitKEstimate(config, e.tiles, e.waves, e.bound, e.time_us)
    splits, elem = config.splits, element_size(dtype)
    n_pad = padded_n(n, tile, cluster)
    slice_tiles = math.ceil(math.ceil(k / TILE_K) / splits)  # the longest slice
    gemm_config = GemmConfig(tile, cluster, splitk_stages(tile), raster)
    # The split GEMM is the unsplit kernel on an (M, splits x N_pad) output with K = one slice.
    e = estimate(m, splits * n_pad, slice_tiles * TILE_K, gemm_config, dtype, machine)
    epilogue_clk = FP32_EPILOGUE_FACTOR * (config.tile_mn[1] // 32) * machine.epilogue_clk_per_subtile
    compute_s = e.waves * (slice_tiles * e.k_tile_clk + epilogue_clk) / machine.clock_hz
    partials = 4 * m * splits * n_pad
    dram_s = ((m + n) * k * elem + partials) / machine.hbm_bytes_per_s
    reduce_s = (4 * m * splits * n + elem * m * n) / machine.hbm_bytes_per_s
    bound = "dram" if dram_s > compute_s else e.bound
    time_us = (max(compute_s, dram_s) + reduce_s) * 1e6 + machine.fixed_us + REDUCE_LAUNCH_US
    return SplitKEstimate(config, e.tiles, e.waves, bound, time_us)


def split_cluster(m: int, tile_mn: tuple[int, int]) -> tuple[int, int]:
    """2 x 1 (B multicast to a pair of tile rows) when the tile rows pair up, else no cluster."""
    tiles_m = math.ceil(m / tile_mn[0])
    return (2, 1) if tiles_m % 2 == 0 else (1, 1)


def pick_splitk(
    m: int, n: int, k: int, dtype: str = "bfloat16", sm_count: int = H200.sm_count
) -> SplitKConfig:
    """The split rule (the module docstring): of the tiles whose split units fill the GPU with
    partials small against A and B, the fewest splits, then the larger tile; else one split with
    the config rule's pick."""
    qualifying = []
    for tile in TILES:
        if m <= 64 and tile[0] > 64:
            continue
        cluster = split_cluster(m, tile)
        cluster_size = cluster[0] * cluster[1]
        tiles_m, tiles_n = tile_grid(m, n, tile)
        cluster_tiles = math.ceil(tiles_m / cluster[0]) * math.ceil(tiles_n / cluster[1])
        splits = min(max_splits(k), concurrent_clusters(cluster, sm_count) // cluster_tiles)
        fills = cluster_tiles * splits * cluster_size >= MIN_FILL * sm_count
        partials = 4 * m * splits * padded_n(n, tile, cluster)
        if splits >= 2 and fills and partials <= MAX_PARTIAL_SHARE * (m + n) * k * element_size(dtype):
            qualifying.append(
                SplitKConfig(tile, cluster, splits, raster_group(m, n, tile, cluster, sm_count))
            )
    if qualifying:
        return min(qualifying, key=lambda c: (c.splits, -c.tile_mn[0] * c.tile_mn[1]))
    picked = pick_config(m, n, k, dtype, sm_count)
    return SplitKConfig(picked.tile_mn, picked.cluster_mn, 1, picked.raster_group_m)


class HopperGemmSplitKPlan(HopperGemmAutoPlan):
    name = "hopper_gemm_splitk"
    description = (
        "split-K on the v5 GEMM: (tile, K slice) units write fp32 partials, a 128-bit-load reduce sums them "
        "(PDL); tile, cluster and splits picked per shape"
    )
    static_shape_params: ClassVar[tuple[str, ...] | None] = None  # the rule's pick depends on M, N and K

    def __init__(self, dtype: str | None = None) -> None:
        super().__init__(dtype)
        self._workspaces: dict[tuple[Any, ...], Any] = {}  # fp32 workspaces by (C's address, device, shape)

    def validate_shape(self, shape: Shape) -> None:
        super().validate_shape(shape)
        if shape["m"] * shape["n"] > MAX_C_ELEMENTS:
            raise UnsupportedShapeError(
                f"{self.name} indexes C in 4-element vectors with 32-bit integers: M x N "
                f"(={shape['m'] * shape['n']}) must be at most {MAX_C_ELEMENTS}; use hopper_gemm_auto"
            )

    def _autotune_configs(self) -> list[Config]:
        fixed = [
            {"tile_mn": (64, 256), "cluster_mn": (1, 1), "splits": 4, "raster_group_m": 1},
            {"tile_mn": (64, 128), "cluster_mn": (1, 1), "splits": 2, "raster_group_m": 1},
            {"tile_mn": (128, 256), "cluster_mn": (1, 1), "splits": 4, "raster_group_m": 8},
            {"tile_mn": (128, 128), "cluster_mn": (2, 1), "splits": 2, "raster_group_m": 8},
        ]
        return [{"rule": RULE, "sm_count": device_sm_count()}, *fixed]

    def resolve(self, shape: Shape, config: Config) -> Config:
        """The fixed config ``config`` stands for at ``shape`` (itself unless it is the rule);
        a fixed config with more slices than K has tiles is rejected here."""
        if "rule" in config:
            return pick_splitk(
                shape["m"], shape["n"], shape["k"], self.dtype, config["sm_count"]
            ).kernel_kwargs()
        k_tiles = math.ceil(shape["k"] / TILE_K)
        if config["splits"] > k_tiles:
            raise UnsupportedShapeError(
                f"{self.name}: {config['splits']} K slices need K >= {64 * (config['splits'] - 1) + 1} "
                f"(K={shape['k']} has {k_tiles} tiles of 64); use config 0 (the split rule) or fewer splits"
            )
        return config

    def plan(self, config: Config) -> Any:
        if "rule" in config:
            return RuleKernel(self, config)
        if config["splits"] == 1:  # the v5 kernel itself
            ws_config = {k: v for k, v in config.items() if k != "splits"}
            return HopperGemmWSPlan.plan(self, {**ws_config, "stages": None})
        return self._split_kernel(config)

    def _split_kernel(self, config: Config) -> CuteKernel:
        from mla_var3.kernel.cute_python.gemm.hopper_gemm.split_k.kernel import HopperGemmSplitK
        from mla_var3.kernel.tensors import fake_dynamic_tensor, to_cute_dynamic

        gemm = HopperGemmSplitK(**{k: tuple(v) if isinstance(v, list) else v for k, v in config.items()})
        cluster_size = gemm.cluster_mn[0] * gemm.cluster_mn[1]

        def compile_args(shape: Shape) -> tuple[Any, ...]:
            import cutlass

            self.resolve(shape, config)  # a fixed config with more slices than K tiles fails here
            workspace = fake_dynamic_tensor(cutlass.Float32, WORKSPACE_DIVISIBILITY)
            return (*compile_operands(self.dtype), workspace, COMPILE_SM_COUNT // cluster_size)

        def launch_args(inputs: Tensors, outputs: Tensors) -> tuple[Any, ...]:
            import torch

            a, b, c = inputs["a"], inputs["b"], outputs["c"]
            self.resolve({"m": a.shape[0], "n": b.shape[0], "k": a.shape[1]}, config)
            # Allocated at bind, not in the timed launch; the plan holds it (the bound launch
            # keeps only a DLPack view of it), and later binds to the same C reuse it.
            ws_shape = (c.shape[0], gemm.splits * gemm.padded_n(c.shape[1]))
            key = (c.data_ptr(), c.device, ws_shape)
            if key not in self._workspaces:
                self._workspaces[key] = torch.empty(ws_shape, dtype=torch.float32, device=c.device)
            workspace = self._workspaces[key]
            max_clusters = max_active_clusters(cluster_size, a.device.index or 0)
            return (
                *launch_operands(a, b, c),
                to_cute_dynamic(workspace, WORKSPACE_DIVISIBILITY),
                max_clusters,
            )

        return CuteKernel(
            host_fn=gemm,
            compile_args=compile_args,
            launch_args=launch_args,
            dynamic_smem_bytes=lambda shape: gemm.dynamic_smem_bytes(),
        )

    def record_timeline(self, shape: Shape, config: Config) -> Timeline | None:
        return None  # no timeline variant of the split kernel


__all__ = [
    "MAX_PARTIAL_SHARE",
    "MIN_FILL",
    "MIN_K_TILES",
    "RULE",
    "HopperGemmSplitKPlan",
    "SplitKConfig",
    "SplitKEstimate",
    "estimate_splitk",
    "max_splits",
    "padded_n",
    "pick_splitk",
    "split_cluster",
]
