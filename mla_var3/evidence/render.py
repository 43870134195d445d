"""Render evidence records into page Markdown: the callbacks behind the evidence directives.

- :func:`render_evidence_block` -- ``evidence("kernel", "config")``: status, the record table,
  the ceilings it was measured against, and its ncu, sanitizer and timeline sections;
- :func:`render_evidence_value` -- ``evidence("kernel", "config", "field")``: one number;
- :func:`render_speedup` -- ``speedup("group", "config", "member")``: ``1.02× (0.99–1.05, on par)``;
- :func:`render_comparison` -- ``compare("group", "config")``: the group's comparison table;
- :func:`render_roofline` -- ``roofline("kernel/config, ...")``: each point against its own
  run's ceilings (``groups/<group>/<config>`` draws a group's members against the group run's).

Nothing here is typed by hand: every number comes from a record, with its device, date and
commit next to it. Where a claim cannot be backed -- a missing, failed or stale record, a ratio
across runs -- the callback raises :class:`~mla_var3.knowledge.errors.ClaimProblem` carrying
the visibly marked Markdown to show instead (a warning in ``nox -s docs``, an error in
``nox -s publish``). Pictures (rooflines, timelines) are drawn here from the records' data.
"""

from __future__ import annotations

import html
import math
from typing import Any

from mla_var3.evidence.compare import latest, member_staleness, record_table
from mla_var3.evidence.formats import MISSING, fmt, span, stale_cell, svg_image
from mla_var3.evidence.model import PROFILE_SECTIONS, GroupRecord, Record
from mla_var3.evidence.status import EvidenceStatus, GroupStatus, group_status, record_staleness, status_of
from mla_var3.evidence.typed import EvidenceError, dump
from mla_var3.knowledge.errors import ClaimProblem
from mla_var3.knowledge.tables import markdown_table
from mla_var3.profile.roofline import DATASHEETS, Ceiling, RooflineRun, draw_roofline, roofline_for_dtype

PROF_TYPE = {"sanitizer": "sanitize"}  # section name -> `evidence profile --prof-type`

_ADMONITION = {
    "run-verified": ("success", "Run-verified"),
    "compile-verified": ("info", "Compile-verified"),
    "compile-only": ("warning", "Compile-only (a runner of this arch exists: run it)"),
    "stale": ("warning", "Stale evidence"),
    "failed": ("failure", "Evidence failed"),
    "missing": ("warning", "Evidence missing"),
}
KEY_SASS_CLASSES = 6  # the most frequent SASS classes (mla_var3.analysis.sass) a row shows
HEADER = ["device", "arch", "median µs (p10–p90, n)", "TFLOP/s", "GB/s", "% of its run's ceilings", "regs",
          "SMEM static + dyn B", "SASS classes", "date · commit"]  # fmt: skip
NCU_NOTE = (
    "ncu replays one launch serialized, with its own cache flushes and at the clocks of that moment "
    "(`--clock-control none`), so its duration differs from the median of back-to-back timed launches above."
)


def _raise_or(markdown: str, problem: str | None) -> str:
    if problem:
        raise ClaimProblem(problem, markdown)
    return markdown


# --- evidence("kernel", "config") -----------------------------------------------------------


def _row(r: Record) -> list[str]:
    t, rf = r.timing, r.roofline()
    analysis = r.analysis
    res = analysis.resources[0] if analysis and analysis.resources else None
    classes = sorted((analysis.sass_classes if analysis else {}).items(), key=lambda kv: (-kv[1], kv[0]))
    key = ", ".join(f"{k} {v}" for k, v in classes[:KEY_SASS_CLASSES]) or MISSING
    clocks = r.clocks
    device = r.device.short() if r.mode == "run" else f"compile-only ({r.device.compiled_on or 'cpu'})"
    if clocks and clocks.before.sm_mhz and clocks.after.sm_mhz:
        device += f" (SM {clocks.before.sm_mhz:.0f} → {clocks.after.sm_mhz:.0f} MHz around the timing)"
    return [
        stale_cell(device, record_staleness(r)),
        r.arch,
        f"{fmt(t.median_us, 2)} ({fmt(t.p10_us, 2)}–{fmt(t.p90_us, 2)}, n={t.n})" if t else MISSING,
        fmt(rf.flops_per_s / 1e12) if rf else MISSING,
        fmt(rf.bytes_per_s / 1e9, 0) if rf else MISSING,
        f"{fmt(rf.pct_of.get('matmul'))} % matmul / {fmt(rf.pct_of.get('copy'))} % copy" if rf else MISSING,
        fmt(res.registers if res else None, 0),
        f"{fmt(res.static_smem_bytes if res else None, 0)} + {fmt(analysis.dynamic_smem_bytes if analysis else None, 0)}",
        key,
        f"{r.date[:10]} · {r.git_sha[:10]}",
    ]


def _ceilings_line(r: Record) -> str:
    if not r.ceilings:
        return ""
    measured = "; ".join(f"{c.label()} ({c.method})" for c in r.ceilings)
    sheet = DATASHEETS.get(r.device.name or "")
    cited = f" Datasheet peaks for comparison: {', '.join(c.label() for c in sheet.ceilings)} ({sheet.source})." if sheet else ""
    return f"Ceilings of the {r.device.short()} run, measured in the same process right after the kernel: {measured}.{cited}"


def render_status(status: EvidenceStatus) -> str:
    kind, title = _ADMONITION[status.status]
    lines = [f'!!! {kind} "{title}: `{status.kernel}` · `{status.config}`"', f"    {html.escape(status.detail)}", ""]
    if status.records:
        lines += ["    " + line for line in markdown_table(HEADER, [_row(r) for r in status.records])]
        first = status.records[0]
        lines += ["", f"    Data: {first.data}. Source hash `{first.source_hash[:12]}`"
                  + (f", harness `{first.harness_hash[:12]}`." if first.harness_hash else ".")]  # fmt: skip
        for record in status.records:
            extra = [_ceilings_line(record), *_profile_sections(record)]
            lines += [("    " + line) if line else "" for line in ["", *extra] if line is not None]
    return "\n".join(lines) + "\n"


def _census_line(r: Record) -> list[str]:
    """The mismatch census of a run record, in one sentence."""
    c = r.census
    check = r.correctness
    failed = ([f"The checked launch failed its check ({html.escape(check.summary())}): its timing was skipped."]
              if check and not check.passed else [])  # fmt: skip
    if c is None:
        return ["", *failed] if failed else []
    total = c.launches * c.elements_per_launch
    verdict = (f"A mismatch is expected ({html.escape(c.expected)}): the counts are the evidence, not a verdict."
               if c.expected else "None may occur: one mismatched element fails the record.")  # fmt: skip
    return ["", f"**Mismatch census** ({c.launches} launches on NaN-poisoned outputs, every element compared exactly "
            f"with the reference): {c.mismatched:,} of {total:,} elements differed ({100 * c.mismatched_fraction:.4g} %), "
            f"in {c.launches_with_mismatch} of {c.launches} launches; {c.nonfinite:,} of them non-finite. {verdict}",
            *([""] + failed if failed else [])]  # fmt: skip


def _profile_sections(r: Record) -> list[str]:
    """The census, and the ncu, sanitizer and timeline sections of a run record, each with its own date."""
    out: list[str] = _census_line(r)
    ncu = r.ncu
    if ncu:
        stalls = ", ".join(f"{name} {value:.2f}" for name, value in ncu.top_stalls[:3])
        clock = f"{ncu.sm_clock_hz / 1e6:.0f} MHz" if ncu.sm_clock_hz else MISSING
        out += [
            "",
            f"**ncu** ({ncu.ncu_version or 'ncu'}, --clock-control none, {ncu.date[:10]}, SM clock seen {clock}):",
            "",
            *markdown_table(
                ["duration µs", "SM %", "TC %", "DRAM %", "occupancy %", "regs", "SMEM/block B", "L2 hit %", "top stalls (cycles per issue)"],
                [[fmt(ncu.duration_ns / 1e3 if ncu.duration_ns else None, 2), fmt(ncu.sm_throughput_pct), fmt(ncu.tc_pct),
                  fmt(ncu.dram_throughput_pct), fmt(ncu.achieved_occupancy_pct), fmt(ncu.registers_per_thread, 0),
                  fmt(ncu.smem_per_block_bytes, 0), fmt(ncu.l2_hit_rate_pct), stalls or MISSING]],
            ),  # fmt: skip
            "",
            NCU_NOTE if r.timing else "",
        ]
    san = r.sanitizer
    if san:
        tools = ", ".join(f"{name}: {'clean' if t.passed else 'FAILED'} ({t.errors} errors, {t.allowed} allowed)" for name, t in san.tools.items())
        out += ["", f"**compute-sanitizer** ({san.date[:10]}, shape {san.shape}): {tools}."]
    timeline = r.annotation.timeline if r.annotation else None
    if timeline:
        frac = timeline.overlap.overlap_fraction
        out += [
            "",
            f"**In-kernel timeline** ({r.annotation.date[:10]}): MMA time with loads in flight "  # type: ignore[union-attr]
            + (f"{100 * frac:.0f} %" if frac is not None else MISSING) + ".",
            "",
            svg_image(timeline.svg(), "in-kernel timeline", "timeline"),
        ]
    return out


def render_evidence_block(kernel: str, config: str) -> str:
    """A Markdown block: the evidence table for ``kernel`` at ``config`` with its status badge."""
    status = status_of(kernel, config)
    return _raise_or(render_status(status), None if status.ok else f"{kernel}/{config} is {status.status}: {status.detail}")


# --- evidence("kernel", "config", "field") ---------------------------------------------------

DERIVED = {"tflops": ("roofline.flops_per_s", 1e-12, " TFLOP/s"), "gbps": ("roofline.bytes_per_s", 1e-9, " GB/s")}
UNITS = {"median_us": " µs", "p10_us": " µs", "p90_us": " µs", "mean_us": " µs"}


def record_view(record: Record) -> dict[str, Any]:
    """The record as JSON data plus ``roofline`` (against its own run's ceilings): what a field path reads."""
    rf = record.roofline()
    return dump(record) | {"roofline": rf.to_dict() if rf else None}


def _named_item(items: Any, text: str, record: Record, field: str) -> Any:
    """The one entry of a list of dicts whose ``name`` (or ``kernel``) contains ``text`` (``kernels[combine]``,
    ``analysis.resources[attention].registers``)."""
    found = [item for item in items if isinstance(item, dict) and text in str(item.get("name", item.get("kernel", "")))] if isinstance(items, list) else []
    if len(found) != 1:
        raise EvidenceError(
            f"record {record.kernel}/{record.config}: field {field!r} selects {len(found)} entries named like "
            f"{text!r}; name one entry exactly (its names are in the record)"
        )
    return found[0]


def record_value(record: Record, field: str) -> tuple[float, str]:
    """A number from a record by dotted path (``timing.median_us``; ``kernels[combine]`` picks the list
    entry whose name contains ``combine``) or a derived name (``tflops``), and its unit."""
    path, scale, unit = DERIVED.get(field, (field, 1.0, ""))
    value: Any = record_view(record)
    for part in path.split("."):
        key, _, pick = part.partition("[")
        if not isinstance(value, dict) or key not in value or value[key] is None:
            raise EvidenceError(f"record {record.kernel}/{record.config}/{record.device_slug} has no field {field!r}")
        value = value[key]
        if pick:
            value = _named_item(value, pick.removesuffix("]"), record, field)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise EvidenceError(f"record {record.kernel}/{record.config}: field {field!r} is not a number")
    name = path.rsplit(".", 1)[-1]
    if name.endswith("_fraction"):  # shown as a percentage
        return 100 * float(value), " %"
    if not unit:
        unit = UNITS.get(name, " %" if name.endswith("_pct") or name.startswith("pct_of") else "")
    return float(value) * scale, unit


def _digits(value: float, unit: str) -> int:
    """Decimals to show: none for counts and values >= 100, two as a rule, and two significant digits
    below 0.1 (a relative error of 0.0021 must not read 0.00)."""
    if (not unit and value.is_integer()) or abs(value) >= 100:
        return 0
    if value and abs(value) < 0.1:
        return 1 - math.floor(math.log10(abs(value)))
    return 2


def _pick(status: EvidenceStatus) -> Record | None:
    runs = [r for r in status.records if r.mode == "run"]
    return (runs or list(status.records) or [None])[0]


def render_evidence_value(kernel: str, config: str, field: str) -> str:
    """One value from a record (e.g. ``timing.median_us``), formatted, with its provenance as a tooltip."""
    status = status_of(kernel, config)
    record = _pick(status)
    if record is None:
        shown = span(f"missing: {html.escape(kernel)}/{html.escape(config)}/{html.escape(field)}", status.detail, "missing")
        raise ClaimProblem(f"{kernel}/{config} is missing: {status.detail}", shown)
    section = field.split(".", 1)[0]
    if section == "census" and record.census is None:
        why = (f"{kernel}/{config} has no census: declare one in mla_var3/evidence/census.py and re-run it on a GPU "
               f"(`python -m mla_var3.evidence verify --force --only '{kernel}/{config}'`)")  # fmt: skip
        raise ClaimProblem(why, span(f"missing: {html.escape(field)}", why, "missing"))
    if section in PROFILE_SECTIONS and getattr(record, section) is None:
        # A re-verify drops the profile sections of the old run (they described older code).
        why = f"{kernel}/{config} has no {section} section yet: run `python -m mla_var3.evidence profile --prof-type {PROF_TYPE.get(section, section)}`"
        raise ClaimProblem(why, span(f"missing: {html.escape(field)}", why, "missing"))
    value, unit = record_value(record, field)
    title = f"{record.device.short() if record.mode == 'run' else record.arch}, {record.config}, {record.date[:10]}, {record.git_sha[:10]}"
    stale = None if status.ok else status.status
    digits = _digits(value, unit)
    shown = span(f"{value:,.{digits}f}{unit}", title, stale)
    return _raise_or(shown, None if status.ok else f"{kernel}/{config} is {status.status}: {status.detail}")


# --- speedup("group", "config", "member") and compare("group", "config") ------------------------


def _group_record(status: GroupStatus) -> GroupRecord | None:
    return latest(list(status.records)) if status.records else None


def _group_problem(status: GroupStatus) -> str | None:
    return None if status.ok else f"group {status.group}/{status.config} is {status.status}: {status.detail}"


def render_speedup(group: str, config: str, member: str) -> str:
    """The member's speedup over the group's reference, ``1.02× (0.99–1.05, on par)``, with its provenance."""
    status = group_status(group, config)
    record = _group_record(status)
    if record is None:
        shown = span(f"missing: speedup of {html.escape(member)} in {html.escape(group)}/{html.escape(config)}", status.detail, "missing")
        raise ClaimProblem(f"group {group}/{config} is missing: {status.detail}", shown)
    m = record.member(member)
    if m.speedup is None:
        raise EvidenceError(f"{member} is the reference of group {group}: it has no speedup; name another member")
    title = (f"t({record.reference}) / t({member}), geometric mean of {m.speedup.rounds} paired rounds with its "
             f"95 % bootstrap interval; {record.device.short()}, {record.date[:10]}, {record.git_sha[:10]}")  # fmt: skip
    stale = member_staleness(record, m) or (None if status.ok else status.status)
    shown = span(html.escape(m.speedup.text()), title, stale)
    return _raise_or(shown, _group_problem(status) or (f"group {group}/{config}: {stale}" if stale else None))


def _marked_group_table(status: GroupStatus) -> str:
    record = _group_record(status)
    if record is None:
        return f'!!! warning "Comparison missing: group `{status.group}` · `{status.config}`"\n    {html.escape(status.detail)}\n'
    table = record_table(record)
    if status.ok:
        return table + "\n"
    indented = "\n".join("    " + line if line else "" for line in table.splitlines())
    title = f"{_ADMONITION[status.status][1]}: group `{status.group}` · `{status.config}`"
    return f'!!! warning "{title}"\n    {html.escape(status.detail)}\n\n{indented}\n'


def render_comparison(group: str, config: str) -> str:
    """The comparison table of ``group`` at ``config`` (every member timed in one process on one GPU)."""
    status = group_status(group, config)
    return _raise_or(_marked_group_table(status), _group_problem(status))


# --- roofline("kernel/config, ...") ---------------------------------------------------------


def _run_of(record: Record, label: str) -> RooflineRun:
    assert record.timing is not None and record.ceilings  # the caller passes run records with timing
    point = roofline_for_dtype(record.flops, record.bytes, record.timing.median_us * 1e-6, record.ceilings, record.dtype, label)
    own = [c for c in record.ceilings if c.kind == "memory" or c.name == f"matmul_{record.dtype}"]
    return RooflineRun(f"{label}: {record.device.short()} {record.date[:10]}", tuple(own or record.ceilings), (point,))


def _group_run(record: GroupRecord, stale: str | None) -> RooflineRun:
    dtypes = {m.dtype for m in record.members}
    points = tuple(
        roofline_for_dtype(m.flops, m.bytes, m.timing.median_us * 1e-6, record.ceilings, m.dtype,
                           m.member + (f" ({stale})" if stale else ""))  # fmt: skip
        for m in record.members
    )
    own = tuple(c for c in record.ceilings if c.kind == "memory" or c.name in {f"matmul_{d}" for d in dtypes})
    return RooflineRun(f"group {record.group}: {record.device.short()} {record.date[:10]}", own, points)


def render_roofline(points: list[tuple[str, ...]]) -> str:
    """A roofline figure: each run record's point against its own run's ceilings, datasheet peaks beside them."""
    runs: list[RooflineRun] = []
    problems: list[str] = []
    devices: set[str] = set()
    for point in points:
        if len(point) == 3 and point[0] == "groups":
            status = group_status(point[1], point[2])
            record = _group_record(status)
            if record is None or not status.ok:
                problems.append(_group_problem(status) or "")
            if record is not None:
                runs.append(_group_run(record, None if status.ok else status.status))
                devices.add(record.device.name or "")
            continue
        if len(point) != 2:
            raise EvidenceError(f"roofline point {'/'.join(point)!r} must be 'kernel/config' or 'groups/<group>/<config>'")
        kernel, config = point
        status = status_of(kernel, config)
        record = _pick(status)
        if record is None or record.mode != "run" or record.timing is None or not record.ceilings:
            problems.append(f"{kernel}/{config}: no run record with timing ({status.detail})")
            continue
        if not status.ok:
            problems.append(f"{kernel}/{config} is {status.status}: {status.detail}")
        runs.append(_run_of(record, f"{kernel} {config}" + ("" if status.ok else f" ({status.status})")))
        devices.add(record.device.name or "")
    if not runs:
        shown = '<p class="roofline-missing"><em>Roofline: no run records for these points.</em></p>'
        raise ClaimProblem("roofline: " + "; ".join(problems), shown)
    sheet = DATASHEETS.get(next(iter(devices))) if len(devices) == 1 else None
    reference: tuple[Ceiling, ...] = sheet.ceilings if sheet else ()
    figure = draw_roofline(runs, reference, title="Roofline: each point against the ceilings measured in its own run",
                             reference_label=f"{sheet.device} datasheet" if sheet else "")  # fmt: skip
    caption = ("Ceilings: same-run device-to-device copy (a read-mostly kernel can exceed it) and cuBLAS matmuls "
               "per dtype, measured in each point's own run" + (f"; dotted: {sheet.source}" if sheet else "") + ".")  # fmt: skip
    shown = (f'<figure class="roofline">{svg_image(figure.svg, "roofline", "roofline")}'
             f"<figcaption>{html.escape(caption)}</figcaption></figure>")  # fmt: skip
    return _raise_or(shown, "; ".join(p for p in problems if p) or None)
