"""Reading ncu percentages as work and traffic, from committed run records (no GPU needed).

ncu reports utilisation as a share of a peak over some cycles, so share x cycles is proportional to
the work done or the bytes moved -- comparable across kernels whose durations and clocks differ
(each run record's ncu pass ran on its own clocks, as found). DRAM throughput is a share of the
elapsed DRAM cycles (bytes ~ share x duration x DRAM clock); the tensor pipe is a share of the SMs'
*active* cycles, so share x duration x SM clock is the MMA work only where the SMs are busy for
nearly the whole launch (it overstates a launch with idle SMs). :func:`work_and_traffic` prints that table for one
shape from the kernels' own run records, relative to a reference kernel, and marks a record that
is not fresh (stale, failed, missing) in its row instead of hiding it.
"""

from __future__ import annotations

from mla_var3.evidence.status import status_of


def work_and_traffic(config: str, kernels: dict[str, str], reference: str) -> str:
    """A Markdown table: each kernel's one-launch ncu duration, tensor-pipe and DRAM shares, and
    share x duration relative to ``reference`` (a label of ``kernels``)."""
    rows: dict[str, tuple[float, float, float, str]] = {}
    clocks: dict[str, tuple[float, float]] = {}
    for label, kernel in kernels.items():
        status = status_of(kernel, config)
        runs = [r for r in status.records if r.mode == "run" and r.ncu is not None]
        if not runs:
            rows[label] = (float("nan"), float("nan"), float("nan"), f"no ncu section ({status.status})")
            clocks[label] = (float("nan"), float("nan"))
            continue
        ncu = runs[0].ncu
        note = "" if status.ok else f"{status.status}: {status.detail}"
        rows[label] = (ncu.duration_ns / 1e3, ncu.tc_pct, ncu.dram_throughput_pct, note)
        clocks[label] = (ncu.sm_clock_hz, ncu.dram_clock_hz)
    ref_us, ref_tc, ref_dram, _ = rows[reference]
    ref_sm, ref_mem = clocks[reference]
    lines = [
        "| kernel | one launch (µs) | tensor pipe (%) | DRAM (%) | MMA work (tensor % x cycles) | DRAM bytes (DRAM % x DRAM cycles) | record |",
        "|---|---|---|---|---|---|---|",
    ]
    for label, (us, tc, dram, note) in rows.items():
        sm, mem = clocks[label]
        work = tc * us * sm / (ref_tc * ref_us * ref_sm)
        traffic = dram * us * mem / (ref_dram * ref_us * ref_mem)
        lines.append(
            f"| {label} | {us:.0f} | {tc:.1f} | {dram:.1f} | {work:.2f}x {reference}'s | "
            f"{traffic:.2f}x {reference}'s | {note or 'fresh'} |"
        )
    return "\n".join(lines)


MLA_B128 = "b128-s1-t8192-h128-page64-varlen0-bfloat16"
MLA_KERNELS = {
    "FlashMLA": "flashmla_decode",
    "v2": "mla_decode_v2",
    "v4": "mla_decode_v4",
    "v5": "mla_decode_v5",
    "cuTile": "mla_decode_cutile",
}

if __name__ == "__main__":
    print(work_and_traffic(MLA_B128, MLA_KERNELS, "FlashMLA"))
