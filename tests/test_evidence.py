"""Evidence records, the verification runner's reliability, archives, and the publication gate."""

from __future__ import annotations

import json
import os
import tarfile
import textwrap
from pathlib import Path

import pytest

from mla_var3.evidence import status as status_mod
from mla_var3.evidence.archive import export, import_archive
from mla_var3.evidence.gate import gate
from mla_var3.evidence.render import render_evidence_block, render_evidence_value
from mla_var3.evidence.schema import SCHEMA_VERSION, EvidenceError, load
from mla_var3.evidence.store import all_records, save, write_atomic
from mla_var3.evidence.targets import Target, collect, parse_config
from mla_var3.evidence.verify import verify
from mla_var3.kernel import registry

FIXTURES = Path(__file__).parent / "fixtures" / "plans"


@pytest.fixture
def fake_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
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


def _record(**over: object) -> dict:
    base = {
        "schema_version": SCHEMA_VERSION, "kernel": "fake_good", "config": "n8-float32", "device_slug": "compile-sm_100a",
        "mode": "compile", "arch": "sm_100a", "dtype": "float32", "shape": {"n": 8}, "tuning": {}, "data": "randn",
        "source_hash": "abc", "git_sha": "0123", "date": "2026-11-30T00:00:00+00:00", "versions": {}, "device": {"name": None},
        "compile": {}, "analysis": None, "correctness": None, "timing": None, "ceilings": None, "roofline": None, "clocks": None,
    }
    return base | over


def test_parse_config_roundtrip_and_errors() -> None:
    assert parse_config("m8192-n8192-k8192-bfloat16") == ({"m": 8192, "n": 8192, "k": 8192}, "bfloat16")
    with pytest.raises(EvidenceError, match="must look like"):
        parse_config("m8192-n8192-int3")
    with pytest.raises(EvidenceError, match="not <name><integer>"):
        parse_config("m8x-float32")


def test_corrupt_record_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "fake_good" / "n8-float32" / "compile-sm_100a.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"schema_version": 1, "kernel": ')
    with pytest.raises(EvidenceError, match=str(path)):
        load(path)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"schema_version": 0}, "schema_version 0"),
        ({"git_sha": ""}, "'git_sha' is empty"),
        ({"mode": "guess"}, "mode 'guess'"),
        ({"mode": "run"}, "a run record needs 'correctness'"),
        ({"ncu": {"duration_ns": 1}}, "section 'ncu' needs its own 'date'"),
    ],
)
def test_malformed_records_are_rejected(tmp_path: Path, change: dict, message: str) -> None:
    with pytest.raises(EvidenceError, match=message):
        save(_record(**change), tmp_path)


def test_misplaced_record_is_rejected(tmp_path: Path) -> None:
    path = save(_record(), tmp_path)
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


def test_runner_survives_raise_hang_and_segfault(fake_env: Path) -> None:
    targets = [Target(k, "n8-float32", ["p.md"]) for k in ("fake_good", "fake_raises", "fake_hangs", "fake_segfaults", "no_such")]
    outcomes = {o.kernel: o for o in verify(targets, timeout=20)}
    assert outcomes["fake_good"].status == "compile-verified"
    assert outcomes["fake_raises"].status == "failed" and "deliberate failure" in outcomes["fake_raises"].reason
    assert outcomes["fake_hangs"].status == "failed" and "timed out" in outcomes["fake_hangs"].reason
    assert outcomes["fake_segfaults"].status == "failed" and "SIGSEGV" in outcomes["fake_segfaults"].reason
    assert outcomes["no_such"].status == "failed" and "unknown kernel" in outcomes["no_such"].reason
    # Only the good one wrote a record, and a second pass finds it fresh without re-running.
    assert [r["kernel"] for r in all_records(fake_env)] == ["fake_good"]
    again = verify([Target("fake_good", "n8-float32")], timeout=20)
    assert again[0].status == "fresh"


def _site(tmp_path: Path, kernel: str = "fake_good") -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "page.md").write_text(
        textwrap.dedent(f"""\
        ---
        id: page
        evidence:
          - {{kernel: {kernel}, config: n8-float32}}
        ---
        # Page
        """)
    )
    return docs


def test_gate_missing_then_verified_then_stale_after_a_one_line_change(fake_env: Path, tmp_path: Path) -> None:
    # A plan module of our own in tmp, so the mutation does not touch the repository.
    src = tmp_path / "mut" / "mutable_plan.py"
    src.parent.mkdir()
    src.write_text("from fake_plans import GoodPlan\n\n\nclass MutablePlan(GoodPlan):\n    name = 'fake_mutable'\n\n\nPLANS = (MutablePlan,)\n")
    os.environ["PYTHONPATH"] = os.pathsep.join([str(src.parent), os.environ["PYTHONPATH"]])
    os.environ["MLA_VAR3_EXTRA_PLANS"] = "fake_plans,mutable_plan"
    import sys

    sys.path.insert(0, str(src.parent))
    try:
        registry.all_plans.cache_clear()
        docs = _site(tmp_path, "fake_mutable")
        assert gate(docs) == ["page.md: fake_mutable/n8-float32 is missing: no record; run `nox -s verify-snippets`"]
        assert [o.status for o in verify(collect(docs), timeout=60)] == ["compile-verified"]
        status_mod.current_hash.cache_clear()
        assert gate(docs) == []
        assert "Compile-verified" in render_evidence_block("fake_mutable", "n8-float32")
        src.write_text(src.read_text().replace("'fake_mutable'", "'fake_mutable'  # one changed line"))
        status_mod.current_hash.cache_clear()
        problems = gate(docs)
        assert len(problems) == 1 and problems[0].startswith("page.md: fake_mutable/n8-float32 is stale")
        assert "Stale evidence" in render_evidence_block("fake_mutable", "n8-float32")
    finally:
        sys.path.remove(str(src.parent))
        sys.modules.pop("mutable_plan", None)


def test_archive_roundtrip_and_rejections(fake_env: Path, tmp_path: Path) -> None:
    save(_record(), fake_env)
    archive = tmp_path / "ev.tar.gz"
    assert export(fake_env, archive) == 1
    target = tmp_path / "imported"
    assert [p.name for p in import_archive(archive, target)] == ["compile-sm_100a.json"]
    bad = tmp_path / "bad.tar.gz"
    member = tmp_path / "x.json"
    member.write_text(json.dumps(_record(kernel="no_such_kernel", config="n8-float32")))
    with tarfile.open(bad, "w:gz") as tar:
        tar.add(member, arcname="no_such_kernel/n8-float32/compile-sm_100a.json")
    with pytest.raises(EvidenceError, match="unknown kernel 'no_such_kernel'"):
        import_archive(bad, tmp_path / "nothing")
    assert not (tmp_path / "nothing").exists()
    with pytest.raises(EvidenceError, match="not a readable evidence archive"):
        import_archive(member, tmp_path / "nothing")


def test_value_rendering_uses_the_record(fake_env: Path) -> None:
    save(_record(source_hash=status_mod.current_hash("fake_good"), compile={"seconds": 1.5}), fake_env)
    out = render_evidence_value("fake_good", "n8-float32", "compile.seconds")
    assert "1.50" in out and "ev-stale" not in out
    missing = render_evidence_value("fake_good", "n16-float32", "compile.seconds")
    assert "missing" in missing


def _run_record(kernel: str, median_us: float, tc: float | None) -> dict:
    run = {
        "mode": "run", "kernel": kernel, "device_slug": "nvidia-h200", "device": {"name": "NVIDIA H200", "slug": "nvidia-h200"},
        "correctness": {"passed": True, "outputs": []},
        "timing": {"median_us": median_us, "p10_us": median_us, "p90_us": median_us, "n": 200},
        "ceilings": {"copy_bytes_per_s": 4.2e12, "matmul_flops_per_s": 7.0e14},
        "roofline": {"flops_per_s": 1.0, "bytes_per_s": 1.0, "pct_of_copy_ceiling": 1.0, "pct_of_matmul_ceiling": 1.0},
        "analysis": {"resources": [{"registers": 168, "static_smem_bytes": 1024}], "dynamic_smem_bytes": 230400},
    }
    if tc is not None:
        run["ncu"] = {"date": "2026-11-30", "tc_pct": tc, "dram_throughput_pct": 20.0, "achieved_occupancy_pct": 18.7,
                      "registers_per_thread": 168, "smem_per_block_bytes": 231424}
    return _record(**run)


def test_comparison_table_from_records(fake_env: Path) -> None:
    from mla_var3.evidence.compare import comparison_table

    save(_run_record("fake_good", 100.0, 90.5), fake_env)
    save(_run_record("fake_raises", 110.0, None), fake_env)
    table = comparison_table(["fake_good", "fake_raises"], "n8-float32")
    lines = table.splitlines()
    assert lines[0].startswith("| kernel | runtime µs | TC % | DRAM %")
    assert "| `fake_good` | 100.00 | 90.5 | 20.0 | 18.7 | 168 | 226.0 | baseline |" in lines[2]
    assert "| `fake_raises` | 110.00 | – | – | – | 168 | 226.0 | +10.0 % time |" in lines[3]
    with pytest.raises(EvidenceError, match="no run record for fake_hangs/n8-float32"):
        comparison_table(["fake_hangs"], "n8-float32")


def test_roofline_figure_from_run_records(fake_env: Path) -> None:
    import base64

    from mla_var3.evidence.render import render_roofline

    record = _run_record("fake_good", 100.0, None)
    record["roofline"] |= {"flops": 2 * 4096**3, "bytes": 3 * 4096**2 * 2}
    save(record, fake_env)
    html_out = render_roofline([("fake_good", "n8-float32"), ("fake_raises", "n8-float32")])
    svg = base64.b64decode(html_out.split("base64,", 1)[1].split('"', 1)[0]).decode()
    assert svg.lstrip().startswith("<?xml") and "fake_good n8-float32" in svg
    assert "no run records" in render_roofline([("fake_raises", "n8-float32")])


def test_evidence_block_shows_profile_sections(fake_env: Path) -> None:
    record = _run_record("fake_good", 100.0, 90.5)
    record["ncu"] |= {"duration_ns": 99_000.0, "top_stalls": [["long_scoreboard", 1.5]], "sm_clock_hz": 1.4e9}
    record["sanitizer"] = {"date": "2026-11-30", "shape": {"n": 8}, "passed": True,
                           "tools": {"memcheck": {"passed": True, "errors": 0, "allowed": 0}}}
    record["source_hash"] = status_mod.current_hash("fake_good")
    save(record, fake_env)
    block = render_evidence_block("fake_good", "n8-float32")
    assert "Run-verified" in block
    assert "| 99.00 | – | 90.5 | 20.0 | 18.7 | 168 | 231,424 | – | long_scoreboard 1.50 |" in block
    assert "SM clock seen 1400 MHz" in block
    assert "memcheck: clean (0 errors, 0 allowed)" in block


def test_gate_rejects_a_status_the_evidence_does_not_back(fake_env: Path, tmp_path: Path) -> None:
    docs = _site(tmp_path)
    page = docs / "page.md"
    page.write_text(page.read_text().replace("id: page\n", "id: page\nstatus: run-verified\n"))
    save(_record(source_hash=status_mod.current_hash("fake_good")), fake_env)
    assert gate(docs) == ["page.md: status run-verified but its evidence is compile-verified"]
    page.write_text(page.read_text().replace("status: run-verified", "status: compile-verified"))
    assert gate(docs) == []
    (docs / "bare.md").write_text("---\nid: bare\nstatus: compile-verified\n---\n# Bare\n")
    assert gate(docs) == ["bare.md: status compile-verified but no evidence is listed"]


def test_value_units_for_percentages_and_fractions(fake_env: Path) -> None:
    record = _run_record("fake_good", 100.0, 97.96)
    record["annotation"] = {"date": "2026-11-30", "timeline": {"overlap": {"overlap_fraction": 0.9747}}}
    record["source_hash"] = status_mod.current_hash("fake_good")
    save(record, fake_env)
    assert ">97.96 %<" in render_evidence_value("fake_good", "n8-float32", "ncu.tc_pct")
    assert ">97.47 %<" in render_evidence_value("fake_good", "n8-float32", "annotation.timeline.overlap.overlap_fraction")


def test_records_from_two_devices_merge_on_the_page(fake_env: Path) -> None:
    fresh = status_mod.current_hash("fake_good")
    save(_record(source_hash=fresh), fake_env)  # compile-sm_100a from a CPU machine
    save(_run_record("fake_good", 100.0, None) | {"source_hash": fresh}, fake_env)  # a run on the H200
    status = status_mod.status_of("fake_good", "n8-float32")
    assert status.status == "run-verified" and len(status.records) == 2
    block = render_evidence_block("fake_good", "n8-float32")
    rows = [line for line in block.splitlines() if line.strip().startswith("| NVIDIA H200") or "compile-only (" in line]
    assert len(rows) == 2, block
