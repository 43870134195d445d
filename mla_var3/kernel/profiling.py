"""``--prof_type`` modes: annotation (NVTX + torch.profiler trace), ncu, and compute-sanitizer.

ncu and sanitize re-run this same CLI for the chosen kernel and shape in a child process
under the tool, with timing off, so exactly the kernel's own launch is measured. Results
come back as plain dicts under ``RunResult.profile[<mode>]`` with their own date and shape;
the evidence layer files them as sections of the record. The sanitizer runs the shape the
user gave, else the plan's first check shape (small, with ragged tails), and says which.
ncu measures the one launch matching the plan's ``ncu_kernel_regex``; the environment variable
``MLA_VAR3_NCU_KERNEL_REGEX`` (``profile --kernel-regex``) overrides it for a kernel whose plan
cannot change without staling its records (the regex used is in the section's ``command``).
"""

from __future__ import annotations

import datetime as dt
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from mla_var3.kernel.plan import KernelPlan, Shape, shape_slug
from mla_var3.kernel.runner import RunRequest, RunResult, run_plan
from mla_var3.project import REPO_ROOT

NCU_KERNEL_REGEX_ENV = "MLA_VAR3_NCU_KERNEL_REGEX"
ALLOW_LIST = REPO_ROOT / "evidence" / "sanitizer-allow.yaml"
_STRIP = ("--prof_type", "--prof-type", "--json", "--iters", "--check", "--no_bench", "--no-bench")


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def child_command(plan: KernelPlan, argv: list[str], shape: Shape, extra: list[str]) -> list[str]:
    """This CLI again for ``plan``, without profiling/timing flags, at ``shape``, plus ``extra``."""
    kept = [a for a in argv if a.split("=", 1)[0] not in _STRIP and not a.startswith("--json")]
    kept = [a for a in kept if a.split("=", 1)[0].lstrip("-").replace("-", "_") not in shape]
    dims = [f"--{k}={v}" for k, v in shape.items()]
    return [sys.executable, "-m", "mla_var3.kernel", plan.name, *kept, *dims, "--no-bench", *extra]


def sanitize_shape(plan: KernelPlan, shape: Shape, shape_given: bool) -> tuple[Shape, str]:
    """The shape compute-sanitizer runs (slow: 10-100x), and why that one."""
    if shape_given or not plan.check_shapes:
        return shape, "the shape given" if shape_given else "the default shape (the plan declares no check shapes)"
    return dict(plan.check_shapes[0]), "the plan's first check shape (pass shape flags to choose another)"


def run_profiled(
    plan: KernelPlan, request: RunRequest, prof_type: str, argv: list[str], shape_given: bool = False
) -> RunResult:
    """Run the plan as usual, then profile it the way ``prof_type`` asks."""
    shape = request.shape
    why = ""
    if prof_type == "sanitize":
        shape, why = sanitize_shape(plan, shape, shape_given)
        request = RunRequest(shape=shape, config=request.config, arch=request.arch, check=True, bench=False)
    result = run_plan(plan, request)
    if why:
        result.notes.append(f"compute-sanitizer runs {shape_slug(shape, plan.dtype)}: {why}")
    if result.mode != "run":
        result.notes.append(f"--prof_type={prof_type} needs a run; {result.mode_reason}")
        return result
    profile: dict[str, Any]
    if prof_type == "annotation":
        profile = _annotation(plan, request, result)
    elif prof_type == "ncu":
        from mla_var3.profile.ncu import run_ncu

        regex = os.environ.get(NCU_KERNEL_REGEX_ENV) or plan.ncu_kernel_regex
        ncu = run_ncu(child_command(plan, argv, shape, []), kernel_regex=regex)
        profile = ncu.to_dict() | {"shape": shape, "clock_control": "none"}
    else:
        from mla_var3.profile.sanitizer import load_allow_list, run_sanitizer

        allow = load_allow_list(ALLOW_LIST) if ALLOW_LIST.exists() else []
        san = run_sanitizer(child_command(plan, argv, shape, ["--check"]), allow_list=allow)
        profile = san.to_dict() | {"shape": shape}
        if not san.passed:
            result.notes.append("compute-sanitizer found errors (see the sanitizer section)")
    result.profile = {_SECTION[prof_type]: profile | {"date": _now()}}
    return result


_SECTION = {"annotation": "annotation", "ncu": "ncu", "sanitize": "sanitizer"}


def _annotation(plan: KernelPlan, request: RunRequest, result: RunResult) -> dict[str, Any]:
    from mla_var3.kernel.compile_cache import compile_cached
    from mla_var3.profile.annotation import phase, summarize_trace, trace_callable

    with phase("compile"):
        compiled = compile_cached(plan, result.config, request.shape, result.arch).compiled
    with phase("inputs"):
        inputs = plan.prepare_inputs(request.shape)
        outputs = plan.allocate_outputs(inputs, request.shape)
    kernel = plan.plan(result.config)
    trace = Path(tempfile.gettempdir()) / f"{plan.name}-{result.shape_key}-trace.json"
    trace_callable(lambda: kernel.launch(compiled, inputs, outputs), trace, iterations=10)
    annotation: dict[str, Any] = {"trace": str(trace), "summary": summarize_trace(trace).to_dict()}
    with phase("timeline"):
        timeline = plan.record_timeline(request.shape, result.config)
    if timeline is not None:  # e.g. a warp-specialized kernel's in-kernel timeline: its spans, drawn by pages
        annotation["timeline"] = timeline
    return annotation
