"""Back-of-envelope predictions for our MLA decode variants on the H200, computed on a CPU.

The devlog ``mla-decode-hopper`` and the pattern pages call these through ``estimate()`` before
showing the measured numbers. Inputs: the H200 datasheet's dense bf16 tensor-core rate and HBM3e
bandwidth, the SM count our run records report, and the kernels' own sizes and split rule
(imported from ``mla_var3``, never restated). Every function takes the workload's shape flags
(``b``, ``s`` = s_q, ``t`` = s_k, ``h`` = h_q; fixed lengths) and returns the text a page shows.

The model of one CTA of our CuTe DSL variants: it owns a 64-row query tile of one sequence and
walks that sequence's KV cache in 64-row blocks; one CTA fits per SM (its SMEM), so CTAs run in
waves of 132. Per block, a load moves ``64 x 576`` bf16 values at one SM's even share of HBM
(no L2 reuse between the query tiles of a sequence), and the tensor cores do ``Q K^T`` and
``P V`` on the whole 64-row tile at one SM's share of the peak rate. A variant that does not
overlap pays load + MMA per block; one whose ring hides the load pays the larger of the two.
"""

from __future__ import annotations

import math

from mla_var3.kernel.cute_python.mla.decode import common
from mla_var3.kernel.cute_python.mla.decode.plan_common import (
    COMPILE_SM_COUNT,
    TILE_M,
    TILE_N,
    default_splits,
)
from mla_var3.kernel.workloads.mla import D_LATENT, D_QK

# NVIDIA H200 datasheet (H200 SXM): BFLOAT16 tensor core 1,979 TFLOPS *with sparsity*; dense is half.
BF16_DENSE_FLOPS = 1979e12 / 2
HBM_BYTES_PER_S = 4.8e12  # same datasheet: GPU memory bandwidth 4.8 TB/s (HBM3e)
SMS = COMPILE_SM_COUNT  # 132: device.sm_count of our H200's run records
ELEM_BYTES = 2  # bf16

# The serial chain of each variant: "serial" = load, then MMA; "overlapped" = the ring hides one of them.
# v4 (FlashMLA's seesaw schedule, per-piece barriers, PDL combine) is "overlapped" like v2: the model has
# no term for the softmax or the barriers it changes. "cluster" is a step the devlog proposes, not code
# yet (the built v5 is v4's kernel in another launch order, which the model does not see): the two
# query tiles of a sequence in a 2-CTA cluster, each CTA loading half of every KV block and multicasting
# it to both.
SCHEDULE = {
    "v0": "serial",
    "v1": "serial",
    "v2": "overlapped",
    "v3": "serial",
    "v4": "overlapped",
    "cluster": "overlapped",
}
MULTICAST = {"cluster": 2}  # CTAs that share one KV block load
EVEN_SHARES = ("v4", "cluster")  # split shares rounded up to whole pairs of blocks (v4's _kv_range)


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:.0f} µs"


def _algorithmic(b: int, s: int, t: int, h: int) -> tuple[int, int]:
    """The workload's FLOPs and bytes (FlashMLA's convention, as ``MlaDecodePlanBase`` counts them)."""
    rows = b * s * h
    flops = 2 * s * h * b * t * (D_QK + D_LATENT)
    nbytes = (b * t * D_QK + rows * D_QK + rows * D_LATENT) * ELEM_BYTES
    return flops, nbytes


def flop_floor(b: int = 128, s: int = 1, t: int = 8192, h: int = 128) -> str:
    """The time the workload's FLOPs take at the datasheet's dense bf16 rate."""
    flops, _ = _algorithmic(b, s, t, h)
    return f"{_us(flops / BF16_DENSE_FLOPS)} ({flops / 1e9:.0f} GFLOP)"


def byte_floor(b: int = 128, s: int = 1, t: int = 8192, h: int = 128) -> str:
    """The time the workload's bytes (the cache read once, Q, O) take at the datasheet's HBM bandwidth."""
    _, nbytes = _algorithmic(b, s, t, h)
    return f"{_us(nbytes / HBM_BYTES_PER_S)} ({nbytes / 1e9:.2f} GB)"


def balance(b: int = 128, s: int = 1, t: int = 8192, h: int = 128) -> str:
    """FLOPs per byte of the workload against the machine's (peak rate over bandwidth): which floor binds."""
    flops, nbytes = _algorithmic(b, s, t, h)
    ours, machine = flops / nbytes, BF16_DENSE_FLOPS / HBM_BYTES_PER_S
    return f"{ours:.0f} FLOP/byte against the H200's {machine:.0f}: {'compute' if ours > machine else 'memory'}-bound"


# --8<-- [start:model]
def _grid(variant: str, b: int, s: int, t: int, h: int) -> tuple[int, int, int]:
    """(splits, CTAs that get KV blocks, KV blocks each walks) of our CuTe DSL variant at this shape."""
    query_tiles = math.ceil(s * h / TILE_M)
    kv_blocks = math.ceil(t / TILE_N)
    splits = 1 if variant == "v0" else default_splits(b, query_tiles, kv_blocks, SMS)  # v1's host rule
    per_split = math.ceil(kv_blocks / splits)
    if variant in EVEN_SHARES:
        per_split += per_split % 2
    working = math.ceil(kv_blocks / per_split)  # a split past the last block gets none
    return splits, b * query_tiles * working, per_split


def _block_times() -> tuple[float, float]:
    """(load, MMA) of one 64-row KV block for one CTA, at one SM's share of HBM and of the peak rate."""
    load = TILE_N * D_QK * ELEM_BYTES / (HBM_BYTES_PER_S / SMS)
    mma = 2 * TILE_M * TILE_N * (D_QK + D_LATENT) / (BF16_DENSE_FLOPS / SMS)
    return load, mma


def workspace_bytes(b: int, s: int, t: int, h: int) -> int:
    """fp32 partial O and LSE of every split, written once and read once by the combine (0 without a split)."""
    splits, _, _ = _grid("v1", b, s, t, h)
    return 0 if splits == 1 else 2 * b * splits * s * h * (D_LATENT + 1) * 4


def variant_seconds(variant: str, b: int, s: int, t: int, h: int) -> float:
    """The model's time: waves x blocks per CTA x the block's serial chain, plus the split workspace."""
    _, ctas, blocks = _grid(variant, b, s, t, h)
    load, mma = _block_times()
    load /= min(MULTICAST.get(variant, 1), math.ceil(s * h / TILE_M))  # a pair needs two query tiles
    per_block = load + mma if SCHEDULE[variant] == "serial" else max(load, mma)
    waves = math.ceil(ctas / SMS)
    workspace = 0 if variant == "v0" else workspace_bytes(b, s, t, h)
    return waves * blocks * per_block + workspace / HBM_BYTES_PER_S


# --8<-- [end:model]


def variant_time(variant: str, b: int = 128, s: int = 1, t: int = 8192, h: int = 128) -> str:
    """The model's time of one of our CuTe DSL variants (``"v0"`` .. ``"v4"``, or the planned ``"cluster"``)."""
    return _us(variant_seconds(variant, b, s, t, h))


def block_times() -> str:
    """One KV block's load and MMA time for one CTA, as the model counts them."""
    load, mma = _block_times()
    return f"load {load * 1e6:.2f} µs, MMA {mma * 1e6:.2f} µs per 64-row block and CTA"


def multicast_block_times(ctas: int = 2) -> str:
    """One KV block's load and MMA time for one CTA when ``ctas`` CTAs of a cluster each load a share
    of the block and multicast it to all (the cluster step): the load shrinks, the MMA does not."""
    load, mma = _block_times()
    longer = "the MMA" if mma > load / ctas else "the load"
    return (
        f"load {load / ctas * 1e6:.2f} µs (1/{ctas} of a block), MMA {mma * 1e6:.2f} µs per 64-row block "
        f"and CTA: {longer} is the longer half"
    )


def double_read_floor(b: int = 128, s: int = 1, t: int = 8192, h: int = 128) -> str:
    """HBM time if every 64-row query tile's CTA read the sequence's cache from DRAM itself (no L2 reuse)."""
    reads = math.ceil(s * h / TILE_M)
    nbytes = reads * b * t * D_QK * ELEM_BYTES
    return f"{_us(nbytes / HBM_BYTES_PER_S)} ({reads} reads of the cache, {nbytes / 1e9:.2f} GB)"


def split_grid(b: int = 4, s: int = 1, t: int = 8192, h: int = 128) -> str:
    """How v1's host rule splits the KV length at this shape, and the grid it launches."""
    splits, working, per_split = _grid("v1", b, s, t, h)
    launched = b * math.ceil(s * h / TILE_M) * splits
    if splits == 1:
        return f"no split: {launched} CTAs of {per_split} KV blocks"
    return f"{splits} splits of {per_split} KV blocks: {launched} CTAs, {working} with work, for {SMS} SMs"


def cutile_split_grid(b: int = 4, s: int = 1, t: int = 8192, h: int = 128, tile_h: int = 16) -> str:
    """How our cuTile plan splits at this shape (its own rule, ``layout``), and the grid it launches."""
    from mla_var3.kernel.cutile.mla.decode.split_kv.plan import layout

    sizes = layout(
        {"b": b, "s": s, "t": t, "h": h, "page": 64, "varlen": 0}, {"tile_h": tile_h, "tile_n": 64}
    )
    ctas = sizes["row_blocks"] * b * sizes["splits"]
    splits = (
        "no split" if sizes["splits"] == 1 else f"{sizes['splits']} splits of {sizes['split_len']} KV rows"
    )
    return f"{splits}: {ctas} CTAs of {tile_h} query rows"


def split_rounding(b: int = 8, s: int = 1, t: int = 8192, h: int = 128) -> str:
    """Rounding the split count up (``ceil(SMs / tiles)``, v1's first rule) against down (``SMs // tiles``,
    ``default_splits`` today), both as the model's v2 time: what the rounding costs at this shape."""
    tiles = b * math.ceil(s * h / TILE_M)
    kv_blocks = math.ceil(t / TILE_N)
    load, _ = _block_times()  # v2 hides the MMA behind the load at these shapes
    rows = []
    for name, splits in (
        ("up", 1 if tiles >= SMS else min(kv_blocks, math.ceil(SMS / tiles))),
        ("down", default_splits(b, tiles // b, kv_blocks, SMS)),
    ):
        per_split = math.ceil(kv_blocks / splits)
        ctas = tiles * math.ceil(kv_blocks / per_split)
        waves = math.ceil(ctas / SMS)
        rows.append(
            f"rounded {name}: {splits} splits, {ctas} CTAs in {waves} wave(s), {_us(waves * per_split * load)}"
        )
    return "; ".join(rows)


def workspace(b: int = 4, s: int = 1, t: int = 8192, h: int = 128) -> str:
    """v1's split workspace round trip at this shape, and its time at the datasheet's HBM bandwidth."""
    nbytes = workspace_bytes(b, s, t, h)
    if nbytes == 0:
        return "none (one split)"
    return f"{nbytes / 2e6:.1f} MB written, then read back: {_us(nbytes / HBM_BYTES_PER_S)} of HBM traffic"


def smem_stages() -> str:
    """What fills our kernels' SMEM and why only two KV stages fit (the kernels' own budget function)."""
    stages = common.max_kv_stages()
    budget = common.smem_budget(stages)
    kib = 1024
    return (
        f"Q {budget.q // kib} KiB + {stages} x {budget.kv // stages // kib} KiB KV + P {budget.p // kib} KiB + "
        f"{budget.small // kib} KiB = {budget.total // kib} KiB of the {common.smem_capacity() // kib} KiB a block may use"
    )


def mma_share(design: str = "v2") -> str:
    """The share of a KV block's MMA FLOPs that the busiest warpgroup issues, between its softmax steps.

    ``"v2"``: the softmax warpgroup issues ``Q K^T`` and its half of ``P V``; ``"seesaw"`` (FlashMLA):
    the two warpgroups take turns at ``Q K^T`` over pairs of blocks and each issues half of every ``P V``.
    """
    qk, pv = D_QK, D_LATENT  # per query row and KV row, the FLOPs are proportional to the widths
    busiest = qk + pv / 2 if design == "v2" else (qk + pv) / 2
    return f"{busiest / (qk + pv):.0%}"


def l2_reads(design: str = "cutile", b: int = 128, s: int = 1, t: int = 8192, h: int = 128) -> str:
    """Bytes that cross from L2 into SMEM: every CTA streams its sequence's cache itself.

    ``"cute"``: 64-row query tiles, K and V from one SMEM tile; ``"cutile"``: our cuTile plan's
    16-row tiles loading K (576 columns) and V^T (512) as separate tiles; ``"tilegym"``: 32-row
    tiles, K, rope and V loaded separately.
    """
    tile, columns = {
        "cute": (TILE_M, D_QK),
        "cutile": (16, D_QK + D_LATENT),
        "tilegym": (32, D_QK + D_LATENT),
    }[design]
    tiles = math.ceil(s * h / tile)
    nbytes = tiles * b * t * columns * ELEM_BYTES
    _, algorithmic = _algorithmic(b, s, t, h)
    return f"{nbytes / 1e9:.1f} GB, {nbytes / algorithmic:.1f} times the workload's bytes"


def wave_fill(variant: str = "v2", b: int = 128, s: int = 1, t: int = 8192, h: int = 128) -> str:
    """CTAs with work, the waves they take on 132 SMs (one CTA per SM), and the share of SM slots they fill."""
    _, ctas, _ = _grid(variant, b, s, t, h)
    waves = math.ceil(ctas / SMS)
    return f"{ctas} CTAs in {waves} wave(s) of {SMS}: {ctas / (waves * SMS):.0%} of the SM slots busy"
