"""Trace summary from a Kineto-format fixture; NVTX phases and trace capture on the CPU."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mla_var3.profile.annotation import phase, summarize_trace, trace_callable

FIXTURE = Path(__file__).parent / "fixtures" / "profile" / "kineto_trace.json"
CUTE = "kernel_cutlass_kernel_mla_var3kernelcute_pythonelementwiseaddvectorizedkernelVectorizedAdd_object_at__"


def test_per_kernel_statistics() -> None:
    summary = summarize_trace(FIXTURE)
    cute, fill = summary.kernels
    assert cute.name.startswith(CUTE) and fill.name.startswith("void at::native::vectorized_elementwise_kernel")
    assert (cute.launches, fill.launches) == (3, 2)
    assert cute.total_us == pytest.approx(15.0, abs=1e-3)
    assert cute.median_us == pytest.approx(5.0, abs=1e-3)
    assert (cute.min_us, cute.max_us) == (pytest.approx(4.9), pytest.approx(5.1))
    assert fill.median_us == pytest.approx(2.6, abs=1e-3)


def test_gaps_between_launches_per_stream() -> None:
    main, side = summarize_trace(FIXTURE).streams
    assert (main.device, main.stream, main.kernels, main.gaps) == (0, 7, 4, 3)
    assert main.median_gap_us == pytest.approx(5.6, abs=1e-3)
    assert main.max_gap_us == pytest.approx(25.4, abs=1e-3)
    assert main.total_gap_us == pytest.approx(32.8, abs=1e-3)
    assert main.busy_us == pytest.approx(18.2, abs=1e-3)
    assert main.span_us == pytest.approx(51.0, abs=1e-3)
    assert (side.stream, side.kernels, side.gaps, side.median_gap_us) == (13, 1, 0, None)


def test_overlapping_kernels_give_a_negative_gap() -> None:
    events = [
        {"ph": "X", "cat": "kernel", "name": "a", "ts": 0.0, "dur": 10.0, "args": {"device": 0, "stream": 7}},
        {"ph": "X", "cat": "kernel", "name": "b", "ts": 8.0, "dur": 5.0, "args": {"device": 0, "stream": 7}},
    ]
    [stream] = summarize_trace({"traceEvents": events}).streams
    assert stream.median_gap_us == pytest.approx(-2.0)


def test_table_and_dict() -> None:
    summary = summarize_trace(json.loads(FIXTURE.read_text()))
    table = summary.format_table()
    assert "device 0 stream 7: 4 kernels" in table and " 3 " in table.splitlines()[1]
    assert summary.to_dict()["streams"][0]["gaps"] == 3


def test_phase_and_trace_capture_on_cpu(tmp_path: Path) -> None:
    import torch

    calls = []
    with phase("inputs"):
        calls.append("inputs")

    def work() -> None:
        calls.append(torch.ones(4).sum().item())

    path = trace_callable(work, tmp_path / "trace.json", iterations=3, warmup=1)
    trace = json.loads(path.read_text())
    launches = [e for e in trace["traceEvents"] if e.get("name") == "launch" and e.get("ph") == "X"]
    assert len(launches) == 3 and len(calls) == 5
    assert summarize_trace(path).kernels == []
