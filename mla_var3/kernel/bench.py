"""Timing and ceilings: per-launch CUDA events, median and spread, cold or warm L2, measured rooflines, NVML.

Every launch is timed by its own pair of CUDA events after a warm-up. For a cold L2 (the
default) the runner rotates through enough independent input sets to cover ~3x the L2 (the idea
of ``cutlass.testing.get_workspace_count``; its ``benchmark`` returns only a mean, so it is not
used for the number). A warm L2 (:data:`WARM_L2`, asked for by a comparison group's member, to
measure L2-resident data on purpose) times one input set, touched by an untimed launch just
before the timed ones; the timing's ``method`` says which. Ceilings -- copy bandwidth and the
cuBLAS matmul rate per dtype -- are measured in the same process, so a result is always compared
with the GPU as it was during that run. Clocks, power and temperature are read through NVML
(``nvidia-ml-py``), never set; without NVML every reading is ``None``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from functools import cache
from typing import Any

import numpy as np

from mla_var3.profile.roofline import COMPUTE, MEMORY, Ceiling

TIMING_METHOD = "CUDA events per launch, launches queued behind a GPU sleep; median; cold L2 by rotating input sets"
COLD_L2, WARM_L2 = "cold", "warm"
L2_MODES = (COLD_L2, WARM_L2)
WARM_L2_METHOD = (
    "CUDA events per launch, launches queued behind a GPU sleep; median; warm L2: one input set, touched by an "
    "untimed launch right before the timed ones (L2-resident where it fits)"
)
# The dtypes whose cuBLAS matmul rate is measured as a compute ceiling (the one of a kernel's own
# dtype is its roofline's roof; fp8 is e4m3 through torch._scaled_mm).
MATMUL_CEILING_DTYPES = ("bfloat16", "float16", "float8_e4m3fn")
COPY_METHOD = (
    "same-run device-to-device copy, torch dst.copy_(src) of 1 GiB, median of 100 launches; bytes = read + write. "
    "A read-mostly kernel can exceed it: a copy both reads and writes, and HBM turns around between the two"
)
MATMUL_SIZE = 8192


@dataclass(frozen=True)
class Timing:
    median_us: float
    p10_us: float
    p90_us: float
    mean_us: float
    n: int
    warmup: int
    input_sets: int
    method: str = TIMING_METHOD

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class ClockSample:
    """What NVML read at one moment: SM and memory clock (MHz), power (W), temperature (C)."""

    sm_mhz: float | None = None
    mem_mhz: float | None = None
    max_sm_mhz: float | None = None
    power_w: float | None = None
    temp_c: float | None = None


def summarize(us: Sequence[float], warmup: int, input_sets: int, method: str = TIMING_METHOD) -> Timing:
    """Median, p10, p90 (numpy, linear interpolation) and mean of per-launch times in us."""
    values = np.asarray(us, dtype=np.float64)
    if values.size == 0:
        raise ValueError("no timed launches to summarize")
    p10, median, p90 = np.percentile(values, [10, 50, 90])
    return Timing(float(median), float(p10), float(p90), float(values.mean()), int(values.size), warmup, input_sets, method)


def input_sets_for_cold_l2(bytes_per_set: int, l2_bytes: int, cap: int = 64) -> int:
    """How many independent input sets to rotate so each launch finds its inputs out of L2."""
    if bytes_per_set <= 0:
        return 1
    return max(1, min(cap, -(-3 * l2_bytes // bytes_per_set)))


def input_sets_for_l2(l2: str, bytes_per_set: int, l2_bytes: int) -> int:
    """Input sets to rotate for an L2 that is ``cold`` (:func:`input_sets_for_cold_l2`) or ``warm`` (one)."""
    if l2 not in L2_MODES:
        raise ValueError(f"unknown L2 mode {l2!r}; one of {', '.join(L2_MODES)}")
    return 1 if l2 == WARM_L2 else input_sets_for_cold_l2(bytes_per_set, l2_bytes)


def warm_up(launch: Callable[[int], None], input_sets: int, launches: int, seconds: float) -> tuple[int, float]:
    """``launches`` launches, then more for at least ``seconds`` of GPU time (clocks settle at the
    power cap); returns (launches done, host seconds per launch)."""
    import torch

    start = time.perf_counter()
    for i in range(launches):
        launch(i % input_sets)
    host_per_launch = (time.perf_counter() - start) / max(launches, 1)
    torch.cuda.synchronize()
    done, start = launches, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(10):
            launch(done % input_sets)
            done += 1
        torch.cuda.synchronize()
    return done, host_per_launch


def event_times_us(launch: Callable[[int], None], input_sets: int, iters: int, host_per_launch: float, first: int = 0) -> list[float]:
    """Per-launch times (us) of ``iters`` launches rotating over ``input_sets`` from set ``first``.

    The launches are queued behind a GPU sleep long enough to cover their host-side enqueue
    time, so the GPU runs them back to back and each event pair measures the kernel, not the
    host's launch overhead (which dominates kernels of a few microseconds).
    """
    import torch

    starts = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    # Cover the enqueue time of all timed launches (plus their events) twice over, at <= 2 GHz.
    torch.cuda._sleep(int(min(2.0, 2 * iters * (host_per_launch + 20e-6)) * 2e9))
    for i in range(iters):
        starts[i].record()
        launch((first + i) % input_sets)
        ends[i].record()
    torch.cuda.synchronize()
    return [s.elapsed_time(e) * 1e3 for s, e in zip(starts, ends, strict=True)]


def time_launches(
    launch: Callable[[int], None], input_sets: int, iters: int = 200, warmup: int = 20, warmup_s: float = 0.5
) -> Timing:
    """Time ``launch(set_index)`` with one event pair per launch after a warm-up; median and spread in us."""
    done, host_per_launch = warm_up(launch, input_sets, warmup, warmup_s)
    return summarize(event_times_us(launch, input_sets, iters, host_per_launch), done, input_sets)


def _copy_launch(n: int) -> Callable[[int], None]:
    import torch

    src = torch.randn(n, device="cuda", dtype=torch.float32).to(torch.bfloat16)
    dst = torch.empty_like(src)
    return lambda _: dst.copy_(src)


def _matmul_launch(dtype: str) -> Callable[[int], None]:
    import torch

    m = MATMUL_SIZE
    if dtype == "float8_e4m3fn":
        a = torch.randn(m, m, device="cuda").to(torch.float8_e4m3fn)
        b = torch.randn(m, m, device="cuda").to(torch.float8_e4m3fn).t()  # column-major, as cuBLASLt wants
        one = torch.ones((), device="cuda")
        return lambda _: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
    torch_dtype = getattr(torch, dtype)
    a = torch.randn(m, m, device="cuda", dtype=torch_dtype)
    b = torch.randn(m, m, device="cuda", dtype=torch_dtype)
    c = torch.empty(m, m, device="cuda", dtype=torch_dtype)
    return lambda _: torch.matmul(a, b, out=c)


def measure_ceilings(iters: int = 100, warmup: int = 50) -> list[Ceiling]:
    """Copy bandwidth and the cuBLAS matmul rate per dtype of this GPU, now.

    Called right after the timed kernels, with a warm-up as long as theirs, so the ceilings
    are measured at the same (power-capped, warm) clocks. A dtype this GPU or torch cannot
    multiply (fp8 before sm_89) is left out.
    """

    n = 1 << 29  # 1 GiB of bf16
    copy = time_launches(_copy_launch(n), 1, iters=iters, warmup=warmup)
    ceilings = [Ceiling("copy", MEMORY, 2 * n * 2 / (copy.median_us * 1e-6), COPY_METHOD)]
    for dtype in MATMUL_CEILING_DTYPES:
        try:
            mm = time_launches(_matmul_launch(dtype), 1, iters=iters, warmup=warmup)
        except (RuntimeError, TypeError) as exc:  # no fp8 GEMM on this GPU or torch
            print(f"  ceiling matmul_{dtype} not measured: {str(exc).splitlines()[0]}", flush=True)
            continue
        method = f"cuBLAS matmul {dtype} {MATMUL_SIZE}^3 on randn, median of {iters} launches after {warmup} warm-up, same run"
        ceilings.append(Ceiling(f"matmul_{dtype}", COMPUTE, 2 * MATMUL_SIZE**3 / (mm.median_us * 1e-6), method))
    return ceilings


@cache
def _nvml_handle(uuid: str | None) -> Any:
    """The NVML device of the GPU with ``uuid`` (torch's form, without ``GPU-``), else index 0; None without NVML."""
    try:
        import pynvml

        pynvml.nvmlInit()
        if uuid:
            try:
                return pynvml.nvmlDeviceGetHandleByUUID(f"GPU-{uuid}")
            except pynvml.NVMLError:
                pass
        return pynvml.nvmlDeviceGetHandleByIndex(0)
    except Exception:  # no nvidia-ml-py, no driver, no GPU: readings are None
        return None


def nvml_sample(uuid: str | None = None) -> ClockSample:
    """SM and memory clocks, max SM clock, power draw and temperature of the GPU, as found (never set)."""
    handle = _nvml_handle(uuid)
    if handle is None:
        return ClockSample()
    import pynvml

    def read(fn: Callable[[], float]) -> float | None:
        try:
            return float(fn())
        except pynvml.NVMLError:
            return None

    return ClockSample(
        sm_mhz=read(lambda: pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM)),
        mem_mhz=read(lambda: pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_MEM)),
        max_sm_mhz=read(lambda: pynvml.nvmlDeviceGetMaxClockInfo(handle, pynvml.NVML_CLOCK_SM)),
        power_w=read(lambda: pynvml.nvmlDeviceGetPowerUsage(handle) / 1000),
        temp_c=read(lambda: pynvml.nvmlDeviceGetTemperature(handle, pynvml.NVML_TEMPERATURE_GPU)),
    )
