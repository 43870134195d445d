"""``hopper_gemm_ws`` in-kernel timeline: the probes live outside the kernel (with them stubbed
the variant compiles to the default cubin), the instrumented variant reads the SM clock around
the right instructions, the host turns records into spans, the annotation mode attaches the
timeline, and -- on an H100/H200 -- a run records every role."""

from __future__ import annotations

import re
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest

from mla_var3.kernel.cute_python.gemm.hopper_gemm.warp_specialized.plan import HopperGemmWSPlan
from mla_var3.kernel.cute_python.gemm.hopper_gemm.warp_specialized.timeline import (
    DEFAULT_CAPACITY,
    PROBE_EVENTS,
    TIMELINE_EVENTS,
    TIMELINE_ROLES,
    TimelineHopperGemmWS,
    compile_instrumented,
    derive_spans,
    k_steps_per_cta,
    probe_layout,
    timeline_layout,
)
from mla_var3.profile.timeline import Span, TimelineLayout

RAGGED = {"m": 1000, "n": 1048, "k": 520}
GPU_SHAPE = {"m": 1024, "n": 1024, "k": 1024}
SMALL_CONFIG = {"tile_mn": (128, 128), "cluster_mn": (1, 2), "stages": 6}  # config 3
CLOCK_READ = re.compile(r"CS2R R\d+, SR_CLOCKLO")


def _compile(config: dict[str, Any], layout: TimelineLayout | None, dtype: str, dump: str) -> bytes:
    return compile_instrumented(config, layout, dtype, options=f"--gpu-arch sm_90a --keep-cubin --dump-dir {dump}").artifacts.CUBIN


def _code(cubin: bytes) -> str:
    """The SASS with the kernel's symbol (it names the class) replaced: the code alone."""
    from mla_var3.analysis.sass import disassemble

    return re.sub(r"kernel_cutlass_kernel_\w+", "KERNEL", disassemble(cubin))


@pytest.fixture(scope="module")
def dump_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("cubins"))


@pytest.fixture(scope="module")
def instrumented_sass(dump_dir: str) -> str:
    from mla_var3.analysis.sass import disassemble

    return disassemble(_compile(HopperGemmWSPlan().default_config(), probe_layout(4, 64), "bfloat16", dump_dir))


# --- the probes are outside the kernel: stubbed, the variant is the default build -------------


@pytest.mark.parametrize(("config_index", "dtype"), [(0, "bfloat16"), (3, "float16")], ids=["default", "config3"])
def test_with_probes_stubbed_the_variant_is_the_default_build(
    config_index: int, dtype: str, dump_dir: str, hopper_ws_cubin: Callable[[int, str], bytes]
) -> None:
    config = HopperGemmWSPlan()._autotune_configs()[config_index]
    default = hopper_ws_cubin(config_index, dtype)
    stubbed = _compile(config, None, dtype, dump_dir)
    assert _code(stubbed) == _code(default)  # instruction for instruction, encodings included
    assert "SR_CLOCKLO" not in _code(default)


# --- the instrumented variant ----------------------------------------------------------------


def _mnemonic_string(sass: str) -> str:
    """One letter per instruction that matters for the probes, in program order."""
    letters = (
        (CLOCK_READ, "C"),
        (re.compile(r"SYNCS\.PHASECHK\.TRANS64\.TRYWAIT"), "W"),  # mbarrier wait (full or empty)
        (re.compile(r"SYNCS\.ARRIVE"), "A"),  # mbarrier arrive (expect-tx, release)
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
    # Each record is a start clock, then per role branch (3 roles) an end clock and 3 stores.
    # Producer: empty_wait, tail. Consumer: full_wait and release (peeled tile and loop: x2
    # each), epilogue. 7 records x (1 + 3) clock reads, 7 x 3 x 3 stores.
    assert len(CLOCK_READ.findall(instrumented_sass)) == 7 * 4
    assert len(re.findall(r"\bSTG\.E\.64\b", instrumented_sass)) == 7 * 9


def test_probes_bracket_the_waits_the_releases_and_the_epilogue(instrumented_sass: str) -> None:
    seq = _mnemonic_string(instrumented_sass)
    record = "(?:Cg{3}){3}"  # the end clock read and three stores, in each role's branch
    # Producer: clock, empty-barrier wait, arm the full barrier, record; then both TMA loads.
    assert re.search(rf"CWA{record}L{{2}}", seq), seq
    # Consumer main loop: clock, full wait, record, 4 WGMMAs, wait_group(1), release record, release.
    assert re.search(rf"CW{record}M{{4}}DC{record}A", seq), seq
    # Drain (wait_group(0)), the last release, then the epilogue's TMA stores, bracketed.
    assert re.search(rf"DC{record}AC+S+{record}", seq), seq


def test_instrumented_variant_keeps_the_pipeline_and_does_not_spill(
    dump_dir: str, hopper_ws_cubin: Callable[[int, str], bytes]
) -> None:
    from mla_var3.analysis.resources import resource_usage
    from mla_var3.analysis.sass import instruction_histogram, opcode_histogram

    cubin = _compile(SMALL_CONFIG, probe_layout(2, 8), "float16", dump_dir)
    ops = opcode_histogram(instruction_histogram(cubin, "sm_90a"))
    default = opcode_histogram(instruction_histogram(hopper_ws_cubin(3, "float16"), "sm_90a"))
    for op in ("HGMMA", "UTMALDG", "UTMASTG", "USETMAXREG", "STSM"):
        assert ops[op] == default[op], op
    (kernel,) = resource_usage(cubin)
    assert kernel.local_bytes == 0 and "STL" not in ops


def test_a_layout_without_a_role_the_config_records_is_rejected() -> None:
    layout = TimelineLayout(("producer", "consumer0"), PROBE_EVENTS)
    with pytest.raises(ValueError, match=r"lacks \['consumer1'\]"):
        TimelineHopperGemmWS(layout, tile_mn=(128, 256), cluster_mn=(2, 1))
    # One consumer warpgroup (64-row tile) needs no consumer1.
    TimelineHopperGemmWS(layout, tile_mn=(64, 128), cluster_mn=(1, 1), stages=4)


@pytest.mark.parametrize("with_layout", [True, False])
def test_buffer_and_layout_go_together(with_layout: bool) -> None:
    import cuda.bindings.driver as cuda
    import cutlass
    import cutlass.cute as cute

    from mla_var3.kernel.cute_python.gemm.hopper_gemm.warp_specialized.plan import (
        compile_operands,
        gemm_kwargs,
    )
    from mla_var3.kernel.tensors import fake_tensor

    gemm = TimelineHopperGemmWS(probe_layout(4, 8) if with_layout else None, **gemm_kwargs(HopperGemmWSPlan().default_config()))
    args = [*compile_operands("bfloat16"), 66, cuda.CUstream(0)]
    if not with_layout:
        args.append(fake_tensor(cutlass.Int64, (16,)))
    with pytest.raises(ValueError, match="pass timeline_buf exactly when"):
        cute.compile(gemm, *args, options="--gpu-arch sm_90a")


def test_k_steps_and_default_capacity() -> None:
    config = HopperGemmWSPlan().default_config()  # 128x256 tile, 2x1 cluster
    # 1024^3: 8x4 tiles -> 16 cluster tiles, one per cluster of 66; 16 K tiles each.
    assert k_steps_per_cta(GPU_SHAPE, config, 66) == 16
    # 8192^3: 1024 cluster tiles over 66 clusters -> 16 each, 128 K tiles per tile.
    assert k_steps_per_cta({"m": 8192, "n": 8192, "k": 8192}, config, 66) == 16 * 128
    assert k_steps_per_cta(RAGGED, config, 66) == 9  # ceil(520 / 64)
    layout = timeline_layout()
    assert (layout.roles, layout.events, layout.capacity) == (TIMELINE_ROLES, TIMELINE_EVENTS, DEFAULT_CAPACITY)
    assert probe_layout(4, 16).capacity == 17  # one more slot, so the last kept step has an end


# --- the host turns records into spans ---------------------------------------------------------


def _lane(cta: int, role: str, events: list[tuple[str, int, int, int]]) -> list[Span]:
    return [Span(cta, role, event, seq, start, end) for event, seq, start, end in events]


def test_derive_spans_from_the_records_of_two_tiles() -> None:
    # Producer: 3 stages issued; tail after the last. Consumer: tile 0 = K steps 0-1, tile 1 =
    # K step 2; releases after each wait_group; epilogues by tile count (0, 1).
    recorded = _lane(0, "producer", [("empty_wait", 0, 0, 2), ("empty_wait", 1, 5, 6), ("empty_wait", 2, 9, 12),
                                     ("tail", 2, 15, 15)])
    recorded += _lane(0, "consumer0", [("full_wait", 0, 1, 8), ("full_wait", 1, 10, 11), ("release", 0, 14, 14),
                                       ("release", 1, 20, 20), ("epilogue", 0, 21, 30), ("full_wait", 2, 31, 33),
                                       ("release", 2, 40, 40), ("epilogue", 1, 41, 50)])  # fmt: skip
    got = {(s.role, s.event, s.seq): (s.start, s.end) for s in derive_spans(recorded, capacity=8)}
    assert got[("producer", "tma_issue", 0)] == (2, 5)  # to the next empty wait
    assert got[("producer", "tma_issue", 2)] == (12, 15)  # the last one: to the tail
    assert got[("consumer0", "mma", 0)] == (8, 10)  # peeled K step: to the next full wait
    assert got[("consumer0", "mma", 1)] == (11, 14)  # to the release after wait_group(1)
    assert got[("consumer0", "mma", 2)] == (33, 40)  # a tile's last step: to its final release
    assert got[("consumer0", "epilogue", 1)] == (21, 30)  # filed under its tile's last K step
    assert got[("consumer0", "epilogue", 2)] == (41, 50)
    assert {e for _, e, _ in got} == set(TIMELINE_EVENTS)
    kept = derive_spans(recorded, capacity=2)
    assert max(s.seq for s in kept) == 1 and ("producer", "tma_issue", 1) in {(s.role, s.event, s.seq) for s in kept}


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

    def record_timeline(self, shape: dict[str, int], config: dict[str, Any]) -> Any:
        return None  # KernelPlan's default: no in-kernel timeline


def test_annotation_mode_attaches_the_timeline(monkeypatch: pytest.MonkeyPatch) -> None:
    from mla_var3.profile.timeline import Timeline

    calls = []
    spans = [Span(0, "producer", "tma_issue", 0, 0, 10), Span(0, "consumer0", "mma", 0, 5, 20)]

    class TimelinePlan(_Plan):
        def record_timeline(self, shape: dict[str, int], config: dict[str, Any]) -> Timeline:
            calls.append((shape, config))
            return Timeline.of(spans, None, "t")

    out = _annotate(monkeypatch, TimelinePlan())
    assert calls == [(GPU_SHAPE, {"tile_mn": (128, 256)})]
    assert out["timeline"].span_list() == spans  # the spans (data), never a picture
    assert out["timeline"].overlap.mma_cycles == 15
    assert "timeline" not in _annotate(monkeypatch, _Plan())


# --- on the H200 ---------------------------------------------------------------------------


@pytest.mark.gpu
def test_record_timeline_on_gpu() -> None:
    import torch

    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("sm_90a code runs only on compute capability 9.0")
    plan = HopperGemmWSPlan()
    timeline = plan.record_timeline(GPU_SHAPE, plan.default_config())
    spans, overlap, svg = timeline.span_list(), timeline.overlap, timeline.svg()

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
