"""The workflow's comparison table, from a comparison group's record (one process, one GPU, one run).

Columns: runtime, TC %, DRAM %, occupancy, registers/thread, SMEM/block, the difference as the
member's speedup over the group's reference (with its interval and verdict), notes. Runtime
and difference come from the group record; registers and SMEM from the cubin analysis of the
group run; TC, DRAM and occupancy from the ncu section of the member's own run record where it
has one (a separate run: the note says so and gives its date). A stale member's row says so.

``python -m mla_var3.evidence compare gemm_bf16 --config m8192-n8192-k8192-bfloat16`` prints it.
"""

from __future__ import annotations

import numpy as np

from mla_var3.evidence.formats import MISSING, fmt, stale_cell
from mla_var3.evidence.model import GroupRecord, MemberResult, NcuSection
from mla_var3.evidence.stats import MAX_HALF_WIDTH
from mla_var3.evidence.status import record_staleness, staleness
from mla_var3.evidence.store import group_records_for, records_for
from mla_var3.evidence.typed import EvidenceError
from mla_var3.kernel.plan import config_slug
from mla_var3.knowledge.tables import markdown_table

COLUMNS = ("member", "runtime µs (p10–p90)", "TC %", "DRAM %", "occupancy %", "registers/thread", "SMEM/block KB",
           "difference", "notes")  # fmt: skip


def latest(records: list[GroupRecord]) -> GroupRecord:
    return max(records, key=lambda r: r.date)


def member_staleness(record: GroupRecord, member: MemberResult) -> str | None:
    return staleness(member.kernel, member.source_hash, record.harness_hash, "run", member.upstream)


def _ncu(member: MemberResult) -> tuple[NcuSection | None, str]:
    """The ncu section of the member's own run record, and a note saying where it came from."""
    for r in records_for(member.kernel, member.config):
        if r.mode == "run" and r.ncu is not None:
            stale = record_staleness(r)
            return r.ncu, f"ncu: its run record of {r.ncu.date[:10]}, a separate run" + (f" ({stale})" if stale else "")
    return None, ""


def _median(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return float(np.median(present)) if present else None


def member_row(record: GroupRecord, member: MemberResult) -> list[str]:
    ncu, ncu_note = _ncu(member)
    analysis = member.analysis
    regs = analysis.registers() if analysis else None
    smem = analysis.smem_per_block_bytes() if analysis else None
    if regs is None and ncu is not None:
        regs = ncu.registers_per_thread
    if smem is None and ncu is not None:
        smem = ncu.smem_per_block_bytes
    sm = _median([r.clocks[member.member].sm_mhz for r in record.rounds])
    power = _median([r.clocks[member.member].power_w for r in record.rounds])
    t = member.timing
    notes = [config_slug(member.tuning) if member.tuning else "", f"{member.dtype}" if member.config != record.config else "",
             f"SM {fmt(sm, 0)} MHz, {fmt(power, 0)} W (NVML medians after its launches)", ncu_note]  # fmt: skip
    difference = "reference" if member.speedup is None else member.speedup.text()
    return [
        stale_cell(f"`{member.member}`", member_staleness(record, member)),
        f"{fmt(t.median_us, 2)} ({fmt(t.p10_us, 2)}–{fmt(t.p90_us, 2)})",
        fmt(ncu.tc_pct) if ncu else MISSING,
        fmt(ncu.dram_throughput_pct) if ncu else MISSING,
        fmt(ncu.achieved_occupancy_pct) if ncu else MISSING,
        fmt(regs, 0),
        fmt(smem / 1024 if smem is not None else None),
        difference,
        "; ".join(n for n in notes if n),
    ]


def caption(record: GroupRecord) -> str:
    device = record.device
    return (
        f"Group `{record.group}` at `{record.config}`: every member timed in one process on {device.name} "
        f"(GPU UUID {device.uuid.split('-')[0] if device.uuid else MISSING}…), {len(record.rounds)} rounds of "
        f"{record.launches_per_round} launches each, order rotated every round; {record.date[:10]}, commit "
        f"{record.git_sha[:10]}. Difference = t(`{record.reference}`) / t(member): the geometric mean of per-round "
        f"ratios with its 95 % bootstrap interval; faster or slower only when the interval excludes 1, "
        f"inconclusive when wider than ±{MAX_HALF_WIDTH:.0%}."
    )


def record_table(record: GroupRecord) -> str:
    lines = markdown_table(COLUMNS, [member_row(record, m) for m in record.members])
    return "\n".join([*lines, "", caption(record)])


def group_table(group: str, config: str) -> str:
    """The table of the latest record of ``group`` at ``config``."""
    records = group_records_for(group, config)
    if not records:
        raise EvidenceError(f"no record of group {group} at {config}; run `python -m mla_var3.evidence verify` on a GPU")
    return record_table(latest(records))
