"""The verification runner: re-run stale evidence, each piece of work in its own process with a timeout.

Kernels: on a GPU whose arch matches, run, check and time the kernel; otherwise compile it for
its target arch and record resources and SASS. Comparison groups (on a GPU that runs every
member): check each member in its own process, so a crash or hang names the member, then time
all members in one process, interleaved (:mod:`mla_var3.evidence.group_run`).

Every child runs in its own session and a timeout kills its whole process tree
(:func:`mla_var3.profile.process.run_tool`). A target that raises, hangs or dies is reported as
failed and the runner goes on; records already written are never touched by a failure.
"""

from __future__ import annotations

import datetime as dt
import fnmatch
import json
import signal
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from mla_var3.evidence.census import census_of, take_census
from mla_var3.evidence.group_run import GroupRun
from mla_var3.evidence.groups import Group, all_groups, get_group
from mla_var3.evidence.model import (
    GROUP_SCHEMA_VERSION,
    GroupRecord,
    MemberResult,
    Record,
    RoundSummary,
    members_source_hash,
    parse_shape_key,
)
from mla_var3.evidence.provenance import (
    git_sha,
    harness_hash,
    kernel_source_hash,
    record_from_run,
    section_from_profile,
    upstream_of,
    versions,
)
from mla_var3.evidence.status import group_staleness, record_staleness, runnable_here
from mla_var3.evidence.store import (
    evidence_dir,
    group_records_for,
    load,
    record_path,
    records_for,
    relative_path,
    save,
)
from mla_var3.evidence.targets import Target
from mla_var3.evidence.typed import EvidenceError, dump, dumps, parse
from mla_var3.kernel.arch import Arch, runnable_arch
from mla_var3.kernel.check import CheckResult
from mla_var3.kernel.device import GpuInfo, detect_gpu
from mla_var3.kernel.errors import UserError
from mla_var3.kernel.registry import get_plan
from mla_var3.profile.process import Completed, run_tool


@dataclass
class Outcome:
    subject: str  # kernel/config or groups/<group>/<config>
    status: str  # run-verified | compile-verified | compile-only | fresh | failed | skipped | profiled
    reason: str
    seconds: float = 0.0
    path: str | None = None  # the record written, or found fresh


def expected_slug(kernel: str, gpu: GpuInfo | None) -> tuple[str, Arch, str]:
    """(device slug, arch, mode) this machine would verify ``kernel`` as."""
    plan = get_plan(kernel)
    if gpu is not None:
        arch = runnable_arch(plan.archs, gpu.cc)
        if arch is not None:
            return gpu.slug, arch, "run"
    arch = Arch.parse(plan.archs[0])
    return f"compile-{arch.name}", arch, "compile"


def _evidence_child(*args: str) -> list[str]:
    return [sys.executable, "-m", "mla_var3.evidence", *args]


def _died(proc: Completed, timeout: float) -> str:
    if proc.timed_out:
        return f"timed out after {timeout:.0f}s (process tree killed)"
    if proc.returncode is not None and proc.returncode < 0:
        return f"process died with {signal.Signals(-proc.returncode).name}"
    lines = (proc.stderr or proc.stdout).strip().splitlines()
    return f"exit {proc.returncode}: {lines[-1] if lines else 'no output'}"


def _child_json(command: list[str], timeout: float) -> tuple[dict | None, str]:
    """Run a child that writes JSON to the path appended as ``--json``; (data, why it has none)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "result.json"
        proc = run_tool([*command, f"--json={out}"], timeout)
        if proc.timed_out or not out.exists():
            return None, _died(proc, timeout)
        return json.loads(out.read_text(encoding="utf-8")), ""


def verify_one(target: Target, gpu: GpuInfo | None, force: bool, timeout: float, base: Path | None) -> Outcome:
    start = time.perf_counter()
    try:
        slug, arch, mode = expected_slug(target.kernel, gpu)
        parse_shape_key(target.config)
        source = kernel_source_hash(target.kernel)
        upstream = upstream_of(target.kernel)
    except (UserError, EvidenceError) as exc:
        return Outcome(target.label, "failed", str(exc))
    unavailable = get_plan(target.kernel).unavailable_reason()
    if unavailable:
        return Outcome(target.label, "skipped", unavailable)
    path = record_path(target.kernel, target.config, slug, base)
    if not force and mode == "compile":
        # A fresh run from a GPU machine outranks a compile this machine could add.
        for other in records_for(target.kernel, target.config, base):
            if other.mode == "run" and other.passed and record_staleness(other) is None:
                return Outcome(target.label, "fresh", f"run-verified on {other.device.short()}")
    if not force and path.exists():
        try:
            old = load(path)
        except EvidenceError as exc:
            old = None
            print(f"  replacing a malformed record: {exc}", flush=True)
        if old is not None and old.passed and record_staleness(old) is None:  # type: ignore[arg-type]
            return Outcome(target.label, "fresh", "source and harness hashes match", path=str(path))
    command = _evidence_child("run-kernel", target.kernel, target.config, f"--mode={mode}", f"--arch={arch.name}")
    result, why = _child_json(command, timeout)
    if result is None:
        return Outcome(target.label, "failed", why, time.perf_counter() - start)
    record = record_from_run(result, source, harness_hash(), git_sha(), upstream)
    written = save(record, base)
    seconds = time.perf_counter() - start
    if not record.passed:
        why = "correctness check failed" if not (record.correctness and record.correctness.passed) else "census found mismatches"
        return Outcome(target.label, "failed", f"{why} (record written){census_line(record)}", seconds, str(written))
    if record.mode == "run":
        return Outcome(target.label, "run-verified", f"on {record.device.name}{census_line(record)}", seconds, str(written))
    if runnable_here(target.kernel):  # the page's rule: a compile of a kernel our H200 runs is not yet verified
        return Outcome(target.label, "compile-only", f"on {record.arch}; run it on a GPU of its arch", seconds, str(written))
    return Outcome(target.label, "compile-verified", f"on {record.arch}", seconds, str(written))


def census_line(record: Record) -> str:
    """``; census: 12 of 13421772800 elements mismatched in 3 of 200 launches (expected)``, or nothing."""
    c = record.census
    if c is None:
        return ""
    kind = "expected" if c.expected else "none allowed"
    return f"; census: {c.mismatched} of {c.launches * c.elements_per_launch} elements mismatched in {c.launches_with_mismatch} of {c.launches} launches ({kind})"


def verify_group(
    group: Group, config: str, gpu: GpuInfo | None, force: bool, timeout: float, base: Path | None, check_jobs: int = 1
) -> Outcome:
    """Check each member in its own process (``check_jobs`` at a time), then time them all in one
    process, alone on the GPU; file the group record."""
    label = f"groups/{group.name}/{config}"
    start = time.perf_counter()
    if gpu is None or any(runnable_arch(get_plan(m.kernel).archs, gpu.cc) is None for m in group.members):
        return Outcome(label, "skipped", "a group is timed on a GPU that runs every member")
    for m in group.members:
        unavailable = get_plan(m.kernel).unavailable_reason()
        if unavailable:
            return Outcome(label, "skipped", f"member {m.id}: {unavailable}")
    if not force:
        for old in group_records_for(group.name, config, base):
            if old.device_slug == gpu.slug and group_staleness(old) is None and all(m.correctness.passed for m in old.members):
                path = (base or evidence_dir()) / relative_path(old)
                return Outcome(label, "fresh", "members' sources and the harness match", path=str(path))
    checks: dict[str, CheckResult] = {}
    # Checks only (no timing): up to ``check_jobs`` member processes share the GPU at once.
    with ThreadPoolExecutor(max_workers=max(1, check_jobs)) as pool:
        children = list(
            pool.map(lambda m: _child_json(_evidence_child("check-member", group.name, config, m.id), timeout), group.members)
        )
    for m, (result, why) in zip(group.members, children, strict=True):
        if result is None:
            return Outcome(label, "failed", f"member {m.id}: {why}", time.perf_counter() - start)
        if result["mode"] != "run" or result.get("check") is None:
            return Outcome(label, "failed", f"member {m.id}: not run ({result['mode_reason']})", time.perf_counter() - start)
        checks[m.id] = parse(CheckResult, result["check"], f"member {m.id} check")
        if not checks[m.id].passed:
            return Outcome(label, "failed", f"member {m.id} failed its correctness check: {checks[m.id].summary()}")
    data, why = _child_json(_evidence_child("time-group", group.name, config), timeout)
    if data is None:
        return Outcome(label, "failed", f"timing the group: {why}", time.perf_counter() - start)
    run = parse(GroupRun, data, f"{label} timing")
    record = group_record(group, config, run, checks)
    written = save(record, base)
    verdicts = ", ".join(f"{m.member} {m.speedup.text()}" for m in record.members if m.speedup)
    return Outcome(label, "run-verified", f"on {record.device.short()}: {verdicts}", time.perf_counter() - start, str(written))


def group_record(group: Group, config: str, run: GroupRun, checks: dict[str, CheckResult]) -> GroupRecord:
    """The group record from the timing process's output, the members' checks and this tree's provenance."""
    members = []
    for t in run.members:
        m = group.member(t.member)
        member_config = group.member_config(m, config)
        members.append(MemberResult(
            member=m.id, kernel=m.kernel, config=member_config, dtype=parse_shape_key(member_config)[1], backend=t.backend,
            arch=t.arch, tuning=t.tuning, data=t.data, source_hash=kernel_source_hash(m.kernel), correctness=checks[m.id],
            timing=t.timing, flops=t.flops, bytes=t.bytes, input_sets=t.input_sets, analysis=t.analysis,
            upstream=upstream_of(m.kernel), speedup=t.speedup,
        ))  # fmt: skip
    record = GroupRecord(
        schema_version=GROUP_SCHEMA_VERSION, group=group.name, config=config, device_slug=run.device.slug or "",
        reference=group.reference, members=members, rounds=[RoundSummary.of(r) for r in run.rounds],
        launches_per_round=run.launches_per_round,
        ceilings=run.ceilings, harness_hash=harness_hash(), source_hash=members_source_hash(members), git_sha=git_sha(),
        date=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), versions=versions(), device=run.device, notes=run.notes,
    )  # fmt: skip
    return parse(GroupRecord, dump(record), f"group record {group.name}/{config}")  # the model's checks


def group_targets(cited: list[Target]) -> list[Target]:
    """Every declared group at every declared shape, plus cited groups (an undeclared one fails)."""
    targets = [Target(g.name, c, group=True) for g in all_groups().values() for c in g.shapes]
    known = {(t.kernel, t.config) for t in targets}
    for t in cited:
        if t.group and (t.kernel, t.config) not in known:
            targets.append(t)
    for t in targets:
        t.pages = next((c.pages for c in cited if c.group and (c.kernel, c.config) == (t.kernel, t.config)), [])
    return targets


def verify(
    targets: list[Target],
    force: bool = False,
    only: str | None = None,
    timeout: float = 600.0,
    base: Path | None = None,
    check_jobs: int = 1,
) -> list[Outcome]:
    """Verify kernel targets, then every group (``only``: a glob on ``kernel/config`` or
    ``groups/<group>/<config>``; ``check_jobs``: a group's member checks run that many at once),
    printing progress."""
    gpu = detect_gpu()
    chosen = [t for t in [*[t for t in targets if not t.group], *group_targets(targets)] if only is None or fnmatch.fnmatch(t.label, only)]
    outcomes: list[Outcome] = []
    print(f"verifying {len(chosen)} targets on {gpu.name if gpu else 'a machine without a GPU'}", flush=True)
    for i, target in enumerate(chosen, 1):
        print(f"[{i}/{len(chosen)}] {target.label} ...", end=" ", flush=True)
        if target.group:
            try:
                outcome = verify_group(get_group(target.kernel), target.config, gpu, force, timeout, base, check_jobs)
            except (UserError, EvidenceError) as exc:
                outcome = Outcome(target.label, "failed", str(exc))
        else:
            outcome = verify_one(target, gpu, force, timeout, base)
        print(f"{outcome.status} ({outcome.reason}, {outcome.seconds:.1f}s)", flush=True)
        outcomes.append(outcome)
    return outcomes


def summary_table(outcomes: list[Outcome]) -> str:
    rows = ["| target | status | reason |", "|---|---|---|"]
    rows += [f"| {o.subject} | {o.status} | {o.reason} |" for o in outcomes]
    counts: dict[str, int] = {}
    for o in outcomes:
        counts[o.status] = counts.get(o.status, 0) + 1
    return "\n".join(rows) + "\n\n" + ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))


def profile_one(target: Target, prof_type: str, timeout: float, base: Path | None = None) -> Outcome:
    """Profile a verified kernel (``ncu``, ``sanitize``, ``annotation``) and add the section to its run record."""
    import dataclasses

    start = time.perf_counter()
    slug, arch, mode = expected_slug(target.kernel, detect_gpu())
    path = record_path(target.kernel, target.config, slug, base)
    if mode != "run" or not path.exists():
        return Outcome(target.label, "skipped", f"needs a run record on a GPU of its arch ({path.name})")
    shape, dtype = parse_shape_key(target.config)
    command = [sys.executable, "-m", "mla_var3.kernel", target.kernel, f"--dtype={dtype}", *(f"--{k}={v}" for k, v in shape.items()),
               "--check", f"--prof_type={prof_type}", "--no-bench"]  # fmt: skip
    result, why = _child_json(command, timeout)
    if result is None:
        return Outcome(target.label, "failed", f"{prof_type}: {why}", time.perf_counter() - start)
    profile = result.get("profile") or {}
    sections = {name: section_from_profile(name, payload, git_sha()) for name, payload in profile.items()}
    save(dataclasses.replace(load(path), **sections), base)  # type: ignore[arg-type]
    ok = bool(profile) and all(p.get("passed", True) for p in profile.values())
    return Outcome(target.label, "profiled" if ok else "failed", ", ".join(profile) or "no profile section",
                   time.perf_counter() - start, str(path))  # fmt: skip


# --- the children verify starts (``python -m mla_var3.evidence run-kernel|check-member|time-group``) ---


def run_kernel_child(kernel: str, config: str, mode: str, arch: str) -> dict:
    """Run (check and time) or compile one kernel at one shape key: ``RunResult.to_dict()``."""
    from mla_var3.kernel.plan_index import find_plan  # this child imports its plan's module only
    from mla_var3.kernel.runner import RunRequest, run_plan

    shape, dtype = parse_shape_key(config)
    request = RunRequest(shape=shape, arch=arch, compile_only=mode == "compile", check=mode == "run")
    plan = find_plan(kernel)(dtype)
    result = run_plan(plan, request).to_dict()
    spec = census_of(kernel)
    if spec is not None and result["mode"] == "run":  # after the check and timing, in the same process
        result["census"] = take_census(plan, shape, result["arch"], spec)
    return result


def check_member_child(group: str, config: str, member: str) -> dict:
    """Check one member of a group at its own dtype and tolerance (no timing): ``RunResult.to_dict()``."""
    from mla_var3.kernel.plan_index import find_plan
    from mla_var3.kernel.runner import RunRequest, run_plan

    spec = get_group(group)
    m = spec.member(member)
    shape, dtype = parse_shape_key(spec.member_config(m, config))
    plan = find_plan(m.kernel)(dtype)
    if m.tolerance is not None:  # the group declares this member's tolerance
        plan.tolerance = lambda: m.tolerance  # type: ignore[method-assign]
    return run_plan(plan, RunRequest(shape=shape, check=True, bench=False)).to_dict()


def time_group_child(group: str, config: str) -> str:
    """Time every member of a group in this process: the :class:`GroupRun` as JSON text."""
    from mla_var3.evidence.group_run import time_group

    spec = get_group(group)
    if config not in spec.shapes:
        raise EvidenceError(f"group {group} declares no shape {config} ({', '.join(spec.shapes)})")
    return dumps(dump(time_group(spec, config, progress=lambda line: print(line, flush=True))))
