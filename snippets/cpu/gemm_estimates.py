"""Predictions for the Hopper GEMM worklog and its config rule, computed on a CPU before any measurement.

The worklog page (``docs/kernels/hopper-gemm-ws.md``) and the small-problem pages call these
through ``estimate()`` and markdown-exec blocks. Every number comes from the config rule's
throughput model (``mla_var3/kernel/cute_python/gemm/hopper_gemm/config_rule.py``: the H200's
datasheet rates and its named assumptions) plus, for the steps before v5, what each step lacks:

- v0: one stage, so each K tile waits a load's full round trip and its own WGMMAs; several CTAs
  per SM (as many as v0's registers allow) overlap each other's waits;
- v1: loads hidden by the ring, but each K tile's WGMMAs drain before the next are issued;
- v2: one K tile of WGMMAs in flight (no drain), still one CTA per tile: every tile pays the
  pipeline fill and a direct-store epilogue that nothing overlaps;
- v3: persistent, so the fill is paid once per CTA and the next tile's loads run during the
  epilogue, which is still direct stores;
- v4: the TMA-store epilogue; v5: the 2 x 1 cluster multicasting B.
"""

from __future__ import annotations

import math

from mla_var3.kernel.cute_python.gemm.hopper_gemm.config_rule import (
    H200,
    GemmConfig,
    estimate,
    feed_clk,
    mma_clk,
    pick_config,
    ranked,
)
from mla_var3.kernel.tensors import element_size

V5 = GemmConfig((128, 256), (2, 1), 4, 8)  # hopper_gemm_ws's default
V4 = GemmConfig((128, 256), (1, 1), 4, 8)  # the same without the cluster
V0_TILE, V0_CTAS_PER_SM = (64, 256), 3  # v0's 154 registers x 128 threads: 3 CTAs in 64 Ki registers
WGMMA_DRAIN_CLK = 128  # ASSUMPTION: an idle tensor pipe between a wait_group(0) and the next batch
DIRECT_STORE_BYTES_PER_CLK = 8  # ASSUMPTION: 2-byte stores 8 rows apart use a quarter of each 32-byte sector
STEPS = ("v0", "v1", "v2", "v3", "v4", "v5")


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:,.0f} µs" if seconds >= 1e-4 else f"{seconds * 1e6:.1f} µs"


def _direct_epilogue_clk(tile_mn: tuple[int, int], elem: int) -> float:
    return tile_mn[0] * tile_mn[1] * elem / DIRECT_STORE_BYTES_PER_CLK


# --8<-- [start:steps]
def step_seconds(step: str, m: int, n: int, k: int, dtype: str = "bfloat16") -> float:
    """The model's time of worklog step ``step`` (v0..v5) at M x N x K."""
    elem, k_tiles, clock = element_size(dtype), math.ceil(k / 64), H200.clock_hz
    if step in ("v4", "v5"):
        return estimate(m, n, k, V5 if step == "v5" else V4, dtype).time_us * 1e-6
    if step == "v0":
        tiles = math.ceil(m / V0_TILE[0]) * math.ceil(n / V0_TILE[1])
        per_k = H200.load_latency_clk + mma_clk(V0_TILE) + WGMMA_DRAIN_CLK
        # Each SM runs V0_CTAS_PER_SM CTAs whose waits overlap, but never faster than its tensor cores.
        per_k_sm = max(per_k / V0_CTAS_PER_SM, mma_clk(V0_TILE))
        slots = H200.sm_count * V0_CTAS_PER_SM
        busy = tiles / H200.sm_count * k_tiles * per_k_sm + _direct_epilogue_clk(V0_TILE, elem)
        return max(busy, math.ceil(tiles / slots) * k_tiles * per_k) / clock + H200.fixed_us * 1e-6
    tiles = math.ceil(m / 128) * math.ceil(n / 256)
    feed = feed_clk(V4, min(tiles, H200.sm_count), elem)
    drain = WGMMA_DRAIN_CLK if step == "v1" else 0
    per_tile = k_tiles * max(feed, mma_clk(V4.tile_mn) + drain) + _direct_epilogue_clk(V4.tile_mn, elem)
    if step == "v3":  # persistent: one fill per CTA, tiles back to back
        waves = math.ceil(tiles / H200.sm_count)
        return (H200.load_latency_clk + waves * per_tile) / clock + H200.fixed_us * 1e-6
    waves = math.ceil(tiles / H200.sm_count)  # v1, v2: one CTA per tile, each pays its fill
    return waves * (H200.load_latency_clk + per_tile) / clock + H200.fixed_us * 1e-6


# --8<-- [end:steps]


def step_time(step: str, m: int, n: int, k: int, dtype: str = "bfloat16") -> str:
    """``step_seconds`` as text, with the TFLOP/s it implies."""
    seconds = step_seconds(step, m, n, k, dtype)
    return f"{_us(seconds)} ({2 * m * n * k / seconds / 1e12:,.0f} TFLOP/s)"


def step_gain(step: str, m: int, n: int, k: int, dtype: str = "bfloat16") -> str:
    """How much faster the model says ``step`` is than the step before it."""
    before = STEPS[STEPS.index(step) - 1]
    return f"{step_seconds(before, m, n, k, dtype) / step_seconds(step, m, n, k, dtype):.2f}× {before}"


def rule_pick(m: int, n: int, k: int, dtype: str = "bfloat16") -> str:
    """The config rule's pick at M x N x K, with its waves and the model's time."""
    e = estimate(m, n, k, pick_config(m, n, k, dtype), dtype)
    return (
        f"{e.config}: {e.tiles} tiles, {e.waves} wave(s) filling {e.wave_efficiency:.0%} of the cluster "
        f"slots, {_us(e.time_us * 1e-6)} ({e.bound}-bound)"
    )


def one_config_loss(m: int, n: int, k: int, dtype: str = "bfloat16") -> str:
    """The model's time of the one-size config (v5's default) over the rule's pick's."""
    picked = estimate(m, n, k, pick_config(m, n, k, dtype), dtype)
    fixed = estimate(m, n, k, V5, dtype)
    return f"{fixed.time_us / picked.time_us:.1f}× the rule's pick ({fixed.tiles} tiles of 128 × 256)"


def split_k_time(m: int, n: int, k: int, splits: int, dtype: str = "bfloat16") -> str:
    """Split-K on the rule's pick, in the same model: ``splits`` times the work units, each over
    K / splits, and the fp32 partial tiles summed either by a second launch (read from DRAM) or
    inside the kernel (through L2, as a stream-K fix-up does: no second launch)."""
    pick = pick_config(m, n, k, dtype)
    split = estimate(m, n * splits, math.ceil(k / splits), pick, dtype)  # the units as extra columns
    partials = splits * 4 * m * n  # fp32 partial C tiles, written once and read once
    second_launch = (partials + element_size(dtype) * m * n) / H200.hbm_bytes_per_s + H200.fixed_us * 1e-6
    in_kernel = 2 * partials / (H200.l2_bytes_per_clk * H200.clock_hz)
    plain = estimate(m, n, k, pick, dtype).time_us * 1e-6
    return (
        f"{_us(split.time_us * 1e-6 + second_launch)} with a second launch, "
        f"{_us(split.time_us * 1e-6 + in_kernel)} summed in the kernel, against {_us(plain)} unsplit "
        f"({split.waves} wave(s) of {split.tiles} units instead of {estimate(m, n, k, pick, dtype).waves})"
    )


def waves_table(m: int, n: int, k: int, dtype: str = "bfloat16") -> str:
    """Markdown: every candidate config at M x N x K, ranked by the model, with its tiles per SM
    and waves; the first row is the rule's pick."""
    rows = [
        "| config | tiles | tiles per SM | waves | last wave full | bound | model time |",
        "|---|---|---|---|---|---|---|",
    ]
    for e in ranked(m, n, k, dtype):
        rows.append(
            f"| {e.config} | {e.tiles} | {e.tiles_per_sm:.2f} | {e.waves} | {e.wave_efficiency:.0%} | {e.bound} "
            f"| {_us(e.time_us * 1e-6)} |"
        )
    return "\n".join(rows)


def picks_table(shapes: tuple[tuple[int, int, int], ...], dtype: str = "bfloat16") -> str:
    """Markdown: the rule's pick at each shape and the model's gain over the one-size config."""
    rows = ["| M × N × K | the rule's pick | model: one-size config |", "|---|---|---|"]
    for m, n, k in shapes:
        rows.append(f"| {m} × {n} × {k} | {rule_pick(m, n, k, dtype)} | {one_config_loss(m, n, k, dtype)} |")
    return "\n".join(rows)


def split_rule_pick(m: int, n: int, k: int, dtype: str = "bfloat16") -> str:
    """``hopper_gemm_splitk``'s rule at M x N x K: its pick, the units and the model's time against
    the config rule's unsplit pick (the same model; it rates an SM's intake at 64 B per clock, so it
    cannot see the per-SM feed limit the split rule acts on)."""
    from mla_var3.kernel.cute_python.gemm.hopper_gemm.split_k.plan import estimate_splitk, pick_splitk

    split = estimate_splitk(m, n, k, pick_splitk(m, n, k, dtype), dtype)
    plain = estimate(m, n, k, pick_config(m, n, k, dtype), dtype)
    return (
        f"{split.config}: {split.units} units in {split.waves} wave(s), {_us(split.time_us * 1e-6)} "
        f"({split.bound}-bound) against {_us(plain.time_us * 1e-6)} unsplit"
    )


__all__ = [
    "STEPS",
    "one_config_loss",
    "picks_table",
    "rule_pick",
    "split_k_time",
    "split_rule_pick",
    "step_gain",
    "step_seconds",
    "step_time",
    "waves_table",
]
