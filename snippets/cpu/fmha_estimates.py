"""Back-of-envelope expectations for our SM90 FMHA forward (``docs/kernels/fmha-hopper.md``), on a CPU.

The devlog calls these through ``estimate()`` before the measured numbers and runs the tables at
build time. Inputs are published facts, each named where it is defined: NVIDIA's dense BF16 tensor
rate for the H100/H200 SXM, the SFU (``MUFU.EX2``) throughput of the CUDA programming guide, the SM
count and top clock of our H200's run records, and the kernels' own SMEM budget and tile sizes
(``mla_var3/kernel/cute_python/attention/fmha/common.py``).
"""

from __future__ import annotations

import numpy as np

from mla_var3.kernel.cute_python.attention.fmha import common
from mla_var3.kernel.cute_python.attention.fmha_workload import visible_pairs

DENSE_BF16_FLOPS = (
    989.4e12  # NVIDIA H100/H200 SXM datasheets: BF16 tensor core, dense (half the sparse figure)
)
SMS = 132  # device.sm_count of our H200's run records
DATASHEET_SM_HZ = 1.83e9  # the boost clock NVIDIA quotes the H100 SXM's tensor rate at
EX2_PER_CLOCK = 16  # CUDA C++ programming guide, arithmetic throughput, cc 9.0: exp2 16 per clock per SM
HBM_BYTES_PER_S = 4.8e12  # NVIDIA H200 datasheet: GPU memory bandwidth 4.8 TB/s (HBM3e)
GROUP_SHAPE = {"b": 2, "s": 8192, "t": 8192, "h": 16, "hk": 16, "d": 128}


def _flops(causal: int) -> int:
    shape = {**GROUP_SHAPE, "causal": causal}
    return 4 * shape["b"] * shape["h"] * shape["d"] * visible_pairs(shape)


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms"


def mma_floor(causal: int) -> str:
    """The tensor-core-bound time of the group's shape: its FLOPs at the datasheet's dense BF16 rate."""
    return f"{_ms(_flops(causal) / DENSE_BF16_FLOPS)} ({_flops(causal) / 1e12:.2f} TFLOP at the datasheet's dense BF16 rate)"


def time_at(tflops: float, causal: int) -> str:
    """How long the group's shape may take to run at ``tflops`` (a target, not a measurement)."""
    return _ms(_flops(causal) / (tflops * 1e12))


# --8<-- [start:model]
def block_clocks(tile_n: int = 128) -> dict[str, float]:
    """One KV block of one CTA (128 query rows), in SM clocks at the datasheet's rates: the two GEMMs
    on the tensor cores, the exp2 of every score (and each row's factor) on the SFUs, and the K and V
    blocks' load at one SM's share of HBM bandwidth (pessimistic: most of K and V comes from L2)."""
    flops_per_clock = DENSE_BF16_FLOPS / SMS / DATASHEET_SM_HZ
    return {
        "mma": 4 * common.CTA_M * tile_n * common.HEAD_DIM / flops_per_clock,
        "exp": common.CTA_M * (tile_n + 1) / EX2_PER_CLOCK,
        "load": 2 * tile_n * common.HEAD_DIM * 2 / (HBM_BYTES_PER_S / SMS / DATASHEET_SM_HZ),
    }


def variant_time(variant: str, causal: int) -> str:
    """The group's shape under a per-block model: v0 pays load, GEMMs and both warpgroups' softmax in
    turn (lockstep); v1 hides the load and lands between the tensor cores' time (the warpgroups'
    softmaxes fall in each other's GEMMs) and GEMMs plus softmax (they coincide); v2 and v3 overlap the
    softmax with GEMMs by construction, so the tensor cores set the pace. Blocks are spread evenly over
    the SMs; one CTA per SM."""
    c = block_clocks()
    blocks = _flops(causal) / (4 * common.CTA_M * 128 * common.HEAD_DIM)  # CTA-blocks in the walk
    seconds = blocks / SMS / DATASHEET_SM_HZ
    if variant == "v0":
        return _ms(seconds * (c["load"] + c["mma"] + c["exp"]))
    if variant == "v1":
        return f"{_ms(seconds * c['mma'])} to {_ms(seconds * (c['mma'] + c['exp']))}"
    return _ms(seconds * max(c["mma"], c["exp"]))


# --8<-- [end:model]


def exp_share(tile_n: int = 128) -> str:
    """One KV block of one CTA: the SFU's exp2 time against the tensor cores' time for its two GEMMs."""
    c = block_clocks(tile_n)
    return (
        f"{c['exp']:.0f} SFU clocks of exp2 against {c['mma']:.0f} tensor-core clocks, "
        f"{c['exp'] / c['mma']:.0%} of the block's MMA time"
    )


def smem_table() -> str:
    """Markdown: the SMEM each variant's buffers take, per KV block size and stage count, against the
    capacity the DSL reports for sm_90 (less its static 1 KiB)."""
    cap = common.smem_capacity()
    rows = [
        "| variant | tile_n | stages | Q | K | V | barriers | total | fits |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for variant, tile_n, stages in (
        ("v0", 128, 1),
        ("v1-v3", 128, 3),
        ("v1-v3", 128, 4),
        ("v1", 176, 2),
        ("v1", 176, 3),
    ):
        b = common.smem_budget(tile_n, stages)
        kib = [x // 1024 for x in (b.q, b.k, b.v, b.barriers, b.total)]
        fits = "yes" if b.total <= cap else f"no (> {cap // 1024} KiB)"
        rows.append(
            f"| {variant} | {tile_n} | {stages} | " + " | ".join(f"{k} KiB" for k in kib) + f" | {fits} |"
        )
    return "\n".join(rows)


def register_table() -> str:
    """Markdown: fp32-equivalent registers per consumer thread for O, S and P, and what is live at once."""
    threads = common.WARPGROUP_THREADS
    rows = [
        "| tile_n | O (64 x 128 fp32) | S (64 x tile_n fp32) | P (16-bit) | v0/v1 peak (O + S) | v2/v3 peak (O + S + P) |",
        "|---|---|---|---|---|---|",
    ]
    for tile_n in common.TILE_NS:
        o = common.TILE_M * common.HEAD_DIM // threads
        s = common.TILE_M * tile_n // threads
        p = s // 2
        rows.append(f"| {tile_n} | {o} | {s} | {p} | {o + s} | {o + s + p} |")
    return "\n".join(rows)


# --8<-- [start:rescale_skips]
def rescale_skips(blocks: int = 64, rows: int = 16, warps: int = 8, seed: int = 0) -> str:
    """How often v3's warp vote skips O's rescale on randn data, for a walk of ``blocks`` KV blocks.

    A warp holds ``rows`` query rows; the rescale before block ``j``'s ``P V`` is skipped when no
    row's running max moved at block ``j``. Scores of one row against independent keys are
    i.i.d., so the max moves at the ``j``-th block with probability ``1/j`` and a warp skips with
    ``(1 - 1/j)^rows`` (the first block always counts as a move). The simulation draws randn q and
    K (d = 128) and walks the blocks last first, as the kernel does.
    """
    exact = sum((1 - 1 / j) ** rows for j in range(2, blocks + 1)) / blocks
    rng = np.random.default_rng(seed)
    keys = rng.standard_normal((blocks * 128, common.HEAD_DIM)).astype(np.float32)
    skipped = 0
    for _ in range(warps):
        q = rng.standard_normal((rows, common.HEAD_DIM)).astype(np.float32)
        scores = (q @ keys.T).reshape(rows, blocks, 128).max(axis=2)[:, ::-1]  # block maxima, walk order
        running = np.maximum.accumulate(scores, axis=1)
        moved = np.concatenate([np.ones((rows, 1), bool), running[:, 1:] > running[:, :-1]], axis=1)
        skipped += int((~moved.any(axis=0)).sum())
    return (
        f"{exact:.0%} of the {blocks} rescales of a warp of {rows} rows "
        f"(simulated on randn: {skipped / (warps * blocks):.0%})"
    )


# --8<-- [end:rescale_skips]
