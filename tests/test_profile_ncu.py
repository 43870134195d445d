"""ncu command line and ``--csv --page raw`` parsing (CPU; fixture in the real output format)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mla_var3.profile.errors import ProfileError
from mla_var3.profile.ncu import (
    SM90_METRICS,
    missing_metrics,
    ncu_command,
    parse_ncu_csv,
    stall_metric,
)

FIXTURE = Path(__file__).parent / "fixtures" / "profile" / "ncu_raw_hopper_gemm.csv"


def test_command_never_locks_clocks_and_selects_one_launch() -> None:
    cmd = ncu_command(["python", "-m", "mla_var3.kernel", "hopper_gemm_ws"], kernel_regex="kernel_cutlass_", launch_skip=3)
    assert cmd[:3] == ["ncu", "--clock-control", "none"]
    assert cmd[cmd.index("-k") + 1] == "regex:kernel_cutlass_"
    assert cmd[cmd.index("--launch-skip") + 1] == "3"
    assert cmd[cmd.index("--launch-count") + 1] == "1"
    assert cmd[cmd.index("--page") + 1] == "raw" and "--csv" in cmd
    assert cmd[cmd.index("--metrics") + 1].split(",") == list(SM90_METRICS)
    assert cmd[-4:] == ["python", "-m", "mla_var3.kernel", "hopper_gemm_ws"]


def test_fixture_parses_into_every_field() -> None:
    [result] = parse_ncu_csv(FIXTURE.read_text())
    assert result.kernel_name.startswith("kernel_cutlass_")
    assert (result.block_size, result.grid_size, result.compute_capability) == ("(384, 1, 1)", "(64, 32, 1)", "9.0")
    assert result.duration_ns == 1_571_264
    assert result.sm_throughput_pct == pytest.approx(84.55)
    assert result.tc_pct == pytest.approx(86.12)
    assert result.wgmma_issue_pct == pytest.approx(2.71)
    assert result.dram_throughput_pct == pytest.approx(21.37)
    assert result.achieved_occupancy_pct == pytest.approx(18.61)
    assert result.registers_per_thread == 168
    assert result.smem_per_block_bytes == 201_728
    assert result.l2_hit_rate_pct == pytest.approx(71.84)
    assert result.sm_clock_hz == pytest.approx(1.6184e9, rel=1e-4)
    assert result.cluster_size == 2
    assert len(result.stalls) == 19
    assert [name for name, _ in result.top_stalls] == ["gmma", "long_scoreboard", "wait", "no_instruction", "barrier"]
    assert result.raw["gpu__time_duration.sum"] == ["1,571,264", "nsecond"]


def test_to_dict_is_json_ready() -> None:
    import json

    [result] = parse_ncu_csv(FIXTURE.read_text())
    data = json.loads(json.dumps(result.to_dict()))
    assert data["smem_per_block_bytes"] == 201_728
    assert data["top_stalls"][0] == ["gmma", pytest.approx(6.83)]


def _table(units: list[str], values: list[str], metrics: list[str]) -> str:
    fixed = '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC"'
    head = fixed + "," + ",".join(f'"{m}"' for m in metrics)
    unit_row = ",".join(['""'] * 11 + [f'"{u}"' for u in units])
    row = '"0","1","python","h","kernel_cutlass_k_0","1","7","(128, 1, 1)","(8, 1, 1)","0","9.0",'
    return "\n".join([head, unit_row, row + ",".join(f'"{v}"' for v in values)]) + "\n"


def test_auto_scaled_units_are_converted_to_base() -> None:
    metrics = ["gpu__time_duration.sum", "launch__shared_mem_per_block_dynamic", "sm__cycles_elapsed.avg.per_second"]
    [result] = parse_ncu_csv(_table(["usecond", "Kbyte/block", "cycle/nsecond"], ["12.50", "69.63", "1.75"], metrics))
    assert result.duration_ns == pytest.approx(12_500)
    assert result.smem_dynamic_bytes == pytest.approx(69_630)
    assert result.sm_clock_hz == pytest.approx(1.75e9)


def test_metrics_ncu_did_not_report_are_none() -> None:
    metrics = ["gpu__time_duration.sum", stall_metric("wait"), "lts__t_sector_hit_rate.pct"]
    [result] = parse_ncu_csv(_table(["nsecond", "", "%"], ["900", "1.5", "n/a"], metrics))
    assert result.duration_ns == 900
    assert result.l2_hit_rate_pct is None and result.tc_pct is None and result.smem_per_block_bytes is None
    assert result.top_stalls == [("wait", 1.5)]


def test_output_without_a_table_is_an_error() -> None:
    with pytest.raises(ProfileError, match="no `--page raw` CSV table"):
        parse_ncu_csv("==PROF== Connected to process 1\n==WARNING== No kernels were profiled.\n")


def test_missing_metrics_reads_query_output() -> None:
    listed = "\n".join(m.split(".")[0] + "   Counter   some description" for m in SM90_METRICS if "hmma" not in m)
    assert missing_metrics(listed) == ["sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"]


def _fake_ncu(bin_dir: Path, body: str) -> None:
    """A stand-in `ncu`: `--version` prints a version, otherwise it runs `body`."""
    import stat
    import sys

    script = bin_dir / "ncu"
    script.write_text(
        f"#!{sys.executable}\n"
        "import sys, time, subprocess\n"
        "args = sys.argv[1:]\n"
        "if args == ['--version']:\n"
        "    print('NVIDIA (R) Nsight Compute Command Line Profiler\\nVersion 2025.3.1.0 (build 1) (public-release)')\n"
        "    sys.exit(0)\n"
        "log = args[args.index('--log-file') + 1]\n" + body
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)


def test_run_ncu_reads_the_log_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from mla_var3.profile.ncu import run_ncu

    _fake_ncu(tmp_path, f"open(log, 'w').write(open({str(FIXTURE)!r}).read())\nprint('app output')\n")
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    result = run_ncu(["python", "-c", "pass"], kernel_regex="kernel_cutlass_", launch_skip=2)
    assert result.duration_ns == 1_571_264
    assert result.ncu_version == "Version 2025.3.1.0 (build 1) (public-release)"
    assert result.command[result.command.index("--launch-skip") + 1] == "2"


def test_run_ncu_reports_tool_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from mla_var3.profile.ncu import run_ncu

    _fake_ncu(tmp_path, "print('==ERROR== Failed to find metric sm__bogus')\nsys.exit(1)\n")
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    with pytest.raises(ProfileError, match="Failed to find metric sm__bogus"):
        run_ncu(["python", "-c", "pass"], kernel_regex="kernel_cutlass_")


def test_timeout_kills_the_whole_process_tree(tmp_path: Path) -> None:
    import sys
    import time

    from mla_var3.profile.process import run_tool

    pid_file = tmp_path / "child.pid"
    parent = (
        "import subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        f"open({str(pid_file)!r}, 'w').write(str(child.pid))\n"
        "time.sleep(60)\n"
    )
    done = run_tool([sys.executable, "-c", parent], timeout_s=1)
    assert done.timed_out and done.returncode is None
    status = Path(f"/proc/{pid_file.read_text()}/status")
    for _ in range(50):  # SIGKILL is delivered asynchronously; a reaped or zombie child is dead
        if not status.exists() or "State:\tZ" in status.read_text():
            break
        time.sleep(0.05)
    assert not status.exists() or "State:\tZ" in status.read_text()
