"""compute-sanitizer output parsing, the allow-list, and the run plumbing (with a stand-in tool)."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from mla_var3.profile.errors import ProfileError
from mla_var3.profile.sanitizer import (
    AllowEntry,
    judge,
    load_allow_list,
    run_sanitizer,
    sanitizer_command,
)

FIXTURES = Path(__file__).parent / "fixtures" / "profile"


def _read(name: str) -> str:
    return (FIXTURES / name).read_text()


def test_command_turns_off_api_error_reports() -> None:
    cmd = sanitizer_command("racecheck", ["python", "-m", "x"])
    assert cmd[:3] == ["compute-sanitizer", "--tool", "racecheck"]
    assert cmd[cmd.index("--report-api-errors") + 1] == "no"
    assert cmd[cmd.index("--error-exitcode") + 1] == "1"
    assert cmd[-3:] == ["python", "-m", "x"]
    with pytest.raises(ProfileError, match="unknown sanitizer tool"):
        sanitizer_command("initcheck", ["python"])


def test_clean_output_passes() -> None:
    result = judge("memcheck", _read("memcheck_clean.txt"), 0)
    assert result.passed and result.reasons == []
    assert (result.errors, result.allowed, result.reported_errors) == (0, 0, 0)


def test_errors_are_parsed_with_kernel_and_location() -> None:
    result = judge("memcheck", _read("memcheck_errors.txt"), 1)
    assert not result.passed
    assert (result.errors, result.reported_errors) == (2, 2)
    write, read = result.findings
    assert write.kind == "Invalid __global__ write of size 16 bytes"
    assert write.kernel is not None and write.kernel.startswith("kernel_cutlass_kernel_mla_var3")
    assert write.location is not None and write.location.endswith("vectorized/kernel.py:58")
    assert read.location is not None and read.location.endswith("kernel.py:55")
    assert "2 error(s) not on the allow-list" in result.reasons


def test_old_location_format_names_the_kernel() -> None:
    text = (
        "========= Barrier error detected. Divergent thread(s) in warp\n"
        "=========     at 0x130 in /src/sync.cu:21:divergent_kernel(int*)\n"
        "=========     by thread (37,0,0) in block (0,0,0)\n"
        "=========\n========= ERROR SUMMARY: 1 error\n"
    )
    [finding] = judge("synccheck", text, 1).findings
    assert (finding.kernel, finding.location) == ("divergent_kernel(int*)", "/src/sync.cu:21")


def test_allow_listed_race_passes_and_warning_is_recorded() -> None:
    allow = load_allow_list(FIXTURES / "allow_list.yaml")
    result = judge("racecheck", _read("racecheck_tma.txt"), 1, allow)
    assert result.passed, result.reasons
    assert (result.errors, result.allowed, result.warnings, result.reported_errors) == (0, 1, 1, 1)
    error = next(f for f in result.findings if f.severity == "error")
    assert error.allowed_because is not None and "mbarrier" in error.allowed_because


def test_allow_list_entry_applies_only_to_its_tool() -> None:
    entry = AllowEntry("racecheck", "Invalid __global__", "not this tool")
    result = judge("memcheck", _read("memcheck_errors.txt"), 1, [entry])
    assert result.errors == 2 and not result.passed


def test_race_not_on_the_allow_list_fails() -> None:
    result = judge("racecheck", _read("racecheck_tma.txt"), 1)
    assert not result.passed and result.errors == 1


def test_allow_list_entry_without_reason_is_an_error() -> None:
    with pytest.raises(ProfileError, match=r"entry 2 \(memcheck, 'Invalid __global__ read'\) has no `why`"):
        load_allow_list(FIXTURES / "allow_list_no_why.yaml")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("- {tool: initcheck, pattern: x, why: y}", "tool must be one of"),
        ("- {tool: memcheck, pattern: '(', why: y}", "not a regular expression"),
        ("- {tool: memcheck, pattern: x, why: y, scope: all}", "unknown keys"),
        ("tool: memcheck", "must be a YAML list"),
    ],
)
def test_malformed_allow_lists_are_errors(tmp_path: Path, body: str, message: str) -> None:
    path = tmp_path / "allow.yaml"
    path.write_text(body)
    with pytest.raises(ProfileError, match=message):
        load_allow_list(path)


def test_missing_summary_and_failed_target_fail() -> None:
    truncated = _read("memcheck_clean.txt").replace("========= ERROR SUMMARY: 0 errors\n", "")
    assert "no memcheck summary line" in " ".join(judge("memcheck", truncated, 0).reasons)
    crashed = _read("memcheck_clean.txt") + "========= Target application returned an error\n"
    assert "the target itself failed" in " ".join(judge("memcheck", crashed, 1).reasons)
    assert "timed out" in " ".join(judge("memcheck", truncated, None).reasons)


def test_unprinted_errors_cannot_be_allowed() -> None:
    text = _read("memcheck_errors.txt").replace("ERROR SUMMARY: 2 errors", "ERROR SUMMARY: 3 errors")
    allow = [AllowEntry("memcheck", "Invalid __global__", "test")]
    result = judge("memcheck", text, 1, allow)
    assert not result.passed and "counts 3 errors but 2 were printed" in result.reasons[0]


def _fake_sanitizer(bin_dir: Path) -> None:
    """A stand-in `compute-sanitizer` that prints a captured output per tool."""
    script = bin_dir / "compute-sanitizer"
    script.write_text(
        f"#!{sys.executable}\n"
        "import sys\n"
        f"fixtures = {str(FIXTURES)!r}\n"
        "tool = sys.argv[sys.argv.index('--tool') + 1]\n"
        "name = {'memcheck': 'memcheck_clean.txt', 'racecheck': 'racecheck_tma.txt',\n"
        "        'synccheck': 'synccheck_clean.txt'}[tool]\n"
        "text = open(fixtures + '/' + name).read()\n"
        "print(text)\n"
        "sys.exit(1 if 'Error:' in text else 0)\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)


def test_run_sanitizer_runs_each_tool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_sanitizer(tmp_path)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    result = run_sanitizer(["python", "-c", "pass"], allow_list=load_allow_list(FIXTURES / "allow_list.yaml"))
    assert result.passed
    assert list(result.tools) == ["memcheck", "racecheck", "synccheck"]
    assert result.tools["racecheck"].allowed == 1
    assert result.tools["memcheck"].command[1:3] == ["--tool", "memcheck"]
    assert result.to_dict()["passed"] is True
    failing = run_sanitizer(["python", "-c", "pass"], tools=["racecheck"])
    assert not failing.passed
