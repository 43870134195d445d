"""The gap between the two kernels of a PDL pair, from a torch.profiler (Kineto/CUPTI) trace.

Timing the pair as one unit says whether PDL pays; a trace says where: for each pair, the
**gap** is the consumer's start minus the producer's end (negative: the consumer's first CTAs
started while the producer still ran), the **span** the consumer's end minus the producer's
start. :func:`trace_pairs` runs ``pairs`` launches of a variant on this GPU, queued behind a GPU
sleep so the host's launch rate does not set the gaps, under ``torch.profiler``, and writes the
Chrome trace; :func:`pair_gaps` reads any such trace (CPU-only, tested on synthetic traces).

On the H200::

    python -m mla_var3.kernel.cute_python.launch.pdl.trace pdl_pair pdl_pair_serialized --m 4096 --n 4096

prints one JSON line per variant (median, p10 and p90 of gap and span, in us). The consumer's
reported duration includes the time its early CTAs sat in ``griddepcontrol.wait``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

PRODUCER, CONSUMER = "scale_kernel", "dot_kernel"  # in the DSL's kernel names: kernel_cutlass_<method>_...
SLEEP_CYCLES = 200_000_000  # ~0.1 s at <= 2 GHz: covers the host's enqueue of the traced launches


@dataclass(frozen=True)
class PairGaps:
    """Per-pair gap and span (us), in launch order."""

    gaps_us: list[float]
    spans_us: list[float]

    def summary(self) -> dict[str, Any]:
        def stats(values: list[float]) -> dict[str, float]:
            deciles = statistics.quantiles(values, n=10) if len(values) > 1 else values * 9
            return {"median": statistics.median(values), "p10": deciles[0], "p90": deciles[-1]}

        return {"pairs": len(self.gaps_us), "gap_us": stats(self.gaps_us), "span_us": stats(self.spans_us)}

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def pair_gaps(trace: Mapping[str, Any] | str | Path) -> PairGaps:
    """Each producer kernel matched with the next consumer kernel on its stream, from a Chrome trace."""
    data = trace if isinstance(trace, Mapping) else json.loads(Path(trace).read_text())
    kernels = sorted(
        (float(e["ts"]), float(e["ts"]) + float(e["dur"]), str(e["name"]))
        for e in data.get("traceEvents", [])
        if e.get("ph") == "X" and str(e.get("cat", "")).lower() == "kernel" and "dur" in e
    )
    gaps, spans = [], []
    producer: tuple[float, float] | None = None
    for start, end, name in kernels:
        if PRODUCER in name:
            producer = (start, end)
        elif CONSUMER in name and producer is not None:
            gaps.append(start - producer[1])
            spans.append(end - producer[0])
            producer = None
    if not gaps:
        raise ValueError(f"no {PRODUCER} -> {CONSUMER} pair among the trace's {len(kernels)} kernels")
    return PairGaps(gaps, spans)


def trace_pairs(kernel: str, shape: dict[str, int], pairs: int, out: Path) -> Path:
    """Trace ``pairs`` launches of the PDL pair variant ``kernel`` at ``shape`` on this GPU; the trace's path."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    from mla_var3.kernel.arch import Arch
    from mla_var3.kernel.compile_cache import compile_cached
    from mla_var3.kernel.registry import get_plan

    plan = get_plan(kernel)()
    plan.check_shape(shape)
    config = plan.default_config()
    compiled = compile_cached(plan, config, shape, Arch.parse(plan.archs[0])).compiled
    inputs = plan.prepare_inputs(shape)
    launch = plan.plan(config).bind(compiled, inputs, plan.allocate_outputs(inputs, shape))
    for _ in range(3):  # warm: module load, first-touch of the buffers
        launch()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        torch.cuda._sleep(SLEEP_CYCLES)
        for _ in range(pairs):
            launch()
        torch.cuda.synchronize()
    prof.export_chrome_trace(str(out))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="gap between the PDL pair's kernels, from a torch.profiler trace"
    )
    parser.add_argument("kernels", nargs="+", help="pdl_pair, pdl_pair_wait_first, pdl_pair_serialized")
    parser.add_argument("--m", type=int, default=4096)
    parser.add_argument("--n", type=int, default=4096)
    parser.add_argument("--pairs", type=int, default=50)
    args = parser.parse_args(argv)
    for kernel in args.kernels:
        path = Path(tempfile.gettempdir()) / f"{kernel}-m{args.m}-n{args.n}-trace.json"
        gaps = pair_gaps(trace_pairs(kernel, {"m": args.m, "n": args.n}, args.pairs, path))
        print(json.dumps({"kernel": kernel, "m": args.m, "n": args.n, **gaps.summary()}))
    return 0


__all__ = ["CONSUMER", "PRODUCER", "PairGaps", "main", "pair_gaps", "trace_pairs"]

if __name__ == "__main__":
    raise SystemExit(main())
