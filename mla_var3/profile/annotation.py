"""Annotation mode: NVTX phase ranges, a Kineto (CUPTI) trace of a callable, and its summary.

``phase(name)`` marks a phase (inputs, compile, launch) as an NVTX range (seen by ``ncu
--nvtx`` and Nsight tools) and as a ``torch.profiler`` record (seen in the Chrome trace); it
is a plain no-op-cost context without CUDA. ``trace_callable`` runs a callable under
``torch.profiler`` and saves a Chrome trace JSON: our GPU machine has no ``cupti-python``
(so the DSL's ``CuptiProfiler`` fails there) and no Nsight Systems, but Kineto's CUPTI works.
``summarize_trace`` turns a trace into per-kernel launches and durations and the idle gaps
between consecutive kernels on each stream.

Kineto writes complete events (``"ph": "X"``) with ``ts`` and ``dur`` in microseconds; GPU
kernels have ``"cat": "kernel"`` and ``args.device`` / ``args.stream``.
"""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any


# --8<-- [start:phase]
@contextmanager
def phase(name: str) -> Iterator[None]:
    """An NVTX range plus a profiler record named ``name``; only the record without CUDA."""
    import torch

    with torch.profiler.record_function(name):
        if torch.cuda.is_available():
            with torch.cuda.nvtx.range(name):
                yield
        else:
            yield


# --8<-- [end:phase]


def trace_callable(fn: Callable[[], object], path: str | Path, *, iterations: int = 10, warmup: int = 2) -> Path:
    """Run ``fn`` ``warmup`` times untraced, then ``iterations`` times under ``torch.profiler``
    (CPU, and CUDA when present), each inside ``phase("launch")``; save the Chrome trace."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    cuda = torch.cuda.is_available()
    for _ in range(warmup):
        fn()
    if cuda:
        torch.cuda.synchronize()
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    with profile(activities=activities) as prof:
        for _ in range(iterations):
            with phase("launch"):
                fn()
        if cuda:
            torch.cuda.synchronize()
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    prof.export_chrome_trace(str(out))
    return out


@dataclass(frozen=True)
class KernelStats:
    """One kernel name's launches in a trace (durations in µs)."""

    name: str
    launches: int
    total_us: float
    median_us: float
    min_us: float
    max_us: float


@dataclass(frozen=True)
class StreamGaps:
    """Idle time between consecutive kernels on one stream: next start minus previous end (µs).

    A negative gap is an overlap (programmatic dependent launch lets the next kernel start
    before the previous one ends).
    """

    device: int
    stream: int
    kernels: int
    gaps: int
    median_gap_us: float | None
    max_gap_us: float | None
    total_gap_us: float
    busy_us: float
    span_us: float


@dataclass(frozen=True)
class TraceSummary:
    """Per-kernel statistics (largest total time first) and per-stream launch gaps."""

    kernels: list[KernelStats]
    streams: list[StreamGaps]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def format_table(self) -> str:
        """A plain-text table for the terminal: one line per kernel, then one per stream."""
        lines = [f"{'kernel':<60} {'launches':>8} {'total µs':>10} {'median µs':>10}"]
        for k in self.kernels:
            name = k.name if len(k.name) <= 60 else k.name[:57] + "..."
            lines.append(f"{name:<60} {k.launches:>8} {k.total_us:>10.1f} {k.median_us:>10.2f}")
        for s in self.streams:
            median = f"{s.median_gap_us:.2f}" if s.median_gap_us is not None else "-"
            lines.append(
                f"device {s.device} stream {s.stream}: {s.kernels} kernels, busy {s.busy_us:.1f} of "
                f"{s.span_us:.1f} µs, gap median {median} µs, total {s.total_gap_us:.1f} µs"
            )
        return "\n".join(lines)


def _kernel_events(trace: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [
        e
        for e in trace.get("traceEvents", [])
        if e.get("ph") == "X" and str(e.get("cat", "")).lower() == "kernel" and "dur" in e
    ]


def summarize_trace(trace: Mapping[str, Any] | str | Path) -> TraceSummary:
    """Summarize the GPU kernels of a Chrome trace (a parsed dict or a JSON file)."""
    data = trace if isinstance(trace, Mapping) else json.loads(Path(trace).read_text())
    events = _kernel_events(data)
    by_name: dict[str, list[float]] = defaultdict(list)
    by_stream: dict[tuple[int, int], list[tuple[float, float]]] = defaultdict(list)
    for e in events:
        args = e.get("args", {})
        start, dur = float(e["ts"]), float(e["dur"])
        by_name[e["name"]].append(dur)
        key = (int(args.get("device", e.get("pid", 0))), int(args.get("stream", e.get("tid", 0))))
        by_stream[key].append((start, start + dur))
    kernels = [
        KernelStats(name, len(d), sum(d), statistics.median(d), min(d), max(d)) for name, d in by_name.items()
    ]
    kernels.sort(key=lambda k: -k.total_us)
    return TraceSummary(kernels, [_gaps(dev, stream, spans) for (dev, stream), spans in sorted(by_stream.items())])


def _gaps(device: int, stream: int, spans: list[tuple[float, float]]) -> StreamGaps:
    spans = sorted(spans)
    gaps = [nxt[0] - prev[1] for prev, nxt in zip(spans, spans[1:], strict=False)]
    return StreamGaps(
        device=device,
        stream=stream,
        kernels=len(spans),
        gaps=len(gaps),
        median_gap_us=statistics.median(gaps) if gaps else None,
        max_gap_us=max(gaps) if gaps else None,
        total_gap_us=sum(gaps),
        busy_us=sum(end - start for start, end in spans),
        span_us=max(end for _, end in spans) - spans[0][0],
    )
