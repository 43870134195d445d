"""Evidence records: deep validation, freshness (source, harness, upstream example), the verification
runner's reliability, migration, and the publication gate."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mla_var3.evidence import provenance
from mla_var3.evidence import status as status_mod
from mla_var3.evidence.gate import gate
from mla_var3.evidence.model import SCHEMA_VERSION, Record, Upstream
from mla_var3.evidence.store import all_records, load, save, write_atomic
from mla_var3.evidence.targets import Target, collect
from mla_var3.evidence.typed import EvidenceError, dump, parse
from mla_var3.evidence.verify import verify
from mla_var3.kernel import registry
from mla_var3.project import REPO_ROOT

FIXTURES = Path(__file__).parent / "fixtures" / "plans"


@pytest.fixture
def fake_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Fake plans registered, an empty evidence folder and compile cache; returns the evidence folder."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(FIXTURES), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.setenv("MLA_VAR3_EXTRA_PLANS", "fake_plans")
    monkeypatch.syspath_prepend(str(FIXTURES))
    monkeypatch.setenv("MLA_VAR3_EVIDENCE_DIR", str(tmp_path / "evidence"))
    monkeypatch.setenv("MLA_VAR3_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("MLA_VAR3_GIT_SHA", "0123456789abcdef")
    registry.all_plans.cache_clear()
    status_mod.current_hash.cache_clear()
    yield tmp_path / "evidence"
    registry.all_plans.cache_clear()
    status_mod.current_hash.cache_clear()


def record_data(**over: Any) -> dict[str, Any]:
    """A well-formed compile record of ``fake_good`` as JSON data, with ``over`` applied."""
    base = {
        "schema_version": SCHEMA_VERSION, "kernel": "fake_good", "config": "n8-float32", "device_slug": "compile-sm_100a",
        "mode": "compile", "mode_reason": "--compile-only", "arch": "sm_100a", "backend": "torch", "dtype": "float32",
        "shape": {"n": 8}, "tuning": {}, "data": "randn", "source_hash": "abc", "git_sha": "0123",
        "date": "2026-11-30T00:00:00+00:00", "versions": {}, "device": {"compiled_on": "cpu"},
        "compile": {"source": "compile", "warm": False, "seconds": 1.5, "key": "k"}, "flops": 8, "bytes": 64,
    }  # fmt: skip
    return base | over


def run_data(kernel: str = "fake_good", median_us: float = 100.0, **over: Any) -> dict[str, Any]:
    """A passing run record on an H200 as JSON data."""
    sample = {"sm_mhz": 1500.0, "power_w": 600.0}
    return record_data(
        kernel=kernel, mode="run", device_slug="nvidia-h200", mode_reason="H200 runs it",
        device={"name": "NVIDIA H200", "slug": "nvidia-h200", "uuid": "096f7439-510b-d6b7-3771-81876b5f826a"},
        correctness={"outputs": [{"name": "c", "elements": 8, "rel_l2": 1e-3, "max_abs": 0.1, "nonfinite": 0, "tolerance": 1e-2}]},
        timing={"median_us": median_us, "p10_us": median_us * 0.9, "p90_us": median_us * 1.1, "mean_us": median_us,
                "n": 200, "warmup": 20, "input_sets": 1},
        ceilings=[{"name": "copy", "kind": "memory", "value": 4.2e12, "method": "copy"},
                  {"name": "matmul_float32", "kind": "compute", "value": 7.0e14, "method": "matmul"}],
        clocks={"before": sample, "after": sample}, harness_hash=provenance.harness_hash(),
    ) | over  # fmt: skip


def record(**over: Any) -> Record:
    return parse(Record, record_data(**over), "test record")


# --- deep validation ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"timing": {}}, "timing.median_us: missing"),
        ({"timing": {"median_us": "12", "p10_us": 1, "p90_us": 1, "mean_us": 1, "n": 1, "warmup": 1, "input_sets": 1}},
         "timing.median_us: expected a number, got str"),
        ({"config": "n16-float32"}, "config 'n16-float32' does not match shape {'n': 8}"),
        ({"device_slug": "NVIDIA H200"}, "device_slug 'NVIDIA H200' is not a slug"),
        ({"flops": 8.5}, "flops: expected an integer, got float"),
        ({"bogus": 1}, "unknown field(s) bogus"),
        ({"mode": "guess"}, "mode: 'guess' is not one of 'run', 'compile'"),
        ({"schema_version": 1}, "run `python -m mla_var3.evidence migrate`"),
        ({"git_sha": ""}, "git_sha is empty"),
        ({"date": "yesterday"}, "date 'yesterday' is not an ISO 8601 time"),
        ({"compile": {"source": "compile", "warm": False, "seconds": 1.0, "key": "k", "notes": ["cache /tmp/x/y was bad"]}},
         "compile.notes[0]: holds a machine-local path"),
        ({"ncu": {"kernel_name": "k", "block_size": "(1,1,1)", "grid_size": "(1,1,1)", "compute_capability": "9.0"}},
         "ncu: date '' is not an ISO 8601 time"),
    ],
)  # fmt: skip
def test_each_malformed_field_is_one_line_naming_file_and_field(tmp_path: Path, change: dict, message: str) -> None:
    path = tmp_path / "fake_good" / "n8-float32" / "compile-sm_100a.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(record_data(**change)))
    with pytest.raises(EvidenceError) as error:
        load(path)
    text = str(error.value)
    assert text.startswith(f"{path}: ") and message in text and "\n" not in text


def test_a_run_record_is_checked_as_a_run(tmp_path: Path) -> None:
    with pytest.raises(EvidenceError, match="a run record whose check passed needs timing, ceilings and clocks"):
        parse(Record, run_data(clocks=None), "r")
    with pytest.raises(EvidenceError, match="device_slug 'nvidia-h100' is not the device's slug 'nvidia-h200'"):
        parse(Record, run_data(device_slug="nvidia-h100"), "r")
    good = parse(Record, run_data(), "r")
    assert good.passed and good.roofline() is not None
    assert parse(Record, dump(good), "again") == good  # dump and parse round-trip, derived keys included


def test_corrupt_and_misplaced_records_name_the_file(tmp_path: Path) -> None:
    path = save(record(), tmp_path)
    path.write_text('{"schema_version": 2, "kernel": ')
    with pytest.raises(EvidenceError, match=f"{path}: not valid JSON"):
        load(path)
    path = save(record(), tmp_path)
    moved = tmp_path / "fake_good" / "n16-float32" / path.name
    moved.parent.mkdir(parents=True)
    path.rename(moved)
    with pytest.raises(EvidenceError, match="lies elsewhere"):
        all_records(tmp_path)


def test_atomic_write_keeps_the_old_file_on_failure(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    write_atomic(path, "old")
    with pytest.raises(TypeError):
        write_atomic(path, 123)  # type: ignore[arg-type]
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


# --- freshness ---------------------------------------------------------------------------------


def _harness_tree(root: Path) -> Path:
    for rel in provenance.HARNESS_FILES:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO_ROOT / rel, root / rel)
    return root


def test_the_harness_hash_follows_the_timing_code_and_stales_run_records(fake_env: Path, tmp_path: Path) -> None:
    tree = _harness_tree(tmp_path / "tree")
    assert provenance.harness_hash(tree) == provenance.harness_hash()
    bench = tree / "mla_var3/kernel/bench.py"
    bench.write_text(bench.read_text() + "\n# warm up longer\n")
    other = provenance.harness_hash(tree)
    assert other != provenance.harness_hash()
    fresh = status_mod.current_hash("fake_good")
    save(parse(Record, run_data(source_hash=fresh), "r"), fake_env)
    assert status_mod.status_of("fake_good", "n8-float32").status == "run-verified"
    save(parse(Record, run_data(source_hash=fresh, harness_hash=other), "r"), fake_env)
    stale = status_mod.status_of("fake_good", "n8-float32")
    assert stale.status == "stale" and "harness changed" in stale.detail
    save(parse(Record, run_data(source_hash=fresh, harness_hash=None), "r"), fake_env)
    assert "before the harness was hashed" in status_mod.status_of("fake_good", "n8-float32").detail
    save(record(source_hash=fresh), fake_env)  # a compile record depends on the source only
    (fake_env / "fake_good/n8-float32/nvidia-h200.json").unlink()
    assert status_mod.status_of("fake_good", "n8-float32").status == "compile-verified"


def test_no_false_stale_without_a_cutlass_checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The imported plan's source hash names its example by path and pin; the file is compared only where it is."""
    example = registry.get_plan("cutlass_hopper_dense_gemm").upstream_example()
    assert example is not None
    checkout = tmp_path / "cutlass"
    (checkout / example).parent.mkdir(parents=True)
    (checkout / example).write_text("# the example as pinned\n")
    monkeypatch.setenv("CUTLASS_DIR", str(checkout))
    with_checkout = provenance.kernel_source_hash("cutlass_hopper_dense_gemm")
    recorded = provenance.upstream_of("cutlass_hopper_dense_gemm")
    assert recorded == Upstream(example, provenance.read_pin(REPO_ROOT).commit,
                                hashlib.sha256(b"# the example as pinned\n").hexdigest())  # fmt: skip
    assert status_mod.upstream_changed(recorded) is None
    (checkout / example).write_text("# edited locally\n")
    assert "differs from the recorded one" in (status_mod.upstream_changed(recorded) or "")
    monkeypatch.setenv("CUTLASS_DIR", str(tmp_path / "no-checkout"))
    assert provenance.kernel_source_hash("cutlass_hopper_dense_gemm") == with_checkout
    assert status_mod.upstream_changed(recorded) is None
    assert provenance.upstream_of("cutlass_hopper_dense_gemm").sha256 is None  # type: ignore[union-attr]


# --- the runner --------------------------------------------------------------------------------


def test_a_compile_of_a_kernel_our_gpu_runs_is_reported_compile_only(fake_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mla_var3.evidence import verify as verify_mod

    monkeypatch.setattr(verify_mod, "runnable_here", lambda kernel: True)  # as for an sm_90a kernel
    (outcome,) = verify([Target("fake_good", "n8-float32", ["p.md"])], force=True, only="fake_good/*", timeout=60)
    assert outcome.status == "compile-only" and "run it on a GPU" in outcome.reason


def test_runner_survives_raise_hang_and_segfault(fake_env: Path) -> None:
    targets = [Target(k, "n8-float32", ["p.md"]) for k in ("fake_good", "fake_raises", "fake_segfaults", "no_such")]
    outcomes = {o.subject.split("/")[0]: o for o in verify(targets, timeout=60)}
    assert outcomes["fake_good"].status == "compile-verified"
    assert outcomes["fake_raises"].status == "failed" and "deliberate failure" in outcomes["fake_raises"].reason
    assert outcomes["fake_segfaults"].status == "failed" and "SIGSEGV" in outcomes["fake_segfaults"].reason
    assert outcomes["no_such"].status == "failed" and "unknown kernel" in outcomes["no_such"].reason
    hung = verify([Target("fake_hangs", "n8-float32")], timeout=3)
    assert hung[0].status == "failed" and "timed out after 3s (process tree killed)" in hung[0].reason
    # Only the good one wrote a record, and a second pass finds it fresh without re-running.
    assert [r.kernel for r in all_records(fake_env)] == ["fake_good"]
    assert verify([Target("fake_good", "n8-float32")], timeout=60)[0].status == "fresh"


def test_a_plan_that_cannot_run_here_is_skipped_with_its_reason(fake_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plan = registry.get_plan("fake_good")
    monkeypatch.setattr(plan, "unavailable_reason", classmethod(lambda cls: "the peer library is not built (run its build script)"))
    outcome = verify([Target("fake_good", "n8-float32")], only="fake_good/*", timeout=60)[0]
    assert (outcome.status, outcome.reason) == ("skipped", "the peer library is not built (run its build script)")
    assert all_records(fake_env) == []


def test_a_timeout_kills_the_whole_process_tree(tmp_path: Path) -> None:
    from mla_var3.evidence.verify import _child_json

    pid_file = tmp_path / "grandchild.pid"
    script = ("import subprocess, sys, time; p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); "
              f"open({str(pid_file)!r}, 'w').write(str(p.pid)); time.sleep(60)")  # fmt: skip
    data, why = _child_json([sys.executable, "-c", script], timeout=3)
    assert data is None and "process tree killed" in why
    stat = Path(f"/proc/{int(pid_file.read_text())}/stat")
    time.sleep(0.2)
    assert not stat.exists() or stat.read_text().split(") ")[1].startswith("Z")  # gone, or a zombie not yet reaped


def test_verify_packs_what_it_verified_and_refuses_an_unwritable_archive_first(fake_env: Path, tmp_path: Path) -> None:
    import tarfile

    from mla_var3.evidence.__main__ import main

    save(record(kernel="fake_raises"), fake_env)  # another record: not this run's work
    archive = tmp_path / "out.tar.gz"
    args = ["verify", "--docs", str(tmp_path), "--target", "fake_good/n8-float32", "--only", "fake_good/*", "--timeout", "60"]
    assert main([*args, "--archive", str(archive)]) == 0
    with tarfile.open(archive) as tar:
        assert tar.getnames() == ["fake_good/n8-float32/compile-sm_100a.json"]
    started = time.perf_counter()
    assert main([*args, "--archive", str(tmp_path / "missing" / "out.tar.gz")]) == 2
    assert time.perf_counter() - started < 2  # refused before any child started
    assert main(["export", str(tmp_path / "missing" / "out.tar.gz")]) == 2


# --- migration ---------------------------------------------------------------------------------


def test_migration_keeps_every_measured_value(tmp_path: Path) -> None:
    from mla_var3.evidence.migrate import upgrade

    new = parse(Record, run_data(), "r")
    old = dump(new) | {"schema_version": 1, "harness_hash": None}
    old["ceilings"] = {"copy_bytes_per_s": 4.2e12, "matmul_flops_per_s": 7.0e14, "copy_method": "c", "matmul_method": "m"}
    old["roofline"] = {"flops": 8, "bytes": 64, "pct_of_copy_ceiling": 123.0}
    old["compile"] |= {"entry": "/root/.cache/mla_var3/compile/k"}
    old["annotation"] = {"date": "2026-11-30T00:00:00+00:00", "trace": "/tmp/trace.json"}
    for key in ("flops", "bytes", "upstream"):
        del old[key]
    migrated = parse(Record, upgrade(old, "old"), "migrated")
    assert migrated.timing == new.timing and migrated.correctness == new.correctness and migrated.clocks == new.clocks
    assert [(c.name, c.value) for c in migrated.ceilings or []] == [("copy", 4.2e12), ("matmul_bfloat16", 7.0e14)]
    assert (migrated.flops, migrated.bytes, migrated.harness_hash) == (8, 64, None)
    assert migrated.compile.key == "k" and migrated.annotation is not None


# --- the gate ----------------------------------------------------------------------------------


def _site(tmp_path: Path, item: str, status: str = "draft") -> Path:
    docs = tmp_path / "docs"
    (docs / "knowledge").mkdir(parents=True)
    (docs / "knowledge" / "tags.yml").write_text("gemm: matrix multiply\n")
    (docs / "page.md").write_text(textwrap.dedent(f"""\
        ---
        id: page
        title: Page
        kind: optimization
        scope: shared
        arch: [sm_100a]
        tags: [gemm]
        status: {status}
        evidence:
          - {item}
        ---
        # Page

        {{{{ evidence("fake_good", "n8-float32") }}}}
        """))
    return docs


def test_gate_missing_then_verified_then_stale_after_a_one_line_change(fake_env: Path, tmp_path: Path) -> None:
    src = tmp_path / "mut" / "mutable_plan.py"
    src.parent.mkdir()
    src.write_text("from fake_plans import GoodPlan\n\n\nclass MutablePlan(GoodPlan):\n    name = 'fake_mutable'\n\n\nPLANS = (MutablePlan,)\n")
    os.environ["PYTHONPATH"] = os.pathsep.join([str(src.parent), os.environ["PYTHONPATH"]])
    os.environ["MLA_VAR3_EXTRA_PLANS"] = "fake_plans,mutable_plan"
    sys.path.insert(0, str(src.parent))
    try:
        registry.all_plans.cache_clear()
        docs = _site(tmp_path, "{kernel: fake_mutable, config: n8-float32}")
        assert gate(docs) == ["docs/page.md:10: kernel fake_mutable, config n8-float32 is missing: no record; run `nox -s verify-snippets`"]
        assert [o.status for o in verify(collect(docs), only="fake_*", timeout=60)] == ["compile-verified"]
        status_mod.current_hash.cache_clear()
        assert gate(docs) == []
        src.write_text(src.read_text().replace("'fake_mutable'", "'fake_mutable'  # one changed line"))
        status_mod.current_hash.cache_clear()
        problems = gate(docs)
        assert len(problems) == 1 and "fake_mutable, config n8-float32 is stale: compile-sm_100a: fake_mutable's source changed" in problems[0]
    finally:
        sys.path.remove(str(src.parent))
        sys.modules.pop("mutable_plan", None)


def test_gate_checks_groups_and_status_claims(fake_env: Path, tmp_path: Path) -> None:
    docs = _site(tmp_path, "{group: no_such_group, config: n8-float32}", status="run-verified")
    problems = gate(docs)
    assert any("group no_such_group, config n8-float32 is missing: unknown group 'no_such_group'" in p for p in problems)
    assert any("status 'run-verified' but the evidence of group no_such_group" in p for p in problems)


def test_real_profiler_results_become_checked_sections_without_local_paths() -> None:
    """What ``--prof_type`` hands over (real H200 captures parsed by the profile layer) files as typed sections."""
    from mla_var3.profile.annotation import summarize_trace
    from mla_var3.profile.ncu import parse_ncu_csv
    from mla_var3.profile.sanitizer import SanitizerResult, judge
    from mla_var3.profile.timeline import Span, Timeline

    captures = Path(__file__).parent / "fixtures" / "profile"
    ncu = parse_ncu_csv((captures / "h200" / "ncu_raw_hopper_gemm_h200.csv").read_text())[0]
    ncu.command = ["/usr/local/cuda/bin/ncu", "--log-file", "/tmp/ncu-x/ncu.csv", "/opt/venv/bin/python"]
    payload = ncu.to_dict() | {"shape": {"m": 8192}, "clock_control": "none", "date": "2026-11-30T10:37:30+00:00"}
    section = provenance.section_from_profile("ncu", payload, "abc")
    assert section.tc_pct == ncu.tc_pct and section.command == ["ncu", "--log-file", "ncu.csv", "python"]
    racecheck = judge("racecheck", (captures / "h200" / "racecheck_hopper_h200.txt").read_text(), 0)
    sanitizer = SanitizerResult({"racecheck": racecheck}).to_dict() | {"date": "2026-11-30T10:38:17+00:00", "shape": {"m": 128}}
    assert provenance.section_from_profile("sanitizer", sanitizer, "abc").passed == racecheck.passed
    timeline = Timeline.of([Span(0, "p", "tma_issue", 0, 0, 9)], None, "t")
    annotation = {"trace": "/tmp/k-trace.json", "summary": summarize_trace(captures / "kineto_trace.json").to_dict(),
                  "timeline": timeline, "date": "2026-11-30T10:38:32+00:00"}  # fmt: skip
    kept = provenance.section_from_profile("annotation", dump(annotation), "abc")
    assert kept.timeline == timeline and kept.summary is not None and "trace" not in dump(kept)
