"""Evidence in pages: blocks, values, group speedups and tables, rooflines -- and every claim the records cannot
back raised as a ClaimProblem with a visibly marked placeholder."""

from __future__ import annotations

import base64
import dataclasses
from pathlib import Path

import pytest
from test_evidence import fake_env, record, run_data  # noqa: F401 - the fixture is used by name
from test_groups import FakeGpu

from mla_var3.evidence import groups as groups_mod
from mla_var3.evidence import render
from mla_var3.evidence import status as status_mod
from mla_var3.evidence.group_run import GroupRun, MemberTiming, member_timing, run_rounds
from mla_var3.evidence.groups import Group, Member
from mla_var3.evidence.model import AnnotationSection, Device, NcuSection, Record, members_source_hash
from mla_var3.evidence.store import save
from mla_var3.evidence.typed import EvidenceError, parse
from mla_var3.evidence.verify import group_record
from mla_var3.kernel.check import CheckResult, OutputCheck
from mla_var3.knowledge.errors import ClaimProblem
from mla_var3.profile.roofline import Ceiling
from mla_var3.profile.timeline import Span, Timeline

H200 = Device(name="NVIDIA H200", slug="nvidia-h200", uuid="096f7439-510b-d6b7-3771-81876b5f826a")
PAIR = Group("fake_pair", "two fake kernels", "fake_good", (Member("fake_good"), Member("fake_raises")), ("n8-float32",))


def fresh_run(kernel: str = "fake_good", median_us: float = 100.0, **over: object) -> Record:
    return parse(Record, run_data(kernel, median_us, source_hash=status_mod.current_hash(kernel), **over), "r")


def test_a_fresh_block_shows_the_run_its_ceilings_and_sections(fake_env: Path) -> None:  # noqa: F811
    ncu = NcuSection("k", "(1,1,1)", "(1,1,1)", "9.0", duration_ns=99_000.0, tc_pct=90.5, top_stalls=[("long_scoreboard", 1.5)],
                     sm_clock_hz=1.4e9, date="2026-11-30T12:00:00+00:00")  # fmt: skip
    spans = [Span(0, "producer", "tma_issue", 0, 0, 10), Span(0, "mma", "full_wait", 0, 5, 20), Span(0, "mma", "mma", 0, 20, 60)]
    timeline = Timeline.of(spans, None, "fake timeline")
    save(dataclasses.replace(fresh_run(), ncu=ncu, annotation=AnnotationSection("2026-11-30T12:00:00+00:00", timeline=timeline)), fake_env)
    block = render.render_evidence_block("fake_good", "n8-float32")
    assert "Run-verified" in block and "NVIDIA H200 096f7439 (SM 1500 → 1500 MHz around the timing)" in block
    assert "copy 4.20 TB/s (copy)" in block and "HBM3e 4.80 TB/s" in block and "NVIDIA H200 Tensor Core GPU datasheet" in block
    assert "| 99.00 | – | 90.5 |" in block and "long_scoreboard 1.50" in block and "ncu replays one launch" in block
    svg = base64.b64decode(block.split('class="timeline" alt="in-kernel timeline" src="data:image/svg+xml;base64,')[1].split('"')[0])
    assert b"fake timeline" in svg  # drawn at build time from the record's spans


def test_stale_and_missing_evidence_raise_a_claim_problem_with_a_marked_placeholder(fake_env: Path) -> None:  # noqa: F811
    save(parse(Record, run_data(source_hash="old"), "r"), fake_env)
    with pytest.raises(ClaimProblem) as problem:
        render.render_evidence_block("fake_good", "n8-float32")
    assert "fake_good/n8-float32 is stale" in problem.value.message
    assert "Stale evidence" in problem.value.shown and "⚠ fake_good's source changed" in problem.value.shown
    with pytest.raises(ClaimProblem) as value:
        render.render_evidence_value("fake_good", "n8-float32", "timing.median_us")
    assert "ev-stale" in value.value.shown and "100 µs (stale)" in value.value.shown
    with pytest.raises(ClaimProblem) as missing:
        render.render_evidence_value("fake_good", "n16-float32", "timing.median_us")
    assert "missing" in missing.value.shown


def test_values_carry_units_and_provenance(fake_env: Path) -> None:  # noqa: F811
    spans = [Span(0, "p", "tma_issue", 0, 0, 50), Span(0, "c", "full_wait", 0, 0, 50), Span(0, "c", "mma", 0, 10, 110)]
    annotation = AnnotationSection("2026-11-30T12:00:00+00:00", timeline=Timeline.of(spans, None, "t"))
    ncu = NcuSection("k", "(1,1,1)", "(1,1,1)", "9.0", tc_pct=97.96, date="2026-11-30T12:00:00+00:00")
    save(dataclasses.replace(fresh_run(), ncu=ncu, annotation=annotation), fake_env)
    assert ">97.96 %<" in render.render_evidence_value("fake_good", "n8-float32", "ncu.tc_pct")
    assert ">40.00 %<" in render.render_evidence_value("fake_good", "n8-float32", "annotation.timeline.overlap.overlap_fraction")
    assert ">100 µs<" in render.render_evidence_value("fake_good", "n8-float32", "timing.median_us")
    assert ">20<" in render.render_evidence_value("fake_good", "n8-float32", "timing.warmup")  # a count, not "20.00"
    assert render._digits(0.0021, "") == 4 and render._digits(0.05, " %") == 3 and render._digits(0.5, "") == 2
    assert ">0.000000080 TFLOP/s<" in render.render_evidence_value("fake_good", "n8-float32", "tflops")  # 8 FLOP in 100 us: two significant digits
    assert "NVIDIA H200 096f7439, n8-float32, 2026-11-30" in render.render_evidence_value("fake_good", "n8-float32", "gbps")
    with pytest.raises(EvidenceError, match="has no field 'ncu.nope'"):
        render.render_evidence_value("fake_good", "n8-float32", "ncu.nope")


def test_a_value_from_a_list_is_picked_by_name(fake_env: Path) -> None:  # noqa: F811
    from mla_var3.profile.annotation import KernelStats, TraceSummary

    kernels = [KernelStats("attention_kernel_0", 10, 400.0, 40.0, 39.0, 41.0), KernelStats("combine_kernel_0", 10, 90.0, 9.0, 8.5, 9.5)]
    annotation = AnnotationSection("2026-11-30T12:00:00+00:00", summary=TraceSummary(kernels, []))
    save(dataclasses.replace(fresh_run(), annotation=annotation), fake_env)
    assert ">9.00 µs<" in render.render_evidence_value("fake_good", "n8-float32", "annotation.summary.kernels[combine].median_us")
    assert ">40.00 µs<" in render.render_evidence_value("fake_good", "n8-float32", "annotation.summary.kernels[attention].median_us")
    with pytest.raises(EvidenceError, match="selects 2 entries named like '_kernel'"):
        render.render_evidence_value("fake_good", "n8-float32", "annotation.summary.kernels[_kernel].median_us")
    with pytest.raises(EvidenceError, match="selects 0 entries"):
        render.render_evidence_value("fake_good", "n8-float32", "annotation.summary.kernels[gemm].median_us")


def test_a_value_from_a_profile_section_the_record_lacks_is_a_claim_problem(fake_env: Path) -> None:  # noqa: F811
    save(fresh_run(), fake_env)  # a fresh re-verify: no ncu or annotation section yet
    with pytest.raises(ClaimProblem) as problem:
        render.render_evidence_value("fake_good", "n8-float32", "annotation.timeline.overlap.overlap_fraction")
    assert "no annotation section yet" in problem.value.message and "--prof-type annotation" in problem.value.message
    assert "missing" in problem.value.shown
    with pytest.raises(ClaimProblem, match="--prof-type sanitize"):
        render.render_evidence_value("fake_good", "n8-float32", "sanitizer.tools.memcheck.errors")


def test_records_from_two_devices_merge_in_one_block(fake_env: Path) -> None:  # noqa: F811
    save(record(source_hash=status_mod.current_hash("fake_good")), fake_env)
    save(fresh_run(), fake_env)
    status = status_mod.status_of("fake_good", "n8-float32")
    assert status.status == "run-verified" and len(status.records) == 2
    block = render.render_evidence_block("fake_good", "n8-float32")
    assert "| NVIDIA H200 096f7439" in block and "| compile-only (cpu)" in block


# --- groups ------------------------------------------------------------------------------------


@pytest.fixture
def pair(fake_env: Path, monkeypatch: pytest.MonkeyPatch) -> Group:  # noqa: F811
    monkeypatch.setattr(groups_mod, "GROUPS", (PAIR,))
    return PAIR


def _group_run(speedup: float) -> GroupRun:
    gpu = FakeGpu({"fake_good": 100.0, "fake_raises": 100.0 / speedup}, noise=0.01)
    rounds, speedups = run_rounds(["fake_good", "fake_raises"], "fake_good", gpu.timer, gpu.sampler, launches=3)
    members = [MemberTiming(m, "sm_90a", "torch", {}, "randn", 8, 64, 1, member_timing(rounds, m, 5, 1), None, speedups.get(m))
               for m in ("fake_good", "fake_raises")]  # fmt: skip
    ceilings = [Ceiling("copy", "memory", 4.2e12, "copy"), Ceiling("matmul_float32", "compute", 7e14, "matmul")]
    return GroupRun("fake_pair", "n8-float32", "fake_good", H200, 3, members, rounds, ceilings, [])


CHECK = CheckResult((OutputCheck("c", 8, 1e-3, 0.1, 0, 1e-2),))


def test_speedup_and_table_come_from_one_group_run(pair: Group, fake_env: Path) -> None:  # noqa: F811
    save(group_record(pair, "n8-float32", _group_run(1.05), {"fake_good": CHECK, "fake_raises": CHECK}), fake_env)
    text = render.render_speedup("fake_pair", "n8-float32", "fake_raises")
    assert "× (" in text and ", faster)" in text and "geometric mean of 20 paired rounds" in text
    table = render.render_comparison("fake_pair", "n8-float32")
    assert table.startswith("| member | runtime µs (p10–p90) | TC % |")
    assert "| `fake_good` |" in table and "| reference |" in table and "faster)" in table
    assert "on NVIDIA H200 (GPU UUID 096f7439…), 20 rounds of 3 launches each" in table
    assert "SM 1,500 MHz, 650 W (NVML medians after its launches)" in table
    with pytest.raises(EvidenceError, match="is the reference of group fake_pair"):
        render.render_speedup("fake_pair", "n8-float32", "fake_good")
    figure = render.render_roofline([("groups", "fake_pair", "n8-float32")])
    assert '<figure class="roofline">' in figure and "NVIDIA H200 Tensor Core GPU datasheet" in figure


def test_a_stale_member_marks_its_row_and_fails_the_claim(pair: Group, fake_env: Path) -> None:  # noqa: F811
    record = group_record(pair, "n8-float32", _group_run(1.05), {"fake_good": CHECK, "fake_raises": CHECK})
    members = [dataclasses.replace(record.members[0], source_hash="old"), record.members[1]]
    save(dataclasses.replace(record, members=members, source_hash=members_source_hash(members)), fake_env)
    with pytest.raises(ClaimProblem) as problem:
        render.render_comparison("fake_pair", "n8-float32")
    assert "member fake_good: fake_good's source changed" in problem.value.message
    assert "`fake_good` ⚠ fake_good's source changed" in problem.value.shown
    with pytest.raises(ClaimProblem, match="is stale"):
        render.render_speedup("fake_pair", "n8-float32", "fake_raises")


def test_a_table_or_ratio_across_runs_cannot_render(pair: Group, fake_env: Path) -> None:  # noqa: F811
    save(fresh_run(), fake_env)
    save(fresh_run(kernel="fake_raises", median_us=90.0), fake_env)  # two runs, two records: no group record
    with pytest.raises(ClaimProblem, match="is missing: no group record"):
        render.render_speedup("fake_pair", "n8-float32", "fake_raises")
    with pytest.raises(ClaimProblem, match="unknown group 'fake_good,fake_raises'"):
        render.render_comparison("fake_good,fake_raises", "n8-float32")


def test_a_missing_speedup_stays_one_tag_through_markdown(pair: Group, fake_env: Path) -> None:  # noqa: F811
    """The tooltip names a command in backticks; Markdown reads code spans before inline HTML, so an
    unescaped backtick in the attribute would cut the tag open and print ``...">missing: ...`` as text."""
    import markdown

    with pytest.raises(ClaimProblem) as missing:
        render.render_speedup("fake_pair", "n8-float32", "fake_raises")
    assert "`" in missing.value.message  # the one-line message keeps its backticks
    page = markdown.markdown(f"Ours is {missing.value.shown} faster.")
    assert "<code>" not in page and '">' not in page.split("</span>", 1)[1]
    assert page.count("<span") == 1 and "&#96;" in page and "missing: speedup of fake_raises" in page


def test_roofline_points_are_read_against_their_own_runs(fake_env: Path) -> None:  # noqa: F811
    save(fresh_run(flops=2 * 4096**3, bytes=3 * 4096**2 * 2), fake_env)
    other = run_data(kernel="fake_raises", config="n8-float32", source_hash="old", flops=10**9, bytes=10**9)
    save(parse(Record, other, "r"), fake_env)
    with pytest.raises(ClaimProblem) as problem:
        render.render_roofline([("fake_good", "n8-float32"), ("fake_raises", "n8-float32")])
    svg = base64.b64decode(problem.value.shown.split("base64,", 1)[1].split('"', 1)[0]).decode()
    assert "fake_good n8-float32" in svg and "fake_raises n8-float32 (stale)" in svg
    assert "fake_raises/n8-float32 is stale" in problem.value.message
    with pytest.raises(ClaimProblem, match="no run record"):
        render.render_roofline([("fake_hangs", "n8-float32")])


def test_verify_checks_each_member_then_files_one_group_record(pair: Group, fake_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    from mla_var3.evidence import verify as verify_mod
    from mla_var3.evidence.typed import dump
    from mla_var3.kernel.device import GpuInfo

    gpu = GpuInfo("NVIDIA H200", (10, 0), H200.uuid or "", 132, 50 << 20, None, None, "torch")  # runs the fakes' sm_100a
    calls: list[str] = []
    bad = CheckResult((OutputCheck("c", 8, 0.5, 9.0, 0, 1e-2),))

    def child(command: list[str], timeout: float) -> tuple[dict | None, str]:
        calls.append(" ".join(command[3:]))
        if command[3] == "check-member":
            check = bad if command[6] == "fake_raises" and failing else CHECK
            return {"mode": "run", "mode_reason": "runs", "check": dump(check)}, ""
        return dump(_group_run(1.05)), ""

    monkeypatch.setattr(verify_mod, "_child_json", child)
    failing = True
    outcome = verify_mod.verify_group(pair, "n8-float32", gpu, False, 60, None)
    assert outcome.status == "failed" and "member fake_raises failed its correctness check" in outcome.reason
    assert calls == ["check-member fake_pair n8-float32 fake_good", "check-member fake_pair n8-float32 fake_raises"]
    failing = False
    outcome = verify_mod.verify_group(pair, "n8-float32", gpu, False, 60, None)
    assert outcome.status == "run-verified" and "fake_raises 1.0" in outcome.reason and calls[-1] == "time-group fake_pair n8-float32"
    assert status_mod.group_status("fake_pair", "n8-float32").status == "run-verified"
    assert verify_mod.verify_group(pair, "n8-float32", gpu, False, 60, None).status == "fresh"


def test_member_checks_run_concurrently_when_asked(pair: Group, fake_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    import threading

    from mla_var3.evidence import verify as verify_mod
    from mla_var3.evidence.typed import dump
    from mla_var3.kernel.device import GpuInfo

    gpu = GpuInfo("NVIDIA H200", (10, 0), H200.uuid or "", 132, 50 << 20, None, None, "torch")
    both_checking = threading.Barrier(2, timeout=5)  # breaks unless the two checks overlap

    def child(command: list[str], timeout: float) -> tuple[dict | None, str]:
        if command[3] == "check-member":
            both_checking.wait()
            return {"mode": "run", "mode_reason": "runs", "check": dump(CHECK)}, ""
        return dump(_group_run(1.05)), ""

    monkeypatch.setattr(verify_mod, "_child_json", child)
    outcome = verify_mod.verify_group(pair, "n8-float32", gpu, True, 60, None, check_jobs=2)
    assert outcome.status == "run-verified", outcome.reason


def test_a_launch_of_two_kernels_shows_the_hungrier_ones_registers_and_smem() -> None:
    from mla_var3.analysis.resources import KernelResources
    from mla_var3.evidence.model import Analysis

    combine = KernelResources("kernel_combine", registers=32, static_smem_bytes=1024, local_bytes=0, stack_bytes=0, constant_bytes=0)
    attention = KernelResources("kernel_attention", registers=254, static_smem_bytes=512, local_bytes=0, stack_bytes=0, constant_bytes=0)
    analysis = Analysis(arch="sm_90a", dynamic_smem_bytes=224_256, resources=[combine, attention])
    assert analysis.registers() == 254 and analysis.smem_per_block_bytes() == 1024 + 224_256
