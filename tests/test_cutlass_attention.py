"""CUTLASS's attention-side examples, imported: Hopper FMHA, Ampere FlashAttention-2, Blackwell FMHA backward,
mixed-input FMHA (decode, prefill d256/d512) and Mamba2 SSD. Each compiles for its arch with the SASS that proves
its design; the tensors and pointers a launch would pass have the types the compile assumed; other archs and shapes
are refused cleanly; the fp32 references agree with independent forms on the CPU."""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Callable
from typing import Any

import pytest

from mla_var3.kernel.arch import check_supported
from mla_var3.kernel.backends import Compiled
from mla_var3.kernel.compile_cache import compile_cached
from mla_var3.kernel.errors import ArchError, UnsupportedShapeError
from mla_var3.kernel.registry import get_plan

SM100_PLANS = (
    "cutlass_fmha_bwd_sm100",
    "cutlass_mixed_input_fmha_decode",
    "cutlass_mixed_input_fmha_prefill_d256",
    "cutlass_mixed_input_fmha_prefill_d512",
    "cutlass_mamba2_ssd",
)
SMEM_LIMIT = 227 * 1024  # opt-in dynamic SMEM per block, H200 and B200
# The examples leave their folders on sys.path and their modules in sys.modules: undone after this module.
pytestmark = pytest.mark.usefixtures("module_restored_imports")


def _compile(name: str, arch: str, **shape: int) -> tuple[Compiled, Any]:
    """The binary and its analysis, from the run's compile cache (the registry test reads the same entry)."""
    plan = get_plan(name)()
    full = plan.default_shape() | shape
    plan.check_shape(full)
    result = compile_cached(plan, plan.default_config(), full, arch, need_function=False)
    assert result.analysis is not None, result.analysis_error
    return result.compiled, result.analysis


def _count(histogram: dict[str, int], pattern: str) -> int:
    return sum(n for mnemonic, n in histogram.items() if re.match(pattern, mnemonic))


def _kernels(analysis: Any) -> dict[str, Any]:
    """Resources by kernel role: the word after ``kernel_cutlass_`` in the symbol."""
    return {re.match(r"kernel_cutlass_([a-zA-Z0-9]+)", r.kernel).group(1): r for r in analysis.resources}


def test_registered_with_their_archs() -> None:
    assert get_plan("cutlass_hopper_fmha").archs == ("sm_90a",)
    assert get_plan("cutlass_ampere_fa2").archs == (
        "sm_80",
        "sm_90a",
    )  # sm_80 compiles, sm_90a runs on the H200
    for name in ("cutlass_hopper_fmha", "cutlass_ampere_fa2", *SM100_PLANS):
        assert get_plan(name).layer == "attention"
    for name in SM100_PLANS:
        assert get_plan(name).archs == ("sm_100a",)
        with pytest.raises(ArchError, match=rf"'{name}' does not support sm_90a; it supports sm_100a"):
            check_supported(name, get_plan(name).archs, "sm_90a")
    with pytest.raises(ArchError, match="'cutlass_hopper_fmha' does not support sm_100a; it supports sm_90a"):
        check_supported("cutlass_hopper_fmha", get_plan("cutlass_hopper_fmha").archs, "sm_100a")


@pytest.mark.cutlass
def test_hopper_fmha_wgmma_tma_and_an_argv_with_h(monkeypatch: pytest.MonkeyPatch) -> None:
    # Our CLI's "--h 16" would make the DSL's own argv parser print its usage and exit 0 (argparse takes
    # --h for --help): the plan compiles with argv shielded.
    monkeypatch.setattr(sys, "argv", ["kernel", "--h", "16"])
    compiled, analysis = _compile("cutlass_hopper_fmha", "sm_90a", causal=1)
    hist, classes = analysis.sass.histogram, analysis.sass.classes
    (kernel,) = analysis.resources
    assert kernel.registers == 168 and kernel.local_bytes == kernel.stack_bytes == 0  # 65536 / 384 threads
    # QK^T (64 x 128 keys x d) and PV (64 x d x 128 keys) are both 64x128x16 steps at d = 128: 8 each per tile,
    # in three copies of the body (the peeled first tile, the masked and the unmasked loop)
    assert hist["HGMMA.64x128x16.F32.BF16"] == 3 * (8 + 8) and _count(hist, r"HGMMA") == classes["wgmma"]
    assert hist["MUFU.EX2"] > 0 and hist["F2FP.BF16.F32.PACK_AB"] > 0  # exp2 of the scores, P packed to bf16
    assert _count(hist, r"UTMALDG\.5D$") > 0 and _count(hist, r"UTMASTG\.5D$") > 0  # (s, d, h_r, h_k, b)
    assert classes["setmaxreg"] == 2 and classes["stmatrix"] > 0  # 24 / 240 split, stmatrix epilogue
    # SMEM: Q 2 x 64x128, K/V 5 x 128x128, O 2 stages x 2 warpgroups x 64x32 (bf16), then barriers
    assert compiled.dynamic_smem_bytes == (2 * 64 * 128 + 5 * 128 * 128 + 2 * 2 * 64 * 32) * 2 + 1024


@pytest.mark.cutlass
def test_ampere_fa2_mma_sync_cp_async_and_its_spills() -> None:
    compiled, analysis = _compile("cutlass_ampere_fa2", "sm_80")
    hist, classes = analysis.sass.histogram, analysis.sass.classes
    (kernel,) = analysis.resources
    assert _count(hist, r"HMMA\.16816\.F32\.BF16") > 0 and classes["cp_async"] > 0 and classes["ldmatrix"] > 0
    assert classes.get("wgmma", 0) == 0 and classes.get("tma_load", 0) == 0
    # 128 threads hold a 128x128 fp32 O and a 128x64 S: the register file runs out (255) and spills to the stack
    assert kernel.registers == 255 and kernel.stack_bytes > 0 and classes["local_memory"] > 0
    assert compiled.dynamic_smem_bytes == (128 * 128 + 2 * 64 * 128) * 2  # Q + one K + one V tile


@pytest.mark.cutlass
def test_fmha_bwd_three_kernels_tmem_and_tma_reduce() -> None:
    compiled, analysis = _compile("cutlass_fmha_bwd_sm100", "sm_100a", d=128)
    hist, classes = analysis.sass.histogram, analysis.sass.classes
    assert set(_kernels(analysis)) == {"sum", "bwd", "convert"}  # sum_OdO, the backward, dQ fp32 -> bf16
    assert _kernels(analysis)["bwd"].registers == 128  # 65536 / 512 threads (16 warps)
    assert _count(hist, r"UTCHMMA") > 0 and _count(hist, r"UTCHMMA\.2CTA") == 0  # five 1-CTA MMAs into TMEM
    assert classes["tma_reduce"] > 0  # dQ: TMA reduce-add into the fp32 workspace
    assert classes["cp_async"] > 0  # LSE and sum(O*dO) rows: cp.async by the load warp
    for name in ("tmem_alloc", "tmem_copy", "tcgen05_commit", "setmaxreg"):
        assert classes.get(name, 0) > 0, name
    assert compiled.dynamic_smem_bytes <= SMEM_LIMIT


@pytest.mark.cutlass
@pytest.mark.parametrize(
    "name", ["cutlass_mixed_input_fmha_prefill_d256", "cutlass_mixed_input_fmha_prefill_d512"]
)
def test_mixed_input_prefill_dequantizes_for_a_2cta_mma(name: str) -> None:
    compiled, analysis = _compile(name, "sm_100a")
    hist = analysis.sass.histogram
    assert (
        _count(hist, r"UTCHMMA\.2CTA") > 0 and _count(hist, r"UTMALDG\.\dD\.2CTA") > 0
    )  # Q loaded for the pair
    assert _count(hist, r"F2FP\.\S*BF16\.S2_6\.UNPACK_B") > 0  # int8 -> bf16, two per instruction
    assert _count(hist, r"HMUL2\.BF16") > 0  # times the block scale, in bf16
    assert _count(hist, r"F2FP\.BF16\.F32\.PACK_AB") > 0  # P to bf16
    assert compiled.dynamic_smem_bytes <= SMEM_LIMIT


@pytest.mark.cutlass
def test_mixed_input_decode_converts_into_tmem_and_reduces_splits() -> None:
    compiled, analysis = _compile("cutlass_mixed_input_fmha_decode", "sm_100a")
    hist, classes = analysis.sass.histogram, analysis.sass.classes
    assert set(_kernels(analysis)) == {"decode", "reduction"}
    assert _count(hist, r"UTCHMMA") > 0 and _count(hist, r"UTCHMMA\.2CTA") == 0
    assert _count(hist, r"F2FP\.\S*BF16\.S2_6\.UNPACK_B") > 0  # int8 K/V converted to bf16
    assert _count(hist, r"STTM") > 0  # converted K/V stored to TMEM: the MMA's A operand
    assert (
        classes["tma_store"] > 0 and classes.get("setmaxreg", 0) == 0
    )  # partial O per split; 8 heads: no realloc
    assert _count(hist, r"CREDUX\.MAX\.F32") > 0  # column max over a warp's 32 KV rows
    # the float max across warps (SMEM) and splits (global) as integer atomics: max on the bits, min for negatives
    assert _count(hist, r"ATOMS\.MAX\.S32") > 0 and _count(hist, r"REDG\.E\.MAX\.S32") > 0


@pytest.mark.cutlass
def test_mamba2_ssd_four_gemms_and_its_register_split() -> None:
    compiled, analysis = _compile("cutlass_mamba2_ssd", "sm_100a")
    hist, classes = analysis.sass.histogram, analysis.sass.classes
    (kernel,) = analysis.resources
    assert kernel.registers == 128 and kernel.local_bytes == kernel.stack_bytes == 0  # 65536 / 512 threads
    assert _count(hist, r"UTCHMMA") > 0 and _count(hist, r"UTCHMMA\.2CTA") == 0
    assert classes["setmaxreg"] > 0 and classes["tma_store"] > 0  # y and the final state leave through TMA
    assert _count(hist, r"MUFU\.EX2") > 0  # the decays exp(A(t) - A(u))
    assert compiled.dynamic_smem_bytes <= SMEM_LIMIT


@pytest.mark.parametrize(
    ("name", "change", "message"),
    [
        ("cutlass_hopper_fmha", {"d": 96}, r"needs --d in 32, 64, 128, 256"),
        ("cutlass_ampere_fa2", {"hk": 4}, r"has no grouped-query attention: pass --hk 16"),
        ("cutlass_ampere_fa2", {"d": 100}, r"needs --d to be a multiple of 8"),
        ("cutlass_fmha_bwd_sm100", {"d": 256}, r"needs --d in 64, 128"),
        ("cutlass_mixed_input_fmha_prefill_d256", {"d": 128}, r"needs --d >= 256"),
        ("cutlass_mixed_input_fmha_decode", {"d": 96}, r"needs --d a multiple of 64"),
        (
            "cutlass_mixed_input_fmha_decode",
            {"block": 256, "t": 1001},
            r"needs --t a multiple of 4 for 2 scale",
        ),
        ("cutlass_mamba2_ssd", {"s": 1000}, r"needs --s \(=1000\) to be a multiple of --l \(=128\)"),
        ("cutlass_mamba2_ssd", {"g": 3}, r"needs --h \(=80\) to be a multiple of --g \(=3\)"),
    ],
)
def test_shapes_they_cannot_take(name: str, change: dict[str, int], message: str) -> None:
    plan = get_plan(name)()
    with pytest.raises(UnsupportedShapeError, match=message):
        plan.check_shape(plan.default_shape() | change)


@pytest.mark.cutlass
def test_hopper_tile_the_example_refuses() -> None:
    plan = get_plan("cutlass_hopper_fmha")()
    kernel = plan.plan({"mma_tiler_mn": (64, 256), "is_persistent": True})
    with pytest.raises(UnsupportedShapeError, match="not enough smem"):
        kernel.host_for(plan.default_shape())


def test_launch_views_match_the_compiled_types(cute_type: Callable[[Any], str]) -> None:
    """Views of our workloads' tensors (CPU stand-ins) type exactly like the fake tensors the plans compile."""
    import cutlass
    import torch

    from mla_var3.kernel.cute_python.attention.cutlass_ampere_fa2.imported.plan import bshd, fake_bshd
    from mla_var3.kernel.cute_python.attention.cutlass_fmha_bwd.imported.plan import _fake_lse, _lse_view
    from mla_var3.kernel.cute_python.attention.cutlass_hopper_fmha.common import as_heads_5d, fake_heads_5d
    from mla_var3.kernel.cute_python.attention.cutlass_mamba2.ssd.plan import ARGUMENTS, fake_operand, operand

    bf16, f32 = cutlass.BFloat16, cutlass.Float32
    q = torch.zeros(2, 100, 16, 128, dtype=torch.bfloat16)
    assert cute_type(as_heads_5d(q, 4)) == cute_type(fake_heads_5d(bf16))
    assert cute_type(as_heads_5d(q[..., 0].float(), 4)) == cute_type(
        fake_heads_5d(f32)
    )  # Hopper's LSE (b, s, h)
    assert cute_type(as_heads_5d(q, 4, d_divisibility=64)) == cute_type(fake_heads_5d(bf16, d_divisibility=64))
    assert cute_type(_lse_view(torch.zeros(2, 16, 100), 4)) == cute_type(_fake_lse())
    assert cute_type(bshd(q)) == cute_type(fake_bshd(bf16))
    shape = {"b": 2, "h": 6, "g": 2, "s": 512, "d": 64, "n": 128, "l": 128}
    plan = get_plan("cutlass_mamba2_ssd")()
    stored = {name: torch.zeros(*_mamba2_stored(name, shape), dtype=torch.bfloat16) for name in ARGUMENTS}
    for name in ARGUMENTS:
        assert cute_type(operand(name, stored[name])) == cute_type(fake_operand(name, shape, bf16)), name
    assert plan.static_shape(shape) == {"d": 64, "n": 128, "l": 128}


def _mamba2_stored(name: str, shape: dict[str, int]) -> tuple[int, ...]:
    from mla_var3.kernel.cute_python.attention.cutlass_mamba2.ssd.plan import stored_shape

    return stored_shape(name, shape)


def test_mixed_input_pointers_carry_type_and_alignment() -> None:
    import cutlass
    import torch

    from mla_var3.kernel.cute_python.attention.cutlass_mixed_input_fmha.common import pointer, pointers

    buffer = torch.zeros(1024, dtype=torch.int8)
    k = buffer[-buffer.data_ptr() % 128 :][:256]  # a 128-byte aligned start, as CUDA allocations have
    (real,) = pointers([k], 128)
    fake = pointer(cutlass.Int8, align=128)
    assert (real.dtype, real.memspace, real._assumed_align) == (
        fake.dtype,
        fake.memspace,
        fake._assumed_align,
    )
    assert real._pointer == k.data_ptr()


def test_attention_reference_against_sdpa_on_cpu() -> None:
    import torch

    from mla_var3.kernel.cute_python.attention.cutlass_hopper_fmha.common import attention_with_lse

    torch.manual_seed(0)
    q, k, v = torch.randn(2, 7, 4, 16), torch.randn(2, 9, 2, 16), torch.randn(2, 9, 2, 16)
    for causal, diagonal in ((False, 0), (True, 0), (True, 2)):
        o, lse = attention_with_lse(q, k, v, causal, diagonal=diagonal)
        kk, vv = (x.repeat_interleave(2, dim=2).transpose(1, 2) for x in (k, v))
        scores = (q.transpose(1, 2) @ kk.transpose(2, 3)) / 4.0  # (b, h, s, t); 1/sqrt(16)
        if causal:
            scores = scores.masked_fill(torch.ones(7, 9, dtype=torch.bool).triu(1 + diagonal), float("-inf"))
        ref = torch.softmax(scores, -1) @ vv
        torch.testing.assert_close(o, ref.transpose(1, 2), rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(lse, torch.logsumexp(scores, -1).transpose(1, 2), rtol=1e-5, atol=1e-5)


def test_attention_grads_match_the_closed_form() -> None:
    """dV = P^T dO, dS = P * (dP - rowsum(dO * O)), dQ = scale dS K, dK = scale dS^T Q: what fmha_bwd.py computes."""
    import torch

    from mla_var3.kernel.cute_python.attention.cutlass_fmha_bwd.imported.plan import attention_grads

    torch.manual_seed(1)
    q, k, v, do = (torch.randn(1, 5, 2, 8) for _ in range(4))
    grads = attention_grads({"q": q, "k": k, "v": v, "do": do, "causal": torch.tensor([1])})
    scale = 1 / math.sqrt(8)
    qh, kh, vh, doh = (x[0].transpose(0, 1) for x in (q, k, v, do))  # (h, s, d)
    scores = (qh @ kh.transpose(1, 2) * scale).masked_fill(
        torch.ones(5, 5, dtype=torch.bool).triu(1), float("-inf")
    )
    p = torch.softmax(scores, -1)
    o = p @ vh
    ds = p * (doh @ vh.transpose(1, 2) - (doh * o).sum(-1, keepdim=True))
    expected = {"dq": scale * ds @ kh, "dk": scale * ds.transpose(1, 2) @ qh, "dv": p.transpose(1, 2) @ doh}
    for name, value in expected.items():
        torch.testing.assert_close(grads[name], value.transpose(0, 1)[None], rtol=1e-4, atol=1e-5)


def test_block_quantization_round_trip() -> None:
    import torch

    from mla_var3.kernel.cute_python.attention.cutlass_mixed_input_fmha.common import (
        dequantize_blocks,
        quantize_blocks,
    )

    x = torch.randn(3, 5, 512)
    q, scale = quantize_blocks(x, 256)
    assert q.dtype == torch.int8 and scale.shape == (3, 5, 2) and scale.dtype == torch.bfloat16
    assert int(q.abs().max()) == 127  # each block's absmax lands on the largest code
    err = (dequantize_blocks(q, scale) - x).abs().unflatten(-1, (2, 256)).amax(-1)
    assert bool((err <= scale.float() * 0.51 + 1e-2 * x.abs().unflatten(-1, (2, 256)).amax(-1)).all())


def test_ssd_reference_against_the_recurrence() -> None:
    """The quadratic form equals the state-space recurrence h(t) = exp(dt a) h(t-1) + dt x B^T, y = h C + D x."""
    import torch

    from mla_var3.kernel.cute_python.attention.cutlass_mamba2.ssd.plan import ssd_reference

    torch.manual_seed(2)
    b, h, g, d, n, chunks, ell = 1, 4, 2, 3, 5, 2, 4
    s = chunks * ell
    inputs = {
        "x": torch.randn(b, h, d, chunks, ell),
        "dt": torch.rand(b, h, chunks, ell) * 0.5,
        "a": -torch.rand(h) - 0.1,
        "B": torch.randn(b, g, n, chunks, ell),
        "C": torch.randn(b, g, n, chunks, ell),
        "D": torch.randn(h, d),
    }
    out = ssd_reference(inputs)
    x, dt = inputs["x"].flatten(-2), inputs["dt"].flatten(-2)
    bb, cc = inputs["B"].flatten(-2), inputs["C"].flatten(-2)
    for j in range(h):
        grp, state = j // (h // g), torch.zeros(d, n)
        for t in range(s):
            state = torch.exp(dt[0, j, t] * inputs["a"][j]) * state + dt[0, j, t] * torch.outer(
                x[0, j, :, t], bb[0, grp, :, t]
            )
            y = state @ cc[0, grp, :, t] + inputs["D"][j] * x[0, j, :, t]
            torch.testing.assert_close(out["y"].flatten(-2)[0, j, :, t], y, rtol=1e-4, atol=1e-5)
        torch.testing.assert_close(out["fstate"][0, j], state, rtol=1e-4, atol=1e-5)
