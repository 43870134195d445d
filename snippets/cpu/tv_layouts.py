"""TV layouts, tiled copies and tiled MMAs, asked of the CuTe DSL on a CPU for the TV-layouts concept page.

``copy_owner_picture`` builds a small tiled copy and partitions the coordinates of its tile with
every thread's slice: who owns each element is what ``partition_S`` returned, not a formula.
``wgmma_owner_picture`` does the same with a Hopper warpgroup MMA's accumulator (``partition_C``);
``mma_summaries`` prints the tiled MMAs of SM90 (WGMMA) and SM100 (tcgen05) and the accumulator
fragment each one makes.
"""

from __future__ import annotations

from typing import Any

import cutlass
import cutlass.cute as cute
import cutlass.utils.blackwell_helpers as sm100_utils
import cutlass.utils.hopper_helpers as sm90_utils
from cutlass.cute.nvgpu import OperandMajorMode, tcgen05

from mla_var3.knowledge.expected import program_name_only
from snippets.cpu.layout_svg import grid_svg

_text: list[tuple[str, str]] = []
_owner: dict[tuple[int, int], tuple[int, int]] = {}  # coordinate -> (thread, value index)


def _trace(fn: Any, arch: str) -> None:
    with program_name_only():
        cute.compile(fn, options=f"--gpu-arch {arch}")


# --8<-- [start:tiled_copy]
@cute.jit
def _tiled_copy():
    thr_layout = cute.make_layout((2, 4), stride=(4, 1))  # 8 threads, 2 rows of 4, row-major
    val_layout = cute.make_layout((2, 2), stride=(2, 1))  # each thread: a 2x2 block of values
    atom = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), cutlass.Float16, num_bits_per_copy=32)
    tiled_copy = cute.make_tiled_copy_tv(atom, thr_layout, val_layout)
    _text.append(("tiler_mn", str(tiled_copy.tiler_mn)))  # the tile one step of the copy covers
    _text.append(("layout_tv_tiled", str(tiled_copy.layout_tv_tiled)))  # (thread, value) -> offset in it
    coords = cute.make_identity_tensor((4, 8))  # each element holds its own (row, column)
    for t in cutlass.range_constexpr(cute.size(thr_layout)):
        mine = tiled_copy.get_slice(t).partition_S(coords)  # what thread t copies
        if cutlass.const_expr(t == 5):
            _text.append(("partition_S for thread 5", f"{mine.layout} -> {[mine[v] for v in range(cute.size(mine))]}"))
        for v in cutlass.range_constexpr(cute.size(mine)):
            _owner[mine[v]] = (t, v)
# --8<-- [end:tiled_copy]


# --8<-- [start:wgmma]
@cute.jit
def _wgmma():
    tiled_mma = sm90_utils.make_trivial_tiled_mma(
        cutlass.BFloat16, cutlass.BFloat16, OperandMajorMode.K, OperandMajorMode.K,
        cutlass.Float32, atom_layout_mnk=(1, 1, 1), tiler_mn=(64, 16),
    )  # one warpgroup, 64 x 16 accumulator (hopper_gemm_ws stacks such atoms along M)
    _text.append(("SM90 tiled MMA", str(tiled_mma)))
    coords = cute.make_identity_tensor((64, 16))
    for t in cutlass.range_constexpr(cute.size(tiled_mma.thr_id)):
        acc = tiled_mma.get_slice(t).partition_C(coords)  # the accumulator elements thread t holds
        for v in cutlass.range_constexpr(cute.size(acc)):
            _owner[acc[v]] = (t, v)
# --8<-- [end:wgmma]


# --8<-- [start:umma]
@cute.jit
def _umma():
    tiled_mma = sm100_utils.make_trivial_tiled_mma(
        cutlass.BFloat16, cutlass.BFloat16, OperandMajorMode.K, OperandMajorMode.K,
        cutlass.Float32, tcgen05.CtaGroup.ONE, (128, 64),
    )
    _text.append(("SM100 tiled MMA", str(tiled_mma)))
    acc = tiled_mma.make_fragment_C(tiled_mma.partition_shape_C((128, 64)))
    _text.append(("SM100 accumulator fragment", str(acc)))  # lives in TMEM, not in registers
# --8<-- [end:umma]


def copy_facts() -> str:
    """The tiled copy's tiler, TV layout and thread 5's partition, as the DSL printed them."""
    _text.clear()
    _owner.clear()
    _trace(_tiled_copy, "sm_90a")
    return "\n".join(["| asked | the DSL's answer |", "|---|---|", *(f"| `{k}` | `{v}` |" for k, v in _text)])


def copy_owner_picture() -> str:
    """Each element of the 4x8 tile: the thread that copies it and its value index, ``t:v``."""
    _owner.clear()
    _trace(_tiled_copy, "sm_90a")
    rows, cols = 4, 8
    threads = [[_owner[(r, c)][0] for c in range(cols)] for r in range(rows)]
    labels = [[f"{_owner[(r, c)][0]}:{_owner[(r, c)][1]}" for c in range(cols)] for r in range(rows)]
    return grid_svg(threads, labels=labels, title="make_tiled_copy_tv((2,4):(4,1), (2,2):(2,1)): thread:value of each element",
                    row_label="row", col_label="column")  # fmt: skip


def wgmma_owner_picture(rows: int = 16) -> str:
    """The first ``rows`` rows of a warpgroup's 64x16 accumulator: the thread holding each element."""
    _owner.clear()
    _trace(_wgmma, "sm_90a")
    threads = [[_owner[(r, c)][0] for c in range(16)] for r in range(rows)]
    return grid_svg(threads, title=f"WGMMA 64x16 accumulator, rows 0-{rows - 1}: thread holding each element",
                    row_label="row", col_label="column", cell_text="T{v}", cell=(34, 22))  # fmt: skip


def wgmma_warp_rows() -> str:
    """Which warp holds which accumulator rows (from the same partition)."""
    _owner.clear()
    _trace(_wgmma, "sm_90a")
    warps: dict[int, set[int]] = {}
    for (r, _), (t, _) in _owner.items():
        warps.setdefault(t // 32, set()).add(r)
    return "; ".join(f"warp {w}: rows {min(rs)}-{max(rs)}" for w, rs in sorted(warps.items()))


def mma_summaries() -> str:
    """The SM90 and SM100 tiled MMAs and the SM100 accumulator fragment, as printed by the DSL."""
    _text.clear()
    _trace(_wgmma, "sm_90a")
    _trace(_umma, "sm_100a")
    return "\n\n".join(f"```text title=\"{k}\"\n{v}\n```" for k, v in _text)
