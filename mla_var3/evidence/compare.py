"""The workflow's comparison table (runtime, TC %, DRAM %, occupancy, registers, SMEM) from records.

``python -m mla_var3.evidence compare hopper_gemm_ws cublas_gemm --config m8192-n8192-k8192-bfloat16``
prints Markdown for a devlog. The first kernel is the baseline of the "difference" column.
Every cell comes from a record; a value a record lacks shows as "–".
"""

from __future__ import annotations

from typing import Any

from mla_var3.evidence.schema import EvidenceError
from mla_var3.evidence.store import records_for
from mla_var3.kernel.plan import config_slug

COLUMNS = ("kernel", "runtime µs", "TC %", "DRAM %", "occupancy %", "registers/thread", "SMEM/block KB", "difference", "notes")


def _run_record(kernel: str, config: str, device: str | None) -> dict[str, Any]:
    runs = [r for r in records_for(kernel, config) if r["mode"] == "run" and (device is None or r["device_slug"] == device)]
    if not runs:
        raise EvidenceError(f"no run record for {kernel}/{config}" + (f" on {device}" if device else "") + "; verify it on a GPU first")
    return runs[0]


def _cell(value: float | None, digits: int = 1) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


def comparison_rows(kernels: list[str], config: str, device: str | None = None) -> list[dict[str, Any]]:
    """One row per kernel: the numbers behind the table, as plain values."""
    rows = []
    for kernel in kernels:
        r = _run_record(kernel, config, device)
        ncu = r.get("ncu") or {}
        res = ((r.get("analysis") or {}).get("resources") or [{}])[0]
        dyn = (r.get("analysis") or {}).get("dynamic_smem_bytes")
        smem = ncu.get("smem_per_block_bytes")
        if smem is None and res.get("static_smem_bytes") is not None:
            smem = res["static_smem_bytes"] + (dyn or 0)
        clocks = r.get("clocks") or {}
        before, after = (clocks.get("before") or {}).get("sm_mhz"), (clocks.get("after") or {}).get("sm_mhz")
        notes = [config_slug(r["tuning"]) if r["tuning"] else "", f"SM clock {_cell(before, 0)} → {_cell(after, 0)} MHz around the timing"]
        rows.append({
            "kernel": kernel,
            "runtime_us": r["timing"]["median_us"],
            "tc_pct": ncu.get("tc_pct"),
            "dram_pct": ncu.get("dram_throughput_pct"),
            "occupancy_pct": ncu.get("achieved_occupancy_pct"),
            "registers": ncu.get("registers_per_thread") or res.get("registers"),
            "smem_kb": smem / 1024 if smem is not None else None,
            "notes": "; ".join(n for n in notes if n),
            "device": r["device"]["name"],
            "date": r["date"][:10],
            "git_sha": r["git_sha"][:10],
        })
    return rows


def comparison_table(kernels: list[str], config: str, device: str | None = None) -> str:
    rows = comparison_rows(kernels, config, device)
    base = rows[0]["runtime_us"]
    out = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for row in rows:
        diff = "baseline" if row is rows[0] else f"{100 * (row['runtime_us'] / base - 1):+.1f} % time"
        out.append("| " + " | ".join([
            f"`{row['kernel']}`", _cell(row["runtime_us"], 2), _cell(row["tc_pct"]), _cell(row["dram_pct"]),
            _cell(row["occupancy_pct"]), _cell(row["registers"], 0), _cell(row["smem_kb"]), diff, row["notes"],
        ]) + " |")
    first = rows[0]
    out.append("")
    out.append(f"Config `{config}` on {first['device']}; records dated {', '.join(sorted({r['date'] for r in rows}))}, "
               f"commits {', '.join(sorted({r['git_sha'] for r in rows}))}. TC/DRAM/occupancy from ncu sections (–: not profiled).")
    return "\n".join(out)
