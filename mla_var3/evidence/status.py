"""The status of a page's evidence, by the publish rule of DESIGN.md.

``run-verified`` (a passing, fresh run), ``compile-verified`` (a fresh compile record, accepted
only for archs no runner here has), ``stale`` (source changed since), ``failed``, ``missing``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from mla_var3.evidence.provenance import kernel_source_hash
from mla_var3.evidence.schema import passed
from mla_var3.evidence.store import records_for
from mla_var3.kernel.arch import Arch
from mla_var3.kernel.errors import UserError
from mla_var3.kernel.registry import get_plan

# Compute capabilities of the GPUs our runners have (the H200). Compile-only evidence is
# accepted only for kernels none of whose archs runs on one of these.
RUNNER_CCS: tuple[tuple[int, int], ...] = ((9, 0),)


@dataclass(frozen=True)
class EvidenceStatus:
    kernel: str
    config: str
    status: str  # run-verified | compile-verified | stale | failed | missing | compile-only
    detail: str
    records: tuple[dict[str, Any], ...] = ()


@cache
def current_hash(kernel: str) -> str:
    return kernel_source_hash(kernel)


def runnable_here(kernel: str) -> bool:
    """True when some runner of ours can run one of the kernel's archs."""
    return any(Arch.parse(a).runs_on(cc) for a in get_plan(kernel).archs for cc in RUNNER_CCS)


def status_of(kernel: str, config: str) -> EvidenceStatus:
    try:
        get_plan(kernel)
    except UserError as exc:
        return EvidenceStatus(kernel, config, "missing", str(exc))
    records = tuple(records_for(kernel, config))
    if not records:
        return EvidenceStatus(kernel, config, "missing", "no record; run `nox -s verify-snippets`")
    want = current_hash(kernel)
    if any(not passed(r) for r in records):
        return EvidenceStatus(kernel, config, "failed", "a record failed its correctness check", records)
    stale = [r["device_slug"] for r in records if r["source_hash"] != want]
    if stale:
        return EvidenceStatus(kernel, config, "stale", f"source changed since {', '.join(stale)}", records)
    runs = [r for r in records if r["mode"] == "run"]
    if runs:
        return EvidenceStatus(kernel, config, "run-verified", ", ".join(r["device"]["name"] for r in runs), records)
    if runnable_here(kernel):
        return EvidenceStatus(kernel, config, "compile-only", "compiled only, but a runner of its arch exists", records)
    return EvidenceStatus(kernel, config, "compile-verified", ", ".join(r["arch"] for r in records), records)
