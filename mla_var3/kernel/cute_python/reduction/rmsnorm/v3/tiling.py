"""The launch rule of ``rmsnorm_v3``, a function of N (compiled in) and, at launch, of M and the SM
count. Pure Python: the plan checks shapes with it without importing the DSL.

- **Threads per row.** ``threads_per_row`` is the fewest (a power of two from 8 to 512) that leave a
  thread at most four 128-bit vectors of x (8 bf16 each). Up to N = 16384 a stage row is then
  at most four vectors per thread; longer rows give a thread more vectors (N = 20000: five).
- **CTAs** (``layout``, one of :data:`LAYOUTS`). Where a row needs 512 threads (N > 8192): one
  512-thread CTA per SM, persistent over an equal share of M, whatever the layout. Where a row needs
  at most 256 threads (N <= 8192), ``"scheduled"`` (the default) gives a CTA 256 threads and half
  the SMEM budget, so two share an SM, and launches many of them, each over about one ring of
  blocks, consecutive CTAs over consecutive rows: the hardware hands the next range to whichever
  SM frees a slot. ``"two_per_sm"`` is the same CTA, persistent (two per SM, equal shares of M);
  ``"one_per_sm"`` is the 512-thread persistent CTA at every N (the rule of the first GPU run).
- **Stages.** ``rows_per_stage = cta threads / threads_per_row``; as many stages as fit the CTA's
  share of ``smem_budget``, at most :data:`MAX_STAGES`, at least two (a stage being read while the
  next lands).
- **Rows.** CTA ``b`` of the grid takes a contiguous range of rows, M split as evenly as whole rows
  allow (the ranges differ by one row at most), in blocks of ``rows_per_stage`` rows (the last block
  of a range may be short).
- **Refused.** N not a multiple of 8 (a row is one bulk copy: its bytes and its start must be
  16-byte multiples), and rows whose two stages do not fit the CTA's SMEM.
"""

from __future__ import annotations

from dataclasses import dataclass

from mla_var3.kernel.errors import UnsupportedShapeError

THREADS = 512
VEC = 8  # bf16 per 128-bit vector
X_BYTES = 2  # bf16
BULK_ALIGN = 16  # cp.async.bulk: size and addresses in 16-byte units
VECTORS_PER_THREAD = 4
MAX_STAGES = 6
SM90_SMEM_PER_BLOCK = 232448  # opt-in dynamic SMEM of one sm_90 block (227 KiB)
RESERVED_SMEM = 1024  # the reduction buffer and the mbarriers, rounded up
DEFAULT_SMEM_BUDGET = 6 * 32 * 1024  # per SM: six stages of 32 KiB, or two CTAs of six 16 KiB stages
SHARED_SM_THREADS = 256  # two CTAs per SM: 2 x 256 threads fit the register file at up to 128 registers
LAYOUTS = ("scheduled", "two_per_sm", "one_per_sm")


@dataclass(frozen=True)
class StagedRows:
    """How ``rmsnorm_v3`` lays rows of ``n`` bf16 over its threads and SMEM stages."""

    n: int
    threads_per_row: int
    rows_per_stage: int
    stages: int
    ctas_per_sm: int = 1
    scheduled: bool = False

    @property
    def threads(self) -> int:
        return self.threads_per_row * self.rows_per_stage

    @property
    def row_bytes(self) -> int:
        return self.n * X_BYTES

    @property
    def stage_bytes(self) -> int:
        return self.rows_per_stage * self.row_bytes

    @property
    def vectors_per_thread(self) -> int:
        return -(-self.n // (VEC * self.threads_per_row))

    def ctas(self, m: int, sm_count: int) -> int:
        """The grid for ``m`` rows on ``sm_count`` SMs, never more CTAs than rows. Persistent: one
        CTA per slot (``ctas_per_sm`` per SM). Scheduled: one CTA per ring of blocks (``stages``
        blocks: all its loads go out at its start), but at least every slot of every SM while
        there are blocks to fill them."""
        slots = self.ctas_per_sm * sm_count
        if not self.scheduled:
            return max(1, min(m, slots))
        blocks = -(-m // self.rows_per_stage)
        return max(1, min(m, max(-(-blocks // self.stages), min(blocks, slots))))


def threads_per_row(n: int) -> int:
    """The fewest threads (a power of two, 8 to :data:`THREADS`) leaving each at most four vectors."""
    vectors, threads = -(-n // VEC), 8
    while threads < THREADS and vectors > VECTORS_PER_THREAD * threads:
        threads *= 2
    return threads


def staged_rows(n: int, smem_budget: int = DEFAULT_SMEM_BUDGET, layout: str = LAYOUTS[0]) -> StagedRows:
    """The rule for rows of ``n`` bf16 with ``smem_budget`` bytes of x stages per SM and a CTA
    ``layout``; :class:`UnsupportedShapeError` names what cannot be taken."""
    if layout not in LAYOUTS:
        raise ValueError(f"rmsnorm_v3: layout must be one of {', '.join(LAYOUTS)}, got {layout!r}")
    if n % VEC:
        raise UnsupportedShapeError(
            f"rmsnorm_v3 copies each row of x into SMEM with one bulk copy, whose size must be a multiple of "
            f"{BULK_ALIGN} bytes: --n must be a multiple of {VEC}, got {n}; use rmsnorm_v0 (any N up to 16384)"
        )
    tpr = threads_per_row(n)
    shared = layout != "one_per_sm" and tpr <= SHARED_SM_THREADS
    ctas_per_sm = THREADS // SHARED_SM_THREADS if shared else 1
    rows = THREADS // ctas_per_sm // tpr
    stage = rows * n * X_BYTES
    budget = min(smem_budget, SM90_SMEM_PER_BLOCK - RESERVED_SMEM) // ctas_per_sm
    stages = min(MAX_STAGES, budget // stage)
    if stages < 2:
        raise UnsupportedShapeError(
            f"rmsnorm_v3 needs two SMEM stages of a row ({stage} bytes each at --n {n}) within {budget} bytes; "
            f"use rmsnorm_v2 (rows split over a cluster) for rows this long"
        )
    return StagedRows(
        n=n,
        threads_per_row=tpr,
        rows_per_stage=rows,
        stages=stages,
        ctas_per_sm=ctas_per_sm,
        scheduled=shared and layout == "scheduled",
    )


__all__ = [
    "DEFAULT_SMEM_BUDGET",
    "LAYOUTS",
    "MAX_STAGES",
    "SHARED_SM_THREADS",
    "THREADS",
    "StagedRows",
    "staged_rows",
    "threads_per_row",
]
