"""Timing and ceilings: per-iteration CUDA events, median and spread, cold L2, measured rooflines.

Every launch is timed by its own pair of CUDA events after a warm-up. For a cold L2 the
runner rotates through enough independent input sets to cover ~3x the L2 (the idea of
``cutlass.testing.get_workspace_count``; its ``benchmark`` returns only a mean, so it is not
used for the number). Ceilings -- copy bandwidth and the cuBLAS matmul rate -- are measured
in the same process, so a result is always compared with the GPU as it was during that run.
"""

from __future__ import annotations

import statistics
import subprocess
from collections.abc import Callable
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Timing:
    median_us: float
    p10_us: float
    p90_us: float
    mean_us: float
    n: int
    warmup: int
    input_sets: int
    method: str = "CUDA events per launch, launches queued behind a GPU sleep; median; cold L2 by rotating input sets"

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Ceilings:
    copy_bytes_per_s: float  # read + write, large device-to-device copy
    matmul_flops_per_s: float  # cuBLAS bf16 8192^3 on randn
    copy_method: str = "torch dst.copy_(src), 1 GiB, median of 100 after 50 warm-up, right after the kernel; bytes = read + write"
    matmul_method: str = "torch.matmul bf16 8192^3 on randn, median of 100 after 50 warm-up, right after the kernel"

    def to_dict(self) -> dict:
        return asdict(self)


def percentile(values: list[float], q: float) -> float:
    """Linear-interpolated percentile (q in [0, 100]) of a non-empty list."""
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100
    lo, hi = int(pos), min(int(pos) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def input_sets_for_cold_l2(bytes_per_set: int, l2_bytes: int, cap: int = 64) -> int:
    """How many independent input sets to rotate so each launch finds its inputs out of L2."""
    if bytes_per_set <= 0:
        return 1
    return max(1, min(cap, -(-3 * l2_bytes // bytes_per_set)))


def time_launches(
    launch: Callable[[int], None], input_sets: int, iters: int = 200, warmup: int = 20, warmup_s: float = 0.5
) -> Timing:
    """Time ``launch(set_index)`` with one event pair per launch; returns median and spread in us.

    The timed launches are queued behind a GPU sleep long enough to cover their host-side
    enqueue time, so the GPU runs them back to back and each event pair measures the kernel,
    not the host's launch overhead (which dominates kernels of a few microseconds).
    """
    import time

    import torch

    host_start = time.perf_counter()
    for i in range(warmup):
        launch(i % input_sets)
    host_per_launch = (time.perf_counter() - host_start) / max(warmup, 1)
    torch.cuda.synchronize()
    # Then warm up for at least warmup_s of GPU time, so clocks settle at the power cap.
    done, start = warmup, time.perf_counter()
    while time.perf_counter() - start < warmup_s:
        for _ in range(10):
            launch(done % input_sets)
            done += 1
        torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    # Cover the enqueue time of all timed launches (plus their events) twice over, at <= 2 GHz.
    torch.cuda._sleep(int(min(2.0, 2 * iters * (host_per_launch + 20e-6)) * 2e9))
    for i in range(iters):
        starts[i].record()
        launch(i % input_sets)
        ends[i].record()
    torch.cuda.synchronize()
    us = [s.elapsed_time(e) * 1e3 for s, e in zip(starts, ends, strict=True)]
    return Timing(
        median_us=statistics.median(us),
        p10_us=percentile(us, 10),
        p90_us=percentile(us, 90),
        mean_us=statistics.fmean(us),
        n=iters,
        warmup=done,
        input_sets=input_sets,
    )


def measure_ceilings(iters: int = 100, warmup: int = 50) -> Ceilings:
    """Copy bandwidth and cuBLAS bf16 rate of this GPU, now.

    The runner calls this right after timing the kernel, with a warm-up as long as the
    kernel's, so both are measured at the same (power-capped, warm) clocks.
    """
    import torch

    n = 1 << 29  # 1 GiB of bf16
    src = torch.randn(n, device="cuda", dtype=torch.float32).to(torch.bfloat16)
    dst = torch.empty_like(src)
    copy = time_launches(lambda _: dst.copy_(src), 1, iters=iters, warmup=warmup)
    m = 8192
    a = torch.randn(m, m, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(m, m, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(m, m, device="cuda", dtype=torch.bfloat16)
    mm = time_launches(lambda _: torch.matmul(a, b, out=c), 1, iters=iters, warmup=warmup)
    return Ceilings(
        copy_bytes_per_s=2 * n * 2 / (copy.median_us * 1e-6),
        matmul_flops_per_s=2 * m**3 / (mm.median_us * 1e-6),
    )


def gpu_clocks() -> dict[str, float | str | None]:
    """SM and memory clocks (MHz) and the power draw, read through nvidia-smi, as found (never set)."""
    fields = "clocks.sm,clocks.mem,clocks.max.sm,power.draw,temperature.gpu"
    try:
        out = subprocess.run(
            ["nvidia-smi", f"--query-gpu={fields}", "--format=csv,noheader,nounits", "-i", "0"],
            capture_output=True,
            text=True,
            timeout=20,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return {"sm_mhz": None, "mem_mhz": None, "max_sm_mhz": None, "power_w": None, "temp_c": None}
    vals = [v.strip() for v in out.splitlines()[0].split(",")]

    def num(v: str) -> float | None:
        try:
            return float(v)
        except ValueError:
            return None

    return dict(zip(("sm_mhz", "mem_mhz", "max_sm_mhz", "power_w", "temp_c"), map(num, vals), strict=True))
