"""Row reductions at three levels, for the concept page: a butterfly modelled in Python, and the
project's own ``row_reduce`` compiled for sm_90a with a row held by one warp, by one CTA, and by a
cluster of two CTAs.

``butterfly_table`` plays ``shuffle_sync_bfly`` (lane ``i`` reads lane ``i ^ offset``) on eight lanes,
to show that every lane ends with the total. ``sum_rows`` is a kernel whose threads each hold one
partial and reduce it over their row with ``mla_var3``'s ``row_reduce`` (warp shuffles; then SMEM
across the warps of a row; then distributed SMEM across the CTAs of a cluster); ``sass_table``
compiles it for the three tilings and lists the instructions each level adds.
"""

from __future__ import annotations

import operator
from functools import cache

import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import make_fake_compact_tensor
from cutlass.memory import SmemAllocator

from mla_var3.kernel.cute_python.reduction.row_reduce.reduce import RowTiling, allocate_reduction, row_reduce
from snippets.cpu.dsl_tools import compile_for, sass_counts


def butterfly_table(lanes: int = 8) -> str:
    """Each step's lane values when lane i adds the value of lane i ^ offset (offsets lanes/2 .. 1)."""
    values = list(range(lanes))
    rows = ["| step | " + " | ".join(f"lane {i}" for i in range(lanes)) + " |", "|---" * (lanes + 1) + "|"]
    rows.append("| start | " + " | ".join(map(str, values)) + " |")
    offset = lanes // 2
    while offset:
        values = [values[i] + values[i ^ offset] for i in range(lanes)]
        rows.append(f"| + lane i ^ {offset} | " + " | ".join(map(str, values)) + " |")
        offset //= 2
    return "\n".join(rows)


# One row of 8192 fp32 values: 32 threads per row (a warp), 256 (a CTA's 8 warps), or 256 in each of
# two CTAs of a cluster. rows_per_cta fills 256 threads where a row needs fewer.
TILINGS = {
    "warp": RowTiling(n=8192, vec=4, threads_per_row=32, rows_per_cta=8),
    "CTA": RowTiling(n=8192, vec=4, threads_per_row=256, rows_per_cta=1),
    "cluster of 2": RowTiling(n=8192, vec=4, threads_per_row=256, rows_per_cta=1, cluster_n=2),
}


# --8<-- [start:kernel]
@cute.jit
def sum_rows(out: cute.Tensor, tiling: cutlass.Constexpr):
    """out[row] = the sum over the threads of each row of their partial (here: their thread index)."""
    sum_kernel(out, tiling).launch(
        grid=[1, tiling.cluster_n, 1],
        block=[tiling.threads, 1, 1],
        cluster=[1, tiling.cluster_n, 1] if cutlass.const_expr(tiling.cluster_n > 1) else None,
        smem=tiling.smem_bytes(1),
    )


@cute.kernel
def sum_kernel(out: cute.Tensor, tiling: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    buf, mbar = allocate_reduction(SmemAllocator(), tiling, 1)  # SMEM slots (+ an mbarrier in a cluster)
    partial = cutlass.Float32(tidx)
    (total,) = row_reduce((partial,), (operator.add,), (0.0,), tiling, buf, mbar)
    if tidx % tiling.threads_per_row == 0:
        out[tidx // tiling.threads_per_row] = total
# --8<-- [end:kernel]


@cache
def sass(level: str) -> dict[str, int]:
    tiling = TILINGS[level]
    out = make_fake_compact_tensor(cutlass.Float32, (tiling.rows_per_cta,), assumed_align=4)
    return sass_counts(compile_for(sum_rows, out, tiling, arch="sm_90a"))


MARKERS = ("SHFL", "BAR", "STS", "LDS", "SYNCS", "UCGABAR", "ST.ASYNC", "STAS", "MAPA", "FADD")


def sass_table() -> str:
    """The shuffle, barrier, SMEM and cluster instructions of the three compiles."""
    counts = {level: sass(level) for level in TILINGS}
    names = sorted({m for c in counts.values() for m in c if m.startswith(MARKERS)})
    rows = ["| SASS instruction | " + " | ".join(f"row in a {level}" for level in TILINGS) + " |"]
    rows.append("|---" * (len(TILINGS) + 1) + "|")
    rows += [f"| `{m}` | " + " | ".join(str(counts[level].get(m, 0)) for level in TILINGS) + " |" for m in names]
    return "\n".join(rows)
