"""Masking a score row with a dynamic ``if`` per element, against one ``cutlass.select_`` per element.

A thread holds one row of scores in registers (16 or ``COLS`` = 64 of them), masks the columns at or
past a run-time ``limit`` with -inf, and writes the row back. ``mask_by_branch`` masks with
``if col >= limit: s[j] = -inf`` inside the trace-time-unrolled loop; ``mask_by_select`` assigns
``select_(col >= limit, -inf, s[j])``. Both are compiled for sm_90a on the CPU; the IR's ``scf.if``,
the PTX's ``selp`` and the SASS selects (``FSEL``/``SEL``) are counted for each.
"""

from __future__ import annotations

import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import make_fake_compact_tensor

from mla_var3.knowledge.expected import expect
from snippets.cpu.dsl_tools import clean_ir, compile_for, kernel_ir, opcode_count, sass_counts

COLS = 64  # one thread's share of a 64 x 128 score tile in our FMHA (v2/v3, tile_n = 128)


# --8<-- [start:mask]
@cute.jit
def mask_by_branch(s_row: cute.Tensor, c_row: cute.Tensor, limit: cutlass.Int32):
    for j in cutlass.range_constexpr(cute.size(s_row)):
        if c_row[j][1] >= limit:  # BAD: a run-time condition: one scf.if per element
            s_row[j] = -cutlass.Float32.inf


@cute.jit
def mask_by_select(s_row: cute.Tensor, c_row: cute.Tensor, limit: cutlass.Int32):
    for j in cutlass.range_constexpr(cute.size(s_row)):
        s_row[j] = cutlass.select_(c_row[j][1] >= limit, -cutlass.Float32.inf, s_row[j])  # FIXED
# --8<-- [end:mask]


@cute.kernel
def masked_row(scores: cute.Tensor, limit: cutlass.Int32, mask: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    cols = scores.shape[1]  # static: one thread's whole row
    g_row = cute.local_tile(scores, (1, cols), (tidx, 0))
    c_row = cute.local_tile(cute.make_identity_tensor(scores.shape), (1, cols), (tidx, 0))
    s_row = cute.make_rmem_tensor((1, cols), cutlass.Float32)
    s_row.store(g_row.load())
    mask(s_row, c_row, limit)
    g_row.store(s_row.load())


@cute.jit
def launch(scores: cute.Tensor, limit: cutlass.Int32, mask: cutlass.Constexpr):
    masked_row(scores, limit, mask).launch(grid=[1, 1, 1], block=[32, 1, 1])


def counts(mask: object, cols: int = COLS) -> tuple[int, int, int]:
    """(``scf.if`` in the IR, ``selp`` in the PTX, ``FSEL`` + ``SEL`` in the SASS) for one mask of a row of ``cols``."""
    scores = make_fake_compact_tensor(cutlass.Float32, (32, cols), assumed_align=16)
    args = (scores, cutlass.Int32(100), mask)
    compiled = compile_for(launch, *args, arch="sm_90a", options="--keep-ptx")
    sass = sass_counts(compiled)
    ir = kernel_ir(clean_ir(launch, *args, arch="sm_90a"))
    return ir.count("scf.if"), compiled.artifacts.PTX.count("selp"), opcode_count(sass, "FSEL") + opcode_count(sass, "SEL")


@expect(prints="16 columns, if per element: 16 scf.if, 136 selp, 121 FSEL/SEL\n"
               "16 columns, select_ per element: 0 scf.if, 16 selp, 16 FSEL/SEL\n"
               "64 columns, if per element: 64 scf.if, 2080 selp, 2017 FSEL/SEL\n"
               "64 columns, select_ per element: 0 scf.if, 64 selp, 64 FSEL/SEL")  # fmt: skip
def symptom() -> None:
    for cols in (16, COLS):
        for label, mask in (("if per element", mask_by_branch), ("select_ per element", mask_by_select)):
            ifs, selp, sel = counts(mask, cols)
            print(f"{cols} columns, {label}: {ifs} scf.if, {selp} selp, {sel} FSEL/SEL")
