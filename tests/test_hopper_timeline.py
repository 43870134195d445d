"""``hopper_gemm_ws`` in-kernel timeline: the default binary is untouched, the instrumented
variant reads the SM clock around the right instructions and stores the records, the
annotation mode attaches the timeline, and -- on an H100/H200 -- a run records every role."""

from __future__ import annotations

import hashlib
import re
import tempfile
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from mla_var3.kernel.arch import Arch
from mla_var3.kernel.cute_python.gemm.hopper_gemm.warp_specialized.kernel import (
    TIMELINE_EVENTS,
    TIMELINE_ROLES,
)
from mla_var3.kernel.cute_python.gemm.hopper_gemm.warp_specialized.plan import (
    HopperGemmWSPlan,
    gemm_from_config,
)
from mla_var3.kernel.cute_python.gemm.hopper_gemm.warp_specialized.timeline import (
    DEFAULT_CAPACITY,
    compile_instrumented,
    k_steps_per_cta,
    timeline_layout,
)
from mla_var3.profile.timeline import TimelineLayout

SM90A = Arch.parse("sm_90a")
RAGGED = {"m": 1000, "n": 1048, "k": 520}
GPU_SHAPE = {"m": 1024, "n": 1024, "k": 1024}
BASELINE_DSL = "4.8.1"

# Built at commit 0cd2e61 (before the probes existed), nvidia-cutlass-dsl 4.8.1, sm_90a:
# sha256 of the cubin per dtype and config index, and the default config's bf16 SASS histogram.
BEFORE_PROBES_CUBIN_SHA256 = {
    ("bfloat16", 0): "7f1fd3e56a941083229851623b7339859275e75ba6573e0e4eddbeddfd12393a",
    ("bfloat16", 1): "d8861f9fbd8f1afe060b3a45b7c11acc305df7a03c1284b9f403e343dae7c309",
    ("bfloat16", 2): "d27a2ca9ca336070f7ea71b8978f011d6aa9f79ad44c44683142a16bf77e5959",
    ("bfloat16", 3): "df87d1606284437416a58b376221c8ba47eff7ea515f6a2b49968a130cf7d4c9",
    ("float16", 0): "a4f395f12e30117f179486dca8ab1418120866287b6ec07fae76fecb3ae664a4",
    ("float16", 1): "2819a5b94b169f9599d521d65c31c09b82718c07484d7cc613a054434e6fa534",
    ("float16", 2): "584ffea2f3d5fe11a74ce16748eb0bffa24230e6fa6466ebd8f217f4f08b9b69",
    ("float16", 3): "eebe8dae4a5107b933ea3c57ee93a7b9fbfe83632bc45bdd196112aca306829d",
}
BEFORE_PROBES_HISTOGRAM = {
    "UIADD3": 91, "F2FP.BF16.F32.PACK_AB": 64, "UMOV": 47, "ULEA": 46, "BRA": 40, "ULOP3.LUT": 35,
    "IMAD.U32": 29, "R2UR": 21, "UIMAD": 21, "NOP": 18, "STSM.16.M88.4": 16, "USEL": 16,
    "USHF.R.S32.HI": 16, "LOP3.LUT": 15, "VIADD": 15, "UIADD3.X": 13, "IABS": 12, "IMAD": 12,
    "ULDC.64": 12, "ULEA.HI": 12, "UISETP.NE.U32.AND": 11, "UISETP.GE.AND": 10,
    "BAR.SYNC.DEFER_BLOCKING": 9, "DEPBAR.LE": 9, "FENCE.VIEW.ASYNC.S": 9, "USHF.L.U32": 9,
    "HGMMA.64x256x16.F32.BF16": 8, "IMAD.MOV.U32": 8, "ISETP.NE.U32.AND": 8, "MEMBAR.ALL.CTA": 8,
    "SYNCS.EXCH.64": 8, "UIMAD.WIDE.U32": 8, "ULDC": 8, "UTMACMDFLUSH": 8, "UTMASTG.2D": 8,
    "NANOSLEEP.SYNCS": 7, "PLOP3.LUT": 7, "S2UR": 7, "SHF.L.U32": 7, "SYNCS.PHASECHK.TRANS64": 7,
    "SYNCS.PHASECHK.TRANS64.TRYWAIT": 7, "MUFU.RCP": 5, "UISETP.GE.U32.AND": 5, "EXIT": 4,
    "F2I.FTZ.U32.TRUNC.NTZ": 4, "F2I.U32.TRUNC.NTZ": 4, "I2F.RP": 4, "IMAD.MOV": 4, "UISETP.GT.AND": 4,
    "UISETP.GT.U32.AND": 4, "UISETP.NE.AND": 4, "ULEA.HI.SX32": 4, "I2FP.F32.U32": 3, "SHF.R.U32.HI": 3,
    "UISETP.LT.AND": 3, "UTMACCTL.PF": 3, "FMUL": 2, "FMUL.RZ": 2, "I2FP.F32.U32.RZ": 2,
    "IMAD.SHL.U32": 2, "LDC": 2, "LEA": 2, "PRMT": 2, "SEL": 2, "SYNCS.ARRIVE.TRANS64.RED.A1T0": 2,
    "USHF.R.U32.HI": 2, "WARPGROUP.ARRIVE": 2, "WARPGROUP.DEPBAR.LE": 2, "CCTL.IVALL": 1, "ELECT": 1,
    "ISETP.EQ.U32.AND": 1, "S2R": 1, "SYNCS.ARRIVE.TRANS64": 1, "UCGABAR_ARV": 1, "UCGABAR_WAIT": 1,
    "UISETP.EQ.U32.AND": 1, "USETMAXREG.DEALLOC.CTAPOOL": 1, "USETMAXREG.TRY_ALLOC.CTAPOOL": 1,
    "UTMALDG.2D": 1, "UTMALDG.2D.MULTICAST": 1,
}  # fmt: skip

CLOCK_READ = re.compile(r"CS2R R\d+, SR_CLOCKLO")


# --keep-cubin also writes a copy into a dump dir (the DSL's import-time CWD unless given).
DUMP_DIR = Path(tempfile.mkdtemp(prefix="mla_var3-test-cubins-"))
KEEP_CUBIN = f"--gpu-arch sm_90a --keep-cubin --dump-dir {DUMP_DIR}"


def _default_cubin(dtype: str, config_index: int) -> bytes:
    plan = HopperGemmWSPlan(dtype)
    return plan.plan(plan._autotune_configs()[config_index]).compile(RAGGED, SM90A).cubin


@pytest.fixture(scope="module")
def instrumented_sass() -> str:
    from mla_var3.analysis.sass import disassemble

    fn = compile_instrumented(
        HopperGemmWSPlan().default_config(),
        timeline_layout(ctas=4, capacity=64),
        options=KEEP_CUBIN,
    )
    return disassemble(fn.artifacts.CUBIN)


# --- the default build: byte for byte what it was before the probes --------------------------


@pytest.mark.parametrize(("dtype", "config_index"), sorted(BEFORE_PROBES_CUBIN_SHA256), ids=str)
def test_default_build_is_the_cubin_from_before_the_probes(dtype: str, config_index: int) -> None:
    import cutlass

    if cutlass.__version__ != BASELINE_DSL:
        pytest.skip(
            f"baseline recorded with nvidia-cutlass-dsl {BASELINE_DSL}; rebuild it at 0cd2e61 to re-record"
        )
    cubin = _default_cubin(dtype, config_index)
    if (dtype, config_index) == ("bfloat16", 0):  # on a mismatch, say which instructions moved
        from mla_var3.analysis.sass import instruction_histogram

        assert instruction_histogram(cubin, "sm_90a") == BEFORE_PROBES_HISTOGRAM
    assert hashlib.sha256(cubin).hexdigest() == BEFORE_PROBES_CUBIN_SHA256[(dtype, config_index)]


# --- the instrumented variant ----------------------------------------------------------------


def _mnemonic_string(sass: str) -> str:
    """One letter per instruction that matters for the probes, in program order."""
    letters = (
        (CLOCK_READ, "C"),
        (re.compile(r"SYNCS\.PHASECHK\.TRANS64\.TRYWAIT"), "W"),  # mbarrier wait (full or empty)
        (re.compile(r"UTMALDG"), "L"),  # TMA load
        (re.compile(r"HGMMA"), "M"),  # WGMMA
        (re.compile(r"WARPGROUP\.DEPBAR"), "D"),  # wgmma.wait_group
        (re.compile(r"UTMASTG"), "S"),  # TMA store
        (re.compile(r"STG\.E\.64"), "g"),  # one word of a record
    )
    out = []
    for line in sass.splitlines():
        out.extend(letter for pattern, letter in letters if pattern.search(line))
    return "".join(out)


def test_instrumented_variant_reads_the_clock_and_stores_records(instrumented_sass: str) -> None:
    clock_reads = len(CLOCK_READ.findall(instrumented_sass))
    stores = len(re.findall(r"\bSTG\.E\.64\b", instrumented_sass))
    # Producer: 2 starts + 2 ends. Consumer: 5 starts (full wait x2, mma x2, epilogue) and 6 ends
    # (full wait x2, mma x3, epilogue), each end once per consumer role: 5 + 2 * 6 = 17.
    assert clock_reads == 4 + 17
    # Each end writes a 3-word record (id, start, end): (2 + 2 * 6) * 3.
    assert stores == 42
    assert "SR_CLOCKLO" not in _default_sass()


def _default_sass() -> str:
    from mla_var3.analysis.sass import disassemble

    return disassemble(_default_cubin("bfloat16", 0))


def test_probes_bracket_the_waits_the_tma_the_wgmma_and_the_epilogue(instrumented_sass: str) -> None:
    seq = _mnemonic_string(instrumented_sass)
    record = "Cg{3}"  # the end clock read of a span, then its three stores
    consumer_record = f"(?:{record}){{2}}"  # one branch per consumer role
    # Producer: clock, empty-barrier wait, record; clock, both TMA loads, record.
    assert re.search(rf"CW+{record}CL{{2}}{record}", seq), seq
    # Consumer main loop: clock, full-barrier wait, record; clock, 4 WGMMAs, wait_group(1), record.
    assert re.search(rf"CW+{consumer_record}CM{{4}}D{consumer_record}", seq), seq
    # Drain (wait_group(0)) then the rewritten mma record; the epilogue's TMA stores, bracketed.
    assert re.search(rf"D{consumer_record}CS+{consumer_record}", seq), seq


def test_instrumented_variant_keeps_the_pipeline_and_does_not_spill() -> None:
    from mla_var3.analysis.resources import resource_usage
    from mla_var3.analysis.sass import instruction_histogram, opcode_histogram

    fn = compile_instrumented(
        {"tile_mn": (128, 128), "cluster_mn": (1, 2), "stages": 6},
        timeline_layout(ctas=2, capacity=8),
        "float16",
        options=KEEP_CUBIN,
    )
    ops = opcode_histogram(instruction_histogram(fn.artifacts.CUBIN, "sm_90a"))
    default = opcode_histogram(instruction_histogram(_default_cubin("float16", 3), "sm_90a"))
    for op in ("HGMMA", "UTMALDG", "UTMASTG", "USETMAXREG", "STSM"):
        assert ops[op] == default[op], op
    (kernel,) = resource_usage(fn.artifacts.CUBIN)
    assert kernel.local_bytes == 0 and "STL" not in ops


def test_a_layout_without_a_role_the_config_records_is_rejected() -> None:
    layout = TimelineLayout(("producer", "consumer0"), TIMELINE_EVENTS)
    with pytest.raises(ValueError, match=r"lacks \['consumer1'\]"):
        gemm_from_config(HopperGemmWSPlan().default_config(), timeline=layout)
    # One consumer warpgroup (64-row tile) needs no consumer1.
    gemm_from_config({"tile_mn": (64, 128), "cluster_mn": (1, 1), "stages": 4}, timeline=layout)


@pytest.mark.parametrize("with_layout", [True, False])
def test_buffer_and_layout_go_together(with_layout: bool) -> None:
    import cuda.bindings.driver as cuda
    import cutlass
    import cutlass.cute as cute

    from mla_var3.kernel.cute_python.gemm.hopper_gemm.warp_specialized.plan import _gemm_operand
    from mla_var3.kernel.tensors import fake_tensor

    config = HopperGemmWSPlan().default_config()
    gemm = gemm_from_config(config, timeline=timeline_layout() if with_layout else None)
    ab = cutlass.BFloat16
    args = [_gemm_operand(ab, 1), _gemm_operand(ab, 8), _gemm_operand(ab, 1), 66, cuda.CUstream(0)]
    if not with_layout:
        args.append(fake_tensor(cutlass.Int64, (16,)))
    with pytest.raises(ValueError, match="pass timeline_buf exactly when"):
        cute.compile(gemm, *args, options="--gpu-arch sm_90a")


def test_k_steps_and_default_capacity() -> None:
    config = HopperGemmWSPlan().default_config()  # 128x256 tile, 2x1 cluster
    # 1024^3: 8x4 tiles -> 16 cluster tiles, one per cluster of 66; 16 K tiles each.
    assert k_steps_per_cta(GPU_SHAPE, config, 132) == 16
    # 8192^3: 1024 cluster tiles over 66 clusters -> 16 each, 128 K tiles per tile.
    assert k_steps_per_cta({"m": 8192, "n": 8192, "k": 8192}, config, 132) == 16 * 128
    assert k_steps_per_cta(RAGGED, config, 132) == 9  # ceil(520 / 64)
    layout = timeline_layout()
    assert (layout.roles, layout.events, layout.capacity) == (
        TIMELINE_ROLES,
        TIMELINE_EVENTS,
        DEFAULT_CAPACITY,
    )


# --- the annotation mode attaches the timeline ------------------------------------------------


def _annotate(monkeypatch: pytest.MonkeyPatch, plan: Any) -> dict[str, Any]:
    import mla_var3.kernel.compile_cache as compile_cache
    import mla_var3.profile.annotation as annotation
    from mla_var3.kernel import profiling

    monkeypatch.setattr(compile_cache, "compile_cached", lambda *a: SimpleNamespace(compiled=None))
    monkeypatch.setattr(annotation, "trace_callable", lambda fn, path, iterations: path)
    monkeypatch.setattr(
        annotation, "summarize_trace", lambda path: SimpleNamespace(to_dict=lambda: {"kernels": []})
    )
    request = SimpleNamespace(shape=dict(GPU_SHAPE))
    result = SimpleNamespace(config={"tile_mn": (128, 256)}, shape_key="s", arch="sm_90a")
    return profiling._annotation(plan, request, result)


class _Plan:
    name = "fake"

    def prepare_inputs(self, shape: dict[str, int]) -> dict[str, Any]:
        return {}

    def allocate_outputs(self, inputs: dict[str, Any], shape: dict[str, int]) -> dict[str, Any]:
        return {}

    def plan(self, config: dict[str, Any]) -> Any:
        return SimpleNamespace(launch=lambda *a: None)


def test_annotation_mode_attaches_the_timeline(monkeypatch: pytest.MonkeyPatch) -> None:
    from mla_var3.profile.timeline import Span, tma_overlap

    calls = []

    class TimelinePlan(_Plan):
        def record_timeline(self, shape: dict[str, int], config: dict[str, Any]) -> tuple[Any, Any, str]:
            calls.append((shape, config))
            spans = [Span(0, "producer", "tma_issue", 0, 0, 10), Span(0, "consumer0", "mma", 0, 5, 20)]
            return spans, tma_overlap(spans), "<svg/>"

    out = _annotate(monkeypatch, TimelinePlan())
    assert calls == [(GPU_SHAPE, {"tile_mn": (128, 256)})]
    assert out["timeline"]["svg"] == "<svg/>" and out["timeline"]["spans"] == 2
    assert out["timeline"]["overlap"]["mma_cycles"] == 15
    assert "timeline" not in _annotate(monkeypatch, _Plan())


# --- on the H200 ---------------------------------------------------------------------------


@pytest.mark.gpu
def test_record_timeline_on_gpu() -> None:
    import torch

    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("sm_90a code runs only on compute capability 9.0")
    plan = HopperGemmWSPlan()
    spans, overlap, svg = plan.record_timeline(GPU_SHAPE, plan.default_config())

    # The first 4 CTAs (2 clusters) each own one 1024-deep tile: 16 K steps, one epilogue.
    steps = set(range(16))
    expected = {("producer", "empty_wait"): steps, ("producer", "tma_issue"): steps}
    for role in ("consumer0", "consumer1"):
        expected |= {(role, "full_wait"): steps, (role, "mma"): steps, (role, "epilogue"): {15}}
    for cta in range(4):
        got: dict[tuple[str, str], set[int]] = {}
        for s in spans:
            if s.cta == cta:
                got.setdefault((s.role, s.event), set()).add(s.seq)
        assert got == expected, cta
    assert {s.role for s in spans} == set(TIMELINE_ROLES)
    assert all(s.end >= s.start > 0 for s in spans)

    # Causality on one SM clock: stage k's data cannot land before the producer issued it, and
    # each consumer's spans follow its program order (wait -> mma -> next wait ... -> epilogue).
    by = {(s.cta, s.role, s.event, s.seq): s for s in spans}
    for cta in range(4):
        for role in ("consumer0", "consumer1"):
            for k in range(16):
                wait, mma = by[(cta, role, "full_wait", k)], by[(cta, role, "mma", k)]
                assert by[(cta, "producer", "tma_issue", k)].start <= wait.end <= mma.start
                if k < 15:
                    assert mma.end <= by[(cta, role, "full_wait", k + 1)].start
            assert by[(cta, role, "mma", 15)].end <= by[(cta, role, "epilogue", 15)].start

    assert overlap.ctas == 4 and overlap.mma_cycles > 0
    for fraction in (overlap.overlap_fraction, overlap.full_wait_fraction, overlap.empty_wait_fraction):
        assert fraction is not None and 0.0 <= fraction <= 1.0
    assert svg.startswith("<svg") and "CTA 3 · consumer1" in svg and "hopper_gemm_ws 1024x1024x1024" in svg
