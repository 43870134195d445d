"""CTAs per SM of each Hopper GEMM worklog step, and the loads each SM keeps in flight, on a CPU.

The insight page ``docs/knowledge/optimizations/occupancy-vs-specialization.md`` calls these through
``estimate()``. A step's residency is the least of four limits (the CUDA occupancy rules for
compute capability 9.0): the SM's SMEM over the CTA's (dynamic + static + the 1 KiB the driver
reserves per block), the SM's registers over the CTA's (allocated per warp in 256-register units),
the SM's 64 warps over the CTA's warps, and 32 CTAs. Each input comes from the code or a record:
threads and the dynamic SMEM from the step's kernel class (``dynamic_smem_bytes()``), built with
the tuning the same-run group ``gemm_bf16_steps`` timed; registers per thread and static SMEM from
that group's sm_90a cubin analysis of the step. Nothing here is measured; the page shows the
measured ratios only through ``speedup()``/``compare()``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# Compute capability 9.0 (H100/H200), CUDA C++ Programming Guide, "Technical Specifications per
# Compute Capability", and the occupancy calculator's register allocation unit.
SMEM_PER_SM = 228 * 1024
SMEM_PER_BLOCK_MAX = 227 * 1024  # opt-in maximum per block
SMEM_RESERVED_PER_BLOCK = 1024  # cudaDevAttrReservedSharedMemoryPerBlock on CC 8.0 and later
REGISTERS_PER_SM = 65536
REGISTER_UNIT = 256  # registers are allocated per warp in units of 256
WARPS_PER_SM = 64
CTAS_PER_SM_MAX = 32
WARP = 32

GROUP, CONFIG = "gemm_bf16_steps", "m8192-n8192-k8192-bfloat16"
STEPS = {  # worklog step -> its member in the group
    "v0": "hopper_gemm_v0",
    "v1": "hopper_gemm_v1",
    "v2": "hopper_gemm_v2",
    "v3": "hopper_gemm_v3",
    "v4": "hopper_gemm_v4",
    "v5": "hopper_gemm_ws",
}


@dataclass(frozen=True)
class Residency:
    """How many CTAs of one kernel fit on one SM, and which resource decides it."""

    by_smem: int
    by_registers: int
    by_warps: int

    @property
    def ctas(self) -> int:
        return min(self.by_smem, self.by_registers, self.by_warps, CTAS_PER_SM_MAX)

    @property
    def limit(self) -> str:
        limits = {"SMEM": self.by_smem, "registers": self.by_registers, "warps": self.by_warps}
        return " and ".join(name for name, n in limits.items() if n == self.ctas)


# --8<-- [start:ctas_per_sm]
def ctas_per_sm(threads: int, registers: int, smem_bytes: int) -> Residency:
    """Residency of a CTA of ``threads`` threads at ``registers`` per thread using ``smem_bytes``
    of SMEM (dynamic + static; the per-block reservation is added here)."""
    if smem_bytes > SMEM_PER_BLOCK_MAX:
        limit = SMEM_PER_BLOCK_MAX
        raise ValueError(
            f"{smem_bytes} B of SMEM per block exceeds the {limit} B allowed: use fewer stages or a smaller tile"
        )
    warps = -(-threads // WARP)
    regs_per_warp = -(-registers * WARP // REGISTER_UNIT) * REGISTER_UNIT
    return Residency(
        by_smem=SMEM_PER_SM // (smem_bytes + SMEM_RESERVED_PER_BLOCK),
        by_registers=(REGISTERS_PER_SM // regs_per_warp) // warps,
        by_warps=WARPS_PER_SM // warps,
    )


# --8<-- [end:ctas_per_sm]


@dataclass(frozen=True)
class Step:
    """One worklog step as the group timed it: launch shape, stages, tile, and its residency."""

    step: str
    threads: int
    registers: int
    smem_bytes: int
    stages: int
    tile_mn: tuple[int, int]

    @property
    def residency(self) -> Residency:
        return ctas_per_sm(self.threads, self.registers, self.smem_bytes)

    @property
    def k_tiles_in_flight(self) -> int:
        """K tiles of A and B an SM can have loading at once: CTAs x ring slots."""
        return self.residency.ctas * self.stages

    @property
    def accumulator_registers(self) -> int:
        """fp32 accumulator registers the resident CTAs hold on one SM (one per output element)."""
        return self.residency.ctas * self.tile_mn[0] * self.tile_mn[1]


def step_kernel(step: str, tuning: dict[str, Any]) -> Any:
    """The step's kernel object, built with the tuning the group recorded (no compile)."""
    from mla_var3.kernel.cute_python.gemm.hopper_gemm.v0.kernel import HopperGemmV0
    from mla_var3.kernel.cute_python.gemm.hopper_gemm.v1.kernel import HopperGemmV1
    from mla_var3.kernel.cute_python.gemm.hopper_gemm.v2.kernel import HopperGemmV2
    from mla_var3.kernel.cute_python.gemm.hopper_gemm.v3.kernel import HopperGemmV3
    from mla_var3.kernel.cute_python.gemm.hopper_gemm.v4.kernel import HopperGemmV4
    from mla_var3.kernel.cute_python.gemm.hopper_gemm.warp_specialized.kernel import HopperGemmWS

    classes = {"v0": HopperGemmV0, "v1": HopperGemmV1, "v2": HopperGemmV2, "v3": HopperGemmV3,
               "v4": HopperGemmV4, "v5": HopperGemmWS}  # fmt: skip
    keys = {"tile_mn": tuple, "stages": int, "raster_group_m": int, "epi_stages": int, "cluster_mn": tuple}
    return classes[step](**{k: keys[k](v) for k, v in tuning.items() if k in keys})


def group_steps() -> dict[str, Step]:
    """Every step of the group record, its registers and static SMEM from the record's analysis."""
    from mla_var3.evidence.compare import latest
    from mla_var3.evidence.store import group_records_for

    records = group_records_for(GROUP, CONFIG)
    if not records:
        raise LookupError(f"no {GROUP} record at {CONFIG}: run the group on the H200 first")
    members = {m.member: m for m in latest(records).members}
    steps = {}
    for step, member in STEPS.items():
        result = members[member]
        if result.analysis is None or result.analysis.registers() is None:
            raise LookupError(f"{member} in {GROUP} has no cubin analysis: re-run the group")
        kernel = step_kernel(step, result.tuning or {})
        static = result.analysis.resources[0].static_smem_bytes
        steps[step] = Step(step, kernel.threads, result.analysis.registers(), kernel.dynamic_smem_bytes() + static,
                           kernel.stages, tuple(kernel.tile_mnk[:2]))  # fmt: skip
    return steps


# ---- estimate() entry points: each returns the text the page shows --------------------------
def residency(step: str) -> str:
    """CTAs per SM of ``step`` and the resource that sets it."""
    r = group_steps()[step].residency
    return f"{r.ctas} CTA{'s' if r.ctas != 1 else ''} per SM ({r.limit})"


def limits(step: str) -> str:
    """The three limits side by side: SMEM, registers, warps."""
    r = group_steps()[step].residency
    return f"SMEM {r.by_smem}, registers {r.by_registers}, warps {r.by_warps}"


def in_flight(step: str) -> str:
    """K tiles each SM can have loading at once."""
    s = group_steps()[step]
    return f"{s.residency.ctas} × {s.stages} = {s.k_tiles_in_flight} K tiles"


def accumulators(step: str) -> str:
    """Share of the SM's register file the resident CTAs' fp32 accumulators take."""
    s = group_steps()[step]
    return f"{s.accumulator_registers:,} of {REGISTERS_PER_SM:,} registers"


def setmaxnreg_pool(threads: int, ctas: int = 1) -> str:
    """Registers per thread a launch bound of ``ctas`` CTAs per SM leaves to ``threads`` threads
    (the pool ``setmaxnreg`` redistributes), rounded down to a multiple of 8."""
    return f"{REGISTERS_PER_SM // (threads * ctas) // 8 * 8} registers per thread"
