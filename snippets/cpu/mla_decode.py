"""MLA decode on a CPU, for the concept page: the absorbed form checked against the per-head form, and
what one decode step costs, from the project's own workload class and split rule.

``absorbed_vs_naive`` builds one sequence's latent cache with random DeepSeek-shaped projections and
computes its attention twice -- decompressing per-head keys and values (the training-time form), and
absorbing the key projection into the query and the value projection into the output (the form our
kernels implement) -- and prints how far apart the two are. ``step_cost``, ``intensity_table`` and
``split_table`` take the workload's FLOPs and bytes from ``MlaDecodePlanBase`` (the numbers every
record's roofline uses) and the grid from our CuTe DSL plans' ``default_splits``; the machine balance
is the H200 datasheet's, as in ``snippets.cpu.mla_estimates``.
"""

from __future__ import annotations

import math

import torch

from mla_var3.kernel.cute_python.mla.decode.plan_common import (
    COMPILE_SM_COUNT,
    TILE_M,
    TILE_N,
    default_splits,
)
from mla_var3.kernel.torch_ref.mla.decode.torch.plan import MlaDecodeTorchPlan
from mla_var3.kernel.workloads.mla import D_LATENT, D_QK, D_ROPE, mla_shape
from snippets.cpu.mla_estimates import BF16_DENSE_FLOPS, HBM_BYTES_PER_S

D_NOPE = 128  # DeepSeek-V2/V3: the per-head query/key width without rope (qk_nope_head_dim)
D_V = 128  # DeepSeek-V2/V3: the per-head value width (v_head_dim)


# --8<-- [start:naive]
def naive(q_nope, q_rope, c_kv, k_rope, w_uk, w_uv, scale):
    """Per head: decompress keys and values from the latent cache, then ordinary attention.

    q_nope (h, 128), q_rope (h, 64); cache: c_kv (t, 512), k_rope (t, 64) shared by all heads;
    w_uk, w_uv (h, 128, 512) map a latent row to one head's key / value.
    """
    k_nope = torch.einsum("tc,hdc->htd", c_kv, w_uk)  # (h, t, 128): every head's keys
    v = torch.einsum("tc,hdc->htd", c_kv, w_uv)  # (h, t, 128): every head's values
    scores = torch.einsum("hd,htd->ht", q_nope, k_nope) + q_rope @ k_rope.T
    p = torch.softmax(scores * scale, dim=-1)
    return torch.einsum("ht,htd->hd", p, v)  # (h, 128)
# --8<-- [end:naive]


# --8<-- [start:absorbed]
def absorbed(q_nope, q_rope, c_kv, k_rope, w_uk, w_uv, scale):
    """The same attention with W_UK moved onto the query and W_UV onto the output.

    What the decode kernel computes is the middle: one 576-wide key row per cached token, shared
    by every head, and V = the first 512 columns of that same row.
    """
    q = torch.cat([torch.einsum("hd,hdc->hc", q_nope, w_uk), q_rope], dim=-1)  # (h, 576)
    kv = torch.cat([c_kv, k_rope], dim=-1)  # (t, 576): the cache row as stored
    p = torch.softmax((q @ kv.T) * scale, dim=-1)  # (h, t)
    o_latent = p @ kv[:, :D_LATENT]  # (h, 512): the kernel's output O
    return torch.einsum("hc,hdc->hd", o_latent, w_uv)  # (h, 128): W_UV, after the kernel
# --8<-- [end:absorbed]


def absorbed_vs_naive(heads: int = 16, tokens: int = 300, seed: int = 0) -> str:
    """Both forms on one random sequence in float64: the largest difference of their outputs."""
    gen = torch.Generator().manual_seed(seed)

    def randn(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=gen, dtype=torch.float64)

    args = (
        randn(heads, D_NOPE),
        randn(heads, D_ROPE),
        randn(tokens, D_LATENT),
        randn(tokens, D_ROPE),
        randn(heads, D_NOPE, D_LATENT) / math.sqrt(D_LATENT),
        randn(heads, D_V, D_LATENT) / math.sqrt(D_LATENT),
    )
    scale = 1.0 / math.sqrt(D_NOPE + D_ROPE)
    ref, ours = naive(*args, scale), absorbed(*args, scale)
    per_token_naive = heads * (D_NOPE + D_ROPE + D_V)
    return (
        f"{heads} heads, {tokens} cached tokens, float64\n"
        f"max |naive - absorbed| = {(ref - ours).abs().max().item():.1e} (outputs of size {ref.abs().max().item():.1f})\n"
        f"values per cached token: naive {per_token_naive} (per-head K and V), absorbed {D_QK} (one latent row)"
    )


def _cost(b: int, s: int, t: int, h: int) -> tuple[int, int]:
    """(FLOPs, bytes) of one decode step, as every MLA decode plan's roofline counts them (bf16)."""
    return MlaDecodeTorchPlan("bfloat16")._algorithmic_flops_bytes(mla_shape(b=b, s=s, t=t, h=h))


def step_cost(b: int = 128, s: int = 1, t: int = 8192, h: int = 128) -> str:
    """FLOPs, bytes and FLOP per byte of one decode step at this shape."""
    flops, nbytes = _cost(b, s, t, h)
    return f"{flops / 1e9:.0f} GFLOP over {nbytes / 1e9:.2f} GB: {flops / nbytes:.0f} FLOP/byte"


def machine_balance() -> str:
    """The H200's dense bf16 tensor-core rate over its HBM bandwidth (datasheet)."""
    return f"{BF16_DENSE_FLOPS / HBM_BYTES_PER_S:.0f} FLOP/byte"


def turning_rows() -> str:
    """Query rows per cached token (h_q x s_q) at which a step's FLOP/byte reaches the machine's."""
    per_row = 2 * (D_QK + D_LATENT) / (D_QK * 2)  # FLOPs per query row per KV byte (bf16), Q and O ignored
    return f"{BF16_DENSE_FLOPS / HBM_BYTES_PER_S / per_row:.0f} query rows per cached token"


def intensity_table(b: int = 128, t: int = 8192) -> str:
    """FLOP/byte and the bound side for several heads x query tokens; the batch changes neither much."""
    balance = BF16_DENSE_FLOPS / HBM_BYTES_PER_S
    rows = ["| h_q | s_q | rows per cached token | GFLOP | GB | FLOP/byte | bound by |", "|---|---|---|---|---|---|---|"]
    for h, s in ((16, 1), (32, 1), (64, 1), (128, 1), (64, 2), (128, 2)):
        flops, nbytes = _cost(b, s, t, h)
        side = "tensor cores" if flops / nbytes > balance else "HBM"
        rows.append(f"| {h} | {s} | {h * s} | {flops / 1e9:.0f} | {nbytes / 1e9:.2f} | {flops / nbytes:.0f} | {side} |")
    return "\n".join(rows)


def split_table(h: int = 128, s: int = 1, t: int = 8192) -> str:
    """Our CuTe DSL plans' grid per batch size: query-tile CTAs, the split rule's choice, CTAs launched."""
    query_tiles = math.ceil(s * h / TILE_M)
    kv_blocks = math.ceil(t / TILE_N)
    rows = ["| batch | query-tile CTAs | KV splits | CTAs launched | KV blocks per CTA |", "|---|---|---|---|---|"]
    for b in (1, 4, 8, 32, 64, 128):
        splits = default_splits(b, query_tiles, kv_blocks, COMPILE_SM_COUNT)
        rows.append(
            f"| {b} | {b * query_tiles} | {splits} | {b * query_tiles * splits} | {math.ceil(kv_blocks / splits)} |"
        )
    return "\n".join(rows)
