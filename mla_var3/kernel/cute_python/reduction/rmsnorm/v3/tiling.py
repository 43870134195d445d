"""The launch rule of ``rmsnorm_v3``, a function of N (compiled in) and, at launch, of M and the SM
count. Pure Python: the plan checks shapes with it without importing the DSL.

- **Threads.** 512 per CTA, one CTA per SM. ``threads_per_row`` is the fewest (a power of two from
  8 to 512) that leave a thread at most four 128-bit vectors of x (8 bf16 each); the rest of the
  512 threads take further rows, so a stage holds ``rows_per_stage = 512 / threads_per_row`` rows.
  Up to N = 16384 that is 32 KiB of x per stage (four vectors per thread); longer rows give a
  thread more vectors (N = 20000: five).
- **Stages.** As many stages as fit ``smem_budget`` bytes of dynamic SMEM, at most
  :data:`MAX_STAGES`, at least two (a stage being read while the next lands).
- **Grid.** ``min(M, SM count)`` persistent CTAs; CTA ``b`` takes a contiguous range of rows, M split
  as evenly as whole rows allow (the ranges differ by one row at most), in blocks of
  ``rows_per_stage`` rows (the last block of a range may be short).
- **Refused.** N not a multiple of 8 (a row is one bulk copy: its bytes and its start must be
  16-byte multiples), and rows whose two stages do not fit ``smem_budget``.
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
DEFAULT_SMEM_BUDGET = 6 * 32 * 1024  # six stages of 32 KiB


@dataclass(frozen=True)
class StagedRows:
    """How ``rmsnorm_v3`` lays rows of ``n`` bf16 over its threads and SMEM stages."""

    n: int
    threads_per_row: int
    rows_per_stage: int
    stages: int

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

    @staticmethod
    def ctas(m: int, sm_count: int) -> int:
        """Persistent CTAs for ``m`` rows: one per SM, no more than there are rows."""
        return max(1, min(m, sm_count))


def threads_per_row(n: int) -> int:
    """The fewest threads (a power of two, 8 to :data:`THREADS`) leaving each at most four vectors."""
    vectors, threads = -(-n // VEC), 8
    while threads < THREADS and vectors > VECTORS_PER_THREAD * threads:
        threads *= 2
    return threads


def staged_rows(n: int, smem_budget: int = DEFAULT_SMEM_BUDGET) -> StagedRows:
    """The rule for rows of ``n`` bf16; :class:`UnsupportedShapeError` names what cannot be taken."""
    if n % VEC:
        raise UnsupportedShapeError(
            f"rmsnorm_v3 copies each row of x into SMEM with one bulk copy, whose size must be a multiple of "
            f"{BULK_ALIGN} bytes: --n must be a multiple of {VEC}, got {n}; use rmsnorm_v0 (any N up to 16384)"
        )
    tpr = threads_per_row(n)
    rows = THREADS // tpr
    stage = rows * n * X_BYTES
    budget = min(smem_budget, SM90_SMEM_PER_BLOCK - RESERVED_SMEM)
    stages = min(MAX_STAGES, budget // stage)
    if stages < 2:
        raise UnsupportedShapeError(
            f"rmsnorm_v3 needs two SMEM stages of a row ({stage} bytes each at --n {n}) within {budget} bytes; "
            f"use rmsnorm_v2 (rows split over a cluster) for rows this long"
        )
    return StagedRows(n=n, threads_per_row=tpr, rows_per_stage=rows, stages=stages)


__all__ = ["DEFAULT_SMEM_BUDGET", "MAX_STAGES", "THREADS", "StagedRows", "staged_rows", "threads_per_row"]
