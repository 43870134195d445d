"""Absorbed-MLA decode over a paged KV cache in cuTile: a split-KV kernel and a combine kernel.

Query rows are ``row = token * h_q + head`` (the ``s_q`` tokens of a sequence share its one
latent KV head, so all ``s_q * h_q`` rows stream the same cache rows). Work is written
transposed, as cuTile's MMA likes it for this shape: scores ``S^T = K Q^T`` are
(``TILE_N`` KV rows x ``TILE_H`` query rows) and the output accumulator ``O^T = V^T P^T`` is
(512 x ``TILE_H``), so the 512-wide V side is the MMA's M dimension. V is the first 512
columns of the cache rows (the absorbed form's V is a view of the latent cache): ``V_LOAD``
reads V^T as a tile of its own (a second, L2-hit read of the same rows), else the K tile already
loaded is transposed.

- :func:`mla_decode_split_kernel`: CTA (row block, sequence, split) streams the KV rows
  ``[split * split_len, min((split + 1) * split_len, seqlen))`` in ``TILE_N``-row tiles. Each
  tile sits in one page: its page comes from the block table (``ct.gather``) and becomes the
  first coordinate of the 3-D tile load from the (pages, page, 576) cache. Online softmax in
  log2 units (scale folded into ``qk_scale = scale * log2(e)``), row sums accumulated
  elementwise and reduced once at the end; each step reads the next tile's page ahead, so the
  next loads need not wait on the block table. Only the tiles holding the sequence's end are
  masked (``PEEL``: a main loop without masking code, then a tail loop with it; else one loop
  that branches per tile): scores past each row's causal limit become :data:`MASKED` (a fully
  masked row then stays finite and is weighted out later), and V rows past the length are
  zeroed (the cache there may hold NaN, and 0 * NaN is NaN). Writes the split's normalised O (fp32) and LSE
  (log2); a split that starts past its sequence's end writes nothing.
- :func:`mla_decode_combine_kernel`: CTA (row block, sequence) merges the sequence's used
  splits: ``m = max lse_s``, ``O = sum 2^(lse_s - m) O_s / sum 2^(lse_s - m)``, and writes O in
  the input dtype and the natural-log LSE (``(m + log2 sum) * ln 2``) scattered to (b, h_q, s_q).
"""

from __future__ import annotations

import math

import cuda.tile as ct

ConstInt = ct.Constant[int]
ConstBool = ct.Constant[bool]

D_LATENT = 512
D_ROPE = 64
ROPE_BLOCK = D_LATENT // D_ROPE  # the rope columns 512..575 are tile 8 of 64-wide tiles
# A masked score. Finite, so a row with nothing visible in a tile stays finite (its split is
# weighted out in the combine), and moderate: the exp2 argument ``s * qk_scale - max`` is one
# FMA, whose rounding of a huge product would be huge too (-1e30 gave exp2(+-1e21): inf, NaN).
MASKED = -1.0e6
LN2 = math.log(2.0)


def _attend_tile(Q, KV, BlockTable, batch, tile, page, seqlen, visible, q, q_rope, m, l_parts, acc, qk_scale,
                 PAGE, TILE_H, TILE_N, V_LOAD, MASK):
    """One ``TILE_N``-row step of the online softmax on physical page ``page``; returns the updated
    ``(m, l_parts, acc)`` and the page of the next tile (read now, so the next loads need not wait on it)."""
    first = tile * TILE_N
    next_page = ct.gather(BlockTable, (batch, (first + TILE_N) // PAGE))
    within = (first % PAGE) // TILE_N
    k = ct.reshape(ct.load(KV, index=(page, within, 0), shape=(1, TILE_N, D_LATENT)), (TILE_N, D_LATENT))
    k_rope = ct.reshape(ct.load(KV, index=(page, within, ROPE_BLOCK), shape=(1, TILE_N, D_ROPE)), (TILE_N, D_ROPE))
    s = ct.mma(k_rope, q_rope, ct.mma(k, q, ct.zeros((TILE_N, TILE_H), dtype=ct.float32)))
    if V_LOAD:  # V^T straight from memory, (512, TILE_N)
        v_t = ct.reshape(ct.load(KV, index=(page, 0, within), shape=(1, D_LATENT, TILE_N), order=(0, 2, 1)),
                         (D_LATENT, TILE_N))
    else:  # V^T as the transpose of the K tile already loaded
        v_t = ct.transpose(k)
    if MASK:
        cols = first + ct.arange(TILE_N, dtype=ct.int32)
        s = ct.where(cols[:, None] < visible[None, :], s, MASKED)
        v_t = ct.where(cols[None, :] < seqlen, v_t, 0.0)
    m_new = ct.maximum(m, ct.max(s, 0) * qk_scale)
    p = ct.exp2(s * qk_scale - m_new[None, :])
    alpha = ct.exp2(m - m_new)
    l_parts = l_parts * alpha[None, :] + p
    acc = ct.mma(v_t, ct.astype(p, Q.dtype), acc * alpha[None, :])
    return m_new, l_parts, acc, next_page


@ct.kernel
def mla_decode_split_kernel(
    Q,  # (b, rows, 576), rows = s_q * h_q
    KV,  # (pages, page, 576)
    BlockTable,  # (b, max_pages) int32
    SeqLens,  # (b,) int32
    OPart,  # (b, splits, rows, 512) fp32
    LsePart,  # (b, splits, rows) fp32, log2 units
    qk_scale: float,
    split_len: int,
    S_Q: ConstInt,
    H_Q: ConstInt,
    PAGE: ConstInt,
    TILE_H: ConstInt,
    TILE_N: ConstInt,
    V_LOAD: ConstBool,  # load V^T from memory (else transpose the K tile)
    PEEL: ConstBool,  # unmasked main loop + masked tail loop (else one loop with a masking branch)
):
    row_block = ct.bid(0)
    batch = ct.bid(1)
    split = ct.bid(2)
    seqlen = ct.gather(SeqLens, batch)
    start = split * split_len
    if start < seqlen:
        end = ct.minimum(start + split_len, seqlen)
        zero = ct.PaddingMode.ZERO
        q = ct.load(Q, index=(batch, 0, row_block), shape=(1, D_LATENT, TILE_H), order=(0, 2, 1), padding_mode=zero)
        q = ct.reshape(q, (D_LATENT, TILE_H))
        q_rope = ct.load(Q, index=(batch, ROPE_BLOCK, row_block), shape=(1, D_ROPE, TILE_H), order=(0, 2, 1),
                         padding_mode=zero)
        q_rope = ct.reshape(q_rope, (D_ROPE, TILE_H))

        # Causal limit of each row inside the query block: token t sees seqlen - (S_Q - 1 - t) rows.
        rows = row_block * TILE_H + ct.arange(TILE_H, dtype=ct.int32)
        visible = seqlen - (S_Q - 1) + rows // H_Q
        first_masked = seqlen - (S_Q - 1)  # tiles reaching past this row need the mask
        tile_begin, tile_end = start // TILE_N, ct.cdiv(end, TILE_N)

        m = ct.full((TILE_H,), -math.inf, dtype=ct.float32)
        l_parts = ct.zeros((TILE_N, TILE_H), dtype=ct.float32)
        acc = ct.zeros((D_LATENT, TILE_H), dtype=ct.float32)
        page = ct.gather(BlockTable, (batch, tile_begin * TILE_N // PAGE))
        if PEEL:
            tile_masked = ct.maximum(ct.minimum(first_masked // TILE_N, tile_end), tile_begin)
            for tile in range(tile_begin, tile_masked):
                m, l_parts, acc, page = _attend_tile(Q, KV, BlockTable, batch, tile, page, seqlen, visible, q, q_rope,
                                                     m, l_parts, acc, qk_scale, PAGE, TILE_H, TILE_N, V_LOAD, False)
            for tile in range(tile_masked, tile_end):
                m, l_parts, acc, page = _attend_tile(Q, KV, BlockTable, batch, tile, page, seqlen, visible, q, q_rope,
                                                     m, l_parts, acc, qk_scale, PAGE, TILE_H, TILE_N, V_LOAD, True)
        else:
            for tile in range(tile_begin, tile_end):
                if (tile + 1) * TILE_N > first_masked:
                    m, l_parts, acc, page = _attend_tile(Q, KV, BlockTable, batch, tile, page, seqlen, visible, q,
                                                         q_rope, m, l_parts, acc, qk_scale, PAGE, TILE_H, TILE_N,
                                                         V_LOAD, True)
                else:
                    m, l_parts, acc, page = _attend_tile(Q, KV, BlockTable, batch, tile, page, seqlen, visible, q,
                                                         q_rope, m, l_parts, acc, qk_scale, PAGE, TILE_H, TILE_N,
                                                         V_LOAD, False)

        l_sum = ct.sum(l_parts, 0)
        o = ct.transpose(acc / l_sum[None, :])
        ct.store(OPart, index=(batch, split, row_block, 0), tile=ct.reshape(o, (1, 1, TILE_H, D_LATENT)))
        lse = m + ct.log2(l_sum)
        ct.store(LsePart, index=(batch, split, row_block), tile=ct.reshape(lse, (1, 1, TILE_H)))


@ct.kernel
def mla_decode_combine_kernel(
    OPart,  # (b, splits, rows, 512) fp32
    LsePart,  # (b, splits, rows) fp32, log2 units
    SeqLens,  # (b,) int32
    Out,  # (b, rows, 512)
    Lse,  # (b, h_q, s_q) fp32, natural log
    split_len: int,
    H_Q: ConstInt,
    SPLITS: ConstInt,  # the split count rounded up to a power of two
    TILE_R: ConstInt,
):
    row_block = ct.bid(0)
    batch = ct.bid(1)
    seqlen = ct.gather(SeqLens, batch)
    used = ct.cdiv(seqlen, split_len)
    lse = ct.load(LsePart, index=(batch, 0, row_block), shape=(1, SPLITS, TILE_R), padding_mode=ct.PaddingMode.NEG_INF)
    lse = ct.reshape(lse, (SPLITS, TILE_R))
    lse = ct.where(ct.arange(SPLITS, dtype=ct.int32)[:, None] < used, lse, -math.inf)
    m = ct.max(lse, 0)
    total = ct.sum(ct.exp2(lse - m[None, :]), 0)

    acc = ct.zeros((TILE_R, D_LATENT), dtype=ct.float32)
    for split in range(used):
        part = ct.load(OPart, index=(batch, split, row_block, 0), shape=(1, 1, TILE_R, D_LATENT))
        weight = ct.load(LsePart, index=(batch, split, row_block), shape=(1, 1, TILE_R))
        weight = ct.exp2(ct.reshape(weight, (TILE_R,)) - m)
        acc = acc + ct.reshape(part, (TILE_R, D_LATENT)) * weight[:, None]
    o = ct.astype(acc / total[:, None], Out.dtype)
    ct.store(Out, index=(batch, row_block, 0), tile=ct.reshape(o, (1, TILE_R, D_LATENT)))

    rows = row_block * TILE_R + ct.arange(TILE_R, dtype=ct.int32)
    ct.scatter(Lse, (batch, rows % H_Q, rows // H_Q), (m + ct.log2(total)) * LN2)
