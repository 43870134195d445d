"""compute-sanitizer: memcheck, racecheck and synccheck on one run, judged against an allow-list.

Each tool runs the target command once (``--report-api-errors no``: without it the CUDA
runtime's benign ``cuGetProcAddress`` probes are reported as errors). Its output is parsed
into findings; a finding matching an allow-list entry for that tool is *allowed*, every
other error fails the tool. A tool also fails when its summary is missing (it did not
finish), when the target itself failed, or when the summary counts more errors than the
findings printed (unprinted errors cannot be allow-listed).

The allow-list is YAML, a list of entries ``{tool, pattern, why}``: ``pattern`` is a regular
expression searched in the finding's text, and ``why`` (mandatory) says why the finding is
a false positive and how that was shown.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from mla_var3.profile.errors import ProfileError
from mla_var3.profile.process import require_tool, run_tool

TOOLS = ("memcheck", "racecheck", "synccheck")
ERROR_EXITCODE = 1

_PREFIX = "========="
_ERROR_SUMMARY = re.compile(r"ERROR SUMMARY: (\d+) errors?")
_RACE_SUMMARY = re.compile(r"RACECHECK SUMMARY: (\d+) hazards? displayed \((\d+) errors?, (\d+) warnings?\)")
# Top-level lines of the tool's own that are not findings.
_NOT_FINDINGS = re.compile(
    r"^(COMPUTE-SANITIZER|ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY|Target application returned"
    r"|Process ID|Note:|$)"
)
# "at kernel_cutlass_x+0x1b0 in /src/k.py:12" (CUDA 12+) or "at 0x1b0 in /src/k.py:12:kernel(...)" (older).
_AT = re.compile(r"^\s*at (?P<where>\S+)(?: in (?P<loc>.+))?$")


@dataclass(frozen=True)
class AllowEntry:
    """One allow-listed false positive: which tool, what it looks like, and why it is benign."""

    tool: str
    pattern: str
    why: str


@dataclass
class Finding:
    """One report of a tool: its first line (``kind``), the kernel and source location named,
    the whole block of text, and the reason it is allowed (``None`` if it is not)."""

    tool: str
    kind: str
    severity: str
    kernel: str | None
    location: str | None
    text: str
    allowed_because: str | None = None


@dataclass
class ToolResult:
    """One tool's verdict: ``errors`` not allowed, ``allowed`` ones, and why it failed if it did."""

    tool: str
    passed: bool
    errors: int
    allowed: int
    warnings: int
    reported_errors: int | None
    exit_code: int | None
    findings: list[Finding] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)
    command: list[str] = field(default_factory=list)


@dataclass
class SanitizerResult:
    """The three tools' verdicts; it passes only when every tool that ran passed."""

    tools: dict[str, ToolResult]

    @property
    def passed(self) -> bool:
        return all(result.passed for result in self.tools.values())

    def to_dict(self) -> dict[str, object]:
        return {"passed": self.passed, "tools": {name: asdict(r) for name, r in self.tools.items()}}


def load_allow_list(path: str | Path) -> list[AllowEntry]:
    """Read and check an allow-list file; a malformed entry is a :class:`ProfileError` naming it."""
    import yaml

    data = yaml.safe_load(Path(path).read_text()) or []
    if not isinstance(data, list):
        raise ProfileError(f"{path}: the allow-list must be a YAML list of {{tool, pattern, why}} entries")
    return [_entry(item, f"{path}: entry {number}") for number, item in enumerate(data, start=1)]


def _entry(item: object, where: str) -> AllowEntry:
    if not isinstance(item, Mapping):
        raise ProfileError(f"{where} is not a mapping with keys tool, pattern, why")
    unknown = set(item) - {"tool", "pattern", "why"}
    if unknown:
        raise ProfileError(f"{where} has unknown keys {sorted(unknown)}; allowed: tool, pattern, why")
    tool, pattern, why = item.get("tool"), item.get("pattern"), item.get("why")
    if tool not in TOOLS:
        raise ProfileError(f"{where}: tool must be one of {', '.join(TOOLS)}, not {tool!r}")
    if not isinstance(why, str) or not why.strip():
        raise ProfileError(f"{where} ({tool}, {pattern!r}) has no `why`: say why the finding is a false positive")
    if not isinstance(pattern, str) or not pattern:
        raise ProfileError(f"{where} has no `pattern` (a regular expression searched in the finding)")
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ProfileError(f"{where}: pattern {pattern!r} is not a regular expression: {exc}") from exc
    return AllowEntry(tool=tool, pattern=pattern, why=why.strip())


def sanitizer_command(tool: str, target: Sequence[str], sanitizer: str = "compute-sanitizer") -> list[str]:
    """The ``compute-sanitizer`` command line that runs ``target`` under ``tool``."""
    if tool not in TOOLS:
        raise ProfileError(f"unknown sanitizer tool {tool!r}; choose from {', '.join(TOOLS)}")
    return [sanitizer, "--tool", tool, "--report-api-errors", "no",
            "--error-exitcode", str(ERROR_EXITCODE), *target]


def _blocks(text: str) -> list[list[str]]:
    """The tool's lines grouped into blocks: a top-level line and the indented lines under it."""
    blocks: list[list[str]] = []
    for line in text.splitlines():
        if not line.startswith(_PREFIX):
            continue
        body = line[len(_PREFIX):]
        if body.startswith("  ") and blocks:
            blocks[-1].append(body.strip())
        else:
            blocks.append([body.strip()])
    return blocks


def _finding(tool: str, block: list[str]) -> Finding:
    head = block[0]
    severity = "warning" if head.lower().startswith("warning") else "error"
    kernel = location = None
    for line in [head, *block[1:]]:
        for part in re.split(r"\bat\b", line)[1:]:
            match = _AT.match("at" + part)
            if match is None:
                continue
            where, loc = match.group("where"), match.group("loc")
            if "+0x" in where:
                kernel, location = where.split("+0x")[0], loc
            elif loc and where.startswith("0x"):
                location, _, kernel = loc.rpartition(":")
            if kernel:
                return Finding(tool, head, severity, kernel, location, "\n".join(block))
    return Finding(tool, head, severity, kernel, location, "\n".join(block))


def judge(tool: str, output: str, exit_code: int | None, allow_list: Sequence[AllowEntry] = ()) -> ToolResult:
    """Parse one tool's output and decide pass/fail against the allow-list."""
    blocks = _blocks(output)
    findings = [_finding(tool, b) for b in blocks if not _NOT_FINDINGS.match(b[0])]
    for finding in findings:
        entry = next((e for e in allow_list if e.tool == tool and re.search(e.pattern, finding.text)), None)
        finding.allowed_because = entry.why if entry else None
    race = _RACE_SUMMARY.search(output)
    summary = _ERROR_SUMMARY.search(output)
    reported = int(race.group(2)) if race else int(summary.group(1)) if summary else None
    errors = [f for f in findings if f.severity == "error"]
    not_allowed = sum(1 for f in errors if f.allowed_because is None)
    reasons = []
    if exit_code is None:
        reasons.append("timed out before the tool finished")
    if reported is None:
        reasons.append(f"no {tool} summary line: the tool did not finish")
    elif reported > len(errors):
        reasons.append(f"the summary counts {reported} errors but {len(errors)} were printed")
    if "Target application returned an error" in output or exit_code not in (0, ERROR_EXITCODE, None):
        reasons.append(f"the target itself failed (exit status {exit_code})")
    elif exit_code == ERROR_EXITCODE and not errors:
        reasons.append(f"exit status {ERROR_EXITCODE} with no finding printed")
    if not_allowed:
        reasons.append(f"{not_allowed} error(s) not on the allow-list")
    return ToolResult(
        tool=tool,
        passed=not reasons,
        errors=not_allowed,
        allowed=len(errors) - not_allowed,
        warnings=len(findings) - len(errors),
        reported_errors=reported,
        exit_code=exit_code,
        findings=findings,
        reasons=reasons,
    )


def run_sanitizer(
    target: Sequence[str],
    *,
    tools: Sequence[str] = TOOLS,
    allow_list: Sequence[AllowEntry] = (),
    timeout_s: float = 600.0,
    env: Mapping[str, str] | None = None,
) -> SanitizerResult:
    """Run ``target`` under each tool in turn (each with its own timeout) and judge the outputs."""
    sanitizer = require_tool("compute-sanitizer")
    results: dict[str, ToolResult] = {}
    for tool in tools:
        command = sanitizer_command(tool, target, sanitizer)
        done = run_tool(command, timeout_s, env=env)
        result = judge(tool, done.stdout + "\n" + done.stderr, done.returncode, allow_list)
        result.command = command
        results[tool] = result
    return SanitizerResult(results)
