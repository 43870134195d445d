"""The verification runner: re-run stale evidence, each kernel in its own subprocess with a timeout.

On a GPU whose arch matches a kernel: run, check and time it. Otherwise: compile it for its
target arch and record resources and SASS. A kernel that raises, hangs or dies is recorded as
failed in the summary and the runner goes on; records already written are never touched by
a failure.
"""

from __future__ import annotations

import fnmatch
import json
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from mla_var3.evidence.provenance import build_record, git_sha, kernel_source_hash
from mla_var3.evidence.schema import EvidenceError, load, passed
from mla_var3.evidence.store import record_path, records_for, save
from mla_var3.evidence.targets import Target, parse_config
from mla_var3.kernel.arch import Arch, runnable_arch
from mla_var3.kernel.device import GpuInfo, detect_gpu
from mla_var3.kernel.errors import UserError
from mla_var3.kernel.registry import get_plan


@dataclass
class Outcome:
    kernel: str
    config: str
    status: str  # run-verified | compile-verified | fresh | failed | skipped
    reason: str
    seconds: float = 0.0
    path: str | None = None


def expected_slug(kernel: str, gpu: GpuInfo | None) -> tuple[str, Arch, str]:
    """(device slug, arch, mode) this machine would verify ``kernel`` as."""
    plan = get_plan(kernel)
    if gpu is not None:
        arch = runnable_arch(plan.archs, gpu.cc)
        if arch is not None:
            return gpu.slug, arch, "run"
    arch = Arch.parse(plan.archs[0])
    return f"compile-{arch.name}", arch, "compile"


def _command(kernel: str, config: str, arch: Arch, mode: str, out: Path) -> list[str]:
    shape, dtype = parse_config(config)
    cmd = [sys.executable, "-m", "mla_var3.kernel", kernel, f"--dtype={dtype}", f"--json={out}"]
    cmd += [f"--{k}={v}" for k, v in shape.items()]
    cmd += ["--check"] if mode == "run" else ["--compile-only", f"--arch={arch.name}"]
    return cmd


def _died(proc: subprocess.CompletedProcess[str]) -> str:
    if proc.returncode < 0:
        return f"process died with {signal.Signals(-proc.returncode).name}"
    lines = (proc.stderr or proc.stdout).strip().splitlines()
    return f"exit {proc.returncode}: {lines[-1] if lines else 'no output'}"


def verify_one(target: Target, gpu: GpuInfo | None, force: bool, timeout: float, base: Path | None) -> Outcome:
    start = time.perf_counter()
    try:
        slug, arch, mode = expected_slug(target.kernel, gpu)
        parse_config(target.config)
        source_hash = kernel_source_hash(target.kernel)
    except (UserError, EvidenceError) as exc:
        return Outcome(target.kernel, target.config, "failed", str(exc))
    path = record_path(target.kernel, target.config, slug, base)
    if not force and mode == "compile":
        # A fresh run from a GPU machine outranks a compile this machine could add.
        for other in records_for(target.kernel, target.config, base):
            if other["mode"] == "run" and other["source_hash"] == source_hash and passed(other):
                return Outcome(target.kernel, target.config, "fresh", f"run-verified on {other['device']['name']}")
    if not force and path.exists():
        try:
            old = load(path)
        except EvidenceError as exc:
            old = None
            print(f"  replacing a malformed record: {exc}", flush=True)
        if old and old["source_hash"] == source_hash and passed(old):
            return Outcome(target.kernel, target.config, "fresh", "source hash matches", path=str(path))
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "result.json"
        try:
            proc = subprocess.run(
                _command(target.kernel, target.config, arch, mode, out), capture_output=True, text=True, timeout=timeout
            )
        except subprocess.TimeoutExpired:
            return Outcome(target.kernel, target.config, "failed", f"timed out after {timeout:.0f}s", time.perf_counter() - start)
        if not out.exists():
            return Outcome(target.kernel, target.config, "failed", _died(proc), time.perf_counter() - start)
        result = json.loads(out.read_text())
    record = build_record(result, source_hash, git_sha())
    written = save(record, base)
    seconds = time.perf_counter() - start
    if not passed(record):
        return Outcome(target.kernel, target.config, "failed", "correctness check failed (record written)", seconds, str(written))
    status = "run-verified" if record["mode"] == "run" else "compile-verified"
    where = record["device"].get("name") or record["arch"]
    return Outcome(target.kernel, target.config, status, f"on {where}", seconds, str(written))


def verify(
    targets: list[Target], force: bool = False, only: str | None = None, timeout: float = 600.0, base: Path | None = None
) -> list[Outcome]:
    """Verify every target (``only``: a glob on ``kernel/config``), printing progress."""
    gpu = detect_gpu()
    chosen = [t for t in targets if only is None or fnmatch.fnmatch(f"{t.kernel}/{t.config}", only)]
    outcomes: list[Outcome] = []
    print(f"verifying {len(chosen)} of {len(targets)} targets on {gpu.name if gpu else 'a machine without a GPU'}", flush=True)
    for i, target in enumerate(chosen, 1):
        print(f"[{i}/{len(chosen)}] {target.kernel} {target.config} ...", end=" ", flush=True)
        outcome = verify_one(target, gpu, force, timeout, base)
        print(f"{outcome.status} ({outcome.reason}, {outcome.seconds:.1f}s)", flush=True)
        outcomes.append(outcome)
    return outcomes


def summary_table(outcomes: list[Outcome]) -> str:
    rows = ["| kernel | config | status | reason |", "|---|---|---|---|"]
    rows += [f"| {o.kernel} | {o.config} | {o.status} | {o.reason} |" for o in outcomes]
    counts: dict[str, int] = {}
    for o in outcomes:
        counts[o.status] = counts.get(o.status, 0) + 1
    return "\n".join(rows) + "\n\n" + ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))


def profile_one(target: Target, prof_type: str, timeout: float, base: Path | None = None) -> Outcome:
    """Profile a verified kernel (``ncu``, ``sanitize``, ``annotation``) and add the section to its run record."""
    from mla_var3.evidence.store import merge_section

    start = time.perf_counter()
    gpu = detect_gpu()
    slug, arch, mode = expected_slug(target.kernel, gpu)
    path = record_path(target.kernel, target.config, slug, base)
    if mode != "run" or not path.exists():
        return Outcome(target.kernel, target.config, "skipped", f"needs a run record on a GPU of its arch ({path.name})")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "result.json"
        cmd = _command(target.kernel, target.config, arch, mode, out) + [f"--prof_type={prof_type}", "--no-bench"]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return Outcome(target.kernel, target.config, "failed", f"{prof_type} timed out after {timeout:.0f}s")
        if not out.exists():
            return Outcome(target.kernel, target.config, "failed", _died(proc), time.perf_counter() - start)
        profile = json.loads(out.read_text()).get("profile") or {}
    for section, payload in profile.items():
        merge_section(path, section, payload | {"git_sha": git_sha()})
    ok = all(p.get("passed", True) for p in profile.values())
    status = "profiled" if ok and profile else "failed"
    return Outcome(target.kernel, target.config, status, ", ".join(profile) or "no profile section", time.perf_counter() - start, str(path))
