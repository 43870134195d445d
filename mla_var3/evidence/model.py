"""The evidence record model: one typed shape for the runner, the store, import, rendering and compare.

Two kinds of record, both JSON files read and written only through :mod:`mla_var3.evidence.typed`:

- :class:`Record` -- one kernel at one shape on one device:
  ``evidence/<kernel>/<config>/<device>.json``. ``config`` is the **shape key**
  (``m8192-n8192-k8192-bfloat16``: dims, then the dtype; it is the directory name and what
  pages cite); ``tuning`` is the kernel's tuning (tile sizes, stages...). ``device`` is a
  slug: ``nvidia-h200`` for a run, ``compile-sm_100a`` for a GPU-free compile.
- :class:`GroupRecord` -- a comparison group timed in one process on one GPU:
  ``evidence/groups/<group>/<config>/<device>.json`` (``groups`` is reserved: no kernel may
  take that name).

The measured parts are the kernel layer's own dataclasses (``Timing``, ``ClockSample``,
``CheckResult``, ``Ceiling``, ``NcuResult``...), so no key is renamed between layers. Records
hold data -- times, samples, spans -- never pictures or paths of the machine that measured
them. Loading checks every field (:func:`load_record`); a problem is one line naming the file
and the field.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
import statistics
from dataclasses import dataclass, field
from typing import Any, Literal

from mla_var3.analysis.resources import KernelResources
from mla_var3.evidence.stats import Speedup
from mla_var3.evidence.typed import EvidenceError, derived, dump, parse
from mla_var3.kernel.bench import ClockSample, Timing
from mla_var3.kernel.check import CheckResult, OutputCheck
from mla_var3.kernel.plan import DTYPES
from mla_var3.profile.annotation import TraceSummary
from mla_var3.profile.ncu import NcuResult
from mla_var3.profile.roofline import Ceiling, Roofline, roofline_for_dtype
from mla_var3.profile.sanitizer import SanitizerResult
from mla_var3.profile.timeline import Timeline, TmaOverlap

SCHEMA_VERSION = 2
# Group records: 3 stores each round's per-member median (RoundSummary), not every launch's time.
GROUP_SCHEMA_VERSION = 3
GROUPS_DIR = "groups"
DEVICE_SLUG = re.compile(r"^(nvidia-[a-z0-9]+(-[a-z0-9]+)*|compile-sm_\d+[a-z]?)$")
NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_DIM = re.compile(r"^([a-z_]+?)(\d+)$")
# A machine-local path: what a record must never hold (the measuring machine's temp, home, tools).
LOCAL_PATH = re.compile(r"(?<![\w.])/(tmp|root|opt|home|usr|var|work|private|Users)/")

derived("passed")(CheckResult)
derived("passed")(OutputCheck)
derived("smem_per_block_bytes")(NcuResult)
derived("passed")(SanitizerResult)
derived("overlap_fraction", "full_wait_fraction", "empty_wait_fraction")(TmaOverlap)
derived("overlap")(Timeline)
derived("half_width", "verdict")(Speedup)


def parse_shape_key(config: str) -> tuple[dict[str, int], str]:
    """``m8192-n8192-k8192-bfloat16`` -> ({m: 8192, n: 8192, k: 8192}, "bfloat16")."""
    head, _, dtype = config.rpartition("-")
    if dtype not in DTYPES or not head:
        raise EvidenceError(f"config {config!r} must look like 'm8192-n8192-bfloat16' (dims, then a dtype of {DTYPES})")
    shape: dict[str, int] = {}
    for part in head.split("-"):
        m = _DIM.match(part)
        if not m:
            raise EvidenceError(f"config {config!r}: {part!r} is not <name><integer>")
        shape[m.group(1)] = int(m.group(2))
    return shape, dtype


def shape_key(shape: dict[str, int], dtype: str) -> str:
    return "-".join(f"{k}{v}" for k, v in shape.items()) + f"-{dtype}"


def _key_problem(config: str, shape: dict[str, int], dtype: str) -> str | None:
    try:
        parsed, key_dtype = parse_shape_key(config)
    except EvidenceError as exc:
        return str(exc)
    if parsed != shape or key_dtype != dtype:
        return f"config {config!r} does not match shape {shape} and dtype {dtype!r}"
    return None


def _date_problem(date: str) -> str | None:
    try:
        dt.datetime.fromisoformat(date)
    except ValueError:
        return f"date {date!r} is not an ISO 8601 time"
    return None


def local_paths(value: Any, path: str = "") -> list[str]:
    """Field paths whose strings hold a machine-local path (``/tmp/...``, ``/root/...``)."""
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in local_paths(v, f"{path}.{k}" if path else k)]
    if isinstance(value, list | tuple):
        return [p for i, v in enumerate(value) for p in local_paths(v, f"{path}[{i}]")]
    return [path] if isinstance(value, str) and LOCAL_PATH.search(value) else []


_ABS_PATH = re.compile(r"(?<![\w.])/(?:[^\s/'\"]+/)+([^\s/'\"]*)")


def scrub_paths(value: Any) -> Any:
    """``value`` with every absolute path in its strings cut to the file name (``/opt/x/bin/python`` -> ``python``)."""
    if isinstance(value, dict):
        return {k: scrub_paths(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [scrub_paths(v) for v in value]
    return _ABS_PATH.sub(r"\1", value) if isinstance(value, str) else value


# --- parts of a record ---------------------------------------------------------------------


@dataclass(frozen=True)
class Device:
    """The GPU of a run (``slug`` and ``uuid`` set), or the machine of a compile (``compiled_on``)."""

    name: str | None = None
    slug: str | None = None
    uuid: str | None = None
    cc: str | None = None
    sm_count: int | None = None
    l2_bytes: int | None = None
    driver: str | None = None
    cuda: str | None = None
    torch: str | None = None
    compiled_on: str | None = None

    def short(self) -> str:
        """``NVIDIA H200 096f7439``: the name and the first block of the UUID, as tables show it."""
        return f"{self.name or 'compile-only'}" + (f" {self.uuid.split('-')[0]}" if self.uuid else "")


@dataclass(frozen=True)
class CompileInfo:
    source: str  # "compile" (cold), "memory" or "disk" (warm)
    warm: bool
    seconds: float
    key: str
    cold_s: float | None = None
    analysis_s: float | None = None
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Analysis:
    """Resources and SASS of the compiled cubin (``mla_var3.analysis``), or why they are missing."""

    arch: str | None = None
    dynamic_smem_bytes: int | None = None
    resources: list[KernelResources] = field(default_factory=list)
    sass_instructions: int | None = None
    sass_classes: dict[str, int] = field(default_factory=dict)
    sass_opcodes: dict[str, int] = field(default_factory=dict)
    sass_histogram: dict[str, int] = field(default_factory=dict)
    sass_kernels: dict[str, int] = field(default_factory=dict)
    error: str | None = None

    def registers(self) -> int | None:
        """Registers per thread of the launch's hungriest kernel (a split-KV launch has a small
        combine beside its attention kernel; the cubin lists them in no useful order)."""
        return max(r.registers for r in self.resources) if self.resources else None

    def smem_per_block_bytes(self) -> int | None:
        """SMEM per block of the kernel with the most static SMEM, plus the launch's dynamic SMEM."""
        if not self.resources:
            return None
        return max(r.static_smem_bytes for r in self.resources) + (self.dynamic_smem_bytes or 0)


@dataclass(frozen=True)
class Clocks:
    """NVML readings right before and right after the timed launches."""

    before: ClockSample
    after: ClockSample


@dataclass(frozen=True)
class Upstream:
    """The CUTLASS example an imported plan loads: path, the pinned commit, the file's SHA-256 where it was there."""

    path: str
    commit: str
    sha256: str | None = None


@dataclass
class NcuSection(NcuResult):
    """An ncu profile of one launch, added to a run record later (its own date and commit)."""

    date: str = ""
    git_sha: str | None = None
    shape: dict[str, int] | None = None
    clock_control: str | None = None

    def check(self) -> str | None:
        return _date_problem(self.date)


@dataclass
class SanitizerSection(SanitizerResult):
    """compute-sanitizer's verdicts (memcheck, racecheck, synccheck) at a small shape."""

    date: str = ""
    git_sha: str | None = None
    shape: dict[str, int] | None = None

    def check(self) -> str | None:
        return _date_problem(self.date)


@dataclass(frozen=True)
class AnnotationSection:
    """The torch.profiler trace summary and, for kernels that record one, the in-kernel timeline."""

    date: str
    git_sha: str | None = None
    summary: TraceSummary | None = None
    timeline: Timeline | None = None

    def check(self) -> str | None:
        return _date_problem(self.date)


PROFILE_SECTIONS = ("ncu", "sanitizer", "annotation")


@dataclass(frozen=True)
class MismatchCensus:
    """Many launches on NaN-poisoned outputs, every element compared exactly with the reference rounded to
    the output's dtype (:mod:`mla_var3.evidence.census`): per-launch counts, and the declaration's reason a
    mismatch is expected (``None``: none may occur). ``code_hash`` is the census code's: stale when it moves."""

    elements_per_launch: int
    mismatched_per_launch: list[int]
    nonfinite_per_launch: list[int]
    expected: str | None
    code_hash: str

    @property
    def launches(self) -> int:
        return len(self.mismatched_per_launch)

    @property
    def mismatched(self) -> int:
        """Mismatched elements summed over the launches (non-finite ones included)."""
        return sum(self.mismatched_per_launch)

    @property
    def nonfinite(self) -> int:
        return sum(self.nonfinite_per_launch)

    @property
    def launches_with_mismatch(self) -> int:
        return sum(1 for m in self.mismatched_per_launch if m)

    @property
    def mismatched_fraction(self) -> float:
        return self.mismatched / (self.launches * self.elements_per_launch)

    @property
    def passed(self) -> bool:
        """An expected mismatch passes whatever was counted; otherwise no element may differ."""
        return self.expected is not None or self.mismatched == 0

    def check(self) -> str | None:
        if self.elements_per_launch < 1 or not self.mismatched_per_launch:
            return "a census needs elements_per_launch >= 1 and at least one launch"
        if len(self.nonfinite_per_launch) != len(self.mismatched_per_launch):
            return "mismatched_per_launch and nonfinite_per_launch must have one count per launch"
        for i, (m, n) in enumerate(zip(self.mismatched_per_launch, self.nonfinite_per_launch, strict=True)):
            if not 0 <= n <= m <= self.elements_per_launch:
                return f"launch {i}: counts must satisfy 0 <= nonfinite ({n}) <= mismatched ({m}) <= elements_per_launch"
        if self.expected is not None and not self.expected.strip():
            return "expected is a sentence saying why a mismatch is expected, or null"
        return None


derived("launches", "mismatched", "nonfinite", "launches_with_mismatch", "mismatched_fraction", "passed")(MismatchCensus)


# --- the kernel record ---------------------------------------------------------------------


@dataclass(frozen=True)
class Record:
    """One kernel x shape x device: how it compiled, and -- in a run -- whether it is right and how fast.

    ``harness_hash`` is the hash of the timing/checking/ceiling code of a run (``None`` in a
    compile record, and in run records made before it existed: those show as stale).
    """

    schema_version: int
    kernel: str
    config: str
    device_slug: str
    mode: Literal["run", "compile"]
    mode_reason: str
    arch: str
    backend: str
    dtype: str
    shape: dict[str, int]
    tuning: dict[str, Any]
    data: str
    source_hash: str
    git_sha: str
    date: str
    versions: dict[str, str | None]
    device: Device
    compile: CompileInfo
    flops: int
    bytes: int
    harness_hash: str | None = None
    upstream: Upstream | None = None
    analysis: Analysis | None = None
    correctness: CheckResult | None = None
    timing: Timing | None = None
    ceilings: list[Ceiling] | None = None
    clocks: Clocks | None = None
    notes: list[str] = field(default_factory=list)
    ncu: NcuSection | None = None
    sanitizer: SanitizerSection | None = None
    annotation: AnnotationSection | None = None
    census: MismatchCensus | None = None

    def check(self) -> str | None:  # noqa: C901 - one line per rule
        if self.schema_version != SCHEMA_VERSION:
            return f"schema_version {self.schema_version} is not {SCHEMA_VERSION}; run `python -m mla_var3.evidence migrate`"
        if not NAME.match(self.kernel) or self.kernel == GROUPS_DIR:
            return f"kernel {self.kernel!r} is not a snake_case kernel name"
        if not DEVICE_SLUG.match(self.device_slug):
            return f"device_slug {self.device_slug!r} is not a slug like nvidia-h200 or compile-sm_100a"
        if self.mode == "run" and self.device_slug != self.device.slug:
            return f"device_slug {self.device_slug!r} is not the device's slug {self.device.slug!r}"
        if self.mode == "compile" and self.device_slug != f"compile-{self.arch}":
            return f"device_slug {self.device_slug!r} of a compile record must be 'compile-{self.arch}'"
        for name in ("source_hash", "git_sha", "date", "arch"):
            if not getattr(self, name):
                return f"{name} is empty"
        problem = _key_problem(self.config, self.shape, self.dtype) or _date_problem(self.date)
        if problem:
            return problem
        if self.mode == "run":
            # The runner stops at a failed check: such a run has no timing, ceilings or clocks to record.
            if self.correctness is None:
                return "a run record needs correctness"
            if self.correctness.passed and (self.timing is None or self.ceilings is None or self.clocks is None):
                return "a run record whose check passed needs timing, ceilings and clocks"
        elif self.census is not None:
            return "a census is taken on a GPU: a compile record has none"
        if self.timing is not None and not (self.timing.n > 0 and self.timing.median_us > 0):
            return "timing needs n > 0 and a positive median_us"
        return None

    @property
    def passed(self) -> bool:
        """A compile record passes by existing; a run record when its correctness check passed and its census
        (if any) found no mismatch -- or when its census declares the mismatch expected: then the counts are
        the evidence, whatever the one checked launch said."""
        if self.mode == "compile":
            return True
        if self.census is not None and self.census.expected is not None:
            return True
        return bool(self.correctness and self.correctness.passed) and (self.census is None or self.census.passed)

    def roofline(self) -> Roofline | None:
        """Against this run's own ceilings (None for a compile record or a run without timing)."""
        if self.timing is None or not self.ceilings:
            return None
        return roofline_for_dtype(self.flops, self.bytes, self.timing.median_us * 1e-6, self.ceilings, self.dtype)


# --- the group record ----------------------------------------------------------------------


@dataclass(frozen=True)
class GroupRound:
    """One round: the order members were timed in, each member's per-launch times (us) and the
    NVML sample taken right after its launches."""

    order: list[str]
    us: dict[str, list[float]]
    clocks: dict[str, ClockSample]


@dataclass(frozen=True)
class RoundSummary:
    """One round as a group record keeps it: the order members were timed in, each member's
    median launch time in the round (us: the paired speedup is a mean of ratios of these
    medians), and the NVML sample taken right after its launches. The per-launch times stay in
    the timing process: kept, a record of 7 members x 400 launches x 20+ rounds weighs half a
    megabyte, and records travel to the GPU machine inside a 64 MiB tree."""

    order: list[str]
    median_us: dict[str, float]
    clocks: dict[str, ClockSample]

    @classmethod
    def of(cls, r: GroupRound) -> RoundSummary:
        return cls(r.order, {m: statistics.median(times) for m, times in r.us.items()}, r.clocks)


@dataclass(frozen=True)
class MemberResult:
    """One member of a group: what it ran as, its own correctness check, and its timing in the group."""

    member: str
    kernel: str
    config: str
    dtype: str
    backend: str
    arch: str
    tuning: dict[str, Any]
    data: str
    source_hash: str
    correctness: CheckResult
    timing: Timing
    flops: int
    bytes: int
    input_sets: int
    analysis: Analysis | None = None
    upstream: Upstream | None = None
    speedup: Speedup | None = None  # against the reference member; None for the reference itself


@dataclass(frozen=True)
class GroupRecord:
    """A comparison group at one shape, timed in one process on one GPU, interleaved in rounds."""

    schema_version: int
    group: str
    config: str
    device_slug: str
    reference: str
    members: list[MemberResult]
    rounds: list[RoundSummary]
    launches_per_round: int
    ceilings: list[Ceiling]
    harness_hash: str
    source_hash: str  # of the members' source hashes (members_source_hash): the record's code, in one value
    git_sha: str
    date: str
    versions: dict[str, str | None]
    device: Device
    notes: list[str] = field(default_factory=list)

    def check(self) -> str | None:
        if self.schema_version != GROUP_SCHEMA_VERSION:
            return (
                f"schema_version {self.schema_version} is not {GROUP_SCHEMA_VERSION}"
                " (python -m mla_var3.evidence migrate upgrades older group records)"
            )
        if not NAME.match(self.group):
            return f"group {self.group!r} is not a snake_case name"
        if not DEVICE_SLUG.match(self.device_slug) or self.device_slug != self.device.slug:
            return f"device_slug {self.device_slug!r} is not the device's slug {self.device.slug!r}"
        if not self.device.uuid:
            return "a group record needs the GPU's UUID"
        problem = _date_problem(self.date)
        if problem:
            return problem
        try:
            parse_shape_key(self.config)
        except EvidenceError as exc:
            return str(exc)
        names = [m.member for m in self.members]
        if self.reference not in names:
            return f"reference {self.reference!r} is not a member ({', '.join(names)})"
        for m in self.members:
            problem = _key_problem(m.config, parse_shape_key(m.config)[0], m.dtype)
            if problem:
                return f"member {m.member}: {problem}"
            if (m.speedup is None) != (m.member == self.reference):
                return f"member {m.member}: only the reference has no speedup"
        if self.source_hash != members_source_hash(self.members):
            return "source_hash is not the hash of the members' source hashes"
        for i, r in enumerate(self.rounds):
            if sorted(r.order) != sorted(names) or set(r.median_us) != set(names):
                return f"rounds[{i}] does not time every member once"
        return None

    def member(self, name: str) -> MemberResult:
        for m in self.members:
            if m.member == name:
                return m
        raise EvidenceError(f"group {self.group}/{self.config} has no member {name!r} (members: {', '.join(m.member for m in self.members)})")


# --- reading and writing -------------------------------------------------------------------


def members_source_hash(members: list[MemberResult]) -> str:
    """One hash of every member's kernel source hash (and its upstream example's pinned path, where it
    has one), in member order: a group record's code in one value, beside each member's own."""
    lines = [f"{m.member} {m.source_hash} {f'{m.upstream.path}@{m.upstream.commit}' if m.upstream else ''}" for m in members]
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def record_from_json(data: Any, where: str) -> Record | GroupRecord:
    """A kernel or group record (a group record has a ``group`` field), every field checked."""
    found = local_paths(data)
    if found:
        raise EvidenceError(f"{where}: {found[0]}: holds a machine-local path; records keep file names only")
    if isinstance(data, dict) and "group" in data:
        if data.get("schema_version") == 2:  # per-launch times in its rounds: the older form
            raise EvidenceError(
                f"{where}: schema_version: 2 is not {GROUP_SCHEMA_VERSION}; "
                "`python -m mla_var3.evidence migrate` upgrades a schema-2 group record"
            )
        return parse(GroupRecord, data, where)
    return parse(Record, data, where)


def record_to_json(record: Record | GroupRecord) -> dict[str, Any]:
    return dump(record)


__all__ = [
    "GROUPS_DIR",
    "PROFILE_SECTIONS",
    "SCHEMA_VERSION",
    "Analysis",
    "AnnotationSection",
    "Clocks",
    "CompileInfo",
    "Device",
    "EvidenceError",
    "GroupRecord",
    "GroupRound",
    "RoundSummary",
    "members_source_hash",
    "GROUP_SCHEMA_VERSION",
    "MemberResult",
    "MismatchCensus",
    "NcuSection",
    "Record",
    "SanitizerSection",
    "Upstream",
    "local_paths",
    "parse_shape_key",
    "record_from_json",
    "record_to_json",
    "scrub_paths",
    "shape_key",
]
