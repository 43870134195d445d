"""The SASS of a cubin: disassembly, an instruction histogram, and the classes that prove a pattern.

``nvdisasm -c`` prints one instruction per line (``/*0a00*/  @P0 IMAD.MOV.U32 R3, RZ, RZ, 0x8000 ;``).
The histogram counts each mnemonic with its modifiers (``HGMMA.64x128x16.F32``,
``UTMALDG.2D.MULTICAST``, ``LDG.E.128``) over all kernels of the cubin; predicates are
dropped. :func:`pattern_classes` groups mnemonics into the classes a page cites as proof that
a pattern is in the binary, e.g. ``wgmma`` (HGMMA), ``tcgen05_mma`` (UTCHMMA), ``tma_load``
(UTMALDG), ``cp_async`` (LDGSTS), ``mbarrier`` (SYNCS) and ``ldg_128`` (128-bit global loads).
Opcode names were checked on cubins the DSL 4.8.1 built for sm_80, sm_90a and sm_100a: the
descriptor prefetch every TMA kernel issues (``UTMACCTL.PF``) apart from the L2 tile prefetch
(``UTMAPF.L2.3D``, CUTLASS's ``dense_gemm_persistent_prefetch.py``), the CLC query
(``UGETNEXTWORKID.BROADCAST``, our ``sm100_gemm_persistent_clc``) and the grid dependency of
programmatic dependent launch (``ACQBULK``, ``PREEXIT``: CUTLASS's PDL tutorial).

A class is a view of the histogram: :meth:`~mla_var3.analysis.cubin.CubinAnalysis.from_dict`
recomputes the classes from the stored histogram, so a class added here applies to cached
analyses too (evidence records keep the classes they were written with).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import asdict, dataclass
from typing import Any

from mla_var3.analysis.tools import AnalysisError, run_on_cubin

_SECTION_RE = re.compile(r"^\s*\.section\s+\.text\.(?P<name>[^,\s]+)")
_INSTRUCTION_RE = re.compile(r"^\s*/\*[0-9a-f]+\*/\s+(?P<body>.+)$")
_PREDICATE_RE = re.compile(r"^@!?U?P(?:T|\d+)\s+")
_TARGET_RE = re.compile(r"^\s*\.target\s+(?P<arch>\S+)", re.M)

# name -> (what the class proves, pattern on the full mnemonic). Order is the report's order.
CLASSES: dict[str, tuple[str, str]] = {
    "mma_sync": ("warp-level MMA, mma.sync (sm_80+): HMMA, IMMA, DMMA", r"^(HMMA|IMMA|DMMA|BMMA)(\.|$)"),
    "wgmma": ("warpgroup MMA, wgmma (sm_90): HGMMA, QGMMA, IGMMA", r"^(HGMMA|QGMMA|IGMMA|BGMMA)(\.|$)"),
    "wgmma_sync": ("wgmma fence/commit/wait: WARPGROUP.ARRIVE, WARPGROUP.DEPBAR", r"^WARPGROUP\."),
    "tcgen05_mma": ("tcgen05 MMA into TMEM (sm_100): UTCHMMA, UTCQMMA, UTCIMMA, ...", r"^UTC\w*MMA(\.|$)"),
    "tcgen05_commit": ("tcgen05.commit of MMAs to an mbarrier: UTCBAR", r"^UTCBAR(\.|$)"),
    "tmem_alloc": ("TMEM allocation and release: UTCATOMSWS", r"^UTCATOMSWS(\.|$)"),
    "tmem_copy": ("TMEM loads/stores and copies: LDTM, STTM, UTCCP", r"^(LDTM|STTM|UTCCP)(\.|$)"),
    "tma_load": ("TMA tensor load, global -> SMEM: UTMALDG", r"^UTMALDG(\.|$)"),
    "tma_store": ("TMA tensor store, SMEM -> global: UTMASTG", r"^UTMASTG(\.|$)"),
    "tma_reduce": ("TMA tensor reduction into global: UTMAREDG", r"^UTMAREDG(\.|$)"),
    "tma_descriptor_prefetch": ("TMA descriptor prefetch into the descriptor cache, no data moved: UTMACCTL",
                                r"^UTMACCTL(\.|$)"),
    "tma_l2_prefetch": ("TMA tile prefetch into L2, no SMEM written: UTMAPF", r"^UTMAPF(\.|$)"),
    "bulk_copy": ("non-tensor bulk async copy: UBLKCP, UBLKRED, UBLKPF", r"^UBLK(CP|RED|PF)(\.|$)"),
    "cp_async": ("cp.async, global -> SMEM without registers (sm_80+): LDGSTS", r"^LDGSTS(\.|$)"),
    "cp_async_wait": ("cp.async group commit/wait: LDGDEPBAR", r"^LDGDEPBAR(\.|$)"),
    "mbarrier": ("mbarrier init/arrive/try-wait (async pipelines): SYNCS", r"^SYNCS(\.|$)"),
    "barrier": ("CTA and named barriers: BAR", r"^BAR(\.|$)"),
    "cluster_barrier": ("cluster barrier arrive/wait: UCGABAR_ARV, UCGABAR_WAIT", r"^UCGABAR"),
    "clc_query": ("cluster launch control, ask the hardware for the next tile: UGETNEXTWORKID", r"^UGETNEXTWORKID(\.|$)"),
    "grid_dependency": ("programmatic dependent launch: wait for the previous grid (ACQBULK), let the next "
                        "one launch (PREEXIT)", r"^(ACQBULK|PREEXIT)(\.|$)"),
    "setmaxreg": ("register reallocation between warp roles: USETMAXREG", r"^USETMAXREG(\.|$)"),
    "elect": ("elect.sync, one leader lane: ELECT", r"^ELECT(\.|$)"),
    "ldmatrix": ("ldmatrix, SMEM -> registers in MMA layout: LDSM", r"^LDSM(\.|$)"),
    "stmatrix": ("stmatrix, registers -> SMEM: STSM", r"^STSM(\.|$)"),
    "shuffle": ("warp shuffles: SHFL", r"^SHFL(\.|$)"),
    "local_memory": ("local memory, register spills or local arrays: LDL, STL", r"^(LDL|STL)(\.|$)"),
}
_CLASS_RES = {name: re.compile(pattern) for name, (_, pattern) in CLASSES.items()}
# Loads and stores whose access width shows vectorization: class "<op>_<bits>", e.g. ldg_128.
_VECTOR_OPS = ("LDG", "STG", "LDS", "STS")
_WIDTH_MODIFIERS = {"U8": 8, "S8": 8, "U16": 16, "S16": 16, "64": 64, "128": 128, "256": 256}


@dataclass(frozen=True)
class SassReport:
    """The instruction mix of a cubin for one arch."""

    arch: str
    instructions: int
    kernels: dict[str, int]  # kernel name -> instruction count
    histogram: dict[str, int]  # full mnemonic -> count, most frequent first
    opcodes: dict[str, int]  # base opcode -> count
    classes: dict[str, int]  # pattern class -> count (non-zero only)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def disassemble(cubin: bytes) -> str:
    """``nvdisasm -c`` of the cubin (no GPU needed)."""
    return run_on_cubin("nvdisasm", ["-c"], cubin)


def sass_target(text: str) -> str | None:
    """The ``.target`` arch the disassembly declares (``sm_90a``), if any."""
    match = _TARGET_RE.search(text)
    return match.group("arch") if match else None


def parse_sass(text: str) -> dict[str, list[str]]:
    """Kernel name -> its instruction mnemonics in order (opcode with modifiers, no predicate)."""
    kernels: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        section = _SECTION_RE.match(line)
        if section:
            current = kernels.setdefault(section.group("name"), [])
            continue
        instruction = _INSTRUCTION_RE.match(line)
        if instruction is None or current is None:
            continue
        body = _PREDICATE_RE.sub("", instruction.group("body").lstrip("{ ").strip())
        mnemonic = body.split(None, 1)[0].rstrip(";") if body else ""
        if mnemonic:
            current.append(mnemonic)
    return kernels


def histogram_of(text: str) -> dict[str, int]:
    """Mnemonic -> count over every kernel of a disassembly, most frequent first."""
    counts: Counter[str] = Counter()
    for mnemonics in parse_sass(text).values():
        counts.update(mnemonics)
    return _sorted(counts)


def instruction_histogram(cubin: bytes, arch: str | None = None) -> dict[str, int]:
    """Mnemonic -> count for ``cubin``; with ``arch``, check that the cubin targets it."""
    text = disassemble(cubin)
    _check_target(text, arch)
    return histogram_of(text)


def opcode_histogram(histogram: dict[str, int]) -> dict[str, int]:
    """Base opcode (``HGMMA``, ``LDG``) -> count, from a mnemonic histogram."""
    counts: Counter[str] = Counter()
    for mnemonic, n in histogram.items():
        counts[mnemonic.split(".", 1)[0]] += n
    return _sorted(counts)


def vector_width_bits(mnemonic: str) -> int:
    """Access width of a load/store mnemonic: ``LDG.E.128`` -> 128, ``LDS.U8`` -> 8, ``STG.E`` -> 32."""
    bits = 32
    for modifier in mnemonic.split(".")[1:]:
        bits = _WIDTH_MODIFIERS.get(modifier, bits)
    return bits


def pattern_classes(histogram: dict[str, int]) -> dict[str, int]:
    """Class -> count for the classes present in a mnemonic histogram (see :data:`CLASSES`)."""
    counts: Counter[str] = Counter()
    vectors: Counter[str] = Counter()
    for mnemonic, n in histogram.items():
        for name, regex in _CLASS_RES.items():
            if regex.match(mnemonic):
                counts[name] += n
        op = mnemonic.split(".", 1)[0]
        if op in _VECTOR_OPS:
            vectors[f"{op.lower()}_{vector_width_bits(mnemonic)}"] += n
    ordered = {name: counts[name] for name in CLASSES if counts[name]}
    ordered.update(sorted(vectors.items(), key=lambda kv: (kv[0].split("_")[0], int(kv[0].split("_")[1]))))
    return ordered


def class_description(name: str) -> str:
    """What a class name from :func:`pattern_classes` proves, in words."""
    if name in CLASSES:
        return CLASSES[name][0]
    op, bits = name.split("_")
    return f"{bits}-bit {op.upper()} accesses"


def sass_report(cubin: bytes, arch: str) -> SassReport:
    """Histogram, opcodes and pattern classes of ``cubin``, checked to target ``arch``."""
    text = disassemble(cubin)
    _check_target(text, arch)
    kernels = parse_sass(text)
    histogram = histogram_of(text)
    return SassReport(
        arch=arch,
        instructions=sum(histogram.values()),
        kernels={name: len(mnemonics) for name, mnemonics in kernels.items()},
        histogram=histogram,
        opcodes=opcode_histogram(histogram),
        classes=pattern_classes(histogram),
    )


def _check_target(text: str, arch: str | None) -> None:
    target = sass_target(text)
    if arch is not None and target is not None and target != arch:
        raise AnalysisError(f"the cubin targets {target}, not {arch}")


def _sorted(counts: Counter[str]) -> dict[str, int]:
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
