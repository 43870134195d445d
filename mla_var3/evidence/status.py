"""Is the evidence a page cites fresh? For a kernel at a config, and for a comparison group at a config.

A kernel's records are **stale** when the kernel's source hash changed since they were made,
when a run record came from other harness code (or from before the harness was hashed), or
when the CUTLASS example an imported plan loads differs from the one recorded -- checked only
where a checkout exists, so a clone without ``third_party/cutlass`` shows no false stale.
A group record is stale when any member's source or the harness changed.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

from mla_var3.evidence.census import census_hash
from mla_var3.evidence.groups import get_group
from mla_var3.evidence.model import GroupRecord, Record, Upstream
from mla_var3.evidence.provenance import harness_hash, kernel_source_hash
from mla_var3.evidence.store import group_records_for, records_for
from mla_var3.evidence.typed import EvidenceError
from mla_var3.kernel.arch import Arch
from mla_var3.kernel.errors import UserError
from mla_var3.kernel.registry import get_plan
from mla_var3.project import REPO_ROOT, cutlass_dir

# Compute capabilities of the GPUs our runners have (the H200). Compile-only evidence is
# accepted only for kernels none of whose archs runs on one of these.
RUNNER_CCS: tuple[tuple[int, int], ...] = ((9, 0),)
OK = ("run-verified", "compile-verified")


@dataclass(frozen=True)
class EvidenceStatus:
    """``status``: run-verified | compile-verified | stale | failed | missing | compile-only."""

    kernel: str
    config: str
    status: str
    detail: str
    records: tuple[Record, ...] = ()

    @property
    def ok(self) -> bool:
        return self.status in OK


@dataclass(frozen=True)
class GroupStatus:
    group: str
    config: str
    status: str  # run-verified | stale | failed | missing
    detail: str
    records: tuple[GroupRecord, ...] = ()

    @property
    def ok(self) -> bool:
        return self.status == "run-verified"


@cache
def current_hash(kernel: str) -> str:
    return kernel_source_hash(kernel)


def runnable_here(kernel: str) -> bool:
    """True when some runner of ours can run one of the kernel's archs."""
    return any(Arch.parse(a).runs_on(cc) for a in get_plan(kernel).archs for cc in RUNNER_CCS)


def upstream_changed(upstream: Upstream | None) -> str | None:
    """Why the recorded CUTLASS example is not the one on disk; ``None`` if it is, or if no checkout is there to compare."""
    if upstream is None or upstream.sha256 is None:
        return None
    path = cutlass_dir(REPO_ROOT) / upstream.path
    if not path.is_file():
        return None
    import hashlib

    if hashlib.sha256(path.read_bytes()).hexdigest() != upstream.sha256:
        return f"{upstream.path} in {cutlass_dir(REPO_ROOT).name} differs from the recorded one"
    return None


def staleness(kernel: str, source_hash: str, harness: str | None, mode: str, upstream: Upstream | None) -> str | None:
    """Why evidence made with these hashes is stale today, or ``None`` if fresh."""
    if source_hash != current_hash(kernel):
        return f"{kernel}'s source changed"
    if mode == "run" and harness is None:
        return "made before the harness was hashed: re-verify"
    if mode == "run" and harness != harness_hash():
        return "the timing/checking harness changed"
    return upstream_changed(upstream)


def status_of(kernel: str, config: str) -> EvidenceStatus:
    try:
        get_plan(kernel)
    except UserError as exc:
        return EvidenceStatus(kernel, config, "missing", str(exc))
    records = tuple(records_for(kernel, config))
    if not records:
        return EvidenceStatus(kernel, config, "missing", "no record; run `nox -s verify-snippets`")
    if any(not r.passed for r in records):
        return EvidenceStatus(kernel, config, "failed", "a record failed its correctness check", records)
    stale = [f"{r.device_slug}: {why}" for r in records if (why := record_staleness(r))]
    if stale:
        return EvidenceStatus(kernel, config, "stale", "; ".join(stale), records)
    runs = [r for r in records if r.mode == "run"]
    if runs:
        expected = " (a mismatch is expected: the census counts it)" if any(r.census and r.census.expected for r in runs) else ""
        return EvidenceStatus(kernel, config, "run-verified", ", ".join(r.device.short() for r in runs) + expected, records)
    if runnable_here(kernel):
        return EvidenceStatus(kernel, config, "compile-only", "compiled only, but a runner of its arch exists", records)
    return EvidenceStatus(kernel, config, "compile-verified", ", ".join(r.arch for r in records), records)


def record_staleness(record: Record) -> str | None:
    why = staleness(record.kernel, record.source_hash, record.harness_hash, record.mode, record.upstream)
    if why is None and record.census is not None and record.census.code_hash != census_hash():
        return "the mismatch census (mla_var3/evidence/census.py) changed"
    return why


def group_staleness(record: GroupRecord) -> str | None:
    """Why a group record is stale (a member's source, the harness, an upstream example), or ``None``."""
    if record.harness_hash != harness_hash():
        return "the timing/checking harness changed"
    for m in record.members:
        try:
            why = staleness(m.kernel, m.source_hash, record.harness_hash, "run", m.upstream)
        except UserError as exc:
            return f"member {m.member}: {exc}"
        if why:
            return f"member {m.member}: {why}"
    return None


def group_status(group: str, config: str, base: Path | None = None) -> GroupStatus:
    try:
        spec = get_group(group)
    except EvidenceError as exc:
        return GroupStatus(group, config, "missing", str(exc))
    if config not in spec.shapes:
        return GroupStatus(group, config, "missing", f"group {group} declares no shape {config} ({', '.join(spec.shapes)})")
    records = tuple(group_records_for(group, config, base))
    if not records:
        return GroupStatus(group, config, "missing", "no group record; run `python -m mla_var3.evidence verify` on a GPU")
    failed = [m.member for r in records for m in r.members if not m.correctness.passed]
    if failed:
        return GroupStatus(group, config, "failed", f"{', '.join(failed)} failed the correctness check", records)
    stale = [f"{r.device_slug}: {why}" for r in records if (why := group_staleness(r))]
    if stale:
        return GroupStatus(group, config, "stale", "; ".join(stale), records)
    return GroupStatus(group, config, "run-verified", ", ".join(r.device.short() for r in records), records)
