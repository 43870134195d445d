"""The MLA decode workload (``workloads/mla.py``): lengths, pages, poison, roofline, and the fp32
reference against a naive per-sequence softmax attention (CPU); the torch baseline plan."""

from __future__ import annotations

import math

import pytest

from mla_var3.kernel.errors import UnsupportedDtypeError, UnsupportedShapeError
from mla_var3.kernel.torch_ref.mla.decode.torch.plan import MlaDecodeTorchPlan
from mla_var3.kernel.workloads.mla import (
    D_LATENT,
    D_QK,
    MLA_CHECK_SHAPES,
    mla_shape,
    page_assignment,
    sequence_lengths,
)


def _naive(inputs: dict, scale: float) -> tuple[list, list]:
    """Float64 attention written out per sequence, token and head, positions looked up one by one."""
    import torch

    q, cache, table, lens = inputs["q"], inputs["kv_cache"], inputs["block_table"], inputs["seqlens"]
    b, s_q, h_q, _ = q.shape
    page = cache.shape[1]
    o = torch.zeros(b, s_q, h_q, D_LATENT, dtype=torch.float64)
    lse = torch.zeros(b, h_q, s_q, dtype=torch.float64)
    for i in range(b):
        length = int(lens[i])
        rows = torch.stack([cache[int(table[i, p // page]), p % page, 0].double() for p in range(length)])
        for tok in range(s_q):
            visible = length - (s_q - 1 - tok)
            k = rows[:visible]
            for head in range(h_q):
                scores = (k @ q[i, tok, head].double()) * scale
                m = scores.max()
                w = torch.exp(scores - m)
                lse[i, head, tok] = m + torch.log(w.sum())
                o[i, tok, head] = (w / w.sum()) @ k[:, :D_LATENT]
    return o, lse


TINY = [
    mla_shape(b=2, s=1, t=5, h=3, page=16),
    mla_shape(b=3, s=1, t=70, h=2, page=64, varlen=1),
    mla_shape(b=2, s=2, t=130, h=2, page=128),
    mla_shape(b=3, s=2, t=40, h=3, page=16, varlen=1),
    mla_shape(b=2, s=2, t=2, h=1, page=64),
]


@pytest.mark.parametrize("shape", TINY, ids=str)
def test_reference_matches_naive_attention(shape: dict[str, int]) -> None:
    import torch

    plan = MlaDecodeTorchPlan("bfloat16")
    inputs = plan.prepare_inputs(shape, device="cpu")
    ref = plan.reference_fn(inputs)
    o, lse = _naive(inputs, 1 / math.sqrt(576))
    assert ref["o"].dtype == torch.float32 and ref["lse"].dtype == torch.float32
    assert torch.isfinite(ref["o"]).all() and torch.isfinite(ref["lse"]).all()
    torch.testing.assert_close(ref["o"].double(), o, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(ref["lse"].double(), lse, rtol=1e-5, atol=1e-5)


def test_causal_rows_differ_and_the_last_token_sees_everything() -> None:
    import torch

    plan = MlaDecodeTorchPlan("float16")
    shape = mla_shape(b=1, s=2, t=3, h=2, page=16)
    inputs = plan.prepare_inputs(shape, device="cpu")
    single = dict(inputs, q=inputs["q"][:, 1:])  # token 1 alone with s_q = 1 sees all 3 rows
    full = plan.reference_fn(inputs)
    last = plan.reference_fn(single)
    torch.testing.assert_close(full["o"][:, 1], last["o"][:, 0])
    assert not torch.allclose(full["lse"][..., 0], full["lse"][..., 1])


@pytest.mark.parametrize("page", [16, 64, 128])
def test_unused_rows_are_nan_and_used_rows_are_not(page: int) -> None:
    import torch

    plan = MlaDecodeTorchPlan()
    shape = mla_shape(b=4, t=100, h=1, page=page, varlen=1)
    inputs = plan.prepare_inputs(shape, device="cpu")
    cache, table, lens = inputs["kv_cache"], inputs["block_table"], inputs["seqlens"].tolist()
    used = torch.zeros(cache.shape[:2], dtype=torch.bool)
    for i, length in enumerate(lens):
        for p in range(length):
            used[int(table[i, p // page]), p % page] = True
    rows_nan = torch.isnan(cache[:, :, 0]).all(-1)
    assert torch.equal(rows_nan, ~used)
    assert cache.shape == (int(used.any(-1).sum()) + shape["b"], page, 1, D_QK)
    assert table.dtype == torch.int32 and table.shape == (4, -(-max(lens) // page))


def test_variable_lengths_are_seeded_clipped_and_spread() -> None:
    shape = mla_shape(b=512, s=2, t=1000, varlen=1)
    lens = sequence_lengths(shape)
    assert lens == sequence_lengths(shape)
    assert min(lens) >= 2 and max(lens) <= 2000
    assert 900 < sum(lens) / len(lens) < 1100
    assert len(set(lens)) > 100
    assert sequence_lengths(mla_shape(b=3, t=77)) == [77, 77, 77]


def test_pages_are_a_permutation_of_the_pool() -> None:
    lengths, tables, pool = page_assignment(mla_shape(b=5, t=200, page=16, varlen=1))
    owned = [p for length, row in zip(lengths, tables, strict=True) for p in row[: -(-length // 16)]]
    assert len(set(owned)) == len(owned) == pool - 5
    assert all(0 <= p < pool for row in tables for p in row)


def test_roofline_counts_follow_flashmla() -> None:
    plan = MlaDecodeTorchPlan()
    shape = mla_shape(b=3, s=2, t=100, h=16, varlen=1)
    total = sum(sequence_lengths(shape))
    flops, nbytes = plan._algorithmic_flops_bytes(shape)
    assert flops == 2 * 2 * 16 * total * (576 + 512)
    assert nbytes == (total * 576 + 3 * 2 * 16 * (576 + 512)) * 2


@pytest.mark.parametrize(
    ("override", "match"),
    [({"t": 1, "s": 2}, r"--t \(=1\) >= --s"), ({"varlen": 2}, "--varlen <= 1"), ({"page": 0}, "--page >= 1")],
)
def test_bad_shapes_are_rejected(override: dict[str, int], match: str) -> None:
    with pytest.raises(UnsupportedShapeError, match=match):
        MlaDecodeTorchPlan().check_shape(mla_shape(**override))


def test_fp8_is_rejected() -> None:
    with pytest.raises(UnsupportedDtypeError, match="float8"):
        MlaDecodeTorchPlan("float8_e4m3fn")


def test_check_shapes_are_valid_and_cover_the_edges() -> None:
    plan = MlaDecodeTorchPlan()
    for shape in MLA_CHECK_SHAPES:
        plan.check_shape(shape)
    assert {s["page"] for s in MLA_CHECK_SHAPES} == {16, 64, 128}
    assert {1, 63, 65, 4097} <= {s["t"] for s in MLA_CHECK_SHAPES}
    assert {s["s"] for s in MLA_CHECK_SHAPES} == {1, 2} and {s["varlen"] for s in MLA_CHECK_SHAPES} == {0, 1}


def test_torch_plan_is_registered_and_fills_outputs() -> None:
    import torch

    from mla_var3.kernel.registry import get_plan

    assert get_plan("mla_decode_torch") is MlaDecodeTorchPlan
    plan = MlaDecodeTorchPlan("bfloat16")
    shape = mla_shape(b=2, s=2, t=33, h=4, page=16)
    inputs = plan.prepare_inputs(shape, device="cpu")
    outputs = plan.allocate_outputs(inputs, shape)
    from mla_var3.kernel.arch import Arch

    kernel = plan.plan({})
    kernel.launch(kernel.compile(shape, Arch.parse("sm_90")), inputs, outputs)
    ref = plan.reference_fn(inputs)
    assert outputs["o"].dtype == torch.bfloat16 and outputs["lse"].shape == (2, 4, 2)
    torch.testing.assert_close(outputs["o"].float(), ref["o"], rtol=1e-2, atol=1e-2)
    torch.testing.assert_close(outputs["lse"], ref["lse"])
