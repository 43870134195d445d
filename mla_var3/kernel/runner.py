"""Run one plan: pick the arch, compile (cached), analyse, then -- on a matching GPU -- check and time.

Returns a plain :class:`RunResult` of JSON-ready values built from the harness's dataclasses
(``Timing``, ``CheckResult``, ``Ceiling``, ``ClockSample``); the CLI prints it and the evidence
layer reads it into its typed record. A kernel whose arch does not match the GPU is never
launched: it is compiled for its own arch instead and the result says so.

Naming: ``config`` is the kernel's tuning (the workflow's ``plan(config)``), ``shape_key`` the
shape key that evidence records call their ``config``; the record model maps the two in one
place (:func:`mla_var3.evidence.provenance.record_from_run`).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import asdict, dataclass, field
from typing import Any

from mla_var3.kernel.arch import Arch, cc_name, check_supported, runnable_arch
from mla_var3.kernel.device import GpuInfo, detect_gpu
from mla_var3.kernel.errors import NoGpuError
from mla_var3.kernel.plan import Config, KernelPlan, Shape, config_slug, shape_slug
from mla_var3.profile.roofline import roofline_for_dtype


@dataclass
class RunRequest:
    shape: Shape
    config: Config | None = None
    arch: str | None = None
    compile_only: bool = False
    check: bool = False
    bench: bool = True
    iters: int = 200
    warmup: int = 20


@dataclass
class RunResult:
    kernel: str
    layer: str
    backend: str
    dtype: str
    shape: Shape
    shape_key: str
    config: Config
    config_key: str
    arch: str
    mode: str  # "run" or "compile"
    mode_reason: str
    data: str
    date: str
    device: dict[str, Any] | None
    compile: dict[str, Any]
    analysis: dict[str, Any] | None = None
    check: dict[str, Any] | None = None
    timing: dict[str, Any] | None = None
    ceilings: list[dict[str, Any]] | None = None
    clocks: dict[str, Any] | None = None
    roofline: dict[str, Any] | None = None
    flops: int = 0
    bytes: int = 0
    notes: list[str] = field(default_factory=list)
    profile: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def choose_target(plan: type[KernelPlan], requested: str | None, compile_only: bool, gpu: GpuInfo | None) -> tuple[Arch, str, str]:
    """(arch, mode, reason) by the arch rule (mla_var3/kernel/arch.py; docs/contributing/evidence-model.md); raises for unsupported archs or a missing GPU."""
    target = check_supported(plan.name, plan.archs, requested) if requested else None
    if compile_only:
        if target is None:
            target = (runnable_arch(plan.archs, gpu.cc) if gpu else None) or Arch.parse(plan.archs[0])
        return target, "compile", "--compile-only"
    if gpu is None:
        arch = target.name if target else plan.archs[0]
        raise NoGpuError(
            f"no CUDA GPU or driver found: cannot run {plan.name!r}; "
            f"compile it without a GPU with --compile-only --arch {arch}"
        )
    if target is None:
        target = runnable_arch(plan.archs, gpu.cc)
        if target is None:
            target = Arch.parse(plan.archs[0])
    if not target.runs_on(gpu.cc):
        reason = (
            f"arch mismatch: {plan.name} needs {target.name}, this GPU is {gpu.name} ({cc_name(gpu.cc)}); "
            f"not launching, compiled for {target.name} instead"
        )
        return target, "compile", reason
    return target, "run", f"{gpu.name} ({cc_name(gpu.cc)}) runs {target.name}"


def run_plan(plan: KernelPlan, request: RunRequest) -> RunResult:
    """Compile ``plan`` for its target and, in run mode, check and time it."""
    plan.check_shape(request.shape)
    gpu = detect_gpu()
    arch, mode, reason = choose_target(type(plan), request.arch, request.compile_only, gpu)
    from mla_var3.kernel.compile_cache import compile_cached

    config = request.config or plan.default_config()
    flops, nbytes = plan._algorithmic_flops_bytes(request.shape)
    compiled = compile_cached(plan, config, request.shape, arch, need_function=(mode == "run"))
    result = RunResult(
        kernel=plan.name,
        layer=plan.layer,
        backend=plan.backend,
        dtype=plan.dtype,
        shape=dict(request.shape),
        shape_key=shape_slug(request.shape, plan.dtype),
        config=config,
        config_key=config_slug(config),
        arch=arch.name,
        mode=mode,
        mode_reason=reason,
        data=plan.data_distribution,
        date=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        device=gpu.to_dict() if gpu else None,
        compile=compiled.timing_dict(),
        analysis=compiled.analysis_dict(),
        flops=flops,
        bytes=nbytes,
    )
    if mode == "run":
        _run_on_gpu(plan, request, compiled.compiled, result, gpu)
    return result


def _run_on_gpu(plan: KernelPlan, request: RunRequest, compiled: Any, result: RunResult, gpu: GpuInfo) -> None:
    import torch

    from mla_var3.kernel.bench import input_sets_for_cold_l2, measure_ceilings, nvml_sample, time_launches
    from mla_var3.kernel.check import compare, poison

    kernel = plan.plan(result.config)
    inputs = plan.prepare_inputs(request.shape)
    outputs = plan.allocate_outputs(inputs, request.shape)
    if request.check:
        poison(outputs)
        kernel.launch(compiled, inputs, outputs)
        torch.cuda.synchronize()
        check = compare(outputs, plan.reference_fn(inputs), plan.tolerance())
        result.check = check.to_dict()
        if not check.passed:
            result.notes.append("check failed: timing skipped")
            return
    if not request.bench:
        if not request.check:  # one plain launch: what ncu or a sanitizer measures
            kernel.launch(compiled, inputs, outputs)
            torch.cuda.synchronize()
        return
    set_bytes = sum(t.numel() * t.element_size() for t in (*inputs.values(), *outputs.values()))
    sets = input_sets_for_cold_l2(set_bytes, gpu.l2_bytes)
    rotation = [(inputs, outputs)] + [
        (plan.prepare_inputs(request.shape), plan.allocate_outputs(inputs, request.shape)) for _ in range(sets - 1)
    ]
    clocks_before = nvml_sample(gpu.uuid)
    launches = [kernel.bind(compiled, *io) for io in rotation]
    timing = time_launches(lambda i: launches[i](), sets, iters=request.iters, warmup=request.warmup)
    clocks_after = nvml_sample(gpu.uuid)
    ceilings = measure_ceilings()
    result.timing = timing.to_dict()
    result.ceilings = [asdict(c) for c in ceilings]
    result.clocks = {"before": asdict(clocks_before), "after": asdict(clocks_after)}
    result.roofline = roofline_for_dtype(result.flops, result.bytes, timing.median_us * 1e-6, ceilings, plan.dtype).to_dict()

