"""The absorbed-MLA decode workload every MLA decode plan shares: inputs, reference, roofline.

DeepSeek-style multi-head latent attention in its absorbed form, as decoders run it: every
query head attends over one shared KV head whose rows are 576 wide (512 latent + 64 rope);
K is the whole row, V is its first 512 columns (a view of the same cache, never a copy).

Layouts follow FlashMLA's ``flash_mla_with_kvcache`` so its SM90 kernel is a drop-in peer:

- ``q``: ``(b, s_q, h_q, 576)``; ``kv_cache``: ``(pages, page, 1, 576)`` (the paged cache,
  one KV head); ``block_table``: ``(b, max_pages)`` int32 (a sequence's logical page ->
  physical page); ``seqlens``: ``(b,)`` int32 (KV length per sequence).
- outputs ``o``: ``(b, s_q, h_q, 512)`` in the input dtype; ``lse``: ``(b, h_q, s_q)``
  float32, the natural-log log-sum-exp of each query row's scaled scores.
- ``s_q`` query tokens per sequence are causal inside their block (FlashMLA's convention):
  query token ``i`` sees the first ``s_k - (s_q - 1 - i)`` KV rows.
- softmax scale ``1/sqrt(576)``.

Lengths: all ``t`` (``--varlen 0``), or per-sequence ``round(N(t, t/2))`` clipped to
``[s_q, 2t]`` from a fixed seed (``--varlen 1``; the lower clip is ``s_q``, not 1, so every
causal query row sees at least one KV row). Physical pages are a seeded permutation of the
pool; the pool holds ``b`` spare pages beyond those the sequences use, the block table's
unused slots point at spare pages, and every cache row no sequence uses (spare pages, the
tail of each sequence's last page) is NaN: a kernel that reads past a length without
masking it (in the scores *and* in V) produces NaN and fails the check.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, ClassVar

from mla_var3.kernel.errors import UnsupportedShapeError
from mla_var3.kernel.plan import KernelPlan, Shape, ShapeParam, Tensors
from mla_var3.kernel.tensors import element_size, randn

if TYPE_CHECKING:
    import torch

D_LATENT = 512  # d_v: the latent part of a cache row, also V
D_ROPE = 64
D_QK = D_LATENT + D_ROPE  # 576: the query/key width
SOFTMAX_SCALE = 1.0 / math.sqrt(D_QK)
LENGTH_SEED = 0  # seeds the variable lengths and the page permutation (data stays fresh randn)

MLA_SHAPE_PARAMS = (
    ShapeParam("b", 128, "batch: sequences decoded together", minimum=1),
    ShapeParam("s", 1, "query tokens per sequence, s_q (1, or 2 with causal masking inside the block)", minimum=1),
    ShapeParam("t", 8192, "KV length s_k of every sequence (the mean with --varlen 1)", minimum=1),
    ShapeParam("h", 128, "query heads h_q, all sharing the one latent KV head", minimum=1),
    ShapeParam("page", 64, "rows per page of the paged KV cache", minimum=1),
    ShapeParam("varlen", 0, "1: lengths round(N(t, t/2)) clipped to [s, 2t], seeded; 0: every length is t", maximum=1),
)


def mla_shape(**overrides: int) -> Shape:
    """A full MLA shape: the flag defaults with ``overrides`` (``mla_shape(b=2, t=65)``)."""
    shape = {p.name: p.default for p in MLA_SHAPE_PARAMS}
    unknown = set(overrides) - set(shape)
    if unknown:
        raise KeyError(f"not MLA shape flags: {sorted(unknown)}")
    return shape | overrides


# Odd lengths around tile and page edges, every page size, variable lengths, s_q = 2 causal,
# fewer heads than a 64-row tile: small enough for a quick check, each a different edge.
MLA_CHECK_SHAPES: tuple[Shape, ...] = (
    mla_shape(b=2, t=1, h=16, page=64),
    mla_shape(b=2, t=63, h=128, page=16),
    mla_shape(b=3, t=65, h=64, page=128),
    mla_shape(b=2, s=2, t=4097, h=128, page=64),
    mla_shape(b=8, s=1, t=300, h=128, page=64, varlen=1),
    mla_shape(b=4, s=2, t=1000, h=32, page=16, varlen=1),
)

# rel-L2 of O against the fp32 reference: rounding O to 16 bits (~0.2 ulp(1) relative, as for
# GEMM) plus P rounded to 16 bits before the PV product; FlashMLA's SM90 kernel measured
# 1.8e-3 in bf16 here. ~2.5x / ~4x headroom, tighter than plan.py's generic 1e-2. The LSE is
# fp32 and compared with the same bound (its own error is ~1e-6 relative).
MLA_REL_L2_TOLERANCE = {"bfloat16": 5e-3, "float16": 1e-3}


def sequence_lengths(shape: Shape) -> list[int]:
    """The KV length of each sequence: all ``t``, or seeded ``round(N(t, t/2))`` in ``[s, 2t]``."""
    import torch

    b, t, s_q = shape["b"], shape["t"], shape["s"]
    if not shape["varlen"]:
        return [t] * b
    gen = torch.Generator().manual_seed(LENGTH_SEED)
    draws = torch.normal(float(t), t / 2.0, size=(b,), generator=gen, dtype=torch.float64)
    return [int(x) for x in draws.round().clamp(max(1, s_q), 2 * t).tolist()]


def pages_needed(length: int, page: int) -> int:
    return -(-length // page)


def page_assignment(shape: Shape) -> tuple[list[int], list[list[int]], int]:
    """(lengths, physical pages per sequence (padded with spare pages to max_pages), pool size).

    Pages are a seeded permutation of a pool of the used pages plus ``b`` spares; each
    sequence's unused block-table slots point at spare pages.
    """
    import torch

    lengths = sequence_lengths(shape)
    page, b = shape["page"], shape["b"]
    counts = [pages_needed(n, page) for n in lengths]
    max_pages, used = max(counts), sum(counts)
    pool = used + b
    gen = torch.Generator().manual_seed(LENGTH_SEED + 1)
    perm = torch.randperm(pool, generator=gen).tolist()
    spare = perm[used:]
    tables, start = [], 0
    for i, n in enumerate(counts):
        row = perm[start : start + n]
        start += n
        row += [spare[(i + j) % b] for j in range(max_pages - n)]
        tables.append(row)
    return lengths, tables, pool


@contextmanager
def _fp32_matmuls() -> Iterator[None]:
    """True fp32 products for the reference (no TF32), whatever the process set."""
    import torch

    saved = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32 = saved


def mla_decode_reference(
    q: torch.Tensor,
    kv_cache: torch.Tensor,
    block_table: torch.Tensor,
    seqlens: torch.Tensor,
    softmax_scale: float = SOFTMAX_SCALE,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Absorbed MLA decode in fp32, one sequence at a time: ``(o (b, s_q, h_q, 512), lse (b, h_q, s_q))``.

    Gathers each sequence's rows through the block table, scores ``q k^T * scale`` with the
    causal mask inside the query block, then ``lse = logsumexp`` and ``o = softmax @ v``
    with ``v = k[:, :512]``.
    """
    import torch

    b, s_q, h_q, d = q.shape
    page = kv_cache.shape[1]
    o = torch.empty((b, s_q, h_q, D_LATENT), dtype=torch.float32, device=q.device)
    lse = torch.empty((b, h_q, s_q), dtype=torch.float32, device=q.device)
    with _fp32_matmuls():
        for i, length in enumerate(seqlens.tolist()):
            n_pages = pages_needed(length, page)
            kv = kv_cache[block_table[i, :n_pages].long()].reshape(n_pages * page, d)[:length].float()
            rows = q[i].float().reshape(s_q * h_q, d)  # row = token * h_q + head
            scores = (rows @ kv.T) * softmax_scale
            # Causal inside the block: token j of s_q sees the first length - (s_q - 1 - j) rows.
            token = torch.arange(s_q * h_q, device=q.device) // h_q
            visible = length - (s_q - 1 - token)
            masked = torch.arange(length, device=q.device)[None, :] >= visible[:, None]
            scores = scores.masked_fill(masked, float("-inf"))
            row_lse = torch.logsumexp(scores, dim=-1)
            probs = torch.exp(scores - row_lse[:, None])
            o[i] = (probs @ kv[:, :D_LATENT]).reshape(s_q, h_q, D_LATENT)
            lse[i] = row_lse.reshape(s_q, h_q).T
    return o, lse


class MlaDecodePlanBase(KernelPlan):
    """Inputs, reference, tolerance and roofline of absorbed-MLA decode over a paged KV cache.

    Subclasses add the kernel (``plan``) and its configs; every MLA decode plan (ours in the
    CuTe DSL and cuTile, FlashMLA's, the torch baseline) computes exactly this problem.
    """

    layer: ClassVar[str] = "mla"
    dtypes: ClassVar[tuple[str, ...]] = ("bfloat16", "float16")
    shape_params: ClassVar[tuple[ShapeParam, ...]] = MLA_SHAPE_PARAMS
    check_shapes: ClassVar[tuple[Shape, ...]] = MLA_CHECK_SHAPES
    data_distribution: ClassVar[str] = (
        "q and the KV cache standard normal (torch.randn in fp32, cast to the dtype); cache rows no "
        "sequence uses are NaN; lengths fixed or seeded N(t, t/2) clipped to [s, 2t]; pages a seeded permutation"
    )

    def validate_shape(self, shape: Shape) -> None:
        """Beyond the flags' bounds (``check_shape``): every causal query row must see a KV row."""
        if shape["t"] < shape["s"]:
            raise UnsupportedShapeError(
                f"{self.name} needs --t (={shape['t']}) >= --s (={shape['s']}): with causal masking inside "
                f"the query block, every query token must see a KV row; use --t {shape['s']} or more"
            )

    def prepare_inputs(self, shape: Shape, device: str = "cuda") -> Tensors:
        import torch

        lengths, tables, pool = page_assignment(shape)
        page, b = shape["page"], shape["b"]
        kv_cache = randn((pool, page, 1, D_QK), self.dtype, device)
        poisoned = torch.ones(pool, page, dtype=torch.bool)
        for length, row in zip(lengths, tables, strict=True):
            used = pages_needed(length, page)
            poisoned[row[:used]] = False
            poisoned[row[used - 1], length - (used - 1) * page :] = True
        kv_cache[poisoned.to(kv_cache.device)] = float("nan")
        return {
            "q": randn((b, shape["s"], shape["h"], D_QK), self.dtype, device),
            "kv_cache": kv_cache,
            "block_table": torch.tensor(tables, dtype=torch.int32, device=kv_cache.device),
            "seqlens": torch.tensor(lengths, dtype=torch.int32, device=kv_cache.device),
        }

    def allocate_outputs(self, inputs: Tensors, shape: Shape) -> Tensors:
        import torch

        q = inputs["q"]
        b, s_q, h_q, _ = q.shape
        return {
            "o": torch.empty((b, s_q, h_q, D_LATENT), dtype=q.dtype, device=q.device),
            "lse": torch.empty((b, h_q, s_q), dtype=torch.float32, device=q.device),
        }

    def reference_fn(self, inputs: Tensors) -> Tensors:
        o, lse = mla_decode_reference(inputs["q"], inputs["kv_cache"], inputs["block_table"], inputs["seqlens"])
        return {"o": o, "lse": lse}

    def tolerance(self) -> float:
        return MLA_REL_L2_TOLERANCE[self.dtype]

    def _algorithmic_flops_bytes(self, shape: Shape) -> tuple[int, int]:
        """FlashMLA's convention: FLOPs ``2 s_q h_q sum(s_k) (576 + 512)`` (causal masking inside the
        query block not subtracted); bytes: the KV cache read once (V is a view of it), Q and O."""
        total_kv = sum(sequence_lengths(shape))
        rows = shape["b"] * shape["s"] * shape["h"]
        flops = 2 * shape["s"] * shape["h"] * total_kv * (D_QK + D_LATENT)
        nbytes = (total_kv * D_QK + rows * D_QK + rows * D_LATENT) * element_size(self.dtype)
        return flops, nbytes


__all__ = [
    "D_LATENT",
    "D_QK",
    "D_ROPE",
    "MLA_CHECK_SHAPES",
    "MLA_REL_L2_TOLERANCE",
    "MLA_SHAPE_PARAMS",
    "SOFTMAX_SCALE",
    "MlaDecodePlanBase",
    "mla_decode_reference",
    "mla_shape",
    "page_assignment",
    "pages_needed",
    "sequence_lengths",
]
