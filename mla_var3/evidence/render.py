"""Render evidence records into page Markdown: a status badge, a table, and single values for prose.

The MkDocs hook calls these for the evidence directives; nothing here is typed by hand: every
number comes from a record, with its device, date and commit next to it.
"""

from __future__ import annotations

import html
from typing import Any

from mla_var3.evidence.schema import EvidenceError
from mla_var3.evidence.status import EvidenceStatus, status_of

_ADMONITION = {
    "run-verified": ("success", "Run-verified"),
    "compile-verified": ("info", "Compile-verified"),
    "compile-only": ("warning", "Compile-only (a runner of this arch exists: run it)"),
    "stale": ("warning", "Stale evidence"),
    "failed": ("failure", "Evidence failed"),
    "missing": ("warning", "Evidence missing"),
}
_KEY_SASS = ("HGMMA", "UTCMMA", "HMMA", "UTMALDG", "UTMASTG", "LDGSTS", "SYNCS", "LDG.128", "STG.128")


def _fmt(value: float | None, digits: int = 1) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


def _row(r: dict[str, Any]) -> list[str]:
    t, rf, ce = r.get("timing") or {}, r.get("roofline") or {}, r.get("ceilings") or {}
    analysis = r.get("analysis") or {}
    res = (analysis.get("resources") or [{}])[0]
    sass = analysis.get("sass_classes") or {}
    key = ", ".join(f"{k} {v}" for k, v in sass.items() if v and any(k.startswith(s) for s in _KEY_SASS)) or "–"
    device = r["device"].get("name") or f"compile-only ({r['device'].get('compiled_on', 'cpu')})"
    clocks = r.get("clocks") or {}
    before, after = (clocks.get("before") or {}).get("sm_mhz"), (clocks.get("after") or {}).get("sm_mhz")
    return [
        device + (f" (SM clock {before:.0f} → {after:.0f} MHz)" if before and after else ""),
        r["arch"],
        r["config"],
        _fmt(t.get("median_us"), 2) + (f" (p10 {_fmt(t.get('p10_us'), 2)}, p90 {_fmt(t.get('p90_us'), 2)}, n={t['n']})" if t else ""),
        _fmt(rf["flops_per_s"] / 1e12 if rf.get("flops_per_s") else None),
        _fmt(rf["bytes_per_s"] / 1e9 if rf.get("bytes_per_s") else None, 0),
        (f"{_fmt(rf.get('pct_of_matmul_ceiling'))} % MMA / {_fmt(rf.get('pct_of_copy_ceiling'))} % copy" if rf else "–")
        + (f" (ceilings {ce['matmul_flops_per_s'] / 1e12:.0f} TFLOP/s, {ce['copy_bytes_per_s'] / 1e9:.0f} GB/s)" if ce else ""),
        str(res.get("registers", "–")),
        f"{res.get('static_smem_bytes', '–')} + {analysis.get('dynamic_smem_bytes') if analysis.get('dynamic_smem_bytes') is not None else '–'}",
        key,
        r["date"][:10],
        r["git_sha"][:10],
    ]


HEADER = ["device", "arch", "config", "median µs", "TFLOP/s", "GB/s", "% of measured ceilings", "regs", "SMEM static + dyn B", "key SASS", "date", "commit"]


def render_status(status: EvidenceStatus) -> str:
    kind, title = _ADMONITION[status.status]
    lines = [f'!!! {kind} "{title}: `{status.kernel}` · `{status.config}`"', f"    {html.escape(status.detail)}", ""]
    if status.records:
        lines.append("    | " + " | ".join(HEADER) + " |")
        lines.append("    |" + "---|" * len(HEADER))
        lines += ["    | " + " | ".join(_row(r)) + " |" for r in status.records]
        lines.append("")
        lines.append(f"    Data: {status.records[0]['data']}. Source hash `{status.records[0]['source_hash'][:12]}`.")
        for record in status.records:
            lines += ["    " + line if line else "" for line in _profile_sections(record)]
    return "\n".join(lines) + "\n"


def _profile_sections(r: dict[str, Any]) -> list[str]:
    """The ncu, sanitizer and timeline sections of a run record, each with its own date."""
    out: list[str] = []
    ncu = r.get("ncu")
    if ncu:
        stalls = ", ".join(f"{name} {value:.2f}" for name, value in (ncu.get("top_stalls") or [])[:3])
        clock = f"{ncu['sm_clock_hz'] / 1e6:.0f} MHz" if ncu.get("sm_clock_hz") else "–"
        out += [
            "",
            f"**ncu** ({ncu.get('ncu_version') or 'ncu'}, --clock-control none, {ncu['date'][:10]}, SM clock seen {clock}):",
            "",
            "| duration µs | SM % | TC % | DRAM % | occupancy % | regs | SMEM/block B | L2 hit % | top stalls (cycles per issue) |",
            "|---|---|---|---|---|---|---|---|---|",
            "| " + " | ".join([
                _fmt(ncu["duration_ns"] / 1e3 if ncu.get("duration_ns") else None, 2), _fmt(ncu.get("sm_throughput_pct")),
                _fmt(ncu.get("tc_pct")), _fmt(ncu.get("dram_throughput_pct")), _fmt(ncu.get("achieved_occupancy_pct")),
                _fmt(ncu.get("registers_per_thread"), 0), _fmt(ncu.get("smem_per_block_bytes"), 0),
                _fmt(ncu.get("l2_hit_rate_pct")), stalls or "–",
            ]) + " |",
        ]
    san = r.get("sanitizer")
    if san:
        tools = ", ".join(
            f"{name}: {'clean' if t['passed'] else 'FAILED'} ({t['errors']} errors, {t['allowed']} allowed)"
            for name, t in san.get("tools", {}).items()
        )
        out += ["", f"**compute-sanitizer** ({san['date'][:10]}, shape {san.get('shape')}): {tools}."]
    timeline = (r.get("annotation") or {}).get("timeline")
    if timeline and timeline.get("svg"):
        import base64

        ov = timeline.get("overlap") or {}
        frac = ov.get("overlap_fraction")
        out += [
            "",
            f"**In-kernel timeline** ({r['annotation']['date'][:10]}): MMA time with loads in flight "
            + (f"{100 * frac:.0f} %" if frac is not None else "–") + ".",
            "",
            f'<img class="timeline" alt="in-kernel timeline" src="data:image/svg+xml;base64,{base64.b64encode(timeline["svg"].encode()).decode()}">',
        ]
    return out


def render_evidence_block(kernel: str, config: str) -> str:
    """A Markdown block: the evidence table for ``kernel`` at ``config`` with its status badge."""
    return render_status(status_of(kernel, config))


DERIVED = {
    "tflops": lambda r: r["roofline"]["flops_per_s"] / 1e12,
    "gbps": lambda r: r["roofline"]["bytes_per_s"] / 1e9,
}
UNITS = {"tflops": " TFLOP/s", "gbps": " GB/s", "median_us": " µs", "pct_of_copy_ceiling": " %", "pct_of_matmul_ceiling": " %"}


def record_value(record: dict[str, Any], field: str) -> float:
    """A number from a record by dotted path (``timing.median_us``) or a derived name (``tflops``)."""
    if field in DERIVED:
        return float(DERIVED[field](record))
    value: Any = record
    for part in field.split("."):
        if not isinstance(value, dict) or part not in value:
            raise EvidenceError(f"record {record['kernel']}/{record['config']}/{record['device_slug']} has no field {field!r}")
        value = value[part]
    return float(value)


def _pick(status: EvidenceStatus, device: str | None) -> dict[str, Any] | None:
    records = [r for r in status.records if device is None or r["device_slug"] == device]
    runs = [r for r in records if r["mode"] == "run"]
    return (runs or records or [None])[0]


def _inline(text: str, status: EvidenceStatus, record: dict[str, Any]) -> str:
    title = f"{record['device'].get('name') or record['arch']}, {record['config']}, {record['date'][:10]}, {record['git_sha'][:10]}"
    css = "ev-value" + ("" if status.status in ("run-verified", "compile-verified") else " ev-stale")
    mark = "" if status.status in ("run-verified", "compile-verified") else f" ({status.status})"
    return f'<span class="{css}" title="{html.escape(title)}">{text}{mark}</span>'


def render_evidence_value(kernel: str, config: str, field: str, device: str | None = None) -> str:
    """One value from a record (e.g. ``timing.median_us``), formatted, with its provenance as a tooltip."""
    status = status_of(kernel, config)
    record = _pick(status, device)
    if record is None:
        return f'<span class="ev-value ev-stale">missing: {html.escape(kernel)}/{html.escape(config)}/{html.escape(field)}</span>'
    value = record_value(record, field)
    name = field.rsplit(".", 1)[-1]
    unit = UNITS.get(name, " %" if name.endswith("_pct") else "")
    if name.endswith("_fraction"):  # shown as a percentage
        value, unit = 100 * value, " %"
    return _inline(f"{value:,.{2 if abs(value) < 100 else 0}f}{unit}", status, record)


def render_evidence_ratio(a: tuple[str, str], b: tuple[str, str], field: str) -> str:
    """``field`` of record a divided by that of record b (a speed-up), e.g. ``0.97×``."""
    sa, sb = status_of(*a), status_of(*b)
    ra, rb = _pick(sa, None), _pick(sb, None)
    if ra is None or rb is None:
        return f'<span class="ev-value ev-stale">missing: {html.escape("/".join(a))} vs {html.escape("/".join(b))}</span>'
    ratio = record_value(ra, field) / record_value(rb, field)
    worst = sa if sa.status not in ("run-verified", "compile-verified") else sb
    return _inline(f"{ratio:.2f}×", worst, ra)


def render_comparison(kernels: list[str], config: str) -> str:
    """The workflow's comparison table for ``kernels`` at ``config``, or a visible 'missing' note."""
    from mla_var3.evidence.compare import comparison_table

    try:
        return comparison_table(kernels, config)
    except EvidenceError as exc:
        return f'!!! warning "Comparison unavailable"\n    {html.escape(str(exc))}\n'


def render_roofline(points: list[tuple[str, str]]) -> str:
    """A roofline figure of the run records of ``points`` (kernel, config), as an inline SVG image."""
    import base64

    from mla_var3.profile.roofline import ceilings_from_dict, render_roofline_svg, roofline

    dots, ceilings = [], None
    for kernel, config in points:
        record = _pick(status_of(kernel, config), None)
        if record is None or record["mode"] != "run":
            continue
        ceilings = ceilings or ceilings_from_dict(record["ceilings"])
        seconds = record["timing"]["median_us"] * 1e-6
        dots.append(roofline(record["roofline"]["flops"], record["roofline"]["bytes"], seconds, ceilings, f"{kernel} {config}"))
    if not dots or ceilings is None:
        return '<p class="roofline-missing"><em>Roofline: no run records yet for these points.</em></p>'
    svg = render_roofline_svg(dots, ceilings, title="Roofline (ceilings measured in the same run)")
    data = base64.b64encode(svg.encode()).decode()
    return f'<figure class="roofline"><img alt="roofline" src="data:image/svg+xml;base64,{data}"></figure>'
