"""Nsight Compute (``ncu``): one kernel launch measured with a fixed SM90 metric set.

``ncu_command`` builds the command line, ``run_ncu`` runs it with a timeout, and
``parse_ncu_csv`` reads the ``--csv --page raw`` output into :class:`NcuResult`, the record's
``ncu`` section. Clocks are never locked (``--clock-control none``): the GPUs are shared, so
the SM clock the kernel ran at is measured and recorded instead (the site page ``docs/clocks.md``).

The raw page prints a header row of metric names after fixed columns (``ID``, ``Kernel
Name``, ``Block Size``, ...), a row of units, then one row per profiled launch. Values may
carry thousands separators (``1,552,384``) and units scale unless ``--print-units base``.
"""

from __future__ import annotations

import csv
import re
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from mla_var3.profile.errors import ProfileError
from mla_var3.profile.process import require_tool, run_tool

# --8<-- [start:sm90_metrics]
# Field of NcuResult -> ncu metric. Every name was checked against published SM90 (GH100)
# metric lists; wgmma work counts in the HMMA tensor pipe on SM90 (there is no
# `sm__pipe_tensor_op_gmma_cycles_active`), and `gmma` is the SM90-only warp-stall reason
# "waiting for a wgmma to complete".
SM90_FIELDS: dict[str, str] = {
    "duration_ns": "gpu__time_duration.sum",
    "sm_throughput_pct": "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "tc_pct": "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
    "tensor_pipe_pct": "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
    "wgmma_issue_pct": "sm__inst_executed_pipe_tensor_op_gmma.avg.pct_of_peak_sustained_active",
    "dram_throughput_pct": "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
    "achieved_occupancy_pct": "sm__warps_active.avg.pct_of_peak_sustained_active",
    "theoretical_occupancy_pct": "sm__maximum_warps_per_active_cycle_pct",
    "registers_per_thread": "launch__registers_per_thread",
    "smem_static_bytes": "launch__shared_mem_per_block_static",
    "smem_dynamic_bytes": "launch__shared_mem_per_block_dynamic",
    "l2_hit_rate_pct": "lts__t_sector_hit_rate.pct",
    "sm_clock_hz": "sm__cycles_elapsed.avg.per_second",
    "dram_clock_hz": "dram__cycles_elapsed.avg.per_second",
    "cluster_size": "launch__cluster_size",
}
# Warp-stall reasons on SM90, as cycles stalled per issued instruction (the Warp State
# Statistics section). `selected` is the issuing warp itself, kept but never a "top stall".
SM90_STALL_REASONS: tuple[str, ...] = (
    "barrier", "branch_resolving", "dispatch_stall", "drain", "gmma", "imc_miss",
    "lg_throttle", "long_scoreboard", "math_pipe_throttle", "membar", "mio_throttle",
    "misc", "no_instruction", "not_selected", "selected", "short_scoreboard", "sleeping",
    "tex_throttle", "wait",
)
# --8<-- [end:sm90_metrics]
NOT_A_STALL = frozenset({"selected"})
TOP_STALLS = 5


def stall_metric(reason: str) -> str:
    """The ncu metric of one warp-stall reason (cycles per issued instruction)."""
    return f"smsp__average_warps_issue_stalled_{reason}_per_issue_active.ratio"


SM90_METRICS: tuple[str, ...] = tuple(SM90_FIELDS.values()) + tuple(stall_metric(r) for r in SM90_STALL_REASONS)

_STALL_RE = re.compile(r"^smsp__average_warps_issue_stalled_(\w+?)_per_issue_active\.ratio$")
# Unit -> factor to the base unit of its kind (ns, byte, Hz); ncu's K/M/G are decimal.
_SCALE = {
    "nsecond": 1.0, "usecond": 1e3, "msecond": 1e6, "second": 1e9,
    "byte": 1.0, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9,
    "hz": 1.0, "Khz": 1e3, "Mhz": 1e6, "Ghz": 1e9,
    "cycle/second": 1.0, "cycle/usecond": 1e6, "cycle/nsecond": 1e9,
}
_SCALED_FIELDS = {"duration_ns", "smem_static_bytes", "smem_dynamic_bytes", "sm_clock_hz", "dram_clock_hz"}
FIXED_COLUMNS = ("ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream",
                 "Block Size", "Grid Size", "Device", "CC")


@dataclass
class NcuResult:
    """One profiled launch: the fixed metric set, the stalls, and how it was measured.

    Percentages are 0-100. ``tc_pct`` is the HMMA tensor pipe (fp16/bf16 MMA, wgmma
    included), ``tensor_pipe_pct`` every tensor-pipe op (also fp8/int8), ``wgmma_issue_pct``
    the share of wgmma instruction issue. A metric ncu did not report is ``None``.
    ``stalls`` maps each reason to cycles per issued instruction; ``top_stalls`` lists the
    largest (``selected`` excluded), largest first. ``raw`` keeps every metric as ncu printed
    it (value, unit).
    """

    kernel_name: str
    block_size: str
    grid_size: str
    compute_capability: str
    duration_ns: float | None = None
    sm_throughput_pct: float | None = None
    tc_pct: float | None = None
    tensor_pipe_pct: float | None = None
    wgmma_issue_pct: float | None = None
    dram_throughput_pct: float | None = None
    achieved_occupancy_pct: float | None = None
    theoretical_occupancy_pct: float | None = None
    registers_per_thread: float | None = None
    smem_static_bytes: float | None = None
    smem_dynamic_bytes: float | None = None
    l2_hit_rate_pct: float | None = None
    sm_clock_hz: float | None = None
    dram_clock_hz: float | None = None
    cluster_size: float | None = None
    stalls: dict[str, float] = field(default_factory=dict)
    top_stalls: list[tuple[str, float]] = field(default_factory=list)
    raw: dict[str, list[str]] = field(default_factory=dict)
    command: list[str] = field(default_factory=list)
    ncu_version: str | None = None

    @property
    def smem_per_block_bytes(self) -> float | None:
        """Static plus dynamic shared memory per block, in bytes."""
        if self.smem_static_bytes is None or self.smem_dynamic_bytes is None:
            return None
        return self.smem_static_bytes + self.smem_dynamic_bytes

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready dict, with ``smem_per_block_bytes`` included."""
        out = asdict(self)
        out["top_stalls"] = [[name, value] for name, value in self.top_stalls]
        out["smem_per_block_bytes"] = self.smem_per_block_bytes
        return out


def ncu_command(
    target: Sequence[str],
    *,
    kernel_regex: str,
    launch_skip: int = 0,
    metrics: Sequence[str] = SM90_METRICS,
    ncu: str = "ncu",
    log_file: str | None = None,
) -> list[str]:
    """The ``ncu`` command line that measures the ``launch_skip``-th matching launch of ``target``."""
    command = [
        ncu, "--clock-control", "none", "--target-processes", "all",
        "--csv", "--page", "raw", "--print-units", "base",
        "--metrics", ",".join(metrics),
        "-k", f"regex:{kernel_regex}", "--launch-skip", str(launch_skip), "--launch-count", "1",
    ]
    if log_file is not None:
        command += ["--log-file", log_file]
    return command + list(target)


def _number(text: str) -> float | None:
    text = text.strip().replace(",", "")
    if text in ("", "n/a"):
        return None
    try:
        return float(text)
    except ValueError:
        return None


def _scaled(value: float | None, unit: str) -> float | None:
    if value is None:
        return None
    return value * _SCALE.get(unit.strip().removesuffix("/block"), 1.0)


def _result(row: Mapping[str, str], units: Mapping[str, str]) -> NcuResult:
    result = NcuResult(
        kernel_name=row.get("Kernel Name", ""),
        block_size=row.get("Block Size", ""),
        grid_size=row.get("Grid Size", ""),
        compute_capability=row.get("CC", ""),
        raw={name: [value, units.get(name, "")] for name, value in row.items() if name not in FIXED_COLUMNS},
    )
    for name, metric in SM90_FIELDS.items():
        if metric in row:
            value = _number(row[metric])
            if name in _SCALED_FIELDS:
                value = _scaled(value, units.get(metric, ""))
            setattr(result, name, value)
    for metric, text in row.items():
        match = _STALL_RE.match(metric)
        value = _number(text)
        if match and value is not None:
            result.stalls[match.group(1)] = value
    ranked = sorted(((r, v) for r, v in result.stalls.items() if r not in NOT_A_STALL), key=lambda rv: -rv[1])
    result.top_stalls = ranked[:TOP_STALLS]
    return result


def parse_ncu_csv(text: str) -> list[NcuResult]:
    """Every profiled launch in ``ncu --csv --page raw`` output (other lines are skipped)."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID","Process ID"')), None)
    if start is None:
        raise ProfileError("ncu printed no `--page raw` CSV table (no header row starting with \"ID\")")
    table = [lines[start]]
    for line in lines[start + 1:]:
        if not line.startswith('"'):
            break
        table.append(line)
    header, *rows = list(csv.reader(table))
    units: dict[str, str] = {}
    if rows and rows[0][0] == "":
        units = dict(zip(header, rows[0], strict=True))
        rows = rows[1:]
    return [_result(dict(zip(header, row, strict=True)), units) for row in rows]


def ncu_version(ncu: str = "ncu") -> str | None:
    """The last line of ``ncu --version`` (e.g. ``Version 2025.3.1.0 (build ...)``)."""
    try:
        done = subprocess.run([ncu, "--version"], capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = done.stdout.strip().splitlines()
    return lines[-1] if lines else None


def run_ncu(
    target: Sequence[str],
    *,
    kernel_regex: str,
    launch_skip: int = 0,
    metrics: Sequence[str] = SM90_METRICS,
    timeout_s: float = 600.0,
    env: Mapping[str, str] | None = None,
) -> NcuResult:
    """Measure one launch of ``target`` (a command line) under ``ncu``; raise if none was measured."""
    ncu = require_tool("ncu")
    with tempfile.TemporaryDirectory(prefix="ncu-") as tmp:
        log = str(Path(tmp) / "ncu.csv")
        command = ncu_command(target, kernel_regex=kernel_regex, launch_skip=launch_skip,
                              metrics=metrics, ncu=ncu, log_file=log)
        done = run_tool(command, timeout_s, env=env)
        text = Path(log).read_text() if Path(log).exists() else ""
    output = text + "\n" + done.stdout + "\n" + done.stderr
    if done.timed_out:
        raise ProfileError(f"ncu did not finish within {timeout_s:.0f} s: {' '.join(command)}")
    problems = [line for line in output.splitlines() if line.startswith("==ERROR==")]
    if done.returncode != 0 or problems:
        tail = "; ".join(problems) or output.strip()[-2000:]
        raise ProfileError(f"ncu exited with status {done.returncode}: {tail}")
    results = parse_ncu_csv(text if '"ID","Process ID"' in text else done.stdout)
    if len(results) != 1:
        raise ProfileError(
            f"ncu measured {len(results)} launches matching regex:{kernel_regex} after skipping "
            f"{launch_skip}; expected exactly one (check --launch-skip and the kernel name)"
        )
    result = results[0]
    result.command = command
    result.ncu_version = ncu_version(ncu)
    return result


def query_metrics_command(chip: str = "gh100", ncu: str = "ncu") -> list[str]:
    """``ncu --query-metrics`` for ``chip``; no GPU needed. Feed its output to :func:`missing_metrics`."""
    return [ncu, "--query-metrics", "--chip", chip]


def missing_metrics(query_output: str, metrics: Sequence[str] = SM90_METRICS) -> list[str]:
    """The metrics whose base name ``ncu --query-metrics`` does not list: a pre-flight check
    before the first run on a new chip or ncu version (``launch__`` metrics are launch
    attributes that the query does not list; they are skipped)."""
    listed = {line.split()[0] for line in query_output.splitlines() if line.strip()}
    return [m for m in metrics if not m.startswith("launch__") and m.split(".")[0] not in listed]
