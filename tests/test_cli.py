"""CLI: listing, flag spellings, one clear line for each kind of bad input (in process: ``main``
returns the exit code the process would), and the entry point as a process once."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

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


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["no_such_kernel"], "unknown kernel 'no_such_kernel'"),
        (["elementwise_add", "--n=0", "--compile-only"], "needs --n >= 1, got 0"),
        (["elementwise_add", "--n=2147483648", "--compile-only"], "needs --n <= 2147483647"),
        (["hopper_gemm_ws", "--m=0", "--compile-only"], "needs --m >= 1, got 0"),
        (["elementwise_add", "--dtype=float8_e4m3fn", "--compile-only"], "does not implement dtype 'float8_e4m3fn'"),
        (["elementwise_add", "--arch=sm_120a", "--compile-only"], "does not support sm_120a"),
        (["elementwise_add", "--arch=hopper", "--compile-only"], "unknown arch 'hopper'"),
        (["elementwise_add", "--arch=", "--compile-only"], "--arch is empty"),
        (["elementwise_add", "--config=9", "--compile-only"], "--config 9 is out of range"),
        (["elementwise_add", "--no-such-flag"], "unrecognized arguments: --no-such-flag"),
        (["elementwise_add", "--n=many"], "argument --n: invalid int value: 'many'"),
    ],
)
def test_bad_input_is_one_clear_line(args: list[str], message: str, cli_error: Callable[[list[str]], str]) -> None:
    assert message in cli_error(args)


@pytest.mark.parametrize("where", ["no_such_dir/out.json", "."])
def test_unwritable_json_fails_before_any_work(where: str, tmp_path: Path, cli_error: Callable[[list[str]], str]) -> None:
    import mla_var3.kernel.runner as runner

    target = tmp_path / where
    called = []
    original, runner.run_plan = runner.run_plan, lambda *a: called.append(a)  # must not be reached
    try:
        err = cli_error(["elementwise_add", "--compile-only", f"--json={target}"])
    finally:
        runner.run_plan = original
    assert f"--json {target}" in err and not called
    assert not (tmp_path / "no_such_dir").exists()


def test_run_without_gpu_says_how_to_compile(cli_error: Callable[[list[str]], str]) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU; the no-driver message is for CPU machines")
    err = cli_error(["elementwise_add", "--n=1024", "--check"])
    assert "no CUDA GPU or driver found" in err and "--compile-only" in err


def test_the_dsl_never_sees_our_flags(
    fresh_compile_cache: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every JIT compile parses ``sys.argv`` for the DSL's ``-diagnostic``; argparse reads ``--h`` as ``--help``
    and would print the DSL's usage and exit 0 before compiling, unless the CLI hides our arguments. The
    DSL takes that path where the runtime arch runs the binary (a GPU of the arch): pinned here to sm_90a,
    with an empty compile cache so the kernel really compiles."""
    from cutlass.cutlass_dsl import CuTeDSL

    monkeypatch.setattr(CuTeDSL._get_dsl().envar, "arch", "sm_90a")
    args = ["mla_decode_v2", "--h", "16", "--compile-only", "--arch", "sm_90a"]
    host_argv = ["python -m mla_var3.kernel", *args]
    monkeypatch.setattr(sys, "argv", host_argv)
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "usage:" not in out and "-diagnostic" not in out
    assert out.startswith("mla_decode_v2 [cute] b128-s1-t8192-h16-") and "-> sm_90a" in out
    assert "compile: compile in" in out and "SASS: wgmma" in out
    assert sys.argv is host_argv  # given back as it was


def test_the_entry_point_is_one_line_and_exit_2() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "mla_var3.kernel", "no_such_kernel"], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("error: unknown kernel 'no_such_kernel'") and len(proc.stderr.splitlines()) == 1


def test_sanitize_runs_the_shape_given_or_the_first_check_shape() -> None:
    from mla_var3.kernel.profiling import sanitize_shape

    plan = get_plan("elementwise_add")()
    assert sanitize_shape(plan, {"n": 77}, shape_given=True) == ({"n": 77}, "the shape given")
    shape, why = sanitize_shape(plan, {"n": 1 << 27}, shape_given=False)
    assert shape == plan.check_shapes[0] and "first check shape" in why


def test_format_result_prints_profile_sections() -> None:
    from mla_var3.kernel.cli import _profile_lines
    from mla_var3.profile.timeline import Span, Timeline

    spans = [Span(0, "producer", "tma_issue", 0, 0, 10), Span(0, "consumer0", "mma", 0, 5, 20)]
    timeline = Timeline.of(spans, None, "t")
    lines = _profile_lines({
        "annotation": {"trace": "t.json", "summary": {"kernels": [{"name": "k", "launches": 10, "median_us": 1.5}],
                       "streams": [{"stream": 7, "kernels": 10, "busy_us": 15.0, "span_us": 20.0, "median_gap_us": 0.5}]},
                       "timeline": {"title": timeline.title, "roles": timeline.roles, "events": timeline.events,
                                    "spans": timeline.spans}},
        "ncu": {"duration_ns": 1000.0, "tc_pct": 98.0, "top_stalls": [["barrier", 9.7]]},
        "sanitizer": {"tools": {"memcheck": {"passed": True}, "racecheck": {"passed": False}}},
    })  # fmt: skip
    text = "\n".join(lines)
    assert "k: 10 launches, median 1.50 us" in text and "median gap 0.50 us" in text
    assert "timeline: 2 spans; loads in flight during 0.0 % of MMA time" in text
    assert "TC 98.0 %" in text and "SM - %" in text
    assert "memcheck clean, racecheck FAILED" in text
