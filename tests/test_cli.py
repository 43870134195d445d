"""CLI: listing, flag spellings, and one clear line for each kind of bad input."""

from __future__ import annotations

import subprocess
import sys

import pytest

from mla_var3.kernel.cli import main, plan_parser
from mla_var3.kernel.errors import UnknownKernelError
from mla_var3.kernel.registry import all_plans, get_plan


def test_list_shows_kernels_with_archs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--list"]) == 0
    out = capsys.readouterr().out
    assert "elementwise_add" in out and "sm_80,sm_90a,sm_100a" in out


def test_registry_names_are_unique_snake_case() -> None:
    plans = all_plans()
    assert "elementwise_add" in plans
    assert all(name == p.name for name, p in plans.items())


def test_unknown_kernel_suggests_close_names() -> None:
    with pytest.raises(UnknownKernelError, match="did you mean elementwise_add"):
        get_plan("elementwise_ad")


def test_dash_and_underscore_both_accepted() -> None:
    plan = get_plan("elementwise-add")
    parser = plan_parser(plan)
    a = parser.parse_args(["--prof-type=ncu", "--compile-only", "--n=7"])
    b = parser.parse_args(["--prof_type=ncu", "--compile_only", "--n", "7"])
    assert (a.prof_type, a.compile_only, a.n) == (b.prof_type, b.compile_only, b.n) == ("ncu", True, 7)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mla_var3.kernel", *args], capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["no_such_kernel"], "unknown kernel 'no_such_kernel'"),
        (["elementwise_add", "--n=0"], "needs --n >= 1"),
        (["elementwise_add", "--dtype=float8_e4m3fn", "--compile-only"], "does not implement dtype 'float8_e4m3fn'"),
        (["elementwise_add", "--arch=sm_120a", "--compile-only"], "does not support sm_120a"),
        (["elementwise_add", "--arch=hopper", "--compile-only"], "unknown arch 'hopper'"),
        (["elementwise_add", "--config=9", "--compile-only"], "--config 9 is out of range"),
    ],
)
def test_bad_input_is_one_clear_line(args: list[str], message: str) -> None:
    proc = _cli(*args)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_run_without_gpu_says_how_to_compile() -> None:
    pytest.importorskip("torch")
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU; the no-driver message is for CPU machines")
    proc = _cli("elementwise_add", "--n=1024", "--check")
    assert proc.returncode == 2
    assert "no CUDA GPU or driver found" in proc.stderr and "--compile-only" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_format_result_prints_profile_sections() -> None:
    from mla_var3.kernel.cli import _profile_lines

    lines = _profile_lines({
        "annotation": {"trace": "/tmp/t.json", "summary": {"kernels": [{"name": "k", "launches": 10, "median_us": 1.5}],
                       "streams": [{"stream": 7, "kernels": 10, "busy_us": 15.0, "span_us": 20.0, "median_gap_us": 0.5}]},
                       "timeline": {"spans": 12, "overlap": {"overlap_fraction": 0.975}}},
        "ncu": {"duration_ns": 1000.0, "tc_pct": 98.0, "top_stalls": [["barrier", 9.7]]},
        "sanitizer": {"tools": {"memcheck": {"passed": True}, "racecheck": {"passed": False}}},
    })  # fmt: skip
    text = "\n".join(lines)
    assert "k: 10 launches, median 1.50 us" in text and "median gap 0.50 us" in text
    assert "loads in flight during 97.5 % of MMA time" in text
    assert "TC 98.0 %" in text and "SM - %" in text
    assert "memcheck clean, racecheck FAILED" in text
